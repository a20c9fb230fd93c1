"""The lexical channel: Tantivy BM25 and fuzzy search keyed by blob id."""

import math
import subprocess
import sys
import textwrap
from datetime import UTC, datetime

import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx.engine import StoreBusyError, StoreError
from ctx.hub.retrieval.index.coverage import passage_index
from ctx.hub.retrieval.index.lexical import TITLE_BOOST, LexicalDoc, LexicalIndex
from ctx.hub.retrieval.index.lexical_errors import (
    LexicalIndexBusyError,
    LexicalIndexError,
)
from ctx.hub.retrieval.index.passages import passages
from ctx.hub.retrieval.index.terms import words

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def make_doc(
    blob,
    body,
    *,
    title=None,
    tags=(),
    kind="note",
    context="",
    memory_id=None,
    passages="",
    language="",
):
    return LexicalDoc(
        blob=blob,
        memory_id=memory_id or f"m-{blob}",
        kind=kind,
        context=context,
        title=title,
        body=body,
        tags=tuple(tags),
        created_at=T0,
        passages=passages,
        language=language,
    )


def make_index(*docs):
    index = LexicalIndex.in_memory()
    with index.writer() as writer:
        writer.add(docs)
        writer.commit()
    return index


def blobs(hits):
    return [blob for blob, _ in hits]


def test_stemming_matches_other_forms_of_a_word():
    index = make_index(
        make_doc("b1", "We are deciding how to store sessions."),
        make_doc("b2", "Lunch is at noon."),
    )
    assert blobs(index.search("what did we decide?", limit=5)) == ["b1"]
    assert blobs(index.search("Decisions decided", limit=5)) == ["b1"]


def test_function_words_weigh_less_than_what_a_question_is_about():
    # Issue 29: "what", "did", "you" at full weight ranked the memories that
    # ask something above the one about what the question asks.
    index = make_index(
        make_doc("asks", "What did you do with it? I did what you said."),
        make_doc("answers", "The car was repaired on Monday at the garage."),
        make_doc("cake", "Did you see what she did with the cake?"),
        make_doc("plans", "What do you think we should do next week?"),
        make_doc("other", "We ship on Fridays."),
    )
    hits = index.search("What did you do with the car?", limit=5)
    assert blobs(hits)[0] == "answers"


def test_function_words_still_count_between_equal_matches():
    index = make_index(
        make_doc("plain", "The car is red."),
        make_doc("told", "You did paint the car red."),
        make_doc("other", "Lunch is at noon."),
    )
    assert blobs(index.search("what did you do to the car", limit=5)) == [
        "told",
        "plain",
    ]


def test_a_question_of_function_words_only_keeps_them():
    index = make_index(
        make_doc("hamlet", "To be or not to be, that is the question."),
        make_doc("other", "Ravens are black."),
    )
    assert blobs(index.search("to be or not to be", limit=5)) == ["hamlet"]


def test_a_memory_holding_only_a_questions_function_words_is_no_match():
    # Issue 29: "What animal did I get?" asked of a person's notes, none
    # saying "animal", had every note saying "I" ranked by that word, and the
    # fusion took the order as the BM25 channel's: the flights note came
    # above the adopted cat, which the vectors ranked first.
    index = make_index(
        make_doc("trip", "I booked flights to Japan for my birthday."),
        make_doc("run", "I started running with my neighbour."),
        make_doc("cat", "I adopted an animal from the shelter."),
    )
    assert index.search("What fish did I have?", limit=5) == []
    hits = index.search("What animal did I have?", limit=5)
    assert blobs(hits) == ["cat"]
    # The function words still add to the score of a match.
    alone = index.search("animal", limit=5)
    assert hits[0][1] > alone[0][1]


def test_a_function_word_is_no_match_in_another_languages_memory_either():
    # Italian's analyser reads the question's "i" as the Italian article: a
    # memory in Italian matched "What fish did I have?" by it alone.
    italian = make_doc(
        "it", "Ho comprato i biglietti del treno per Roma", language="it"
    )
    index = make_index(make_doc("run", "I started running with my neighbour."), italian)
    assert index.search("What fish did I have?", limit=5) == []
    assert blobs(index.search("What tickets did I buy for Roma?", limit=5)) == ["it"]
    assert blobs(index.search("biglietti treno", limit=5)) == ["it"]


def test_a_long_texts_words_a_memory_holds_come_before_those_none_holds():
    # Only 64 distinct words of a text are looked up: a question after a
    # pasted log of ids was left out of the query whole.
    index = make_index(
        make_doc("deploy", "The deploy pipeline runs on GitHub Actions."),
        make_doc("other", "Lunch is at noon."),
    )
    log = " ".join(f"layer{n:04d}" for n in range(100))
    assert blobs(index.search(f"{log} how do we deploy?", limit=5)) == ["deploy"]


def test_title_counts_twice_the_body():
    # The same words, swapped between title and body: equal BM25 per field,
    # so the ratio of the scores is the title boost.
    index = make_index(
        make_doc("in-title", "notes on the plan", title="Postgres upgrade"),
        make_doc("in-body", "Postgres upgrade", title="notes on the plan"),
    )
    hits = index.search("postgres", limit=5)
    assert blobs(hits) == ["in-title", "in-body"]
    assert hits[0][1] / hits[1][1] == pytest.approx(TITLE_BOOST, rel=1e-4)


def test_tags_match_whole_and_by_parts():
    index = make_index(
        make_doc(
            "tagged", "Nothing relevant here.", tags=["project:ctx", "tier:pinned"]
        ),
        make_doc("other", "Nothing relevant either.", tags=["project:web"]),
    )
    assert blobs(index.search("project:ctx", limit=5))[0] == "tagged"
    assert blobs(index.search("ctx", limit=5)) == ["tagged"]
    assert blobs(index.search("Pinned", limit=5)) == ["tagged"]
    assert set(blobs(index.search("project", limit=5))) == {"tagged", "other"}


def test_context_is_searched():
    index = make_index(make_doc("b1", "Body text.", context="billing service"))
    assert blobs(index.search("billing", limit=5)) == ["b1"]


def ranked_index(count=120, length=130):
    # Document i holds "alpha" i times in a body of fixed length: strictly
    # increasing scores, so the expected order has no ties.
    return make_index(
        *(
            make_doc(f"b{i:03d}", " ".join(["alpha"] * i + ["beta"] * (length - i)))
            for i in range(1, count + 1)
        )
    )


@pytest.mark.parametrize(
    "allowed",
    [
        {f"b{i:03d}" for i in range(1, 121, 2)},  # half
        {f"b{i:03d}" for i in (1, 2, 3)},  # the three worst
        # Unknown ids make the allowed share look large: pages must widen.
        {f"b{i:03d}" for i in (1, 2, 3)} | {f"x{i}" for i in range(200)},
        {f"b{i:03d}" for i in range(1, 121, 17)} | {"unknown", "b999"},
        {f"b{i:03d}" for i in range(1, 121)},  # all
    ],
)
def test_allowed_returns_exactly_the_best_allowed_hits(allowed):
    index = ranked_index()
    everything = index.search("alpha", limit=1000)
    assert blobs(everything) == [f"b{i:03d}" for i in range(120, 0, -1)]
    expected = [hit for hit in everything if hit[0] in allowed][:10]
    got = index.search("alpha", limit=10, allowed=allowed)
    assert blobs(got) == blobs(expected)
    assert [score for _, score in got] == pytest.approx([s for _, s in expected])


def test_allowed_applies_to_fuzzy_search():
    index = make_index(
        make_doc("b1", "postgres tuning"),
        make_doc("b2", "postgres backups"),
        make_doc("b3", "postgres replicas"),
    )
    assert blobs(index.fuzzy_search("postgress", limit=5, allowed={"b2"})) == ["b2"]


def test_empty_allowed_and_zero_limit_return_nothing():
    index = make_index(make_doc("b1", "alpha"))
    assert index.search("alpha", limit=5, allowed=set()) == []
    assert index.search("alpha", limit=0) == []
    assert index.search("alpha", limit=-3) == []
    assert index.fuzzy_search("alpha", limit=0) == []
    assert LexicalIndex.in_memory().search("alpha", limit=5) == []


def test_a_huge_limit_is_capped_by_the_index():
    index = make_index(make_doc("b1", "alpha"), make_doc("b2", "alpha beta"))
    assert len(index.search("alpha", limit=10**12)) == 2
    assert len(index.search("alpha", limit=10**12, allowed={"b2"})) == 1


def test_delete_removes_documents():
    index = make_index(make_doc("b1", "alpha"), make_doc("b2", "alpha beta"))
    with index.writer() as writer:
        writer.delete(["b1", "never-indexed"])
        writer.commit()
    assert not index.contains("b1")
    assert index.contains("b2")
    assert blobs(index.search("alpha", limit=5)) == ["b2"]
    assert index.count() == 1


def test_adding_a_blob_again_replaces_it():
    index = make_index(make_doc("b1", "alpha"))
    with index.writer() as writer:
        writer.add([make_doc("b1", "gamma"), make_doc("b1", "gamma")])
        writer.commit()
    assert index.count() == 1
    assert index.known_blobs() == {"b1"}
    assert index.search("alpha", limit=5) == []
    assert blobs(index.search("gamma", limit=5)) == ["b1"]


def test_a_pinned_index_reads_one_commit_for_every_search():
    index = make_index(make_doc("b1", "alpha"))
    pinned = index.pinned()
    with index.writer() as writer:
        writer.add([make_doc("b2", "alpha beta")])
        writer.commit()
    assert blobs(pinned.search("alpha", limit=5)) == ["b1"]
    assert pinned.matches("beta").coverage({"b1", "b2"}) == {"b1": 0.0, "b2": 0.0}
    assert set(blobs(index.search("alpha", limit=5))) == {"b1", "b2"}
    assert set(blobs(index.pinned().search("alpha", limit=5))) == {"b1", "b2"}


def test_adding_new_blobs_skips_the_delete_and_indexes_the_same():
    docs = [make_doc("b1", "alpha beta"), make_doc("b2", "beta", title="Gamma")]
    indexes = []
    for new in (False, True):
        index = LexicalIndex.in_memory()
        with index.writer() as writer:
            writer.add(docs, new=new)
            writer.commit()
        indexes.append(index)
    for query in ("alpha", "beta", "gamma", "alph"):
        # Sorted: which indexing thread takes a document decides tie order.
        old, new = (sorted(i.search(query, limit=5)) for i in indexes)
        assert old == new
        old, new = (sorted(i.fuzzy_search(query, limit=5)) for i in indexes)
        assert old == new
    assert indexes[1].known_blobs() == {"b1", "b2"}


def test_fuzzy_finds_typos_and_identifiers():
    index = make_index(
        make_doc("pg", "We moved the sessions table to Postgres."),
        make_doc("fn", "Call get_user_by_id before parseConfigFile()."),
        make_doc("noise", "Nothing to see."),
    )
    assert index.search("postgress", limit=5) == []
    assert blobs(index.fuzzy_search("postgress", limit=5)) == ["pg"]
    assert blobs(index.fuzzy_search("get_usr_by_id", limit=5)) == ["fn"]
    assert blobs(index.fuzzy_search("parseConfgFile", limit=5)) == ["fn"]
    # Parts of identifiers are words too, and a prefix matches.
    assert blobs(index.fuzzy_search("config", limit=5)) == ["fn"]
    assert blobs(index.fuzzy_search("postg", limit=5)) == ["pg"]


def test_the_fuzzy_field_takes_whole_words_and_the_parts_of_identifiers():
    long = "x" * 70  # a hash: not indexed, nor are its parts
    text = f"Plain words, a Capital; naïve XMLParser v1.2 and {long}_tail"
    assert set(words(text).split()) == {
        *("plain", "words", "a", "capital", "naïve", "and"),
        *("xmlparser", "xml", "parser", "v1.2", "v1"),
    }
    index = make_index(make_doc("b", text))
    assert blobs(index.fuzzy_search("naïve", limit=5)) == ["b"]
    assert blobs(index.fuzzy_search("parser", limit=5)) == ["b"]
    assert index.fuzzy_search("tail", limit=5) == []


def test_fuzzy_ranks_exact_matches_first_and_skips_short_and_stop_words():
    index = make_index(make_doc("near", "postgrex"), make_doc("exact", "postgres"))
    assert blobs(index.fuzzy_search("postgres", limit=5)) == ["exact", "near"]
    assert index.fuzzy_search("pg what about", limit=5) == []


def test_a_long_word_reaches_two_edits_only_when_no_memory_holds_it():
    index = make_index(
        make_doc("held", "the deployment failed"),
        make_doc("two", "a deploimant report"),  # two edits from "deployment"
    )
    # No memory holds "deploymnt": a typo, looked for within two edits.
    assert set(blobs(index.fuzzy_search("deploymnt", limit=5))) == {"held", "two"}
    # A memory holds "deployment": spelled as someone wrote it, one edit.
    assert blobs(index.fuzzy_search("deployment", limit=5)) == ["held"]


def test_a_word_most_memories_hold_is_left_to_bm25_beside_rarer_ones(monkeypatch):
    docs = [make_doc(f"c{i}", f"deploy note {i}") for i in range(9)]
    index = make_index(*docs, make_doc("rare", "deploy the pelican"))
    # A small store: a word in every memory is looked for, scoring is cheap.
    assert len(index.fuzzy_search("deploy pelican", limit=20)) == 10
    # A large one (as if): beside "pelican", "deploy" adds nothing.
    monkeypatch.setattr("ctx.hub.retrieval.index.fuzzy._FUZZY_COMMON_MIN", 5)
    assert blobs(index.fuzzy_search("deploy pelican", limit=20)) == ["rare"]
    # Alone, it is still looked for.
    assert len(index.fuzzy_search("deploy", limit=20)) == 10
    # A long question is searched by its lines (parts), each memory as its
    # best line: the whole question's common words are left out of each,
    # so a line of them alone does not search most of the index.
    lines = ["deploy note", "where is the pelican?"]
    found = index.fuzzy_search("\n".join(lines), limit=20, parts=lines)
    assert blobs(found) == ["rare"]
    # Common in any line, not only in the first words the channel reads of
    # the whole (its first 32 of four letters or more).
    filler = [f"qwxz{n} vbkj{n} plmt{n} zzyq{n}" for n in range(10)]
    lines = [*filler, "deploy note", "where is the pelican?"]
    found = index.fuzzy_search("\n".join(lines), limit=20, parts=lines)
    assert blobs(found) == ["rare"]


GARBAGE = [
    "",
    "   ",
    "AND (",
    "title:auth OR",
    "-x",
    "*",
    '"unclosed',
    "a^2 ~ * ? [1 TO",
    "\x00\x01",
    "\ud800 lone surrogate",
    "project:",
    ":",
    "x" * 70,
    "word " * 20_000,
]


@pytest.mark.parametrize("query", GARBAGE)
def test_garbage_queries_do_not_raise(query):
    index = make_index(make_doc("b1", "alpha word", tags=["project:ctx"]))
    assert isinstance(index.search(query, limit=5), list)
    assert isinstance(index.fuzzy_search(query, limit=5), list)


def test_random_queries_do_not_raise():
    index = make_index(
        make_doc("b1", "alpha beta gamma", title="Delta", tags=["project:ctx"]),
        make_doc("b2", "get_user_by_id(x) -> User"),
    )

    @settings(max_examples=200, deadline=None)
    @given(st.text(), st.sets(st.sampled_from(["b1", "b2", "b3"])))
    def check(query, allowed):
        for hits in (
            index.search(query, limit=5),
            index.search(query, limit=5, allowed=allowed),
            index.fuzzy_search(query, limit=5, allowed=allowed),
        ):
            assert set(blobs(hits)) <= {"b1", "b2"}

    check()


def test_one_writer_at_a_time_in_one_process(tmp_path):
    first = LexicalIndex.open(tmp_path / "lexical")
    second = LexicalIndex.open(tmp_path / "lexical")
    writer = first.writer()
    assert first.try_writer() is None
    assert second.try_writer() is None
    with pytest.raises(LexicalIndexBusyError) as caught:
        second.writer()
    assert isinstance(caught.value, StoreBusyError)
    assert caught.value.exit_code == 7
    assert (
        caught.value.message
        == f"Another writer holds the lock on the lexical index in {tmp_path / 'lexical'}."
    )
    # The reader that cannot write still searches what is committed.
    writer.add([make_doc("b1", "alpha")])
    writer.commit()
    assert blobs(second.search("alpha", limit=5)) == ["b1"]
    writer.close()
    with second.writer() as other:
        assert not other.closed
    assert other.closed


HOLD_WRITER = textwrap.dedent(
    """
    import sys
    from ctx.hub.retrieval.index.lexical import LexicalIndex

    writer = LexicalIndex.open(sys.argv[1]).writer()
    print("holding", flush=True)
    sys.stdin.readline()
    writer.close()
    """
)


def test_one_writer_at_a_time_across_processes(tmp_path):
    path = tmp_path / "lexical"
    LexicalIndex.open(path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "holding\n"
        index = LexicalIndex.open(path)
        assert index.try_writer() is None
        assert index.search("alpha", limit=5) == []
    finally:
        holder.communicate("done\n", timeout=30)
    assert holder.returncode == 0
    writer = index.try_writer()
    assert writer is not None
    writer.close()


def test_uncommitted_changes_are_dropped_on_close():
    index = make_index(make_doc("b1", "alpha"))
    with index.writer() as writer:
        writer.add([make_doc("b2", "alpha")])
        writer.delete(["b1"])
    assert index.known_blobs() == {"b1"}
    with pytest.raises(LexicalIndexError, match="writer is closed"):
        writer.add([make_doc("b3", "alpha")])


def test_reopened_index_keeps_committed_documents(tmp_path):
    path = tmp_path / "lexical"
    with LexicalIndex.open(path).writer() as writer:
        writer.add([make_doc("b1", "alpha", title="First"), make_doc("b2", "beta")])
        writer.commit()
    reopened = LexicalIndex.open(path, create=False)
    assert reopened.known_blobs() == {"b1", "b2"}
    assert reopened.contains("b1")
    assert blobs(reopened.search("first", limit=5)) == ["b1"]


@pytest.mark.parametrize("make_folder", [False, True])
def test_missing_index_without_create_raises(tmp_path, make_folder):
    path = tmp_path / "nowhere"
    if make_folder:
        path.mkdir()
    with pytest.raises(LexicalIndexError) as caught:
        LexicalIndex.open(path, create=False)
    assert caught.value.message == f"No lexical index exists in {path}."
    assert caught.value.hint == "Run `ctx reindex` to build it."


def test_an_index_of_another_schema_raises(tmp_path):
    path = tmp_path / "lexical"
    path.mkdir()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("other", stored=True)
    tantivy.Index(builder.build(), path=str(path))
    with pytest.raises(LexicalIndexError) as caught:
        LexicalIndex.open(path)
    assert "schema does not match" in caught.value.message
    assert caught.value.hint == "Run `ctx reindex` to rebuild it."


def test_corrupt_folder_raises_a_store_error(tmp_path):
    path = tmp_path / "lexical"
    with LexicalIndex.open(path).writer() as writer:
        writer.add([make_doc("b1", "alpha")])
        writer.commit()
    (path / "meta.json").write_text("garbage")
    with pytest.raises(LexicalIndexError) as caught:
        LexicalIndex.open(path)
    error = caught.value
    assert isinstance(error, StoreError)
    assert error.message.startswith(
        f"Cannot open the lexical index in {path} (meta.json: JSON is malformed"
    )
    assert error.message.endswith(").")
    assert "\n" not in error.message
    assert error.hint == "Run `ctx reindex` to rebuild it."


def test_a_file_in_place_of_the_folder_raises(tmp_path):
    path = tmp_path / "lexical"
    path.write_text("not a folder")
    with pytest.raises(LexicalIndexError, match="Cannot"):
        LexicalIndex.open(path)


def test_naive_and_aware_dates_are_accepted():
    naive = LexicalDoc(
        blob="b1",
        memory_id="m1",
        kind="note",
        context="",
        title=None,
        body="alpha",
        tags=(),
        created_at=datetime(2024, 5, 8, 12, 0),
    )
    index = make_index(naive, make_doc("b2", "alpha"))
    assert index.known_blobs() == {"b1", "b2"}


def test_over_fetching_widens_until_enough_allowed_hits(monkeypatch):
    index = ranked_index()
    pages = []
    run = LexicalIndex.run

    def spy(self, searcher, query, limit, offset):
        pages.append((offset, limit))
        return run(self, searcher, query, limit, offset)

    monkeypatch.setattr(LexicalIndex, "run", spy)
    allowed = {"b001", "b002"} | {f"x{i}" for i in range(200)}
    assert blobs(index.search("alpha", limit=2, allowed=allowed)) == ["b002", "b001"]
    assert pages == [(0, 3), (3, 9), (12, 36), (48, 72)]


@pytest.mark.parametrize(
    ("read_max", "bits"),
    [(1_000, 20), (0, 20), (0, 1)],
    ids=["read", "one query", "a query per clause"],
)
def test_tagged_finds_the_blobs_whose_tags_the_query_names(monkeypatch, read_max, bits):
    monkeypatch.setattr("ctx.hub.retrieval.index.coverage.TAGGED_READ_MAX", read_max)
    monkeypatch.setattr("ctx.hub.retrieval.index.coverage.MASK_BITS", bits)
    index = make_index(
        make_doc("b1", "Went to the support group.", tags=["speaker:caroline"]),
        make_doc("b2", "Painted a sunrise.", tags=["speaker:melanie"]),
        make_doc("b3", "The queue is Postgres.", tags=["component:job-queue"]),
        make_doc("b4", "Untagged."),
    )
    every = {"b1", "b2", "b3", "b4"}
    assert index.matches("What did Caroline's group do?").tagged(every) == {"b1"}
    assert index.matches("CAROLINE, melanie!").tagged(every) == {"b1", "b2"}
    assert index.matches("why the job queue stalls").tagged(every) == {"b3"}
    assert index.matches("tag component:job-queue").tagged(every) == {"b3"}
    assert index.matches("what did the speaker say").tagged(every) == set()
    assert index.matches("").tagged(every) == set()
    assert index.matches("caroline").tagged({"b2", "b4"}) == set()
    assert index.matches("caroline").tagged(set()) == set()


def test_git_blob_ids_come_from_fast_fields_without_reading_documents(monkeypatch):
    ids = [f"{i:02x}" * 20 for i in (0, 1, 0xAB, 0xFF)]  # 40 hex digits each
    index = make_index(
        make_doc(ids[0], "pelicans nest on the pier", tags=["bird:pelican"]),
        make_doc(ids[1], "pelicans and gulls", title="Shore"),
        make_doc(ids[2], "gulls only"),
        make_doc(ids[3], "a pelican alone", tags=["bird:pelican"]),
        make_doc("short-key", "pelicans again"),  # not a git id: read from the store
    )
    read = []
    original = LexicalIndex._blob_of

    def spy(self, searcher, address):
        blob = original(self, searcher, address)
        read.append(blob)
        return blob

    monkeypatch.setattr(LexicalIndex, "_blob_of", spy)
    found = blobs(index.search("pelicans", limit=10))
    assert set(found) == {ids[0], ids[1], ids[3], "short-key"}
    assert blobs(index.search("pelicans", limit=10, allowed={ids[1]})) == [ids[1]]
    assert set(blobs(index.fuzzy_search("pelikans", limit=10))) >= {ids[0], ids[1]}
    assert index.matches("the pelican").tagged(set(ids)) == {ids[0], ids[3]}
    assert index.known_blobs() == {*ids, "short-key"}
    assert set(read) == {"short-key"}


@pytest.mark.parametrize("bits", [20, 1], ids=["one query", "a query per term"])
def test_coverage_is_the_share_of_the_query_words_held(monkeypatch, bits):
    monkeypatch.setattr("ctx.hub.retrieval.index.coverage.MASK_BITS", bits)
    index = make_index(
        make_doc("both", "the pelican flew over the harbour"),
        make_doc("one", "a pelican on the roof", title="Birds"),
        make_doc("typo", "the harbor was quiet"),
        make_doc("none", "nothing here at all"),
        make_doc("other", "pelican pelican pelican"),
    )
    shares = index.matches("pelican harbour").coverage({"both", "one", "typo", "none"})
    assert shares["both"] == pytest.approx(1.0)
    assert 0 < shares["one"] < 1
    assert shares["none"] == 0.0
    assert set(shares) == {"both", "one", "typo", "none"}  # only those asked about


def test_a_long_blobs_share_is_that_of_its_best_passage():
    # Issue 29: a long memory's words count where its cosine does, in one
    # passage (passage_index, stored when the memory is indexed).
    lines = [f"line {i}: the garden and the roses need water" for i in range(90)]
    lines[0] = "the pelican over the water"
    lines[45] = "harbour lights and gulls at night"
    scattered = "\n".join(lines)
    lines[45] = "the pelican saw harbour lights and gulls at night"
    together = "\n".join(lines)
    index = make_index(
        make_doc("scattered", scattered, passages=passage_index(scattered)),
        make_doc("together", together, passages=passage_index(together)),
        make_doc("short", "a pelican in the harbour with gulls"),
        make_doc("other", "nothing here"),
    )
    matches = index.matches("pelican harbour gulls")
    blobs = {"scattered", "together", "short"}
    whole = matches.coverage(blobs)
    assert whole == pytest.approx({"scattered": 1.0, "together": 1.0, "short": 1.0})
    best = matches.coverage(blobs, by_passage=True)
    assert best["together"] == pytest.approx(1.0)
    assert best["short"] == pytest.approx(1.0)  # one passage: the whole share
    assert 0 < best["scattered"] < 1  # "harbour" and "gulls", not "pelican"
    # A near match is not placed: it counts in every passage.
    typo = index.matches("pelikan harbour gulls")
    assert typo.coverage({"scattered"}, by_passage=True) == pytest.approx(
        typo.coverage({"scattered"})
    )
    # One term held is in some passage: the memory's share stands.
    alone = index.matches("pelican")
    assert alone.coverage({"scattered"}, by_passage=True) == pytest.approx(
        alone.coverage({"scattered"})
    )


def test_a_term_the_passages_do_not_place_counts_in_each():
    # The index holds a Chinese character alone and the memory's context;
    # a term the stored passages do not place counts in every passage, so
    # that the share is never below the one the passage holds.
    lines = [f"line {i}: the garden and the roses need water" for i in range(90)]
    lines[45] = "小猫咪 harbour"
    text = "\n".join(lines)
    index = make_index(
        make_doc("long", text, context="码头", passages=passage_index(text)),
        make_doc("other", "nothing here"),
    )
    for question in ("猫 harbour", "码头 harbour"):
        matches = index.matches(question)
        whole = matches.coverage({"long"})["long"]
        assert whole == pytest.approx(1.0)
        assert matches.coverage({"long"}, by_passage=True)["long"] == pytest.approx(1.0)


def test_passage_index_says_which_passages_hold_each_term():
    assert passage_index("Pelicans flew over the harbour") == ""  # one passage
    lines = [f"line {i}: the pelican flew over the harbour" for i in range(80)]
    text = "\n".join([*lines, "我们的数据库用 Postgres, 小猫咪"])
    pieces = passages(text)
    assert len(pieces) > 1
    stored = passage_index(text)
    masks = {
        term: int(mask, 16) for term, mask in (i.split(":") for i in stored.split())
    }
    assert masks["pelican"] == sum(
        1 << number for number, piece in enumerate(pieces) if "pelican" in piece
    )
    assert masks["postgr"] == 1 << (len(pieces) - 1)  # the last passage alone
    assert "数据" in masks
    assert masks["猫"] == 1 << (len(pieces) - 1)  # a character alone, as indexed
    assert "我们的数据库用" not in masks  # not the analyser's whole run
    assert "the" not in masks  # function words are never weighed
    assert stored.startswith(" ")
    assert stored.endswith(" ")


def test_one_question_looks_each_blob_up_once(monkeypatch):
    monkeypatch.setattr("ctx.hub.retrieval.index.coverage.TAGGED_READ_MAX", 0)
    index = make_index(
        make_doc("b1", "the pelican flew over the harbour", tags=["bird:pelican"]),
        make_doc("b2", "gulls in the harbour"),
        make_doc("b3", "nothing here"),
    )
    queries = []
    run = LexicalIndex.run

    def spy(self, searcher, query, limit, offset):
        queries.append(limit)
        return run(self, searcher, query, limit, offset)

    monkeypatch.setattr(LexicalIndex, "run", spy)
    matches = index.matches("pelican harbour yesterday")
    assert matches.tagged({"b1", "b2", "b3"}) == {"b1"}
    shares = matches.coverage({"b1", "b2"})
    assert 0 < shares["b2"] < shares["b1"] < 1  # none says "yesterday"
    part = matches.coverage({"b1", "b2"}, part="pelican harbour")
    assert part["b1"] == pytest.approx(1.0)
    assert queries == [3]  # the tags and every term of the three blobs at once
    # A part with a word of its own is asked again.
    assert matches.coverage({"b2"}, part="gulls") == {"b2": pytest.approx(1.0)}
    assert queries == [3, 1]


def test_coverage_tells_apart_every_term_of_a_long_question():
    # 30 terms: two queries of MASK_BITS, each blob's score a set of terms.
    words = [f"zq{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(30)]
    index = make_index(
        make_doc("even", " ".join(words[::2])),
        make_doc("last", words[-1]),
        make_doc("all", " ".join(words)),
        make_doc("none", "nothing of those"),
    )
    shares = index.matches(" ".join(words)).coverage({"even", "last", "all", "none"})
    # The even terms and the last are held by 2 documents of 4, the other
    # 14 by 1: each weighs its BM25 idf.
    two, one = (math.log(1 + (4 - n + 0.5) / (n + 0.5)) for n in (2, 1))
    whole = 16 * two + 14 * one
    assert shares["all"] == pytest.approx(1.0)
    assert shares["none"] == 0.0
    assert shares["even"] == pytest.approx(15 * two / whole)
    assert shares["last"] == pytest.approx(two / whole)
