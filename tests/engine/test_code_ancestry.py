"""The nearest code ancestor with memory, and sync's target (issue 34). Code
repositories made with the git binary, commit times set."""

from __future__ import annotations

from pathlib import Path

import pytest
from code_repos import code_repo, commit, git

from ctx import engine
from ctx.engine import Intent, Store

WHO = Intent(agent="tester", intent="merge")


@pytest.fixture
def code(tmp_path: Path) -> Path:
    return code_repo(tmp_path / "code", "base", 1_700_000_000)


@pytest.fixture
def store(disk_store: Store) -> Store:
    return disk_store


def test_outside_a_work_tree_the_default_is_kept(store, tmp_path):
    assert engine.code_branch(tmp_path) is None
    assert engine.followed_branch(store, tmp_path, "main", write=True) == "main"
    assert store.branches() == ["main"]


def test_incomparable_merge_bases_go_by_commit_time(store, code):
    """topic holds a's and b's commits; b's is the later: b's memory."""
    for name, when in (("a", 1_700_000_100), ("b", 1_700_000_200)):
        git(code, "checkout", "-q", "-b", name, "main")
        commit(code, name, when)
        engine.create_branch(store, name, "main")
    git(code, "checkout", "-q", "-b", "topic", "a")
    git(code, "merge", "-q", "--no-edit", "b", when=1_700_000_300)
    assert engine.code_branch(code) == "topic"
    assert engine.followed_branch(store, code, "main", write=False) == "b"
    assert store.branches() == ["a", "b", "main"]


def test_a_tie_goes_to_the_stores_default_branch(store, code):
    git(code, "branch", "feature/q")
    engine.create_branch(store, "feature/q", "main")
    git(code, "checkout", "-q", "-b", "topic")
    commit(code, "topic", 1_700_000_100)
    assert engine.followed_branch(store, code, "main", write=False) == "main"


def test_a_name_that_reads_like_a_commit_id_is_not_followed(store, code):
    git(code, "checkout", "-q", "-b", "deadbeef1")
    assert engine.followed_branch(store, code, "main", write=True) == "main"
    assert store.branches() == ["main"]


def test_sync_into_a_target_without_memory_creates_it_first(store, code):
    git(code, "checkout", "-q", "-b", "feature/x")
    commit(code, "x", 1_700_000_100)
    engine.create_branch(store, "feature/x", "main")
    engine.remember(store, engine.Draft(text="x knows"), WHO, branch="feature/x")
    git(code, "checkout", "-q", "-b", "release", "main")
    git(code, "merge", "-q", "--no-edit", "feature/x", when=1_700_000_200)
    preview = engine.sync_code_branches(store, code, WHO, into="release", dry_run=True)
    assert [(m.source, m.target) for m in preview.merges] == [("feature/x", "main")]
    assert store.branches() == ["feature/x", "main"]
    done = engine.sync_code_branches(store, code, WHO, into="release")
    assert [(m.source, m.target, m.fast_forward) for m in done.merges] == [
        ("feature/x", "release", True)
    ]
    assert store.branch_tip("release") == store.branch_tip("feature/x")
    assert store.branch_tip("main") != store.branch_tip("release")


def test_sync_without_a_default_code_branch_asks_for_into(store, tmp_path):
    repo = tmp_path / "trunk"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    commit(repo, "base", 1_700_000_000)
    with pytest.raises(engine.InvalidInputError, match="default branch") as caught:
        engine.sync_code_branches(store, repo, WHO)
    assert caught.value.hint == "Name the branch to merge into with --into."
