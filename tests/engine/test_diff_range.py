"""`A...B` diffs and git-like branch deletion (issue 16, "Diff, branches and
undo as git users expect")."""

import pytest

from ctx.engine import (
    ConflictError,
    Draft,
    InvalidInputError,
    create_branch,
    delete_branch,
    diff,
    diff_range,
    edit,
    list_branches,
    merge,
    remember,
    resolve_revision,
)


def _split(store, intent):
    """main and agent share `shared`; then main edits it and agent adds one."""
    mid = remember(store, Draft(text="Logs use local time"), intent).ids[0]
    create_branch(store, "agent")
    new = remember(store, Draft(text="Deploys on Fridays"), intent, branch="agent")
    edit(store, mid, intent, body="Logs use UTC")
    return mid, new.ids[0]


def test_three_dots_shows_only_the_branchs_own_changes(store, intent):
    mid, new = _split(store, intent)
    two_sided = diff(store, "main", "agent")
    assert [m.id for m in two_sided.added] == [new]
    assert [c.new.id for c in two_sided.changed] == [mid]  # main's edit, reversed
    since = diff_range(store, "main...agent")
    assert [m.id for m in since.added] == [new]
    assert since.changed == ()
    assert since.removed == ()
    assert since.from_merge_base is True
    assert since.base == resolve_revision(store, "agent~1")
    assert since.target == resolve_revision(store, "agent")


def test_two_dots_and_two_revisions_are_the_same_diff(store, intent):
    _split(store, intent)
    assert diff_range(store, "main..agent") == diff(store, "main", "agent")
    assert diff_range(store, "main", "agent") == diff(store, "main", "agent")
    assert diff_range(store, "main~1") == diff(store, "main~1", "HEAD")
    # An empty side is HEAD, as in git.
    assert diff_range(store, "agent..") == diff(store, "agent", "HEAD")
    assert diff_range(store, "...agent").base == resolve_revision(store, "agent~1")


def test_a_range_and_a_second_revision_are_refused(store, intent):
    _split(store, intent)
    with pytest.raises(InvalidInputError, match=r"^Give either a range"):
        diff_range(store, "main...agent", "main")


def test_delete_refuses_unmerged_work_unless_forced(store, intent):
    create_branch(store, "exp")
    remember(store, Draft(text="only on exp"), intent, branch="exp")
    with pytest.raises(ConflictError) as info:
        delete_branch(store, "exp")
    assert str(info.value) == "Branch 'exp' has work not merged into any branch."
    assert "-D" in (info.value.hint or "")
    assert "exp" in [b.name for b in list_branches(store)]
    tip = resolve_revision(store, "exp")
    result = delete_branch(store, "exp", force=True)
    assert (result.tip, result.deleted) == (tip, True)
    # The tip's abbreviation that the CLI prints brings it back.
    create_branch(store, "exp", tip[:10])
    assert resolve_revision(store, "exp") == tip


def test_delete_of_merged_work_needs_no_force(store, intent):
    create_branch(store, "exp")
    remember(store, Draft(text="on exp"), intent, branch="exp")
    merge(store, "exp", intent)
    assert delete_branch(store, "exp").deleted
    create_branch(store, "fresh")  # nothing of its own: main has its tip
    assert delete_branch(store, "fresh").deleted
