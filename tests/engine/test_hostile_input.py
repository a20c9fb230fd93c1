"""Input that once got past the door or crashed it (issue 12): times outside
the accepted range, JSON nested past the decoder's limit, branch names that
look like commit ids. Each is refused with one clean error, and nothing is
written."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from ctx.engine import (
    EARLIEST_TIME,
    LATEST_TIME,
    CorruptStoreError,
    Draft,
    InvalidInputError,
    Store,
    check_time,
    create_branch,
    export_lines,
    import_memories,
    init_store,
    link,
    list_branches,
    log,
    remember,
    resolve_revision,
    show,
)
from ctx.engine.model import decode_memory

RANGE = "1000-01-01 to 9000-12-31 (UTC)"
FAR = [
    "9999-12-31T23:59:59-14:00",  # year 10000 in UTC
    "0001-01-01T00:00:00+14:00",  # year 0 in UTC
    "9999-12-31T23:59:59+00:00",
    "0001-01-01T00:00:00+00:00",
    "9001-01-01T00:00:00+00:00",
    "0999-12-31T23:59:59+00:00",
    "1000-01-01T00:30:00+01:00",  # 999-12-31T23:30 in UTC
]


def _tip(store):
    return store.branch_tip("main")


# -- times ---------------------------------------------------------------------------


def test_the_range_ends_are_accepted_and_named():
    assert check_time(EARLIEST_TIME) == EARLIEST_TIME
    assert check_time(LATEST_TIME) == LATEST_TIME
    east = timezone(timedelta(hours=14))
    assert check_time(datetime(1000, 1, 1, 14, tzinfo=east))
    with pytest.raises(InvalidInputError) as caught:
        check_time(EARLIEST_TIME - timedelta(microseconds=1), "--when")
    assert caught.value.message == (
        f"--when 0999-12-31T23:59:59.999999+00:00 is outside the accepted range, "
        f"{RANGE}."
    )


@pytest.mark.parametrize("when", FAR)
def test_remember_refuses_a_time_out_of_range(store, intent, when):
    before = _tip(store)
    moment = datetime.fromisoformat(when)
    with pytest.raises(InvalidInputError) as caught:
        remember(store, Draft(text="x", when=moment), intent)
    assert caught.value.message == (
        f"The time {moment.isoformat()} is outside the accepted range, {RANGE}."
    )
    assert _tip(store) == before


def test_remember_accepts_the_ends_of_the_range(store, intent):
    for moment in (EARLIEST_TIME, LATEST_TIME):
        mid = remember(store, Draft(text=f"edge {moment}", when=moment), intent).ids[0]
        assert show(store, mid).memory.created_at == moment


@pytest.mark.parametrize("when", FAR[:2])
def test_plain_import_lines_refuse_a_time_out_of_range(store, intent, when):
    before = _tip(store)
    lines = [b'{"text": "fine"}', json.dumps({"text": "x", "when": when}).encode()]
    with pytest.raises(InvalidInputError, match=r"^Line 2: `when` .* is outside"):
        import_memories(store, lines, intent)
    assert _tip(store) == before


@pytest.mark.parametrize("when", FAR[:2])
@pytest.mark.parametrize("what", ["memory", "link"])
def test_export_lines_refuse_a_time_out_of_range(store, intent, when, what):
    a = remember(store, Draft(text="a"), intent).ids[0]
    b = remember(store, Draft(text="b"), intent).ids[0]
    link(store, a, b, "RELATES_TO", intent)
    lines = b"".join(export_lines(store)).splitlines()
    n = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == what)
    item = json.loads(lines[n])
    item[what]["created_at"] = when
    lines[n] = json.dumps(item).encode()
    other = Store.memory(clock=store.clock)
    before = _tip(other)
    with pytest.raises(InvalidInputError) as caught:
        import_memories(other, lines, intent)
    assert caught.value.message == (
        f"Line {n + 1}: `created_at` {datetime.fromisoformat(when).isoformat()} "
        f"is outside the accepted range, {RANGE}."
    )
    assert _tip(other) == before


# -- nesting -------------------------------------------------------------------------


DEEP = b"[" * 100_000 + b"]" * 100_000


HEADER = b'{"format": "ctx-export", "version": 1}'
NESTED = "its JSON is nested too deeply."


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        # The first line is probed for an export header, which once recursed.
        ([b'{"x": ' + DEEP + b', "text": "a"}'], "Object contains unknown field `x`."),
        (
            [b'{"format": "ctx-export", "x": ' + DEEP + b"}"],
            "Object contains unknown field `format`.",
        ),
        ([b'{"text": "a"}', DEEP], "Expected `object`, got `array`."),
        (
            [b'{"text": "a"}', b'{"meta": {"k": ' + DEEP + b"}}"],
            "Expected `str`, got `array` - at `$.meta[...]`.",
        ),
        # A line of an export is searched for its "type" before it is read.
        ([HEADER, b'{"x": ' + DEEP + b', "type": "memory"}'], NESTED),
        (
            [HEADER, b'{"type": "link", "x": ' + DEEP + b"}"],
            "Object contains unknown field `x`.",
        ),
    ],
    ids=["first line", "header", "bare", "meta", "before the type", "after the type"],
)
def test_deeply_nested_json_is_a_clean_line_error(store, intent, lines, message):
    before = _tip(store)
    with pytest.raises(InvalidInputError) as caught:
        import_memories(store, lines, intent)
    assert caught.value.message == f"Line {len(lines)}: {message}"
    assert _tip(store) == before


def test_a_stored_blob_nested_too_deeply_is_a_store_error():
    data = b'{"version": 1, "x": ' + DEEP + b"}"
    with pytest.raises(CorruptStoreError, match="nested too deeply"):
        decode_memory(data)


# -- branch names --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["deadbee", "DEADBEEF", "0123456789abcdef", "a" * 40, "f" * 41]
)
def test_a_branch_named_like_a_commit_id_is_refused(store, intent, name):
    remember(store, Draft(text="x"), intent)
    before = list_branches(store)
    with pytest.raises(InvalidInputError) as caught:
        create_branch(store, name)
    assert caught.value.message == f"Branch name {name!r} looks like a commit id."
    assert "\n" not in (caught.value.hint or "")
    assert list_branches(store) == before


def test_a_branch_cannot_shadow_a_real_commit(store, intent):
    remember(store, Draft(text="x"), intent)
    first = log(store)[0].commit.id
    remember(store, Draft(text="y"), intent)
    for name in (first, first[:7], first[:12]):
        with pytest.raises(InvalidInputError, match="looks like a commit id"):
            create_branch(store, name)
        assert resolve_revision(store, name) == first


@pytest.mark.parametrize(
    "name", ["cafe", "facade", "deadbeef-fix", "v1234567", "b-abcdef0"]
)
def test_short_or_mixed_names_are_still_fine(store, intent, name):
    remember(store, Draft(text="x"), intent)
    assert create_branch(store, name).name == name


def test_init_refuses_a_commit_like_first_branch(tmp_path):
    with pytest.raises(InvalidInputError, match="looks like a commit id"):
        init_store(tmp_path / ".ctx", clock=lambda: EARLIEST_TIME, branch="abcdef12")
    assert not (tmp_path / ".ctx").exists()
