"""Many OS processes writing to one store at once lose nothing.

DESIGN.md, "Commits and intent": writers never lose each other's work, and
any number of processes may write to one store at once.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from integration_support import (
    CTX,
    assert_healthy,
    opened,
    run_git,
    wait_ready,
)

from ctx.engine import (
    Intent,
    Snapshot,
    Store,
    create_branch,
    list_branches,
    list_memories,
    log,
)

Worker = Callable[..., subprocess.Popen[str]]


def _run_all(
    procs: list[subprocess.Popen[str]], start: Path, timeout: float = 90
) -> list[list[str]]:
    """Waits for every worker's ready line, opens the barrier, collects output."""
    for proc in procs:
        wait_ready(proc)
    start.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err
        assert err == "", err
        outputs.append(out.splitlines())
    return outputs


def _written(lines: list[str]) -> dict[str, str]:
    """Maps each acknowledged memory id to the text its writer used."""
    out = {}
    for line in lines:
        memory_id, text = line.split(" ", 1)
        out[memory_id] = text
    return out


def _bodies(store: Store, rev: str) -> dict[str, str]:
    return {r.memory.id: r.memory.body for r in list_memories(store, rev)}


def _assert_linear(store_path: Path, branch: str, commits: int) -> None:
    assert run_git(store_path, "rev-list", "--count", branch).stdout.strip() == str(
        commits
    )
    assert run_git(store_path, "rev-list", "--min-parents=2", branch).stdout == ""


def test_eight_processes_a_hundred_writes_each(
    store_path: Path, worker: Worker, tmp_path: Path
) -> None:
    start = tmp_path / "go"
    go = ("--start", str(start))
    procs = [
        worker("remember", str(store_path), f"writer{n}", "--count", "100", *go)
        for n in range(8)
    ]
    outputs = _run_all(procs, start)

    expected: dict[str, str] = {}
    for n, lines in enumerate(outputs):
        written = _written(lines)
        assert len(written) == 100
        assert sorted(written.values()) == sorted(
            f"writer{n} note {i}" for i in range(100)
        )
        expected.update(written)
    assert len(expected) == 800

    assert_healthy(store_path)
    with opened(store_path) as store:
        assert _bodies(store, "main") == expected
        entries = log(store, rev="main")
    assert len(entries) == 801
    assert all(len(e.commit.parents) <= 1 for e in entries)
    assert entries[-1].commit.parents == ()
    authors = {e.commit.author for e in entries[:-1]}
    assert authors == {f"writer{n}" for n in range(8)}
    _assert_linear(store_path, "main", 801)


def test_ctx_command_line_writers_in_parallel(store_path: Path) -> None:
    processes, calls = 4, 10
    barrier = threading.Barrier(processes)
    results: list[list[tuple[str, subprocess.CompletedProcess[str]]]] = [
        [] for _ in range(processes)
    ]

    def write(n: int) -> None:
        barrier.wait()
        for i in range(calls):
            text = f"cli{n} note {i}"
            agent = ("--agent", f"cli{n}")
            proc = subprocess.run(
                [str(CTX), "--store", str(store_path), "remember", text, *agent],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            results[n].append((text, proc))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(processes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    expected = {}
    for calls_made in results:
        assert len(calls_made) == calls
        for text, proc in calls_made:
            assert (proc.returncode, proc.stderr) == (0, ""), text
            memory_id = proc.stdout.strip()
            assert len(memory_id) == 26
            expected[memory_id] = text
    assert len(expected) == processes * calls

    assert_healthy(store_path)
    with opened(store_path) as store:
        assert _bodies(store, "main") == expected
        authors = {e.commit.author for e in log(store)}
    assert authors == {"ctx", *(f"cli{n}" for n in range(processes))}
    _assert_linear(store_path, "main", processes * calls + 1)


def test_writers_on_two_branches_while_branches_are_created(
    store_path: Path, worker: Worker, tmp_path: Path
) -> None:
    with opened(store_path) as store:
        create_branch(store, "side")

    start = tmp_path / "go"
    count = 60
    names = [f"race/{i}" for i in range(25)]

    def start_writer(agent: str, *branch: str) -> subprocess.Popen[str]:
        return worker(
            "remember",
            str(store_path),
            agent,
            "--count",
            str(count),
            *branch,
            "--start",
            str(start),
        )

    def start_creator(agent: str) -> subprocess.Popen[str]:
        return worker("branch", str(store_path), agent, *names, "--start", str(start))

    procs = [
        start_writer("m0"),
        start_writer("m1"),
        start_writer("s0", "--branch", "side"),
        start_writer("s1", "--branch", "side"),
        start_writer("a0", "--branch", "agent/a0", "--new-branch"),
        start_creator("b0"),
        start_creator("b1"),
    ]
    outputs = _run_all(procs, start)
    main_written = _written(outputs[0]) | _written(outputs[1])
    side_written = _written(outputs[2]) | _written(outputs[3])
    own_written = _written(outputs[4])
    assert len(main_written) == len(side_written) == 2 * count
    assert len(own_written) == count

    # Every racing name was created by exactly one of the two processes.
    created = [line.split(" ", 1) for line in outputs[5] + outputs[6]]
    for name in names:
        verdicts = sorted(v for v, n in created if n == name)
        assert verdicts == ["created", "exists"], name

    assert_healthy(store_path)
    with opened(store_path) as store:
        assert _bodies(store, "main") == main_written
        assert _bodies(store, "side") == side_written
        # The new branch holds its writer's memories on top of those main
        # had when it was created.
        own_branch = _bodies(store, "agent/a0")
        branches = {b.name: b.tip for b in list_branches(store)}
    _assert_linear(store_path, "main", 2 * count + 1)
    _assert_linear(store_path, "side", 2 * count + 1)
    assert own_branch.items() >= own_written.items()
    assert own_branch.keys() - own_written.keys() <= main_written.keys()
    assert set(branches) == {"main", "side", "agent/a0", *names}
    _assert_linear(store_path, "agent/a0", len(own_branch) + 1)
    for name in names:
        # Each new branch starts on a commit of main's history.
        run_git(store_path, "merge-base", "--is-ancestor", branches[name], "main")


def test_first_writes_create_the_user_store_once(
    worker: Worker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no store anywhere, `ctx remember` creates the user's store on its
    # first write (DESIGN.md, "The store on disk"). Several agents may make
    # their first write at the same moment: each must succeed, on one store.
    user_store = Path(os.environ["XDG_DATA_HOME"]) / "ctx"
    assert not user_store.exists()
    monkeypatch.chdir(tmp_path)  # no .ctx folder above the working directory
    start = tmp_path / "go"
    agents = [f"first{n}" for n in range(6)]
    barrier = ("--start", str(start), "--")
    procs = [
        worker(
            "cli", "-", agent, *barrier, "remember", f"{agent} note", "--agent", agent
        )
        for agent in agents
    ]
    for proc in procs:
        wait_ready(proc)
    start.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        results.append((proc.returncode, out.splitlines()[-1:], err))
    notice = (
        "Notice: wrote to the user store ~/.local/share/ctx (no .ctx/ here or "
        "above; `ctx init` makes one).\n"
    )
    failures = [r for r in results if r[0] != 0 or r[2] != notice]
    assert not failures, failures

    written = {
        lines[0]: f"{agent} note"
        for agent, (_, lines, _) in zip(agents, results, strict=True)
    }
    assert_healthy(user_store)
    with opened(user_store) as store:
        assert _bodies(store, "main") == written
        summaries = [e.commit.summary for e in log(store)]
    assert summaries.count("Create the store") == 1
    _assert_linear(user_store, "main", len(agents) + 1)


def test_a_write_is_rebuilt_when_stock_git_moves_the_branch_mid_write(
    store_path: Path, tmp_path: Path
) -> None:
    # Stock git takes no ctx lock: it commits on main after ctx's build has
    # read the tip and before ctx moves the ref. ctx's compare-and-swap must
    # see it, and rebuild its change on git's commit instead of dropping it.
    index = {"GIT_INDEX_FILE": str(tmp_path / "index")}
    with opened(store_path) as store:
        start = store.branch_tip("main")
        seen: list[object] = []
        theirs: list[str] = []

        def build(snap: Snapshot) -> dict[str, bytes | None]:
            seen.append(snap.commit)
            if len(seen) == 1:
                blob = run_git(
                    store_path, "hash-object", "-w", "--stdin", input="by git\n"
                ).stdout.strip()
                run_git(store_path, "read-tree", start, env=index)
                run_git(
                    store_path,
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    f"100644,{blob},from-git.txt",
                    env=index,
                )
                tree = run_git(store_path, "write-tree", env=index).stdout.strip()
                commit = run_git(
                    store_path, "commit-tree", tree, "-p", start, "-m", "by git"
                ).stdout.strip()
                run_git(store_path, "update-ref", "refs/heads/main", commit, start)
                theirs.append(commit)
            present = snap.read("from-git.txt") is not None
            return {"from-ctx.txt": b"git's file was there\n" if present else b"no\n"}

        result = store.write("main", Intent(agent="t", intent="observe"), "ctx", build)
        assert result is not None
        assert seen == [start, theirs[0]]
        assert result.parents == (theirs[0],)
        assert store.branch_tip("main") == result.id
        tree = store.snapshot(result.id)
        assert tree.read("from-git.txt") == b"by git\n"
        assert tree.read("from-ctx.txt") == b"git's file was there\n"
    history = run_git(store_path, "rev-list", "main").stdout.split()
    assert history == [result.id, theirs[0], start]
    assert_healthy(store_path)
