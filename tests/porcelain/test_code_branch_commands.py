"""Memory that follows the code's branches: `ctx init --follow-code`, `ctx sync`
(issue 34). Real git repositories made with the git binary in tmp dirs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from code_repos import code_repo, commit, git

from ctx import engine, hub
from ctx.engine import Store
from ctx.porcelain.main import cli


@pytest.fixture
def code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = code_repo(tmp_path / "code", "one")
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def following(ctx, code: Path):
    ctx("init", str(ctx.root), "--follow-code")
    return ctx


def store_of(ctx) -> Store:
    return Store.open(ctx.root / ".ctx", clock=lambda: datetime(2026, 1, 5, tzinfo=UTC))


def texts(ctx, branch: str) -> list[str]:
    return sorted(m["headline"] for m in ctx.json("ls", "--branch", branch))


def refs(ctx) -> dict[str, str]:
    store = store_of(ctx)
    try:
        return {b: store.branch_tip(b) for b in store.branches()}
    finally:
        store.close()


def files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_off_by_default_a_write_on_a_code_branch_stays_on_head(ctx, code):
    git(code, "checkout", "-q", "-b", "feature/x")
    ctx("remember", "Queue is Postgres")
    assert list(refs(ctx)) == ["main"]
    assert texts(ctx, "main") == ["Queue is Postgres"]


def test_a_refused_write_leaves_no_memory_branch(following, code):
    """The code's branch gets its memory branch from its first write only."""
    git(code, "checkout", "-q", "-b", "feature/x")
    before = following.files()
    following("remember", "", code=4)
    following("pull", "nowhere", code=3)
    following("forget", "0" * 26, "--reason", "gone", code=3)
    assert following.files() == before
    assert list(refs(following)) == ["main"]
    following("remember", "Queue is Postgres")
    assert list(refs(following)) == ["feature/x", "main"]


def test_a_short_id_is_found_on_a_branch_its_first_write_makes(following, code):
    """The unmade branch resolves as a revision: its source's commit."""
    mid = following("remember", "Queue is Postgres").stdout.strip()
    git(code, "checkout", "-q", "-b", "feature/y")
    following("edit", mid[:8], "--body", "Queue is Kafka")
    following("link", mid[-6:], mid[:8], "--type", "RELATES_TO", code=4)
    assert texts(following, "feature/y") == ["Queue is Kafka"]
    assert texts(following, "main") == ["Queue is Postgres"]


def test_init_follow_code_sets_the_config_key(following):
    config = (following.root / ".ctx" / "config.toml").read_text(encoding="utf-8")
    assert config.endswith("\n[branches]\nfollow_code = true\n")
    assert hub.load_config(following.root / ".ctx").branches.follow_code


def test_init_follow_code_outside_a_work_tree_says_so(ctx, tmp_path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    result = ctx("init", "--follow-code")
    assert result.stderr == (
        f"Notice: {plain} is not inside a git work tree: the store follows the "
        "code's branches only where it is used in one.\n"
    )
    assert "follow_code = true" in (ctx.root / ".ctx" / "config.toml").read_text()


def test_follow_code_turns_a_false_key_true_and_keeps_the_rest(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        "[branches]\nfollow_code = false\n\n[recall]\nbudget = 9\n", encoding="utf-8"
    )
    hub.follow_code(tmp_path)
    assert config.read_text(encoding="utf-8") == (
        "[branches]\nfollow_code = true\n\n[recall]\nbudget = 9\n"
    )
    hub.follow_code(tmp_path)  # twice: unchanged
    assert hub.load_config(tmp_path).recall.budget == 9


def test_a_write_on_a_feature_branch_lands_on_its_memory_branch(following, code):
    following("remember", "Queue is Postgres")
    git(code, "checkout", "-q", "-b", "feature/x")
    commit(code, "two")
    following("remember", "Retry three times")
    tips = refs(following)
    assert list(tips) == ["feature/x", "main"]
    assert texts(following, "main") == ["Queue is Postgres"]
    assert texts(following, "feature/x") == ["Queue is Postgres", "Retry three times"]
    # Created from main's memory: its first parent is main's tip.
    store = store_of(following)
    assert store.commit(tips["feature/x"]).parents == (tips["main"],)
    store.close()
    # And `ctx ls` with no --branch reads the code's branch.
    assert sorted(m["headline"] for m in following.json("ls")) == [
        "Queue is Postgres",
        "Retry three times",
    ]


def test_recall_on_a_new_code_branch_reads_main_and_writes_nothing(following, code):
    with (following.root / ".ctx" / "config.toml").open("a") as f:
        f.write('\n[embedder]\nkind = "hashing"\n')
    following("remember", "The queue is Postgres")
    git(code, "checkout", "-q", "-b", "feature/y")
    before = refs(following)
    git_files = files(following.root / ".ctx" / "git")
    hits = following.json("recall", "queue")["hits"]
    assert [(h["body"], h["branch"]) for h in hits] == [
        ("The queue is Postgres", "main")
    ]
    assert [m["headline"] for m in following.json("ls")] == ["The queue is Postgres"]
    assert refs(following) == before
    assert files(following.root / ".ctx" / "git") == git_files


def test_ctx_branch_still_wins(following, code):
    following("branch", "shared")
    git(code, "checkout", "-q", "-b", "feature/x")
    result = following.runner.invoke(
        cli,
        ["--store", str(following.root / ".ctx"), "remember", "Pinned to shared"],
        env={"CTX_BRANCH": "shared"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    assert list(refs(following)) == ["main", "shared"]
    assert texts(following, "shared") == ["Pinned to shared"]


def test_detached_head_works_on_the_stores_head(following, code):
    commit(code, "two")
    git(code, "checkout", "-q", "--detach", "HEAD~1")
    following("remember", "Written while detached")
    assert list(refs(following)) == ["main"]
    assert texts(following, "main") == ["Written while detached"]


def test_a_rebase_or_a_bisect_works_on_the_branch_it_works_through(following, code):
    """HEAD is detached meanwhile; git status names the branch, and so does ctx."""
    following("remember", "From main")
    git(code, "checkout", "-q", "-b", "feature/rb")
    commit(code, "r1")
    commit(code, "r2")
    editor = "sed -i 's/^pick \\(.*\\) r2$/edit \\1 r2/'"
    git(code, "-c", f"sequence.editor={editor}", "rebase", "-q", "-i", "HEAD~2")
    assert git(code, "branch", "--show-current") == ""  # detached
    following("remember", "Written during the rebase")
    git(code, "rebase", "--continue")
    assert texts(following, "feature/rb") == ["From main", "Written during the rebase"]
    assert texts(following, "main") == ["From main"]
    git(code, "bisect", "start", "HEAD", "HEAD~2")
    assert git(code, "branch", "--show-current") == ""
    following("remember", "Written while bisecting")
    git(code, "bisect", "reset")
    assert "Written while bisecting" in texts(following, "feature/rb")
    assert texts(following, "main") == ["From main"]


def test_switch_says_that_the_code_branch_still_rules(following, code):
    following("remember", "From main")
    following("branch", "agent/x")
    before = refs(following)
    switched = following("switch", "agent/x")
    assert switched.stdout.startswith("Switched to agent/x (")
    assert switched.stderr == (
        "Notice: commands here still follow the code's branch main: this store "
        "follows the code's branches (switch the code's branch instead); agent/x "
        "is used at a detached HEAD or outside the work tree.\n"
    )
    assert refs(following) == before  # no branch made on the way
    git(code, "checkout", "-q", "--detach")
    assert following("switch", "main").stderr == ""  # nothing follows here
    # A code branch no memory branch can be named as: the store's own is used.
    git(code, "checkout", "-q", "-b", "deadbeef1")
    assert following("switch", "agent/x").stderr == ""
    # A code branch with no memory yet says what it reads meanwhile.
    git(code, "checkout", "-q", "-b", "feat/w")
    told = following("switch", "agent/x").stderr
    assert told.endswith(
        "feat/w has no memory branch yet: it reads main's, and its first "
        "write starts from there.\n"
    )


def test_a_linked_worktree_uses_its_own_branch(following, code, monkeypatch):
    following("remember", "From main")
    tree = code.parent / "tree"
    git(code, "worktree", "add", "-q", "-b", "feature/wt", str(tree))
    monkeypatch.chdir(tree)
    following("remember", "From the worktree")
    assert list(refs(following)) == ["feature/wt", "main"]
    assert texts(following, "feature/wt") == ["From main", "From the worktree"]
    monkeypatch.chdir(code)  # the main work tree is still on main
    assert [m["headline"] for m in following.json("ls")] == ["From main"]


def merged_feature(following, code: Path) -> None:
    following("remember", "Queue is Postgres")
    git(code, "checkout", "-q", "-b", "feature/x")
    commit(code, "two")
    following("remember", "Retry three times")
    git(code, "checkout", "-q", "main")
    commit(code, "three")
    git(code, "merge", "-q", "--no-edit", "feature/x")


def test_sync_merges_the_memory_of_a_merged_code_branch(following, code):
    git(code, "branch", "feature/later")
    following("branch", "feature/later")
    git(code, "checkout", "-q", "feature/later")
    commit(code, "later")
    git(code, "checkout", "-q", "main")
    merged_feature(following, code)
    before = refs(following)
    dry = following("sync", "--dry-run")
    assert dry.stdout == (
        "Would merge feature/x into main (fast-forward).\n"
        "Not merged in the code yet: feature/later.\n"
    )
    assert refs(following) == before
    done = following.json("sync")
    assert done["into"] == "main"
    assert [m["source"] for m in done["merges"]] == ["feature/x"]
    assert done["waiting"] == ["feature/later"]
    assert texts(following, "main") == ["Queue is Postgres", "Retry three times"]
    after = refs(following)
    again = following("sync")
    assert again.stdout == (
        "Nothing to merge into main.\nNot merged in the code yet: feature/later.\n"
    )
    assert refs(following) == after


def test_sync_reports_a_conflict_and_exits_5(following, code):
    kept = following("remember", "Deploys on Fridays").stdout.strip()
    git(code, "checkout", "-q", "-b", "feature/x")
    commit(code, "two")
    following("edit", kept, "--body", "Deploys on Mondays")
    git(code, "checkout", "-q", "main")
    following("edit", kept, "--body", "Deploys on Tuesdays")
    main_before = refs(following)["main"]
    git(code, "merge", "-q", "--no-edit", "feature/x")
    result = following("sync", code=5)
    assert "1 conflict kept" in result.stdout
    store = store_of(following)
    try:
        assert engine.conflicted_ids(store, "main") == {kept}
        assert engine.show_memory(store, kept, "main").memory.body == (
            "Deploys on Tuesdays"
        )
        tip = store.commit(store.branch_tip("main"))
        assert tip.parents == (main_before, store.branch_tip("feature/x"))
    finally:
        store.close()


def test_a_dry_run_previews_a_merge_after_a_fast_forward_as_it_will_be(following, code):
    # Two merged code branches changed one memory: the first fast-forwards
    # main, and the second then keeps a conflict, as the preview says.
    kept = following("remember", "Queue: Postgres, 5 workers.").stdout.strip()
    git(code, "checkout", "-q", "-b", "feature/a")
    commit(code, "a2")
    following("edit", kept, "--body", "Queue: Postgres, 10 workers.")
    git(code, "checkout", "-q", "-b", "feature/b", "main")
    commit(code, "b2")
    following("edit", kept, "--body", "Queue: Postgres, 20 workers.")
    git(code, "checkout", "-q", "main")
    git(code, "merge", "-q", "--no-ff", "-m", "ma", "feature/a")
    git(code, "merge", "-q", "--no-ff", "-m", "mb", "feature/b")
    before = refs(following)
    assert following("sync", "--dry-run", code=5).stdout == (
        "Would merge feature/a into main (fast-forward).\n"
        "Would merge feature/b into main (merge, 1 conflict).\n"
    )
    assert refs(following) == before
    done = following("sync", code=5)
    assert "1 conflict kept" in done.stdout


def test_sync_refuses_a_target_its_memory_could_not_follow(following, code):
    # A memory branch named like a commit id is one that `ctx branch` refuses
    # and that following the code never reads: what a sync merged there
    # would be out of sight.
    git(code, "checkout", "-q", "-b", "deadbeef1")
    git(code, "checkout", "-q", "-b", "feature/x")
    commit(code, "two")
    following("remember", "Retry three times")
    git(code, "checkout", "-q", "deadbeef1")
    git(code, "merge", "-q", "--no-edit", "feature/x")
    before = files(following.root / ".ctx" / "git")
    for args in (("--dry-run",), ()):
        result = following("sync", "--into", "deadbeef1", *args, code=4)
        assert result.stderr.startswith(
            "Error: Code branch 'deadbeef1' cannot have memory of its own: "
            "Branch name 'deadbeef1' looks like a commit id.\n"
        )
    assert files(following.root / ".ctx" / "git") == before  # not even its records
    empty = following("sync", "--into", "", code=4)
    assert empty.stderr.startswith("Error: The code branch to merge into is empty.")


def test_sync_outside_a_work_tree_is_an_error(ctx, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = ctx("sync", code=4)
    assert result.stderr.startswith(f"Error: {tmp_path} is not inside a git work tree.")


def test_sync_names_a_squash_merged_branch_once_deleted_with_how_to_merge(
    following, code
):
    following("remember", "Queue is Postgres")
    git(code, "checkout", "-q", "-b", "feature/sq")
    commit(code, "two")
    following("remember", "Cache TTL is five minutes")
    git(code, "checkout", "-q", "main")
    git(code, "merge", "-q", "--squash", "feature/sq")
    git(code, "commit", "-q", "-m", "squash feature/sq")
    waiting = following("sync")  # git too calls it unmerged
    assert waiting.stdout.endswith("Not merged in the code yet: feature/sq.\n")
    git(code, "branch", "-q", "-D", "feature/sq")
    gone = following.json("sync")
    assert (gone["waiting"], gone["gone"], gone["merges"]) == ([], ["feature/sq"], [])
    said = following("sync").stdout.splitlines()[-1]
    assert said == (
        "Code branch feature/sq is gone, and nothing in main's history shows it "
        "merged (a squash or rebase merge leaves no trace): `ctx merge feature/sq "
        "--into main` merges its memory, `ctx branch -D feature/sq` drops it."
    )
    following(*said.split("`")[1].split()[1:])  # as it says
    assert texts(following, "main") == [
        "Cache TTL is five minutes",
        "Queue is Postgres",
    ]
    assert following.json("sync")["gone"] == []  # merged now: not named again


def test_sync_sees_a_deleted_branch_and_skips_a_fresh_one(following, code):
    git(code, "checkout", "-q", "-b", "feature/done")
    commit(code, "done")
    following("remember", "Done: retry three times")
    git(code, "checkout", "-q", "-b", "feature/fresh", "main")
    following("remember", "Fresh: not started")
    git(code, "checkout", "-q", "main")
    git(code, "merge", "-q", "--no-ff", "--no-edit", "feature/done")
    git(code, "branch", "-q", "-d", "feature/done")
    result = following("sync")
    assert result.stdout == (
        "Fast-forwarded main to "
        f"{refs(following)['feature/done'][:10]}.\n"
        "Not merged in the code yet: feature/fresh.\n"
    )
    assert texts(following, "main") == ["Done: retry three times"]


def test_an_agents_branch_for_a_code_branch_is_reviewed_and_merged_there(
    following, code
):
    git(code, "checkout", "-q", "-b", "feature/x")
    following("remember", "Feature x caches in Redis")
    following("branch", "agent/bot@feature/x", "feature/x")
    following(
        "remember", "Feature x retries five times", "--branch", "agent/bot@feature/x"
    )
    git(code, "checkout", "-q", "main")
    out = following("review", "agent/bot@feature/x").stdout
    assert out.startswith("agent/bot@feature/x since it split from feature/x: 1 commit")
    assert out.endswith(
        "Merge it with `ctx merge agent/bot@feature/x --into feature/x`.\n"
    )
