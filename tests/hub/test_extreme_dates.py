"""Times at the ends of what Python holds (issue 12): a store written by
another tool may hold any ``created_at``, and recall and search on its branch
must still work and rank the other memories as before; ``--at`` and ``--now``
outside the accepted range are clean errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import msgspec
import pytest

import ctx.hub
from ctx import engine
from ctx.engine import Draft, InvalidInputError
from ctx.engine.model import encode
from ctx.hub import Workspace, parse_moment
from ctx.hub.retrieval.index.lexical import LexicalDoc, LexicalIndex
from ctx.hub.retrieval.temporal.parse import extract_dates, parse_temporal

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)  # a Friday
WEST, EAST = timezone(timedelta(hours=-14)), timezone(timedelta(hours=14))
RANGE = "1000-01-01 to 9000-12-31 (UTC)"

STORED = [
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=WEST),  # year 10000 in UTC
    datetime(1, 1, 1, tzinfo=EAST),  # year 0 in UTC
    datetime.max.replace(tzinfo=UTC),
    datetime.min.replace(tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59),  # no offset at all
    datetime(1, 1, 1),
]
QUERIES = [
    "postgres queue",
    "what did we deploy last week",
    "two weeks before the launch",
    "the launch yesterday",
    "every Tuesday in March",
    "in 9999",
    "since 1000",
]


@pytest.fixture
def ws(tmp_path: Path, clock):
    path = tmp_path / ".ctx"
    engine.Store.init(path, clock=clock).close()
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    workspace = Workspace(path, clock=clock)
    yield workspace
    workspace.close()


def remember(ws, text, when):
    store = ws.store(write=True)
    draft = Draft(text=text, when=when)
    return engine.remember(store, draft, ws.intent("observe")).ids[0]


def plant(ws, text, created_at):
    """Writes a memory whose created_at the engine would refuse, as another
    tool writing the store could: the blob is made here, not by remember."""
    store = ws.store(write=True)
    memory_id = remember(ws, text, NOW)
    record = engine.show(store, memory_id)
    hostile = msgspec.structs.replace(record.memory, created_at=created_at)
    store.write(
        "main", ws.intent("import"), "Plant", lambda _: {record.path: encode(hostile)}
    )
    assert engine.show(store, memory_id).memory.created_at == created_at
    return memory_id


def ids(result):
    return [hit.id for hit in result.hits]


@pytest.mark.parametrize("created_at", STORED, ids=str)
def test_any_stored_time_leaves_recall_and_search_working(ws, created_at):
    queue = remember(ws, "We chose Postgres for the queue", NOW - timedelta(days=30))
    deploy = remember(ws, "We deployed the billing service", NOW - timedelta(days=8))
    launch = remember(ws, "The launch of the mobile app", NOW - timedelta(days=20))
    hostile = plant(
        ws,
        "The launch slipped again; yesterday we deployed a fix two weeks "
        "after the review, every Tuesday in March",
        created_at,
    )
    for query in QUERIES:
        ctx.hub.recall(ws, query, now=NOW, explain=True)
        ctx.hub.search(ws, query, now=NOW, explain=True)
    assert ids(ctx.hub.recall(ws, "postgres queue", now=NOW))[0] == queue
    assert ids(ctx.hub.search(ws, "billing service", now=NOW))[0] == deploy
    # Gravity still ranks by the time the query names: last week's deploy
    # comes before the planted memory, whatever time it holds.
    found = ids(ctx.hub.recall(ws, "what did we deploy last week", now=NOW))
    assert found.index(deploy) < found.index(hostile)
    assert launch in ids(ctx.hub.recall(ws, "mobile app launch", now=NOW))
    # The index kept the memory: a later reindex and recall agree.
    ctx.hub.reindex(ws)
    assert hostile in ids(ctx.hub.search(ws, "slipped", now=NOW))


@pytest.mark.parametrize("created_at", STORED[:4], ids=str)
def test_dates_in_text_resolve_against_any_time(created_at):
    text = "yesterday, last week, in 9999, next year, two weeks after 8 May 9999"
    for moment in extract_dates(text, created_at):
        assert moment.tzinfo is not None


@pytest.mark.parametrize("now", STORED[:4], ids=str)
def test_a_query_asked_at_any_time_parses(now):
    parse_temporal("yesterday and next year, since 8 May, two weeks before Easter", now)


@pytest.mark.parametrize("now", STORED[:4], ids=str)
def test_recall_asked_at_any_time_answers(ws, now):
    queue = remember(ws, "We chose Postgres for the queue", NOW)
    for query in ("postgres yesterday", "postgres next year", "postgres"):
        result = ctx.hub.recall(ws, query, now=now)
        if query != "postgres" and now.year in (1, 9999):
            # Past the calendar's ends "next year" (or "yesterday") is no time
            # but words the memory lacks: relevant or not, recall answers.
            assert ids(result) in ([queue], [])
            continue
        assert ids(result) == [queue]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("0001-01-01", "0001-01-01T00:00:00"),
        ("9999-12-31", "9999-12-31T00:00:00"),
        ("0999-12-31T23:00+00:00", "0999-12-31T23:00:00+00:00"),
        ("9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59-14:00"),
    ],
)
@pytest.mark.parametrize("option", ["--at", "--now", "--when"])
def test_moments_out_of_range_are_clean_errors(value, shown, option):
    with pytest.raises(InvalidInputError) as caught:
        parse_moment(value, option)
    assert caught.value.message == (
        f"{option} {shown} is outside the accepted range, {RANGE}."
    )


def test_recall_at_a_date_out_of_range_is_a_clean_error(ws):
    remember(ws, "We chose Postgres for the queue", NOW)
    with pytest.raises(
        InvalidInputError, match=r"^--at 0001-01-01T00:00:00 is outside"
    ):
        ctx.hub.recall(ws, "postgres", at="0001-01-01")


def test_moments_in_range_still_parse():
    assert parse_moment("1000-01-01T00:00+00:00") == datetime(1000, 1, 1, tzinfo=UTC)
    assert parse_moment("2023-05-08").tzinfo is not None


def _doc(blob, created_at):
    return LexicalDoc(
        blob=blob,
        memory_id=f"m-{blob}",
        kind="fact",
        context="",
        title=None,
        body="alpha",
        tags=(),
        created_at=created_at,
    )


def test_the_date_field_clamps_what_tantivy_cannot_hold():
    # Tantivy's date field holds 1677-09-21 to 2262-04-11 and raises past
    # them; memories may carry 1000 to 9000, and stores anything at all.
    index = LexicalIndex.in_memory()
    docs = [
        _doc("early", engine.EARLIEST_TIME),
        _doc("y1500", datetime(1500, 6, 1, tzinfo=UTC)),
        _doc("y1700", datetime(1700, 6, 1, tzinfo=UTC)),
        _doc("now", NOW),
        _doc("y2250", datetime(2250, 6, 1, tzinfo=UTC)),
        _doc("y3000", datetime(3000, 6, 1, tzinfo=UTC)),
        _doc("late", engine.LATEST_TIME),
        *(_doc(f"far{n}", moment) for n, moment in enumerate(STORED)),
    ]
    with index.writer() as writer:
        writer.add(docs)
        writer.commit()

    def within(start, end):
        return sorted(b for b, _ in index.search("", limit=20, within=[(start, end)]))

    year = timedelta(days=366)
    assert within(NOW - year, NOW + year) == ["now"]
    assert within(datetime(1700, 1, 1, tzinfo=UTC), NOW + year) == ["now", "y1700"]
    assert within(NOW, datetime(2260, 1, 1, tzinfo=UTC)) == ["now", "y2250"]
    # What lies before 1678 sits at its start, what lies after 2261 at its end.
    before = ["early", "far1", "far3", "far5", "y1500"]
    assert within(
        datetime(1000, 1, 1, tzinfo=UTC), datetime(1690, 1, 1, tzinfo=UTC)
    ) == (before)
    assert within(datetime(2261, 6, 1, tzinfo=UTC), engine.LATEST_TIME) == []
    # Spans past either end hold nothing and raise nothing.
    assert (
        within(datetime.min.replace(tzinfo=UTC), datetime(999, 1, 1, tzinfo=UTC)) == []
    )
    assert (
        within(datetime(3000, 1, 1, tzinfo=UTC), datetime.max.replace(tzinfo=UTC)) == []
    )


def test_memories_at_the_ends_of_the_accepted_range_are_recalled(ws):
    # Before the index clamped, any time Tantivy cannot hold (before 1678,
    # after 2261) broke recall for the branch, even one the door accepts.
    hastings = remember(
        ws, "The battle of Hastings", datetime(1066, 10, 14, tzinfo=UTC)
    )
    first = remember(ws, "The first accepted moment", engine.EARLIEST_TIME)
    last = remember(ws, "The last accepted moment", engine.LATEST_TIME)
    today = remember(ws, "The battle of the build pipeline", NOW)
    assert ids(ctx.hub.recall(ws, "battle of Hastings in 1066", now=NOW))[0] == hastings
    assert (
        ids(ctx.hub.recall(ws, "build pipeline battle yesterday", now=NOW))[0] == today
    )
    assert set(ids(ctx.hub.search(ws, "accepted moment", now=NOW))) == {first, last}
