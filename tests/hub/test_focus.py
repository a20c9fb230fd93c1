"""What the vector channel asks: the question less the words that tell least (issue 29)."""

from __future__ import annotations

import pytest
from recall_support import HASHING, NOW, WHO, remember

from ctx import engine
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.focus import vector_focus
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.ranking import rank
from ctx.hub.retrieval.sources import open_sources


@pytest.fixture
def projection(disk_store):
    return Projection.for_store(disk_store, HASHING)


def conversation(store):
    """Kate and Fahim talk; one note of the team's database besides."""
    answer = remember(
        store,
        "Kate: we are finally moving with the two cats to a flat in Lisbon next May",
        "speaker:kate",
    )
    for text in (
        "Fahim: good morning, Kate",
        "Fahim: what a week it was",
        "Fahim: my cat is asleep again",
        "Fahim: moving on",
    ):
        remember(store, text, "speaker:fahim")
    for text in ("Kate: hello there", "Kate: the weather is grey", "Kate: so tired"):
        remember(store, text, "speaker:kate")
    # A group is ten memories at least (GROUP_LEAST).
    for i in range(10):
        remember(store, f"Kate: ok {i}", "speaker:kate")
        remember(store, f"Fahim: yes {i}", "speaker:fahim")
    remember(store, "The team database runs Postgres 16", "db:postgres")
    return answer


def focus_of(projection, question):
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    return vector_focus(searcher, question, searcher.search_bm25(question, 100))


def test_the_vector_channel_asks_without_a_groups_name(disk_store, projection):
    # Issue 29: a speaker's name (a tag on half the turns) pulled every
    # turn of the speaker above the answer in the vector channel.
    conversation(disk_store)
    asked = "What did Fahim say about moving to Lisbon?"
    assert focus_of(projection, asked) == "What did say about moving to Lisbon?"
    # A tag one memory carries names a subject, not a group: kept.
    assert focus_of(projection, "Which version of postgres do we run?") is None
    # Nothing but function words would be left: the question as asked.
    assert focus_of(projection, "Fahim?") is None
    assert focus_of(projection, "What about the weather?") is None


def test_a_group_is_named_with_the_bm25_channel_off(disk_store, projection):
    # The tags a question may name are read from the lexical channel's best
    # hits; with its weight at 0 they are still asked for.
    conversation(disk_store)
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    asked = "What did Fahim say about moving to Lisbon?"
    for weight in (1.0, 0.0):
        config = RecallConfig(bm25=weight)
        ranking = rank(searcher, asked, config=config, now=NOW)
        assert ranking.focus == "What did say about moving to Lisbon?", weight


def test_a_tag_on_a_few_memories_of_a_small_store_is_no_group(disk_store, projection):
    # Two of ten is a fifth of the store, yet "postgres" is what is asked.
    for i in range(8):
        remember(disk_store, f"Routine note {i}: reviewed the deploy")
    for text in ("Postgres 16 runs the team database", "Postgres backups run nightly"):
        remember(disk_store, text, "db:postgres")
    assert focus_of(projection, "Which version of postgres do we run?") is None


def test_the_vector_channel_judges_a_long_memory_by_its_best_passage(
    disk_store, projection
):
    # The focus orders the memories; a memory's cosine is that of its best
    # passage for the question as asked, so it does not turn weak because
    # the shorter question preferred another passage.
    conversation(disk_store)
    lines = ["Fahim: Fahim here, Fahim again, it is Fahim"] * 40
    lines += [
        f"gardens and bikes {i}, then moving to Lisbon, gardens" for i in range(40)
    ]
    long = remember(disk_store, "\n".join(lines), "speaker:fahim")
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    found = dict(
        searcher.search_vectors("Fahim here again", 100, focus="gardens bikes")
    )
    blob = source.view.catalog.entries[long].blob
    vectors = projection.vectors
    assert vectors is not None
    assert vectors.is_long(blob)
    assert searcher.query_vector is not None
    cosines = vectors.vectors_of(vectors.family(blob)) @ searcher.query_vector
    # The focus found a passage of gardens; the question's best is the name's.
    assert cosines[searcher.passage[blob]] < cosines.max()
    assert found[blob] == pytest.approx(float(cosines.max()), abs=1e-6)


def test_the_answer_in_the_other_speakers_turn_leads_the_vector_channel(
    disk_store, projection
):
    answer = conversation(disk_store)
    asked = "What did Fahim say about moving to Lisbon?"
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    hits = rank(searcher, asked, config=RecallConfig(), now=NOW).hits
    first = min(hits, key=lambda h: h.channels.get("vector", (99,))[0])
    assert first.id == answer
    # Its cosine is still the question's as asked, name and all: what the
    # relevance floor and --explain judge it by.
    blob = source.view.catalog.entries[answer].blob
    cosine = searcher.cosine(blob)
    assert cosine is not None
    assert first.channels["vector"][1] == pytest.approx(cosine, abs=1e-6)


def sessions(store, count):
    """Whole conversations of Caroline and Melanie, one topic each."""
    topics = ["pottery", "hiking", "adoption", "painting", "camping", "concerts"]
    for i in range(count):
        topic = topics[i % len(topics)]
        remember(
            store,
            f"Caroline: how was your week?\nMelanie: I tried {topic} on day {i}\n"
            f"Caroline: {topic} sounds lovely",
        )


def test_the_vector_channel_asks_without_words_nearly_every_memory_holds(
    disk_store, projection
):
    # Both people speak in every conversation: their names tell none apart.
    sessions(disk_store, 12)
    asked = "What did Caroline say about pottery?"
    assert focus_of(projection, asked) == "What did say about pottery?"
    # Nothing but function words would be left: the question as asked.
    assert focus_of(projection, "What about Caroline and Melanie?") is None
    # A question with no such word is asked whole, spaces and all.
    assert focus_of(projection, "pottery  and   hiking?") is None


def test_a_small_store_keeps_every_word(disk_store, projection):
    sessions(disk_store, 9)
    assert focus_of(projection, "What did Caroline say about pottery?") is None


def test_a_word_is_counted_in_the_live_memories_not_the_deleted(disk_store, projection):
    # An edit deletes the old version's document, which the index's
    # document frequency still counts until its segment is merged: "alpha"
    # looked held by every memory, and was left out of the question.
    alpha = [remember(disk_store, f"alpha note {i} about kites") for i in range(6)]
    for i in range(6):
        remember(disk_store, f"beta note {i} about lunch")
    for take in range(3):
        focus_of(projection, "kites")  # the index catches up between edits
        for memory_id in alpha:
            engine.edit(
                disk_store, memory_id, WHO, body=f"alpha note about kites {take}"
            )
    [source] = open_sources(projection)
    shares, total = projection.searcher(source.view).holding("alpha and lunch?", 0.9)
    assert total == 12
    assert shares == {"alpha": 0.5, "lunch": 0.5}
    assert focus_of(projection, "what about alpha and lunch?") is None


def test_a_question_in_chinese_is_asked_whole(disk_store, projection):
    # The function-word list is English: "项目是什么" less the group would
    # ask "是什么" ("what is it").
    for i in range(12):
        remember(disk_store, f"项目 note {i}", "topic:项目")
        remember(disk_store, f"other note {i}", "topic:other")
    assert focus_of(projection, "项目 note 3 是什么") is None
