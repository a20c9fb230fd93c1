"""Stock git reads what ctx writes, and ctx reads what stock git writes.

DESIGN.md, "The store on disk" and "Commits and intent": ``.ctx/git`` is a
bare git repository; ``git --git-dir .ctx/git log`` shows the history with
its ``Ctx-*`` trailers.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from integration_support import GIT, git_env, run_git

from ctx.engine import (
    CommitId,
    Draft,
    Intent,
    MemoryId,
    Store,
    create_branch,
    edit,
    forget,
    fsck,
    link,
    list_conflicts,
    list_links,
    list_memories,
    log,
    merge,
    new_memory_id,
    remember,
    show,
    undo,
)

ALICE = Intent(agent="alice", intent="observe", confidence=0.8, reason="seen in config")
BOB = Intent(agent="bob", intent="decide", confidence=0.6, session="s-42")
CAROL = Intent(agent="carol", intent="refine", reason="retries were raised")


@dataclass(frozen=True)
class Scenario:
    """The store built by :func:`scenario`, with the ids the tests need."""

    store: Store
    path: Path
    queue: MemoryId
    deploys: MemoryId
    first: CommitId  # the commit that remembered `queue`


@pytest.fixture
def scenario(disk_store: Store) -> Scenario:
    store = disk_store
    assert store.path is not None
    first = remember(
        store,
        Draft(text="The queue uses Postgres.\nRetries: 3", title="Queue"),
        ALICE,
    )
    assert first.commit is not None
    queue = first.ids[0]
    deploys = remember(store, Draft(text="Deploys on Fridays"), BOB).ids[0]
    edit(store, queue, ALICE, body="The queue uses Postgres 16.\nRetries: 3")
    link(store, deploys, queue, "RELATES_TO", BOB)

    create_branch(store, "agent/carol")
    edit(
        store,
        queue,
        CAROL,
        body="The queue uses Postgres 16.\nRetries: 5",
        branch="agent/carol",
    )
    edit(store, queue, ALICE, body="The queue uses Postgres 16.\nRetries: 7")
    merged = merge(
        store, "agent/carol", Intent(agent="carol", intent="merge", confidence=0.5)
    )
    assert [c.id for c in merged.conflicts] == [queue]
    assert merged.commit is not None
    assert len(merged.commit.parents) == 2

    forget(store, deploys, Intent(agent="bob", intent="forget", reason="wrong"))
    undone = undo(store)
    assert undone.new == merged.commit.id
    return Scenario(
        store=store,
        path=store.path,
        queue=queue,
        deploys=deploys,
        first=first.commit.id,
    )


def _git_log(s: Scenario, fmt: str, *extra: str) -> list[str]:
    out = run_git(s.path, "log", "-z", f"--format={fmt}", *extra, "main").stdout
    return out.rstrip("\0").split("\0")


def test_git_log_shows_the_intent_trailers(scenario: Scenario) -> None:
    bodies = _git_log(scenario, "%B")
    engine_log = log(scenario.store)
    assert len(bodies) == len(engine_log) == 8  # init, 2 remember, 2 edits,
    # link, carol's edit, merge (the forget was undone)
    text = "\n".join(bodies)
    for trailer in (
        "Ctx-Agent: alice",
        "Ctx-Intent: observe",
        "Ctx-Confidence: 0.8",
        "Ctx-Reason: seen in config",
        "Ctx-Agent: bob",
        "Ctx-Intent: decide",
        "Ctx-Session: s-42",
        "Ctx-Intent: merge",
        "Ctx-Reason: retries were raised",
    ):
        assert trailer in text.splitlines(), trailer
    assert "Ctx-Intent: forget" not in text

    # git parses the trailers itself, for every commit ctx made.
    pairs = _git_log(scenario, "%H %(trailers:key=Ctx-Agent,valueonly,separator=%x2C)")
    by_git = dict(line.strip().split(" ", 1) for line in pairs)
    by_ctx = {e.commit.id: e.commit.intent.agent for e in engine_log if e.commit.intent}
    assert by_git == by_ctx
    assert set(by_git.values()) == {"ctx", "alice", "bob", "carol"}

    confidences = _git_log(
        scenario, "%(trailers:key=Ctx-Confidence,valueonly,separator=%x2C)"
    )
    assert sorted({c.strip() for c in confidences} - {""}) == ["0.5", "0.6", "0.8"]

    # And `git interpret-trailers --parse` reads a single message.
    message = run_git(scenario.path, "log", "-1", "--format=%B", scenario.first).stdout
    parsed = run_git(scenario.path, "interpret-trailers", "--parse", input=message)
    assert parsed.stdout.splitlines() == [
        "Ctx-Agent: alice",
        "Ctx-Intent: observe",
        "Ctx-Confidence: 0.8",
        "Ctx-Reason: seen in config",
    ]
    author = run_git(scenario.path, "log", "-1", "--format=%an", scenario.first)
    assert author.stdout.strip() == "alice"


def test_git_sees_the_same_trees_merges_and_reflog(scenario: Scenario) -> None:
    result = run_git(scenario.path, "fsck", "--strict", "--no-progress")
    assert result.stderr == ""

    record = show(scenario.store, scenario.queue)
    blob = run_git(scenario.path, "rev-parse", f"main:{record.path}").stdout.strip()
    assert blob == record.blob
    stored = json.loads(run_git(scenario.path, "cat-file", "-p", blob).stdout)
    assert stored["body"] == "The queue uses Postgres 16.\nRetries: 7"

    files = run_git(scenario.path, "ls-tree", "-r", "--name-only", "main").stdout
    assert f"conflicts/{scenario.queue}.json" in files.splitlines()
    assert len(list_conflicts(scenario.store)) == 1

    merges = _git_log(scenario, "%P", "--merges")
    assert len(merges) == 1
    assert len(merges[0].split()) == 2

    reflog = run_git(scenario.path, "reflog", "show", "--format=%gs", "main").stdout
    lines = reflog.splitlines()
    assert lines[0].startswith("ctx undo:")
    assert lines[1].startswith("ctx forget:")
    assert len(lines) == 9  # 7 writes on main, the forget, the undo


def _write_memory_with_git(s: Scenario, body: str) -> tuple[MemoryId, str]:
    """Adds one memory file on main with stock git plumbing only."""
    memory_id = new_memory_id(s.store.clock())
    content = json.dumps(
        {
            "version": 1,
            "id": memory_id,
            "kind": "fact",
            "body": body,
            "created_at": "2026-01-05T12:00:00Z",
        },
        indent=2,
        sort_keys=True,
    )
    blob = run_git(s.path, "hash-object", "-w", "--stdin", input=content).stdout
    blob = blob.strip()
    path = f"memory/general/{memory_id[-1]}/{memory_id[-2]}/{memory_id[-3]}"
    path += f"/{memory_id}.json"
    index = s.path.parent / "git-index"

    def git(*args: str, input: str | None = None) -> str:
        env = {"GIT_INDEX_FILE": str(index)}
        return run_git(s.path, *args, input=input, env=env).stdout.strip()

    tip = git("rev-parse", "main")
    git("read-tree", "main")
    git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = git("write-tree")
    message = (
        f"Add {memory_id} by hand\n\n"
        "Ctx-Agent: git-user\nCtx-Intent: import\nCtx-Confidence: 0.9\n"
    )
    commit = git("commit-tree", tree, "-p", tip, input=message)
    git("update-ref", "-m", "stock git commit", "refs/heads/main", commit, tip)
    index.unlink()
    return memory_id, commit


def test_a_commit_made_by_stock_git_is_visible(scenario: Scenario) -> None:
    store = scenario.store
    before = {r.memory.id for r in list_memories(store)}
    memory_id, commit = _write_memory_with_git(scenario, "Written by plain git")

    after = {r.memory.id: r for r in list_memories(store)}
    assert set(after) == before | {memory_id}
    assert after[memory_id].memory.body == "Written by plain git"
    assert show(store, memory_id).memory.kind == "fact"

    newest = log(store)[0].commit
    assert newest.id == commit
    assert newest.author == "stock git"
    assert newest.intent == Intent(agent="git-user", intent="import", confidence=0.9)
    assert [e.commit.id for e in log(store, memory_id)] == [commit]
    assert fsck(store).ok

    # ctx keeps writing on top of git's commit.
    result = remember(store, Draft(text="After git"), ALICE)
    assert result.commit is not None
    assert result.commit.parents == (commit,)
    link(store, memory_id, result.ids[0], "DERIVED_FROM", ALICE)
    assert [x.target for x in list_links(store, memory_id)] == [result.ids[0]]
    run_git(scenario.path, "fsck", "--strict", "--no-progress")


def test_a_branch_moved_by_stock_git_is_followed(scenario: Scenario) -> None:
    store = scenario.store
    init = log(store)[-1].commit.id
    run_git(scenario.path, "update-ref", "refs/heads/main", scenario.first)

    memories = list_memories(store)
    assert [r.memory.id for r in memories] == [scenario.queue]
    assert memories[0].memory.body == "The queue uses Postgres.\nRetries: 3"
    assert [e.commit.id for e in log(store)] == [scenario.first, init]
    assert list_conflicts(store) == []

    # The other branch still holds everything, and a merge brings it back.
    carol = {r.memory.id for r in list_memories(store, "agent/carol")}
    assert carol == {scenario.queue, scenario.deploys}
    result = merge(store, "agent/carol", CAROL)
    assert result.fast_forward
    assert {r.memory.id for r in list_memories(store)} == carol
    assert fsck(store).ok
    run_git(scenario.path, "fsck", "--strict", "--no-progress")


def test_stock_git_gc_clone_and_push(scenario: Scenario, tmp_path: Path) -> None:
    store = scenario.store
    # git gc packs every object and moves the refs into packed-refs.
    run_git(scenario.path, "gc", "--prune=now", "--quiet")
    assert not (scenario.path / "git" / "refs" / "heads" / "main").exists()
    assert {r.memory.id for r in list_memories(store)} == {
        scenario.queue,
        scenario.deploys,
    }
    written = remember(store, Draft(text="After git gc"), ALICE)
    assert written.commit is not None
    assert undo(store).new == written.commit.parents[0]
    assert undo(store).new == written.commit.id

    # The store is an ordinary git remote: clone it, commit, push back.
    clone = tmp_path / "clone"
    _git_in(tmp_path, "clone", "--quiet", str(scenario.path / "git"), str(clone))
    record = show(store, written.ids[0])
    assert json.loads((clone / record.path).read_text())["body"] == "After git gc"
    stored = json.loads((clone / show(store, scenario.queue).path).read_text())
    stored["tags"] = ["source:clone"]
    (clone / show(store, scenario.queue).path).write_text(json.dumps(stored))
    _git_in(clone, "commit", "--quiet", "-am", "Tag from a clone")
    _git_in(clone, "push", "--quiet", "origin", "main")

    assert show(store, scenario.queue).memory.tags == ("source:clone",)
    assert log(store)[0].commit.summary == "Tag from a clone"
    assert log(store)[0].commit.intent is None
    assert fsck(store).ok
    run_git(scenario.path, "fsck", "--strict", "--no-progress")


def _git_in(folder: Path, *args: str) -> None:
    done = subprocess.run(
        [GIT, "-C", str(folder), *args],
        capture_output=True,
        text=True,
        env=git_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
