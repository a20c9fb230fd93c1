"""A writer killed at any moment leaves a readable store and loses no
acknowledged write (DESIGN.md, "What works means here")."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from integration_support import (
    GIT,
    assert_healthy,
    git_env,
    opened,
    run_git,
    wait_ready,
)

from ctx.engine import Draft, Intent, StoreBusyError, list_memories, remember

Worker = Callable[..., subprocess.Popen[str]]

SEED = int.from_bytes(os.urandom(4), "big")
ROUNDS = 32  # two writers a round: 64 kills
BATCH = 2000


def _kill(proc: subprocess.Popen[str]) -> tuple[list[str], str]:
    """SIGKILLs ``proc``; returns its complete stdout lines and its stderr."""
    proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=30)
    # A worker that died on its own (an exception) is a failure, not a crash.
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, err)
    complete = out[: out.rfind("\n") + 1]
    return complete.splitlines(), err


def _acknowledged(lines: list[str]) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in lines)


def test_killed_writers_lose_no_acknowledged_write(
    store_path: Path, worker: Worker
) -> None:
    rng = random.Random(SEED)
    acknowledged: dict[str, str] = {}
    for n in range(ROUNDS):
        procs = [
            worker("remember", str(store_path), f"crash{n}w{k}", "--count", "-1")
            for k in range(2)
        ]
        for proc in procs:
            wait_ready(proc)
        started = time.monotonic()
        for proc, delay in sorted(
            ((p, rng.uniform(0.005, 0.150)) for p in procs), key=lambda x: x[1]
        ):
            time.sleep(max(0.0, started + delay - time.monotonic()))
            lines, _ = _kill(proc)
            acknowledged.update(_acknowledged(lines))

        context = f"seed {SEED}, round {n}"
        with opened(store_path) as store:
            present: dict[str, str] = {
                r.memory.id: r.memory.body for r in list_memories(store)
            }
        lost = {i: t for i, t in acknowledged.items() if present.get(i) != t}
        assert not lost, f"{context}: acknowledged writes lost: {lost}"
        if n % 8 == 7:
            assert_healthy(store_path)

    assert len(acknowledged) > ROUNDS, f"seed {SEED}: the writers barely wrote"
    # A crash may leave a ref lock behind; the next writer must get past it.
    with opened(store_path) as store:
        result = remember(
            store, Draft(text="after the storm"), Intent(agent="t", intent="observe")
        )
        assert result.commit is not None
        memories = len(list_memories(store))
    assert_healthy(store_path)
    # Every commit on main added exactly one memory: no write was torn or lost
    # (the writes a kill interrupted after the branch moved count too).
    count = run_git(store_path, "rev-list", "--count", "main").stdout.strip()
    assert int(count) == memories + 1
    assert run_git(store_path, "rev-list", "--min-parents=2", "main").stdout == ""


def _batch_count(store_path: Path, tag: str) -> int:
    with opened(store_path) as store:
        return sum(
            1
            for r in list_memories(store, prefix="memory/bulk/")
            if r.memory.body.startswith(f"{tag} item ")
        )


def _pack_dir_entries(store_path: Path) -> set[str]:
    return set(os.listdir(store_path / "git" / "objects" / "pack"))


def test_killed_batch_is_all_or_nothing(store_path: Path, worker: Worker) -> None:
    rng = random.Random(SEED)
    proc = worker("batch", str(store_path), "bulk", "--count", str(BATCH))
    wait_ready(proc)
    ready = time.monotonic()
    out, err = proc.communicate(timeout=60)
    duration = time.monotonic() - ready
    assert proc.returncode == 0, err
    assert out.startswith("done ")
    assert _batch_count(store_path, "batch") == BATCH

    ref = store_path / "git" / "refs" / "heads" / "main"
    outcomes = []
    for n in range(6):
        tag = f"cut{n}"
        packs, tip = _pack_dir_entries(store_path), ref.read_bytes()
        proc = worker(
            "batch", str(store_path), "bulk", "--count", str(BATCH), "--tag", tag
        )
        wait_ready(proc)
        if n % 3 == 0:
            # At a random moment of the whole write.
            time.sleep(rng.uniform(0.005, duration * 1.2))
        elif n % 3 == 1:
            # While the pack file is being written or moved in.
            _wait_until(proc, lambda: _pack_dir_entries(store_path), packs)
            time.sleep(rng.uniform(0.0, 0.010))
        else:
            # Just after the branch moved, before the write returned.
            _wait_until(proc, ref.read_bytes, tip)
        if proc.poll() is None:
            lines, _ = _kill(proc)
        else:
            lines = proc.communicate()[0].splitlines()
        acknowledged = any(line.startswith("done ") for line in lines)
        moved = ref.read_bytes() != tip
        count = _batch_count(store_path, tag)
        context = f"seed {SEED}, batch {n}: {count} of {BATCH} present"
        assert count == (BATCH if moved else 0), context
        if acknowledged:
            assert count == BATCH, context
        outcomes.append(count)
        assert_healthy(store_path)
    # The ref-moved kills prove that a batch present in part would be seen.
    assert BATCH in outcomes, f"seed {SEED}: {outcomes}"


def _wait_until(
    proc: subprocess.Popen[str], read: Callable[[], object], old: object
) -> None:
    """Polls until ``read()`` differs from ``old`` (or the writer exited)."""
    deadline = time.monotonic() + 30
    while read() == old and proc.poll() is None:
        assert time.monotonic() < deadline, "the writer never got there"
        time.sleep(0.0002)


_KILLED_HOLDING_THE_REF_LOCK = """
import os, signal, sys
from datetime import UTC, datetime
from pathlib import Path
from dulwich.refs import DiskRefsContainer
from ctx.engine import Draft, Intent, Store, remember

def die(*args, **kwargs):  # dulwich logs the move while it holds main.lock
    os.kill(os.getpid(), signal.SIGKILL)

DiskRefsContainer._log = die
store = Store.open(Path(sys.argv[1]), clock=lambda: datetime.now(UTC))
remember(store, Draft(text="never acknowledged"), Intent(agent="t", intent="observe"))
"""


def _write_past_a_lock(store_path: Path, text: str) -> tuple[str, float]:
    """Writes ``text`` on main; returns the new commit's parent and the time."""
    with opened(store_path) as store:
        store.lock_timeout = 10  # a wait this long is a failure here
        started = time.monotonic()
        result = remember(store, Draft(text=text), Intent(agent="t", intent="observe"))
        elapsed = time.monotonic() - started
        assert result.commit is not None
        assert store.branch_tip("main") == result.commit.id
        (parent,) = result.commit.parents
        return parent, elapsed


def test_a_killed_writers_ref_lock_is_cleared_at_once(store_path: Path) -> None:
    lock = store_path / "git" / "refs" / "heads" / "main.lock"
    tip = (store_path / "git" / "refs" / "heads" / "main").read_text().strip()
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_HOLDING_THE_REF_LOCK, str(store_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert lock.exists()
    assert (store_path / "lock").read_bytes() == b"refs/heads/main\n"

    parent, elapsed = _write_past_a_lock(store_path, "after the killed writer")
    assert parent == tip
    assert elapsed < 1  # no waiting: the dead writer's lock is known as such
    assert not lock.exists()
    assert (store_path / "lock").read_bytes() == b""
    with opened(store_path) as store:
        assert [r.memory.body for r in list_memories(store)] == [
            "after the killed writer"
        ]
    assert_healthy(store_path)


def test_a_slow_stock_git_keeps_its_ref_lock(store_path: Path) -> None:
    # git update-ref holds main.lock from "prepare" to "commit", as any git
    # command does while it moves a ref; here for longer than a second. ctx
    # must wait for it, neither break the lock nor drop git's commit.
    heads = store_path / "git" / "refs" / "heads"
    start = (heads / "main").read_text().strip()
    tree = run_git(store_path, "rev-parse", f"{start}^{{tree}}").stdout.strip()
    theirs = run_git(
        store_path, "commit-tree", tree, "-p", start, "-m", "slow git"
    ).stdout.strip()
    git = subprocess.Popen(
        [GIT, "--git-dir", str(store_path / "git"), "update-ref", "--stdin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=git_env(),
    )
    assert git.stdin is not None
    assert git.stdout is not None
    git.stdin.write(f"start\nupdate refs/heads/main {theirs} {start}\nprepare\n")
    git.stdin.flush()
    assert git.stdout.readline() == "start: ok\n"
    assert git.stdout.readline() == "prepare: ok\n"
    assert (heads / "main.lock").exists()

    outcome: list[object] = []

    def write() -> None:
        try:
            outcome.append(_write_past_a_lock(store_path, "waited"))
        except BaseException as exc:  # reported by the test, not the thread
            outcome.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        time.sleep(1.3)
        assert writer.is_alive(), outcome  # still waiting for git
        assert (heads / "main.lock").exists()
        out, err = git.communicate("commit\n", timeout=30)
        assert git.returncode == 0, err
        assert out == "commit: ok\n"
    finally:
        if git.poll() is None:
            git.kill()
            git.communicate()
        writer.join(timeout=90)
    assert len(outcome) == 1
    assert isinstance(outcome[0], tuple), outcome[0]
    parent, _elapsed = outcome[0]
    assert parent == theirs  # rebuilt on git's commit, which stays
    history = run_git(store_path, "rev-list", "main").stdout.split()
    assert history[1:] == [theirs, start]
    assert_healthy(store_path)


def test_an_abandoned_ref_lock_is_removed_once_old(store_path: Path) -> None:
    lock = store_path / "git" / "refs" / "heads" / "main.lock"
    tip = (store_path / "git" / "refs" / "heads" / "main").read_text().strip()
    lock.write_bytes(b"")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    parent, elapsed = _write_past_a_lock(store_path, "written past a stale lock")
    assert parent == tip
    assert elapsed < 1
    assert not lock.exists()
    assert_healthy(store_path)


def test_a_young_ref_lock_held_too_long_fails_the_write(store_path: Path) -> None:
    lock = store_path / "git" / "refs" / "heads" / "main.lock"
    ref = store_path / "git" / "refs" / "heads" / "main"
    tip = ref.read_bytes()
    lock.write_bytes(b"")
    old = time.time() - 300  # five minutes: a slow git, not yet taken as dead
    os.utime(lock, (old, old))
    with opened(store_path) as store:
        store.lock_timeout = 0.3
        with pytest.raises(StoreBusyError, match=r"Branch 'main' stayed locked by "):
            remember(store, Draft(text="refused"), Intent(agent="t", intent="observe"))
    assert lock.exists()
    assert ref.read_bytes() == tip


@pytest.mark.parametrize(
    ("note", "lock_name", "offset"),
    [
        (b"refs/heads/main\n", "refs/heads/main.lock", -5),  # git's, before the note
        (b"refs/heads/main\n", "refs/heads/main.lock", 5),  # git's, after the death
        (b"refs/heads/../../outside\n", "outside.lock", 0),  # a note to distrust
    ],
)
def test_a_ref_lock_the_dead_writer_did_not_make_is_kept(
    store_path: Path, note: bytes, lock_name: str, offset: int
) -> None:
    noted = time.time() - 100
    (store_path / "lock").write_bytes(note)
    os.utime(store_path / "lock", (noted, noted))
    lock = store_path / "git" / lock_name
    lock.write_bytes(b"")
    os.utime(lock, (noted + offset, noted + offset))
    main_lock = store_path / "git" / "refs" / "heads" / "main.lock"
    with opened(store_path) as store:
        store.lock_timeout = 0.3
        if main_lock.exists():
            with pytest.raises(StoreBusyError, match="stayed locked"):
                remember(store, Draft(text="x"), Intent(agent="t", intent="observe"))
        else:
            remember(store, Draft(text="x"), Intent(agent="t", intent="observe"))
    assert lock.exists()
    assert (store_path / "lock").read_bytes() == b""  # the note was read once
