"""`op log` and `undo N` / `undo --to OP` (issue 16, "Diff, branches and undo
as git users expect")."""

import pytest

from ctx.engine import (
    Draft,
    Intent,
    InvalidInputError,
    create_branch,
    delete_branch,
    edit,
    list_memories,
    op_log,
    remember,
    resolve_revision,
    undo,
)


def _bodies(store, branch="main"):
    return sorted(m.memory.body for m in list_memories(store, branch))


def test_op_log_lists_every_branch_move_newest_first(store, intent):
    mid = remember(store, Draft(text="v1"), intent).ids[0]
    create_branch(store, "exp")
    bob = Intent(agent="bob", intent="refine")
    edit(store, mid, bob, body="v2")
    ops = op_log(store)
    assert [op.id for op in ops] == ["main@3", "exp@1", "main@2", "main@1"]
    newest = ops[0]
    assert newest.branch == "main"
    assert newest.agent == "bob"
    assert newest.new == resolve_revision(store, "main")
    assert newest.old == resolve_revision(store, "main~1")
    assert newest.message.startswith("ctx refine: Edit")
    assert ops[1].message == "ctx branch: created from HEAD"
    assert ops[1].agent is None  # a new branch adds no commit of its own
    assert ops[1].old is None
    assert [op.id for op in op_log(store, "exp")] == ["exp@1"]


def test_op_log_keeps_a_deleted_branchs_moves(store, intent):
    create_branch(store, "gone")
    delete_branch(store, "gone")
    newest = op_log(store, "gone")[0]
    assert (newest.id, newest.new) == ("gone@2", None)
    assert newest.old == resolve_revision(store, "main")


def test_undo_twice_is_a_redo_and_says_so(store, intent):
    mid = remember(store, Draft(text="v1"), intent).ids[0]
    edit(store, mid, intent, body="v2")
    first = undo(store)
    assert (first.redo, first.steps) == (False, 1)
    assert first.undone.startswith("ctx observe: Edit")
    second = undo(store)
    assert second.redo is True
    assert second.undone == first.undone  # the edit, not "ctx undo: ..."
    assert _bodies(store) == ["v2"]
    assert op_log(store)[0].message == "ctx redo: " + first.undone
    third = undo(store)
    assert (third.redo, third.undone) == (False, first.undone)
    assert _bodies(store) == ["v1"]


def test_undo_n_goes_back_n_operations_of_the_branch(store, intent):
    remember(store, Draft(text="a"), intent)
    remember(store, Draft(text="b"), intent)
    remember(store, Draft(text="c"), intent)
    create_branch(store, "other")  # another branch's move is not counted
    result = undo(store, steps=2)
    assert result.steps == 2
    assert _bodies(store) == ["a"]
    assert result.new == resolve_revision(store, "main")
    assert op_log(store, "main")[0].message == "ctx undo: 2 operations, to main@2"
    with pytest.raises(InvalidInputError, match="has only 4 operations to undo"):
        undo(store, steps=9)


def test_undo_to_an_operation_restores_where_it_left_the_branch(store, intent):
    remember(store, Draft(text="a"), intent)
    remember(store, Draft(text="b"), intent)
    remember(store, Draft(text="c"), intent)
    result = undo(store, to="main@2")
    assert _bodies(store) == ["a"]
    assert result.steps == 2
    assert undo(store, to="main@4").steps == 1  # back to before that undo
    assert _bodies(store) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("to", "message"),
    [
        ("main@99", "No operation 'main@99'."),
        ("main", "'main' is not an operation id."),
        ("exp@1", "Operation 'exp@1' moved branch 'exp', not 'main'."),
    ],
)
def test_undo_to_a_bad_operation_is_refused(store, intent, to, message):
    remember(store, Draft(text="a"), intent)
    create_branch(store, "exp")
    with pytest.raises(InvalidInputError) as info:
        undo(store, to=to)
    assert str(info.value) == message


def test_undo_steps_and_to_are_exclusive(store, intent):
    remember(store, Draft(text="a"), intent)
    with pytest.raises(InvalidInputError, match="either"):
        undo(store, steps=2, to="main@1")


def test_undo_that_would_not_move_the_branch_is_refused(store, intent):
    remember(store, Draft(text="a"), intent)
    remember(store, Draft(text="b"), intent)
    undo(store)
    tip = resolve_revision(store, "main")
    # Two operations ago (before the undo and the write it undid) is where
    # the undo already put the branch.
    with pytest.raises(InvalidInputError) as info:
        undo(store, steps=2)
    assert str(info.value) == "Branch 'main' is already where main@2 left it."
    with pytest.raises(InvalidInputError, match="already where main@2 left it"):
        undo(store, to="main@2")
    with pytest.raises(InvalidInputError, match="not older than the branch's tip"):
        undo(store, to="main@4")
    assert resolve_revision(store, "main") == tip
    assert len(op_log(store, "main")) == 4


def test_undo_after_a_move_no_operation_logged_says_so(disk_store, intent):
    import subprocess

    store = disk_store
    remember(store, Draft(text="a"), intent)
    remember(store, Draft(text="b"), intent)
    tip = resolve_revision(store, "main")
    git = ["git", "--git-dir", str(store.path / "git")]

    def out(*args: str) -> str:
        done = subprocess.run([*git, *args], check=True, capture_output=True, text=True)
        return done.stdout.strip()

    # As a push from another store moves it: a commit of its own, no log line.
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    moved = out(*env, "commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", "pushed")
    out("update-ref", "refs/heads/main", moved)
    with pytest.raises(InvalidInputError) as info:
        undo(store)
    assert str(info.value) == (
        "Branch 'main' was moved by something that logs no operation (a push "
        "from another store, git) since main@3; ctx undo goes back only over its "
        "own operations."
    )
    assert resolve_revision(store, "main") == moved
