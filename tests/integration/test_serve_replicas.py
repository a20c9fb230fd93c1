"""`ctx serve --sync REMOTE --every SECONDS`: replicas of one remote.

Two real servers, each on its own clone, sync through a bare repository that
stock `git daemon` serves. Agents write through both; every write a server
acknowledged must end up on both replicas and on the remote, with no write
lost when both push the same branch at once.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from integration_support import GIT, git_env, run_ctx, wall_clock
from remote_servers import git_daemon
from serve_support import Served, start_serve

from ctx.engine import (
    Draft,
    Intent,
    Store,
    add_remote,
    clone,
    create_branch,
    push,
    remember,
)

EVERY = "0.2"
AGENTS = {"a": ("alice", "bob"), "b": ("carol", "dave")}
CONFIG = '[embedder]\nkind = "hashing"\n'
ALICE = Intent(agent="alice", intent="observe")

# Holds the first two pushes of main in the remote's pre-receive hook until
# both have arrived: each has read the remote's branches before either moves
# one, so both push onto the same tip of main and one of them must lose.
RACE_HOOK = """#!/bin/sh
grep -q ' refs/heads/main$' || exit 0
mkdir -p pushes
n=$(ls pushes | wc -l)
touch "pushes/$n-$$"
[ "$n" -ge 2 ] && exit 0
i=0
while [ "$(ls pushes | wc -l)" -lt 2 ] && [ "$i" -lt 600 ]; do
  sleep 0.05
  i=$((i + 1))
done
exit 0
"""


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        [GIT, "--git-dir", str(git_dir), *args],
        capture_output=True,
        text=True,
        check=True,
        env=git_env(),
    ).stdout


def ids_on(git_dir: Path, branch: str) -> set[str]:
    """The memory ids a branch holds (a memory's file is named by its id)."""
    listed = subprocess.run(
        [GIT, "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", branch],
        capture_output=True,
        text=True,
        env=git_env(),
        check=False,
    ).stdout
    return {
        Path(line).stem for line in listed.splitlines() if line.startswith("memory/")
    }


def poll(done: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds} s: {what}")
        time.sleep(0.05)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    return result.stdout


def serve_replica(store: Path, remote: str = "origin") -> Served:
    """Starts `ctx serve --sync` on ``store``, as the hub of a user of its own.

    Each `ctx serve` is its user's hub, and a second one on the same
    runtime folder would stop the first.
    """
    runtime = store.parent / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    return start_serve(store, "--sync", remote, "--every", EVERY, env=env)


def stop(*served: Served) -> list[str]:
    """Stops servers as SIGTERM does, all at once; returns their stderr lines."""
    for server in served:
        server.proc.terminate()
    out = []
    for server in served:
        _, err = server.proc.communicate(timeout=60)
        assert server.proc.returncode == 0, err
        out.append(err.splitlines())
    return out


@pytest.fixture
def servers() -> Iterator[list[Served]]:
    """The servers a test started, stopped after it whatever happened."""
    started: list[Served] = []
    yield started
    for served in started:
        served.stop()


def health(served: Served) -> dict[str, Any]:
    status, body = served.request("GET", "/health", anonymous=True)
    assert status == 200, body
    return body  # type: ignore[no-any-return]


def settled(served: Served) -> bool:
    replica = health(served)["replica"]
    return bool(
        replica["last_sync"]
        and replica["unpushed"] == 0
        and replica["unmerged"] == 0
        and replica["error"] is None
    )


def write(served: Served, text: str, branch: str) -> str:
    status, body = served.request(
        "POST", "/api/memories", {"text": text, "branch": branch}
    )
    assert status == 200, body
    return str(body["id"])


def test_writes_through_two_replicas_reach_both_and_the_remote(
    tmp_path: Path, servers: list[Served]
):
    remote = tmp_path / "srv" / "memory.git"
    remote.parent.mkdir()
    git(remote, "init", "-q", "--bare", "-b", "main")
    stores = {name: tmp_path / name / ".ctx" for name in AGENTS}
    with git_daemon(remote.parent) as port:
        url = f"git://127.0.0.1:{port}/memory.git"
        with closing(Store.init(tmp_path / "seed", clock=wall_clock)) as seed:
            remember(seed, Draft(text="The queue is Postgres"), ALICE)
            add_remote(seed, "origin", url)
            push(seed, "origin", ["main"])
        for store in stores.values():
            clone(store, url, clock=wall_clock)
            (store / "config.toml").write_text(CONFIG)
        # Made before its server starts, so not written through it: not pushed.
        with closing(Store.open(stores["a"], clock=wall_clock)) as store_a:
            create_branch(store_a, "scratch")
        (remote / "hooks" / "pre-receive").write_text(RACE_HOOK)
        (remote / "hooks" / "pre-receive").chmod(0o755)
        with ThreadPoolExecutor() as pool:
            served = dict(
                zip(AGENTS, pool.map(serve_replica, stores.values()), strict=True)
            )
        servers.extend(served.values())
        for name, agents in AGENTS.items():
            for agent in agents:
                status, body = served[name].request(
                    "POST", "/api/branches", {"name": f"agent/{agent}"}
                )
                assert status == 200, body

        # Four agents at once, each on its own branch and on main through its
        # replica: both replicas then push main onto the same tip.
        def agent(name: str, who: str) -> tuple[str, str, str]:
            own = write(served[name], f"{who} uses tabs", f"agent/{who}")
            shared = write(served[name], f"{who} deploys on Fridays", "main")
            return who, own, shared

        pairs = [(name, who) for name, agents in AGENTS.items() for who in agents]
        with ThreadPoolExecutor(len(pairs)) as pool:
            done = list(pool.map(lambda pair: agent(*pair), pairs))
        written = {f"agent/{who}": {own} for who, own, _ in done}
        written["main"] = {shared for _, _, shared in done}
        assert len(written["main"]) == 4

        everywhere = [remote, *(store / "git" for store in stores.values())]

        def all_present() -> bool:
            return all(
                ids <= ids_on(git_dir, branch)
                for git_dir in everywhere
                for branch, ids in written.items()
            )

        poll(all_present, "every acknowledged write on both replicas and the remote")
        poll(lambda: all(settled(s) for s in served.values()), "both settled")
        body = health(served["a"])

    assert body["status"] == "ok"
    assert body["store"] == str(stores["a"])
    assert body["pid"] == served["a"].proc.pid
    synced = body["replica"].pop("last_sync")
    assert datetime.fromisoformat(synced) <= datetime.now(UTC)
    assert body["replica"] == {
        "remote": "origin",
        "every": float(EVERY),
        "unpushed": 0,
        "unmerged": 0,
        "error": None,
    }
    # The first two pushes of main met in the hook; the one that lost
    # merged and pushed again.
    assert len(list((remote / "pushes").iterdir())) >= 3
    assert len(ids_on(remote, "main") - written["main"]) == 1  # the seed's
    assert "refs/heads/scratch" not in git(remote, "for-each-ref")
    for git_dir in everywhere:
        git(git_dir, "fsck", "--strict", "--no-progress")

    # The remote is gone now: the syncs fail, and /health says so.
    gone = (f"Cannot reach {url}: ", f"{url} hung up: ")
    poll(lambda: health(served["a"])["replica"]["error"] is not None, "a failure")
    write(served["a"], "The cache is Redis", "main")
    said = health(served["a"])
    assert said["status"] == "sync failing"  # a plain check sees it too
    replica = said["replica"]
    assert replica["last_sync"] >= synced
    assert replica["unpushed"] == 1
    assert replica["unmerged"] == 0
    assert replica["error"].startswith(gone)
    # Nothing failed but the syncs with the remote gone: not the race.
    errors = stop(*served.values())
    assert errors[0]
    for line in errors[0] + errors[1]:
        reason = line.removeprefix("Notice: The sync with origin failed: ")
        assert reason.startswith(gone), line
        assert line.endswith(f" The next one is in {EVERY} s."), line


@pytest.fixture(scope="module")
def plain_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with a remote that was never reached."""
    store = tmp_path_factory.mktemp("plain") / ".ctx"
    ok(run_ctx(store, "init"))
    ok(run_ctx(store, "remember", "The queue is Postgres"))
    ok(run_ctx(store, "remote", "add", "origin", str(store.parent / "none.git")))
    return store


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        (
            ["--every", "5"],
            4,
            "Error: --every needs --sync REMOTE.\n"
            "Hint: `ctx serve --sync origin --every 30` syncs with origin.\n",
        ),
        (
            ["--sync", "origin", "--every", "0"],
            4,
            "Error: --every must be a positive number of seconds, not 0.\n",
        ),
        (
            ["--sync", "origin", "--every", "nan"],
            4,
            "Error: --every must be a positive number of seconds, not nan.\n",
        ),
        (
            ["--sync", "upstream"],
            3,
            "Error: No remote named 'upstream' (known: origin).\n"
            "Hint: `ctx remote add upstream URL` adds it.\n",
        ),
    ],
)
def test_bad_input_is_one_error_before_the_server_starts(
    plain_store: Path, args: list[str], code: int, stderr: str
):
    def files() -> dict[str, bytes]:
        return {
            str(p.relative_to(plain_store)): p.read_bytes()
            for p in sorted(plain_store.rglob("*"))
            if p.is_file()
        }

    before = files()
    result = run_ctx(plain_store, "serve", "--port", "0", *args)
    assert (result.returncode, result.stdout, result.stderr) == (code, "", stderr)
    assert files() == before
