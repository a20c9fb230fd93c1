from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx.engine import (
    KINDS,
    MAX_BODY_BYTES,
    Draft,
    InvalidInputError,
    Memory,
    MemoryNotFoundError,
    Source,
    edit,
    forget,
    last_commits,
    link,
    list_memories,
    log,
    remember,
    remember_many,
    show,
)
from ctx.engine.model import decode_memory, encode


def test_remember_writes_one_commit_with_intent(store, intent):
    result = remember(
        store, Draft(text="Postgres for the queue", kind="decision"), intent
    )
    assert result.commit is not None
    assert result.commit.intent == intent
    assert result.commit.author == "tester"
    record = show(store, result.ids[0])
    assert record.memory.body == "Postgres for the queue"
    assert record.memory.kind == "decision"
    assert (
        record.path
        == f"memory/general/{result.ids[0][-1]}/{result.ids[0][-2]}/{result.ids[0][-3]}/{result.ids[0]}.json"
    )
    assert len(log(store)) == 2  # the store's first commit, then this one


def test_when_is_kept_apart_from_commit_time(store, intent):
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    result = remember(store, Draft(text="launch day", when=when), intent)
    assert show(store, result.ids[0]).memory.created_at == when
    assert result.commit is not None
    assert result.commit.time.year == 2026


def test_tags_are_sorted_and_unique(store, intent):
    result = remember(store, Draft(text="x", tags=("b:2", "a:1", "b:2")), intent)
    assert show(store, result.ids[0]).memory.tags == ("a:1", "b:2")


def test_blob_bytes_are_canonical(store, intent):
    result = remember(store, Draft(text="same", title="T"), intent)
    record = show(store, result.ids[0])
    data = encode(record.memory)
    assert decode_memory(data) == record.memory
    assert encode(decode_memory(data)) == data
    assert data.startswith(b'{\n  "version": 1,\n  "id": ')


@pytest.mark.parametrize(
    ("draft", "message"),
    [
        (Draft(text=""), "The text is empty."),
        (Draft(text="   \n\t"), "The text is empty."),
        (
            Draft(text="x" * (MAX_BODY_BYTES + 1)),
            f"The text is {MAX_BODY_BYTES + 1} bytes; the limit is {MAX_BODY_BYTES} bytes.",
        ),
        (Draft(text="bad \udcff byte"), "The text is not valid UTF-8."),
        (Draft(text="nul \x00 byte"), "The text contains a NUL byte."),
        (Draft(text="x", kind="opinion"), "Unknown kind 'opinion'."),
        (Draft(text="x", context="../etc"), "Context '../etc' is not allowed."),
        (Draft(text="x", context="a/b"), "Context 'a/b' is not allowed."),
        # A pattern's "$" matches before a last newline: "memory/team\n".
        (Draft(text="x", context="team\n"), "Context 'team\\n' is not allowed."),
        (
            Draft(text="x", tags=("notag",)),
            "Tag 'notag' is not of the form namespace:value.",
        ),
        (Draft(text="x", title="two\nlines"), "The title must be a single line."),
    ],
)
def test_bad_drafts_are_refused_and_write_nothing(store, intent, draft, message):
    before = log(store)
    with pytest.raises(InvalidInputError) as info:
        remember(store, draft, intent)
    assert info.value.message == message
    assert log(store) == before


def test_remember_many_is_one_commit_and_all_or_nothing(store, intent):
    drafts = [Draft(text=f"m{i}") for i in range(50)]
    result = remember_many(store, drafts, intent)
    assert len(result.ids) == 50
    assert len(set(result.ids)) == 50
    assert len(log(store)) == 2
    with pytest.raises(InvalidInputError, match=r"Item 3: The text is empty\."):
        remember_many(
            store, [Draft(text="ok"), Draft(text="ok"), Draft(text="")], intent
        )
    assert len(list_memories(store)) == 50


def test_edit_makes_a_new_version_at_the_same_path(store, intent):
    mid = remember(store, Draft(text="v1", tags=("a:1",)), intent).ids[0]
    before = show(store, mid)
    result = edit(
        store,
        mid,
        intent,
        body="v2",
        title="Title",
        add_tags=["b:2"],
        remove_tags=["a:1"],
    )
    after = show(store, mid)
    assert after.path == before.path
    assert (after.memory.body, after.memory.title, after.memory.tags) == (
        "v2",
        "Title",
        ("b:2",),
    )
    assert after.memory.created_at == before.memory.created_at
    assert result.commit is not None
    assert show(store, mid, "HEAD~1").memory.body == "v1"


@pytest.mark.parametrize("imported_count", [20, 1_000])
def test_last_commits_answers_what_the_log_answers_for_each_memory(
    store, intent, imported_count
):
    # A thousand memories in one commit: changes of more than 64 KB, which
    # history reads once into the set of the memories they change.
    drafts = [Draft(text=f"m{i}") for i in range(imported_count)]
    imported = remember_many(store, drafts, intent)
    edited, kept, forgotten = imported.ids[3], imported.ids[7], imported.ids[9]
    edit(store, edited, intent, body="changed")
    forget(store, forgotten, intent)
    remember(store, Draft(text="later"), intent)
    # A link's file is named after the memories it links; it changes neither.
    link(store, kept, edited, "DEPENDS_ON", intent)
    asked = [edited, kept, forgotten, "01J0000000000000000000NONE"]
    lasts = last_commits(store, asked)
    for memory_id in (edited, kept, forgotten):
        assert lasts[memory_id] == log(store, memory_id, limit=1)[0].commit
    assert "01J0000000000000000000NONE" not in lasts
    assert lasts[kept] == imported.commit
    older = last_commits(store, [edited], rev="HEAD~4")
    assert older[edited] == imported.commit


def test_edit_with_no_change_commits_nothing(store, intent):
    mid = remember(store, Draft(text="v1"), intent).ids[0]
    assert edit(store, mid, intent, body="v1").commit is None
    assert len(log(store)) == 2


def test_forget_deletes_but_history_keeps_it(store, intent):
    mid = remember(store, Draft(text="temporary"), intent).ids[0]
    forget(store, mid, intent)
    with pytest.raises(MemoryNotFoundError):
        show(store, mid)
    assert show(store, mid, "HEAD~1").memory.body == "temporary"
    assert [e.changes[0].status for e in log(store, mid)] == ["removed", "added"]


def test_unknown_ids_are_errors(store, intent):
    with pytest.raises(MemoryNotFoundError):
        show(store, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
    with pytest.raises(InvalidInputError, match="is not a memory id"):
        show(store, "../../etc/passwd")
    with pytest.raises(MemoryNotFoundError):
        edit(store, "01ARZ3NDEKTSV4RRFFQ69G5FAV", intent, body="x")


def test_pinned_memories_live_under_pinned(store, intent):
    a = remember(
        store,
        Draft(text="Always answer in English", title="Language", pinned=True),
        intent,
    )
    b = remember(store, Draft(text="Second", title="Language", pinned=True), intent)
    assert a.paths == ("pinned/general/language.json",)
    assert b.paths == ("pinned/general/language-2.json",)
    assert show(store, b.ids[0]).pinned


def test_list_filters_by_prefix(store, intent):
    remember(store, Draft(text="d", context="decisions"), intent)
    remember(store, Draft(text="f"), intent)
    assert [r.memory.body for r in list_memories(store, prefix="memory/decisions")] == [
        "d"
    ]
    assert len(list_memories(store)) == 2
    with pytest.raises(InvalidInputError):
        list_memories(store, prefix="memory/../x")


def test_memory_struct_round_trips_through_msgspec(store, intent):
    mid = remember(store, Draft(text="x", meta={"k": "v"}), intent).ids[0]
    record = show(store, mid)
    assert (
        msgspec.json.decode(
            msgspec.json.encode(record.memory), type=type(record.memory)
        )
        == record.memory
    )


_TEXT = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), min_size=1
)


@given(
    body=_TEXT,
    title=st.none() | _TEXT,
    kind=st.sampled_from(KINDS),
    tags=st.lists(
        st.from_regex(r"[a-z]{1,5}:[a-z0-9]{1,5}", fullmatch=True), max_size=4
    ),
    when=st.datetimes(timezones=st.just(UTC)),
    meta=st.dictionaries(_TEXT, _TEXT, max_size=3),
    source=st.none() | st.builds(Source, file=_TEXT, section=_TEXT),
)
def test_memory_blobs_round_trip_exactly(body, title, kind, tags, when, meta, source):
    memory = Memory(
        version=1,
        id="01ARZ3NDEKTSV4RRFFQ69G5FAV",
        kind=kind,
        title=title,
        body=body,
        tags=tuple(sorted(set(tags))),
        created_at=when,
        source=source,
        meta=meta,
    )
    data = encode(memory)
    assert decode_memory(data) == memory
    assert encode(decode_memory(data)) == data


def test_memory_ids_are_ulids():
    from datetime import timedelta

    from ctx.engine import new_memory_id

    t = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert new_memory_id(t, b"\x00" * 10) == "01GZXTBKC0" + "0" * 16
    assert new_memory_id(t, b"\xff" * 10) == "01GZXTBKC0" + "Z" * 16
    later = new_memory_id(t + timedelta(milliseconds=1))
    assert later > new_memory_id(t, b"\xff" * 10)
