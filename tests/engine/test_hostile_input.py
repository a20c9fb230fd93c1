"""Input that once got past the door or crashed it (issue 12): branch names
that look like commit ids. Each is refused with one clean error, and nothing
is written."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ctx.engine import (
    Draft,
    InvalidInputError,
    create_branch,
    init_store,
    list_branches,
    log,
    remember,
    resolve_revision,
)

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
        init_store(
            tmp_path / ".ctx",
            clock=lambda: datetime(2026, 1, 5, tzinfo=UTC),
            branch="abcdef12",
        )
    assert not (tmp_path / ".ctx").exists()
