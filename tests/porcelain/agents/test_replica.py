"""Rounds of `ctx serve --sync` in-process, through a bare repository path.

The servers, the thread and the race of two pushes are tested whole in
tests/integration/test_serve_replicas.py; here each round is run by hand.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pytest

from ctx.engine import (
    Access,
    Draft,
    Intent,
    Store,
    add_remote,
    clone,
    create_branch,
    edit,
    fetch,
    list_conflicts,
    push,
    remember,
)
from ctx.hub import Workspace
from ctx.porcelain.agents.replica import STATE_FILE, Replica, shared_health

ALICE = Intent(agent="alice", intent="observe")
BOB = Intent(agent="bob", intent="observe")


class Team:
    def __init__(self, root: Path, clock: Callable[[], datetime]) -> None:
        self.root = root
        self.clock = clock
        self.remote = root / "remote.git"
        self.notices: list[str] = []
        subprocess.run(
            ["/usr/bin/git", "init", "-q", "--bare", "-b", "main", str(self.remote)],
            check=True,
        )
        with closing(Store.init(root / "seed", clock=clock)) as seed:
            self.seed_id = remember(seed, Draft(text="The queue is Postgres"), ALICE)
            add_remote(seed, "origin", str(self.remote))
            push(seed, "origin", ["main"])
        self.opened: list[tuple[Workspace, Replica]] = []

    def replica(self, name: str) -> tuple[Workspace, Replica]:
        clone(self.root / name, str(self.remote), clock=self.clock)
        ws = Workspace(self.root / name, clock=self.clock)
        replica = Replica(
            ws, "origin", 60.0, access=Access(), notice=self.notices.append
        )
        self.opened.append((ws, replica))
        return ws, replica

    def tip(self, git_dir: Path, branch: str = "main") -> str:
        return subprocess.run(
            ["/usr/bin/git", "--git-dir", str(git_dir), "rev-parse", branch],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()


@pytest.fixture
def team(tmp_path: Path, clock: Callable[[], datetime]) -> Iterator[Team]:
    team = Team(tmp_path, clock)
    yield team
    for ws, replica in team.opened:
        replica.stop()
        ws.close()


def test_edits_of_one_memory_on_two_replicas_end_as_a_conflict_on_both(team):
    ws_a, a = team.replica("a")
    ws_b, b = team.replica("b")
    [memory_id] = team.seed_id.ids
    edit(ws_a.store(write=True), memory_id, ALICE, body="The queue is Kafka")
    edit(ws_b.store(write=True), memory_id, BOB, body="The queue is RabbitMQ")

    assert a.sync()
    assert b.sync()  # fetches A's edit, merges it: a conflict, committed
    assert a.sync()  # takes B's merge as a fast forward

    assert team.notices == [
        "Notice: Merging origin/main into main left 1 conflict "
        "(`ctx status` lists them)."
    ]
    for ws in (ws_a, ws_b):
        assert [c.id for c in list_conflicts(ws.store(), "main")] == [memory_id]
    tips = {team.tip(path) for path in (team.remote, team.root / "a" / "git")}
    assert tips == {team.tip(team.root / "b" / "git")}


def test_health_counts_what_is_unpushed_and_unmerged_and_the_last_error(team):
    ws_a, a = team.replica("a")
    ws_b, b = team.replica("b")
    store_a = ws_a.store(write=True)
    create_branch(store_a, "scratch")  # before the first round: never pushed
    remember(store_a, Draft(text="The API listens on 8080"), ALICE)

    health = a.health()
    assert (health.last_sync, health.unpushed, health.unmerged) == (None, 1, 0)
    assert health.error is None
    assert a.sync()
    health = a.health()
    assert health.last_sync is not None
    assert (health.unpushed, health.unmerged, health.error) == (0, 0, None)
    assert (
        "scratch"
        not in subprocess.run(
            ["/usr/bin/git", "--git-dir", str(team.remote), "branch"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )

    # B writes, merges A's work and pushes both commits; A has fetched them
    # but not merged them yet.
    remember(ws_b.store(write=True), Draft(text="The cache is Redis"), BOB)
    assert b.sync()
    fetch(store_a, "origin")
    assert (a.health().unpushed, a.health().unmerged) == (0, 2)
    assert a.sync()
    assert (a.health().unpushed, a.health().unmerged) == (0, 0)

    # A branch made after the start is pushed.
    create_branch(store_a, "agent/alice")
    assert a.sync()
    assert team.tip(team.remote, "agent/alice") == store_a.branch_tip("agent/alice")

    synced = a.health().last_sync
    team.remote.rename(team.root / "moved.git")
    assert not a.sync()
    health = a.health()
    assert health.last_sync == synced
    assert health.error is not None
    assert "remote.git" in health.error
    assert team.notices == [
        f"Notice: The sync with origin failed: {health.error} The next one is in 60 s."
    ]


def test_a_workers_health_says_what_the_syncing_process_knows(team):
    """A worker (a workspace of its own on the store) reckons ``/health`` from
    the file the syncing process writes, and says what that process says."""
    ws_a, a = team.replica("a")
    worker_ws = Workspace(team.root / "a", clock=team.clock)
    try:
        seen = shared_health(worker_ws, "origin", 60.0, syncing=os.getpid())
        assert seen() == a.health()  # nothing written yet: no file, no lag
        a.begin()
        # Written through the worker after the start: a branch the remote lacks.
        worker = worker_ws.store(write=True)
        create_branch(worker, "agent/w")
        remember(worker, Draft(text="The API listens on 8080"), ALICE, branch="agent/w")
        health = a.health()
        assert (health.last_sync, health.unpushed, health.unmerged) == (None, 1, 0)
        assert seen() == health
        assert a.sync()
        assert team.tip(team.remote, "agent/w") == worker.branch_tip("agent/w")
        health = a.health()
        assert health.last_sync is not None
        assert (health.unpushed, health.unmerged, health.error) == (0, 0, None)
        assert seen() == health
        # A file of another remote, or another run's, says nothing of this.
        other_remote = shared_health(worker_ws, "upstream", 60.0, syncing=os.getpid())
        assert other_remote().last_sync is None
        other_run = shared_health(worker_ws, "origin", 60.0, syncing=os.getpid() + 1)
        assert other_run().last_sync is None

        team.remote.rename(team.root / "moved.git")
        assert not a.sync()
        assert a.health().error is not None
        assert seen() == a.health()
        # Nor does a file that cannot be read.
        (ws_a.path / "private" / STATE_FILE).write_bytes(b"{not json")
        assert seen().last_sync is None
    finally:
        worker_ws.close()


@pytest.mark.parametrize("end", ["stopped", "killed"])
def test_a_restarted_replica_pushes_what_the_run_before_acknowledged(team, end):
    # A branch made and written through a replica while the remote was away
    # was pushed by no later run: each run pushed only what it saw written.
    ws, first = team.replica("a")
    first.begin()
    away = team.root / "away.git"
    team.remote.rename(away)
    store = ws.store(write=True)
    create_branch(store, "agent/r1")
    remember(store, Draft(text="Written while away"), ALICE, branch="agent/r1")
    if end == "stopped":
        assert not first.sync()
    first.stop()  # "killed": no round noted it, the start's tips say it
    away.rename(team.remote)
    again = Replica(ws, "origin", 60.0, access=Access(), notice=team.notices.append)
    team.opened.append((ws, again))
    again.begin()
    assert again.health().unpushed == 1  # the write, on a branch the remote lacks
    assert again.sync()
    assert team.tip(team.remote, "agent/r1") == store.branch_tip("agent/r1")
    assert again.health().unpushed == 0


def test_a_report_that_cannot_be_written_stops_no_round(team, monkeypatch):
    """The branches unreadable while the workers' file is written, at the
    start and after a round: a notice each time, and the rounds go on."""
    _, replica = team.replica("a")
    replica.every = 0.05
    faults = iter([OSError(5, "Input/output error"), None, OSError(5, "again")])
    real = Replica._note_written

    def flaky(self, store):
        fault = next(faults, None)
        if fault is not None:
            raise fault
        return real(self, store)

    monkeypatch.setattr(Replica, "_note_written", flaky)
    replica.start()
    try:
        deadline = time.monotonic() + 30
        while (
            replica.health().last_sync is None
            or len([n for n in team.notices if "was not written" in n]) < 2
        ):
            assert time.monotonic() < deadline, team.notices
            time.sleep(0.02)
        synced = replica.health().last_sync
        while replica.health().last_sync == synced:  # a round after it
            assert time.monotonic() < deadline, team.notices
            time.sleep(0.02)
    finally:
        replica.stop()
    assert team.notices == [
        "Notice: The replica's state was not written: "
        "OSError: [Errno 5] Input/output error",
        "Notice: The replica's state was not written: OSError: [Errno 5] again",
    ]
    assert replica.health().error is None


def test_a_round_that_fails_unexpectedly_is_reported_and_the_next_runs(
    team, monkeypatch
):
    _, replica = team.replica("a")
    replica.every = 0.05
    rounds = iter([RuntimeError("disk on fire")])
    real_round = Replica._round

    def flaky(self, store):
        fault = next(rounds, None)
        if fault is not None:
            raise fault
        return real_round(self, store)

    monkeypatch.setattr(Replica, "_round", flaky)
    replica.start()
    try:
        deadline = time.monotonic() + 30
        while replica.health().last_sync is None:
            assert time.monotonic() < deadline, team.notices
            time.sleep(0.02)
    finally:
        replica.stop()
    assert any("RuntimeError: disk on fire" in n for n in team.notices)
    assert replica.health().error is None  # the round after it succeeded


def test_a_branch_pushed_then_deleted_on_the_remote_is_not_brought_back(team):
    ws, first = team.replica("a")
    first.begin()
    store = ws.store(write=True)
    create_branch(store, "feat")
    remember(store, Draft(text="Written on feat"), ALICE, branch="feat")
    assert first.sync()
    assert team.tip(team.remote, "feat") == store.branch_tip("feat")
    first.stop()
    subprocess.run(
        ["/usr/bin/git", "--git-dir", str(team.remote), "branch", "-D", "feat"],
        check=True,
        capture_output=True,
    )
    again = Replica(ws, "origin", 60.0, access=Access(), notice=team.notices.append)
    team.opened.append((ws, again))
    again.begin()
    assert again.sync()
    listed = subprocess.run(
        ["/usr/bin/git", "--git-dir", str(team.remote), "branch"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "feat" not in listed
