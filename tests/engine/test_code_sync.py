"""When `ctx sync` counts a code branch as merged: its recorded code tip, its
fork, a code branch deleted after its merge (issue 34). Code repositories
made with the git binary."""

from __future__ import annotations

from pathlib import Path

import pytest
from code_repos import code_repo, commit, git

from ctx import engine
from ctx.engine import Intent, Store

WHO = Intent(agent="tester", intent="merge")
RECORD = b"refs/ctx/code/"


@pytest.fixture
def code(tmp_path: Path) -> Path:
    return code_repo(tmp_path / "code", "base", 1_700_000_000)


def write_here(store: Store, code: Path, text: str) -> str:
    """Writes as a follower on the code's current branch does; returns it."""
    branch = engine.followed_branch(store, code, "main", write=True)
    engine.remember(store, engine.Draft(text=text), WHO, branch=branch)
    return branch


def synced(store: Store, code: Path, **kwargs) -> tuple[list[str], list[str]]:
    result = engine.sync_code_branches(store, code, WHO, **kwargs)
    return [m.source for m in result.merges], list(result.waiting)


def texts(store: Store, branch: str) -> list[str]:
    return sorted(r.memory.body for r in engine.list_sorted(store, branch).memories)


def test_a_fresh_branch_is_not_merged_as_the_target_moves_on(disk_store, code):
    """git calls `feature` merged (its tip is main's past); it has no code yet."""
    git(code, "switch", "-q", "-c", "feature")
    assert write_here(disk_store, code, "Plan: retry three times") == "feature"
    git(code, "switch", "-q", "main")
    commit(code, "main-2", 1_700_000_100)
    assert git(code, "branch", "--merged", "main").split() == ["feature", "*", "main"]
    assert synced(disk_store, code) == ([], ["feature"])
    assert texts(disk_store, "main") == []
    # Its first commit moves it beyond the fork; merged, its memory follows,
    # though no memory was written since.
    git(code, "switch", "-q", "feature")
    commit(code, "feature-1", 1_700_000_200)
    git(code, "switch", "-q", "main")
    git(code, "merge", "-q", "--no-edit", "feature", when=1_700_000_300)
    assert synced(disk_store, code) == (["feature"], [])
    assert texts(disk_store, "main") == ["Plan: retry three times"]


def test_a_branch_with_commits_before_its_first_memory_is_merged(disk_store, code):
    git(code, "switch", "-q", "-c", "feature")
    commit(code, "feature-1", 1_700_000_100)
    write_here(disk_store, code, "Retry three times")
    git(code, "switch", "-q", "main")
    git(code, "merge", "-q", "--ff-only", "feature")  # main's tip is feature's
    assert synced(disk_store, code) == (["feature"], [])


def test_a_code_branch_deleted_after_its_merge_is_merged(disk_store, code):
    git(code, "switch", "-q", "-c", "feature/x")
    commit(code, "x-1", 1_700_000_100)
    write_here(disk_store, code, "Retry three times")
    git(code, "switch", "-q", "main")
    git(code, "merge", "-q", "--no-ff", "--no-edit", "feature/x", when=1_700_000_200)
    git(code, "branch", "-q", "-d", "feature/x")
    assert engine.code_branch(code) == "main"
    preview = engine.sync_code_branches(disk_store, code, WHO, dry_run=True)
    assert [m.source for m in preview.merges] == ["feature/x"]
    assert synced(disk_store, code) == (["feature/x"], [])
    assert texts(disk_store, "main") == ["Retry three times"]
    assert synced(disk_store, code) == ([], [])  # idempotent


def gone(store: Store, code: Path) -> list[str]:
    return list(engine.sync_code_branches(store, code, WHO).gone)


def test_a_code_branch_deleted_unmerged_is_gone(disk_store, code):
    git(code, "switch", "-q", "-c", "feature/x")
    commit(code, "x-1", 1_700_000_100)
    write_here(disk_store, code, "An abandoned idea")
    git(code, "switch", "-q", "main")
    assert synced(disk_store, code) == ([], ["feature/x"])  # there: waiting
    git(code, "branch", "-q", "-D", "feature/x")
    assert synced(disk_store, code) == ([], [])
    assert gone(disk_store, code) == ["feature/x"]
    assert texts(disk_store, "main") == []


def test_sync_records_the_code_tip_a_deleted_branch_is_judged_by(disk_store, code):
    """Memory written before the branch's commits: the fork alone is known
    until a sync sees the commits; deleted after that, it is merged."""
    git(code, "switch", "-q", "-c", "early")
    write_here(disk_store, code, "Early note")
    commit(code, "early-1", 1_700_000_100)
    git(code, "switch", "-q", "-c", "later", "main")
    write_here(disk_store, code, "Later note")
    commit(code, "later-1", 1_700_000_150)
    git(code, "switch", "-q", "main")
    assert synced(disk_store, code) == ([], ["early", "later"])  # sees early-1
    git(code, "switch", "-q", "early")
    write_here(disk_store, code, "Early note 2")  # a write records its tip too
    git(code, "switch", "-q", "main")
    for name in ("early", "later"):
        git(code, "merge", "-q", "--no-edit", name, when=1_700_000_200)
        git(code, "branch", "-q", "-d", name)
    assert synced(disk_store, code) == (["early", "later"], [])


def test_a_deleted_branch_whose_commits_were_never_seen_is_gone(disk_store, code):
    git(code, "switch", "-q", "-c", "unseen")
    write_here(disk_store, code, "Unseen note")
    commit(code, "unseen-1", 1_700_000_100)
    git(code, "switch", "-q", "main")
    git(code, "merge", "-q", "--no-edit", "unseen", when=1_700_000_200)
    git(code, "branch", "-q", "-d", "unseen")
    assert synced(disk_store, code) == ([], [])
    assert gone(disk_store, code) == ["unseen"]  # named, with how to merge it


def test_a_dry_run_records_nothing(disk_store, code):
    engine.create_branch(disk_store, "feature", "main")
    git(code, "switch", "-q", "-c", "feature")
    git(code, "switch", "-q", "main")
    engine.sync_code_branches(disk_store, code, WHO, dry_run=True)
    assert disk_store.repo.refs.keys(base=RECORD) == set()
    engine.sync_code_branches(disk_store, code, WHO)
    assert disk_store.repo.refs.keys(base=RECORD) == {b"feature", b"main"}


def test_a_memory_branch_made_anew_forgets_its_old_fork(disk_store, code):
    git(code, "switch", "-q", "-c", "feature")
    write_here(disk_store, code, "First life")
    before = disk_store.repo.refs[RECORD + b"feature"]
    engine.delete_branch(disk_store, "feature", force=True)
    commit(code, "feature-1", 1_700_000_100)
    write_here(disk_store, code, "Second life")
    assert disk_store.repo.refs[RECORD + b"feature"] != before
    git(code, "switch", "-q", "main")
    git(code, "merge", "-q", "--ff-only", "feature")
    assert synced(disk_store, code) == (["feature"], [])


def test_a_target_with_nothing_to_merge_gets_no_memory_branch(disk_store, code):
    git(code, "switch", "-q", "-c", "release")
    commit(code, "release-1", 1_700_000_100)
    assert synced(disk_store, code, into="release") == ([], [])
    assert disk_store.branches() == ["main"]


def test_stop_leaves_what_is_not_begun(disk_store, code):
    for name in ("a", "b"):
        git(code, "switch", "-q", "-c", name, "main")
        commit(code, name, 1_700_000_100)
        write_here(disk_store, code, f"{name} knows")
    git(code, "switch", "-q", "main")
    for name in ("a", "b"):
        git(code, "merge", "-q", "--no-edit", name, when=1_700_000_200)
    at_once = engine.sync_code_branches(disk_store, code, WHO, stop=lambda: True)
    assert (at_once.merges, at_once.waiting, at_once.left) == ((), (), ("a", "b"))
    assert texts(disk_store, "main") == []

    def one_merge() -> bool:  # time is up once main holds a merge
        return bool(texts(disk_store, "main"))

    result = engine.sync_code_branches(disk_store, code, WHO, stop=one_merge)
    assert [m.source for m in result.merges] == ["a"]
    assert result.left == ("b",)
    assert texts(disk_store, "main") == ["a knows"]
    assert synced(disk_store, code) == (["b"], [])
