"""Short ids: a unique prefix or suffix names a memory (issue 16, "Ids")."""

import sqlite3

import pytest

import ctx.engine.memories
from ctx.engine import (
    Draft,
    InvalidInputError,
    MemoryId,
    MemoryNotFoundError,
    abbreviate,
    create_branch,
    edit,
    forget,
    link,
    list_links,
    log,
    remember,
    resolve_memory_id,
    show,
)

# Made in the same millisecond: they share their first ten characters (time);
# A and B also share their last eight.
A = "01JD2X9K7MQQQQ111122223333"
B = "01JD2X9K7MRRRR444422223333"
C = "01JD2X9K7NSSSS555566667777"


@pytest.fixture
def three(store, intent, monkeypatch):
    ids = iter([A, B, C])
    monkeypatch.setattr(
        ctx.engine.memories, "new_memory_id", lambda now: MemoryId(next(ids))
    )
    for text in ("alpha", "beta", "gamma"):
        remember(store, Draft(text=text), intent)
    return store


def test_a_full_id_is_not_looked_up(store):
    # The fast path: no index is opened, even for an id that is not there.
    assert resolve_memory_id(store, A.lower()) == A
    assert "texts" not in store.caches


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("01JD2X9K7N", C),  # a prefix
        ("01jd2x9k7ns", C),  # any case
        ("66667777", C),  # a suffix
        ("667777", C),  # six characters are enough
        ("122223333", A),  # a suffix one longer than the part A and B share
        ("01JD2X9K7MQ", A),
    ],
)
def test_a_unique_prefix_or_suffix_names_the_memory(three, text, expected):
    assert resolve_memory_id(three, text) == expected


@pytest.mark.parametrize("text", ["01JD2X9K7M", "22223333"])
def test_an_ambiguous_short_id_lists_the_candidates(three, text):
    with pytest.raises(InvalidInputError) as caught:
        resolve_memory_id(three, text)
    assert caught.value.message == (
        f"Id {text} is ambiguous: it names 2 memories ({A}, {B})."
    )
    assert caught.value.hint == "Give more of its characters."


def test_many_candidates_are_counted_after_the_first_few(store, intent):
    ids = [remember(store, Draft(text=f"m{n}"), intent).ids[0] for n in range(6)]
    prefix = ids[0][:6]  # made within seconds: every id starts so
    with pytest.raises(InvalidInputError) as caught:
        resolve_memory_id(store, prefix)
    shown = ", ".join(sorted(ids)[:3])
    assert caught.value.message == (
        f"Id {prefix} is ambiguous: it names 6 memories ({shown} and 3 more)."
    )


@pytest.mark.parametrize("text", ["6777", "66667777-", "0IJD2X", "x" * 27])
def test_a_short_id_needs_six_id_characters(three, text):
    with pytest.raises(InvalidInputError) as caught:
        resolve_memory_id(three, text)
    assert caught.value.message == (
        f"{text!r} is not a memory id: give its 26 characters, or at least 6 "
        "from its start or its end."
    )


def test_a_short_id_that_names_nothing_is_not_found(three):
    with pytest.raises(MemoryNotFoundError) as caught:
        resolve_memory_id(three, "ZZZZZZ")
    assert caught.value.message == (
        "No memory here has an id that starts or ends with ZZZZZZ."
    )


def test_every_entry_point_takes_a_short_id(three, intent):
    assert show(three, "66667777").memory.body == "gamma"
    assert edit(three, "66667777", intent, body="gamma 2").changed
    assert show(three, C).memory.body == "gamma 2"
    link(three, "122223333", "66667777", "RELATES_TO", intent)
    assert [item.target for item in list_links(three, "01JD2X9K7N")] == [C]
    assert log(three, "66667777")[0].changes[0].memory_id == C


def test_a_short_id_is_looked_up_at_the_revision_read(three, intent):
    create_branch(three, "before")
    forget(three, "66667777", intent)
    with pytest.raises(MemoryNotFoundError):
        show(three, "66667777")
    assert show(three, "66667777", "before").memory.body == "gamma"
    assert show(three, "66667777", rev="before").memory.body == "gamma"


def test_the_log_of_a_removed_memory_takes_a_short_id(three, intent):
    forget(three, C, intent)
    entries = log(three, "66667777")
    assert entries[0].commit.summary == f"Forget {C}"


def test_listings_show_the_shortest_unique_end(three):
    # A and B share eight characters of their end: the form is nine long.
    assert abbreviate(three, [A, C]) == {A: A[-9:], C: C[-9:]}
    assert abbreviate(three, [C]) == {C: C[-8:]}
    assert abbreviate(three, []) == {}
    for short in abbreviate(three, [A, B, C]).values():
        resolve_memory_id(three, short)  # each names one memory


def test_a_text_index_of_the_first_version_is_rebuilt(disk_store, intent):
    mid = remember(disk_store, Draft(text="kept"), intent).ids[0]
    path = disk_store.path / "cache" / "texts.sqlite"
    disk_store.close()
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO state VALUES ('version', '1');"
        "CREATE TABLE memory (path TEXT PRIMARY KEY, id TEXT NOT NULL,"
        " text TEXT NOT NULL, kind TEXT NOT NULL, title TEXT);"
    )
    db.close()
    store = type(disk_store).open(disk_store.path, clock=disk_store.clock)
    try:
        assert resolve_memory_id(store, mid[-8:]) == mid
    finally:
        store.close()


def test_a_text_index_answers_for_its_tree_after_another_read_moved_it(store, intent):
    from ctx.engine.texts import text_index

    create_branch(store, "other")
    mid = remember(store, Draft(text="only on main"), intent).ids[0]
    on_main = text_index(store, store.snapshot(store.branch_tip("main")))
    # A short id read on the other branch (another thread, say) moves it.
    with pytest.raises(MemoryNotFoundError):
        resolve_memory_id(store, mid[-8:], "other")
    assert on_main.with_text("only on main") == [(mid, show(store, mid).path)]


def test_a_query_takes_the_end_of_an_id_too(three, intent):
    from datetime import UTC, datetime

    from ctx.engine import select

    def chosen(where):
        now = datetime(2026, 1, 9, tzinfo=UTC)
        return sorted(s.record.memory.id for s in select(three, where, now=now))

    assert chosen("id:22223333") == [A, B]
    assert chosen("id:01JD2X9K7N") == [C]
    assert chosen("id:7777") == []  # an end needs six characters
    link(three, A, C, "RELATES_TO", intent)
    assert chosen("to:66667777") == [A]
