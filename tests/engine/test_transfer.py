"""Push, fetch, pull and clone between stores through a bare repository path.

The servers (git daemon, smart http) and the command line are tested in
tests/integration/test_remotes.py; here the engine's rules, on disk.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from ctx.engine import (
    CommitNotFoundError,
    ConflictError,
    CtxError,
    Draft,
    Intent,
    InvalidInputError,
    RefNotFoundError,
    RemoteError,
    RemoteNotFoundError,
    Store,
    add_remote,
    blame,
    clone,
    create_branch,
    edit,
    fetch,
    list_conflicts,
    list_memories,
    list_remotes,
    log,
    pull,
    push,
    remember,
    remove_remote,
    resolve_revision,
    tag,
)

GIT = "/usr/bin/git"
ALICE = Intent(agent="alice", intent="observe")
BOB = Intent(agent="bob", intent="observe")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "g",
    "GIT_AUTHOR_EMAIL": "g@example.com",
    "GIT_COMMITTER_NAME": "g",
    "GIT_COMMITTER_EMAIL": "g@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin",
}


def git(*args: str) -> str:
    done = subprocess.run(
        [GIT, *args], capture_output=True, text=True, check=True, env=GIT_ENV
    )
    return done.stdout


def bare(path: Path) -> Path:
    git("init", "-q", "--bare", "-b", "main", str(path))
    return path


def refs(path: Path) -> str:
    """Every ref of a repository with its id (what 'unchanged' compares)."""
    return git("--git-dir", str(path), "for-each-ref")


def bodies(store: Store, rev: str = "main") -> dict[str, str]:
    return {r.memory.id: r.memory.body for r in list_memories(store, rev)}


@pytest.fixture
def two(
    tmp_path: Path, clock: Callable[[], datetime]
) -> Iterator[tuple[Store, Store, Path]]:
    """Store A with one memory pushed to a bare remote, and B cloned from it."""
    remote = bare(tmp_path / "remote.git")
    a = Store.init(tmp_path / "a", clock=clock)
    remember(a, Draft(text="The queue is Postgres", tags=["topic:queue"]), ALICE)
    add_remote(a, "origin", str(remote))
    push(a)
    clone(tmp_path / "b", str(remote), clock=clock)
    b = Store.open(tmp_path / "b", clock=clock)
    yield a, b, remote
    a.close()
    b.close()


def test_push_to_an_empty_remote_then_clone_gives_the_same_memories(two):
    a, b, _ = two
    assert bodies(b) == bodies(a)
    assert b.branch_tip("main") == a.branch_tip("main")
    assert [r.name for r in list_remotes(b)] == ["origin"]
    assert list_remotes(b)[0].branches == ("main",)
    assert b.head_branch() == "main"


def test_a_second_push_is_up_to_date(two):
    a, _, _ = two
    result = push(a)
    assert result.updated == ()
    assert result.up_to_date == ("main",)


def test_pull_brings_new_memories_by_fast_forward(two):
    a, b, _ = two
    new = remember(a, Draft(text="The API listens on 8080"), ALICE)
    push(a)
    result = pull(b, BOB)
    assert result.merge.fast_forward
    assert result.fetch.updated[0].branch == "main"
    assert new.ids[0] in bodies(b)
    assert resolve_revision(b, "origin/main") == a.branch_tip("main")


def test_a_push_that_is_not_a_fast_forward_is_refused_and_changes_nothing(two):
    a, b, remote = two
    remember(a, Draft(text="A writes first"), ALICE)
    push(a)
    remember(b, Draft(text="B writes without pulling"), BOB)
    before = refs(remote)
    with pytest.raises(ConflictError, match="origin has work that main does not"):
        push(b)
    assert refs(remote) == before
    result = push(b, force=True)
    assert result.updated[0].forced
    assert refs(remote) != before


def test_two_stores_editing_the_same_memories_converge_with_conflicts_as_data(two):
    a, b, _ = two
    (shared,) = bodies(a)
    edit(a, shared, ALICE, body="The queue is Postgres 16")
    tag(a, shared, ["owner:alice"], ALICE)
    only_a = remember(a, Draft(text="Alice's own note"), ALICE).ids[0]
    edit(b, shared, BOB, body="The queue is Redis now")
    tag(b, shared, ["owner:bob"], BOB)
    only_b = remember(b, Draft(text="Bob's own note"), BOB).ids[0]
    push(a)
    pulled = pull(b, BOB)  # B merges A's work: a clash on the body
    assert [c.id for c in pulled.merge.conflicts] == [shared]
    push(b)
    assert pull(a, ALICE).merge.fast_forward  # A takes B's merge as it is
    assert bodies(a) == bodies(b)
    assert {only_a, only_b, shared} <= set(bodies(a))
    (conflict,) = list_conflicts(a)
    assert conflict.theirs_ref == "origin/main"
    assert conflict.ours is not None
    assert conflict.theirs is not None
    assert {conflict.ours.body, conflict.theirs.body} == {
        "The queue is Postgres 16",
        "The queue is Redis now",
    }
    memory = next(r.memory for r in list_memories(a) if r.memory.id == shared)
    assert {"owner:alice", "owner:bob", "topic:queue"} <= set(memory.tags)
    for store in (a, b):  # every object fetched: both stores whole
        git("--git-dir", str(store.path / "git"), "fsck", "--strict", "--no-progress")


def test_push_all_and_named_branches(two):
    a, _, remote = two
    create_branch(a, "agent/claude")
    remember(a, Draft(text="On the agent branch"), ALICE, branch="agent/claude")
    result = push(a, branches=["agent/claude"])
    assert [u.branch for u in result.updated] == ["agent/claude"]
    create_branch(a, "exp")
    result = push(a, all_branches=True)
    assert [u.branch for u in result.updated] == ["exp"]
    assert "refs/heads/exp" in refs(remote)


def test_pushing_a_missing_branch_is_not_found(two):
    a, _, remote = two
    before = refs(remote)
    with pytest.raises(RefNotFoundError):
        push(a, branches=["nope"])
    assert refs(remote) == before


def test_pull_of_a_branch_the_remote_lacks(two):
    _, b, _ = two
    with pytest.raises(
        RefNotFoundError, match="Remote 'origin' has no branch 'x'"
    ) as e:
        pull(b, BOB, branch="x")
    # No branch x here either: pushing it would fail too.
    assert e.value.hint == "Name one of its branches: `ctx pull origin BRANCH`."
    create_branch(b, "x")
    with pytest.raises(RefNotFoundError) as e:
        pull(b, BOB, branch="x")
    assert e.value.hint == "`ctx push origin x` creates it there."


def test_unknown_remote(two):
    a, _, _ = two
    with pytest.raises(RemoteNotFoundError, match=r"'up' \(known: origin\)"):
        fetch(a, "up")


@pytest.mark.parametrize(
    "url",
    ["htp://example.com/x", "http://", "http://[::1", "git://host:99999/x", "a\nb"],
)
def test_malformed_addresses_are_refused(two, url):
    a, _, _ = two
    with pytest.raises(InvalidInputError, match="is not a remote address"):
        add_remote(a, "bad", url)
    assert [r.name for r in list_remotes(a)] == ["origin"]


def test_remote_names_are_checked_and_unique(two):
    a, _, _ = two
    with pytest.raises(InvalidInputError):
        add_remote(a, "no spaces", "/tmp/x")
    with pytest.raises(ConflictError):
        add_remote(a, "origin", "/tmp/x")


def test_a_remote_whose_name_begins_another_s_has_only_its_own_branches(two, tmp_path):
    a, _, _ = two
    add_remote(a, "o", str(bare(tmp_path / "other.git")))
    assert {r.name: r.branches for r in list_remotes(a)} == {
        "o": (),
        "origin": ("main",),
    }
    assert push(a, "o").updated[0].old is None
    assert {r.name: r.branches for r in list_remotes(a)} == {
        "o": ("main",),
        "origin": ("main",),
    }


def test_remove_remote_drops_its_fetched_branches(two):
    _, b, _ = two
    tip = resolve_revision(b, "origin/main")
    removed = remove_remote(b, "origin")
    assert removed.branches == ("main",)
    assert list_remotes(b) == []
    with pytest.raises(CommitNotFoundError):
        resolve_revision(b, "origin/main")
    b.commit(tip)  # the commits stay


def test_unreachable_address_is_a_remote_error(two):
    a, _, _ = two
    add_remote(a, "gone", "git://127.0.0.1:9/nothing")
    before = refs(a.path / "git")
    with pytest.raises(RemoteError, match=r"Cannot reach git://127\.0\.0\.1:9/nothing"):
        fetch(a, "gone")
    assert refs(a.path / "git") == before


def code_repository(work: Path) -> Path:
    """A git repository with a work tree, ``main`` checked out, one commit."""
    git("init", "-q", "-b", "main", str(work))
    (work / "README.md").write_text("hello\n")
    git("-C", str(work), "add", ".")
    git("-C", str(work), "commit", "-qm", "code")
    return work


def test_a_git_repository_that_is_not_a_store_is_refused(two, tmp_path):
    a, _, _ = two
    work = code_repository(tmp_path / "work")
    add_remote(a, "code", str(work))
    before = refs(a.path / "git")
    with pytest.raises(RemoteError, match="is not a ctx store"):
        fetch(a, "code")
    assert refs(a.path / "git") == before
    # The refused fetch left its objects (pruned by gc): a second try, a
    # pull, finds the tip held and is refused the same.
    for again in (lambda: fetch(a, "code"), lambda: pull(a, ALICE, "code")):
        with pytest.raises(RemoteError, match="is not a ctx store"):
            again()
        assert refs(a.path / "git") == before
    with pytest.raises(RemoteError, match="is not a ctx store"):
        clone(tmp_path / "c", str(work), clock=a.clock)
    assert not (tmp_path / "c").exists()


def test_a_branch_checked_out_in_a_work_tree_is_not_pushed_to(two, tmp_path):
    a, _, _ = two
    work = code_repository(tmp_path / "work")
    add_remote(a, "code", str(work))
    before = refs(work / ".git")
    with pytest.raises(RemoteError, match="has 'main' checked out in a work tree"):
        push(a, "code", ["main"], force=True)
    assert refs(work / ".git") == before
    assert git("-C", str(work), "status", "--porcelain") == ""
    create_branch(a, "memory", "main")  # a branch not checked out there moves
    assert push(a, "code", ["memory"]).updated[0].branch == "memory"
    git("-C", str(work), "checkout", "-q", "--detach")
    assert push(a, "code", ["main"], force=True).updated[0].branch == "main"
    # Named by its .git folder, or checked out in a linked worktree: the same.
    git("-C", str(work), "checkout", "-q", "main")
    git("-C", str(work), "worktree", "add", "-q", str(tmp_path / "wt"), "memory")
    add_remote(a, "dotgit", str(work / ".git"))
    for branch in ("main", "memory"):  # both move on here
        remember(a, Draft(text=f"One more on {branch}"), ALICE, branch=branch)
    for remote, branch in (("dotgit", "main"), ("code", "memory")):
        before = refs(work / ".git")
        with pytest.raises(RemoteError, match=f"has '{branch}' checked out"):
            push(a, remote, [branch], force=True)
        assert refs(work / ".git") == before
    for tree in (work, tmp_path / "wt"):
        assert git("-C", str(tree), "status", "--porcelain") == ""


def test_a_remote_branch_in_the_way_refuses_the_push(two, tmp_path):
    """The code's remote has a branch 'ctx': memory's ctx/main cannot be made."""
    a, _, remote = two
    work = code_repository(tmp_path / "work")
    git("-C", str(work), "branch", "ctx")
    code = bare(tmp_path / "code.git")
    git("-C", str(work), "push", "-q", str(code), "main", "ctx")
    add_remote(a, "code", str(code), namespace="ctx/")
    create_branch(a, "topic/x")
    git("--git-dir", str(remote), "branch", "topic", "main")
    for name, branch, theirs in (
        ("code", "main", "ctx"),
        ("origin", "topic/x", "topic"),
    ):
        before = refs(code), refs(remote)
        with pytest.raises(RemoteError, match=f"has '{theirs}', so '.*{branch}'"):
            push(a, name, [branch])
        assert (refs(code), refs(remote)) == before


def test_cloning_an_empty_remote_says_how_to_fill_it(tmp_path, clock):
    empty = bare(tmp_path / "empty.git")
    with pytest.raises(RemoteError, match="is empty") as caught:
        clone(tmp_path / "c", str(empty), clock=clock)
    assert "ctx push" in (caught.value.hint or "")
    assert not (tmp_path / "c").exists()


def test_clone_refuses_an_existing_store(two, tmp_path, clock):
    _, _, remote = two
    with pytest.raises(ConflictError, match="A store already exists"):
        clone(tmp_path / "b", str(remote), clock=clock)


def _cached_commits(store_path: Path) -> int:
    cache = store_path / "cache" / "history.jsonl"
    return len(cache.read_bytes().splitlines()) if cache.exists() else 0


def test_a_fresh_clone_answers_log_and_blame_without_filling_its_whole_cache(
    tmp_path, clock
):
    a = Store.init(tmp_path / "a", clock=clock)
    target = remember(a, Draft(text="target, version 0"), ALICE).ids[0]
    for i in range(1, 40):
        if i % 10 == 0:
            edit(a, target, BOB, body=f"target, version {i}\nline two")
        else:
            remember(a, Draft(text=f"note {i}"), ALICE)
    commits = len(log(a))
    clone(tmp_path / "c", str(tmp_path / "a"), clock=clock)
    assert _cached_commits(tmp_path / "c") == 0  # the clone diffed nothing
    c = Store.open(tmp_path / "c", clock=clock)
    assert log(c, limit=5) == log(a, limit=5)
    assert blame(c, target) == blame(a, target)
    assert log(c, target) == log(a, target)
    c.close()
    # Only what the three answers needed was diffed and kept.
    assert 5 <= _cached_commits(tmp_path / "c") < commits // 2
    a.close()


def test_a_store_folder_is_a_remote(two, tmp_path, clock):
    a, _, _ = two
    clone(tmp_path / "c", str(tmp_path / "a"), clock=clock)
    c = Store.open(tmp_path / "c", clock=clock)
    assert bodies(c) == bodies(a)
    c.close()


def test_commits_pushed_by_stock_git_are_pulled(two, tmp_path):
    a, b, remote = two
    work = tmp_path / "wc"
    git("clone", "-q", str(remote), str(work))
    (shared,) = bodies(a)
    path = next(r.path for r in list_memories(a))
    text = (work / path).read_text().replace("Postgres", "Postgres (checked by git)")
    (work / path).write_text(text)
    git("-C", str(work), "commit", "-qam", "Fix by hand")
    git("-C", str(work), "push", "-q", "origin", "main")
    result = pull(b, BOB)
    assert result.merge.fast_forward
    assert bodies(b)[shared] == "The queue is Postgres (checked by git)"


def test_a_push_sends_only_what_changed_and_the_remote_stays_complete(two):
    from dulwich.objects import ObjectID

    from ctx.engine import forget, link, remember_many
    from ctx.engine._sending import objects_to_send

    a, b, remote = two
    drafts = [Draft(text=f"Memory number {i}") for i in range(60)]
    ids = remember_many(a, drafts, ALICE).ids
    push(a)
    before = a.branch_tip("main")
    edit(a, ids[0], ALICE, body="Memory number zero")
    forget(a, ids[1], ALICE)
    link(a, ids[2], ids[3], "DEPENDS_ON", ALICE)
    sent = objects_to_send(
        a.repo.object_store,
        [ObjectID(before.encode())],
        [ObjectID(a.branch_tip("main").encode())],
    )
    assert len(sent) < 40  # 3 commits and the trees and blobs they changed
    push(a)
    git("--git-dir", str(remote), "fsck", "--strict", "--no-progress")
    assert pull(b, BOB).merge.fast_forward
    assert bodies(b) == bodies(a)


def test_a_tree_that_comes_back_is_still_sent_whole(tmp_path, clock):
    # A link added then removed gives the later commit the links/ tree of an
    # earlier one; the subtree it shares with the commit between must still
    # be sent (memoising on trees alone lost it).
    from ctx.engine import link, unlink

    remote = bare(tmp_path / "remote.git")
    s = Store.init(tmp_path / "s", clock=clock)
    one, two_, three = (
        remember(s, Draft(text=f"Memory {i}"), ALICE).ids[0] for i in range(3)
    )
    link(s, one, two_, "DEPENDS_ON", ALICE)
    link(s, one, three, "RELATES_TO", ALICE)
    unlink(s, one, three, "RELATES_TO", ALICE)
    create_branch(s, "side")
    edit(s, two_, ALICE, body="Memory two, edited", branch="side")
    add_remote(s, "origin", str(remote))
    push(s, all_branches=True)
    git("--git-dir", str(remote), "fsck", "--strict", "--no-progress")
    s.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_histories_push_and_pull_whole(tmp_path, clock, seed):
    # push sends, and a local fetch writes, only what each commit changed
    # (engine/_sending.py): after any mix of writes, branches and merges,
    # pushed in steps, both ends pass git fsck --strict and hold the same.
    import random

    from ctx.engine import forget, link, merge, unlink

    rng = random.Random(seed)
    remote = bare(tmp_path / "remote.git")
    a = Store.init(tmp_path / "a", clock=clock)
    add_remote(a, "origin", str(remote))
    push(a)
    clone(tmp_path / "b", str(remote), clock=clock)
    b = Store.open(tmp_path / "b", clock=clock)
    create_branch(a, "side")
    live: list[str] = []
    for step in range(40):
        branch = rng.choice(["main", "side"])
        ids = [r.memory.id for r in list_memories(a, branch)]
        action = rng.choice(["add", "add", "edit", "forget", "link", "unlink", "undo"])
        if action == "add" or len(ids) < 3:
            text = f"Memory {step} of seed {seed}"
            live.append(remember(a, Draft(text=text), ALICE, branch=branch).ids[0])
        elif action == "edit":
            edit(a, rng.choice(ids), ALICE, body=f"Edited at {step}", branch=branch)
        elif action == "forget":
            forget(a, rng.choice(ids), ALICE, branch=branch)
        elif action == "link":
            one, two_ = rng.sample(ids, 2)
            with contextlib.suppress(ConflictError):
                link(a, one, two_, "RELATES_TO", ALICE, branch=branch)
        elif action == "unlink":
            one, two_ = rng.sample(ids, 2)
            with contextlib.suppress(CtxError):
                unlink(a, one, two_, "RELATES_TO", ALICE, branch=branch)
        else:  # a change undone by the next commit: a tree that comes back
            one, two_ = rng.sample(ids, 2)
            with contextlib.suppress(ConflictError):
                link(a, one, two_, "DEPENDS_ON", ALICE, branch=branch)
                unlink(a, one, two_, "DEPENDS_ON", ALICE, branch=branch)
        if step % 10 == 9:
            merge(a, "side", ALICE, into="main", prefer="ours")
        if step % 5 == 4:
            push(a, all_branches=True)
            pull(b, BOB)
    push(a, all_branches=True)
    pull(b, BOB)
    git("--git-dir", str(remote), "fsck", "--strict", "--no-progress")
    git("--git-dir", str(tmp_path / "b" / "git"), "fsck", "--strict", "--no-progress")
    assert bodies(b) == bodies(a)
    # The whole history at once, from nothing: a push and a local clone.
    whole = bare(tmp_path / "whole.git")
    add_remote(a, "whole", str(whole))
    push(a, "whole", all_branches=True)
    git("--git-dir", str(whole), "fsck", "--strict", "--no-progress")
    clone(tmp_path / "c", str(tmp_path / "a"), clock=clock)
    git("--git-dir", str(tmp_path / "c" / "git"), "fsck", "--strict", "--no-progress")
    a.close()
    b.close()


_KILLED_IN_PACKED_REFS = """
import os, signal, sys
from datetime import UTC, datetime
from pathlib import Path
import dulwich.refs
from dulwich.file import GitFile
from ctx.engine import Store, fetch

def killed(self, refs):  # dies with the packed-refs lock taken, half written
    taken = GitFile(os.path.join(self.path, b"packed-refs"), "wb")
    taken.write(b"# half")
    taken.flush()
    os.kill(os.getpid(), signal.SIGKILL)

dulwich.refs.DiskRefsContainer.add_packed_refs = killed
fetch(Store.open(Path(sys.argv[1]), clock=lambda: datetime.now(UTC)))
"""


def test_a_fetch_killed_writing_packed_refs_leaves_no_lock_for_the_next(two):
    # A replica killed there refused every sync after it (the lock stayed),
    # and fetch and pull failed with a traceback.
    import sys

    a, b, _ = two
    remember(a, Draft(text="The API listens on 8080"), ALICE)
    push(a)
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_IN_PACKED_REFS, str(b.path)],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == -9, done.stderr
    assert (b.path / "git" / "packed-refs.lock").exists()
    pull(b, BOB)
    assert bodies(b) == bodies(a)
    assert not (b.path / "git" / "packed-refs.lock").exists()


def test_a_packed_refs_lock_of_another_program_is_a_one_line_error(two):
    from ctx.engine import StoreBusyError

    a, b, _ = two
    remember(a, Draft(text="The API listens on 8080"), ALICE)
    push(a)
    lock = b.path / "git" / "packed-refs.lock"
    lock.write_text("")  # git's own, taken before any ctx write: left alone
    before = refs(b.path / "git")
    with pytest.raises(StoreBusyError, match=r"refs are locked by .*packed-refs\.lock"):
        fetch(b)
    assert refs(b.path / "git") == before
    assert lock.exists()


def hook(remote: Path, name: str, script: str) -> None:
    path = remote / "hooks" / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def test_a_local_remotes_hooks_and_receive_rules_hold_as_for_git_push(two, tmp_path):
    # ctx wrote a local remote's refs itself: its pre-receive hook and
    # receive.denyNonFastForwards, which `git push` there obeys, were passed by.
    a, b, remote = two
    hook(remote, "pre-receive", "echo frozen >&2; exit 1")
    remember(a, Draft(text="The API listens on 8080"), ALICE)
    before = refs(remote)
    with pytest.raises(RemoteError, match="refused refs/heads/main: pre-receive"):
        push(a)
    assert refs(remote) == before
    (remote / "hooks" / "pre-receive").unlink()
    told = tmp_path / "told"
    hook(remote, "post-receive", f"cat > {told}")
    assert push(a).updated[0].branch == "main"
    assert told.read_text().split()[1] == a.branch_tip("main")
    assert refs(remote) != before
    git("--git-dir", str(remote), "config", "receive.denyNonFastForwards", "true")
    remember(b, Draft(text="The API listens on 9090"), BOB)
    before = refs(remote)
    with pytest.raises(RemoteError, match="refused refs/heads/main"):
        push(b, force=True)
    assert refs(remote) == before
    git("--git-dir", str(remote), "fsck", "--strict")


def test_a_push_a_hook_takes_in_part_tracks_and_names_what_went(two):
    a, _, remote = two
    hook(remote, "update", 'test "$1" != refs/heads/side || exit 1')
    create_branch(a, "side")
    remember(a, Draft(text="On main"), ALICE)
    remember(a, Draft(text="On side"), ALICE, branch="side")
    with pytest.raises(
        RemoteError, match=r"refused refs/heads/side: .*; it took main\."
    ):
        push(a, all_branches=True)
    assert git("--git-dir", str(remote), "rev-parse", "main").strip() == a.branch_tip(
        "main"
    )
    assert list_remotes(a)[0].branches == ("main",)
