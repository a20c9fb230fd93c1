"""Which words of a question weigh in recall's word share (issue 29)."""

from datetime import UTC, datetime

import pytest

from ctx import engine
from ctx.engine import Draft
from ctx.hub.config import HubConfig, RecallConfig
from ctx.hub.retrieval.index.lexical import LexicalDoc, LexicalIndex
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.schema import content_analyzer
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.sources import open_sources

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
HASHING = HubConfig(embedder={"kind": "hashing"})


def make_index(**bodies: str) -> LexicalIndex:
    """An index of one document per keyword argument: its blob id and body."""
    index = LexicalIndex.in_memory()
    with index.writer() as writer:
        writer.add(
            [
                LexicalDoc(
                    blob=blob,
                    memory_id=f"m-{blob}",
                    kind="fact",
                    context="",
                    title=None,
                    body=body,
                    tags=(),
                    created_at=T0,
                )
                for blob, body in bodies.items()
            ]
        )
        writer.commit()
    return index


def blobs(hits):
    return [blob for blob, _ in hits]


def test_many_much_might_and_must_are_function_words():
    assert content_analyzer().analyze("how many dogs, how much food, might, must") == [
        "dog",
        "food",
    ]
    index = make_index(
        dogs="Bo has two dogs",
        asks="Many might come, much must change",
        other="Lunch is at noon",
    )
    question = "How many dogs must Bo have?"
    shares = index.matches(question).coverage({"dogs", "asks"})
    assert shares == {"dogs": pytest.approx(1.0), "asks": 0.0}
    assert blobs(index.search(question, limit=3))[0] == "dogs"


@pytest.mark.parametrize(
    "part",
    [
        "dogs",
        "noon",
        "lunch dogs",
        "zebra",  # no memory holds it
        "lunhc",  # a near match: held by its fuzzy credit
        "might",  # a function word only
        "",
        "数据库",  # no memory holds it
    ],
)
def test_held_says_what_coverage_says(part):
    index = make_index(
        dogs="Bo has two dogs",
        asks="Many might come, much must change",
        other="Lunch is at noon",
    )
    matches = index.matches("How many dogs must Bo have for lunch?")
    for among in ({"dogs", "asks"}, {"other"}, {"dogs", "asks", "other"}, set()):
        expected = any(share > 0 for share in matches.coverage(among, part).values())
        assert matches.held(among, [part, "zebra"]) == [expected, False], (part, among)


def test_held_counts_a_share_below_zero_as_none():
    # A term's idf goes below 0 when Tantivy still counts deleted documents
    # (more documents holding it than live ones): a blob whose share of a
    # part is then 0 or less holds none of it, as a relevance counts it.
    index = make_index(
        dogs="Bo has two dogs",
        both="Bo walks the dogs at noon",
        other="Lunch is late",
    )
    matches = index.matches("dogs noon")
    matches.coverage({"dogs"}, "dogs noon")  # both terms weighed
    weights = matches._weights
    weights["noon"] = -abs(weights["noon"])
    bit, _ = matches._credits["noon"]
    matches._credits["noon"] = (bit, weights["noon"])
    told_apart = 0
    for among in ({"dogs"}, {"both"}, {"other"}, {"dogs", "other"}):
        shares = matches.coverage(among, "dogs noon")
        expected = any(share > 0 for share in shares.values())
        assert matches.held(among, ["dogs noon"]) == [expected], (among, shares)
        # Every blob but "other" holds a term of the part, yet some hold
        # none of it: "dog" weighs less than "noon" weighs below 0.
        told_apart += among != {"other"} and not expected
    assert told_apart


@pytest.fixture
def chinese(disk_store):
    who = engine.Intent(agent="tester", intent="observe")
    texts = {
        "database": "我们的数据库用 Postgres",
        "queue": "我们用队列处理后台任务，每分钟检查一次。",  # noqa: RUF001
        "lunch": "午饭在中午",
        "english": "The API rate limit is 100 requests a minute",
    }
    drafts = [Draft(text=t, when=NOW) for t in texts.values()]
    ids = engine.remember_many(disk_store, drafts, who).ids
    projection = Projection.for_store(disk_store, HASHING)
    name = dict(zip(ids, texts, strict=True))

    def asked(query):
        result = recall(
            projection, open_sources(projection), query, config=RecallConfig(), now=NOW
        )
        return [(name[h.id], h.weak) for h in result.hits]

    return asked


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("数据库用什么？", "database"),  # noqa: RUF001 (what does the database use?)
        ("队列", "queue"),  # a word inside a sentence
    ],
)
def test_a_chinese_question_finds_its_answer_as_strong(chinese, query, answer):
    # Issue 29: the word share took the question for one word no memory
    # holds, and "数据库用什么？" was answered "nothing relevant".  # noqa: RUF003
    hits = chinese(query)
    assert hits[0] == (answer, False)
