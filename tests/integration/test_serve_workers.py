"""`ctx serve --workers N`: N processes answer side by side (issue 30).

A real server on loopback with a worker beside its first process, real
clients: every process answers, what one writes the others recall at once,
keys hold in each, a worker killed is started again, Ctrl-C stops them all
quietly, none outlives a first process killed outright, MCP works without
sessions, the workers of a replica (--sync) have their writes pushed and
say the same lag in /health, and a worker that cannot start says why.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from integration_support import CTX, GIT, git_env, run_ctx
from serve_support import Served

from ctx.porcelain.agents.listening import listen_on
from ctx.porcelain.agents.workers import WorkerError, Workers, WorkerStore, spec_for

pytestmark = pytest.mark.anyio

WORKERS = 2


def gone(pid: int) -> bool:
    """Whether a process has exited (a zombie nobody reaps counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"


def wait_until(check, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


class Pool(Served):
    """The server, and the pids of its workers as it printed them."""

    workers: tuple[int, ...] = ()

    def pids_answering(self, requests: int = 300) -> set[int]:
        """The pids that answer ``/health`` over fresh connections."""
        seen: set[int] = set()
        for _ in range(requests):
            try:
                status, health = self.request("GET", "/health")
            except ConnectionError:  # queued on a worker as it was killed
                continue
            assert status == 200, health
            seen.add(health["pid"])
            if seen >= {self.proc.pid, *self.workers}:
                break
        return seen


def start_pool(store: Path, *args: str) -> Pool:
    proc = subprocess.Popen(
        [str(CTX), "--store", str(store), "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as in a terminal
    )
    assert proc.stdout is not None
    hung = threading.Timer(120, proc.kill)  # a start that hangs fails the test
    hung.start()
    lines = [proc.stdout.readline()]
    while not lines[-1].startswith("Workers answering"):
        lines.append(proc.stdout.readline())
        if not lines[-1]:
            proc.kill()
            raise AssertionError((lines, proc.communicate()))
    hung.cancel()
    pool = Pool(proc, lines[0].split(" at ", 1)[1].split(" ", 1)[0])
    pool.key = next(
        line.rsplit(": ", 1)[1].strip()
        for line in lines
        if line.startswith("Made admin key ")
    )
    pool.workers = tuple(
        int(pid) for pid in lines[-1].split("pids ", 1)[1].rstrip(".\n").split(", ")
    )
    return pool


def make_pool(folder: Path) -> Pool:
    """A server of two processes on a store of 40 memories."""
    store = folder / ".ctx"
    assert run_ctx(store, "init").returncode == 0
    (store / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    source = folder / "notes.jsonl"
    source.write_text(
        "".join(
            json.dumps(
                {"text": f"The service named quokka{n} runs behind the gateway."}
            )
            + "\n"
            for n in range(40)
        )
    )
    assert run_ctx(store, "import", str(source)).returncode == 0
    return start_pool(store, "--workers", str(WORKERS))


def stop_pool(server: Pool) -> None:
    server.stop()
    for pid in server.workers:
        assert wait_until(lambda pid=pid: gone(pid), 15), pid


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pool]:
    """One server for the cases that only read, and write text of their own.

    Killed outright at the end: its workers see their pipe close and stop,
    none outliving it.
    """
    server = make_pool(tmp_path_factory.mktemp("pool"))
    yield server
    server.proc.kill()
    server.proc.communicate()
    for pid in server.workers:
        assert wait_until(lambda pid=pid: gone(pid), 15), pid


def test_every_process_answers_and_sees_what_another_wrote(pool: Pool) -> None:
    assert len(pool.workers) == WORKERS - 1
    assert pool.pids_answering() == {pool.proc.pid, *pool.workers}
    written = []
    for n in range(6):
        status, made = pool.request(
            "POST", "/api/memories", {"text": f"The wombat{n} queue drains at night."}
        )
        assert status == 200, made
        written.append(made["id"])
    # Each request a fresh connection: they land on every process.
    for n, memory in enumerate(written):
        for _ in range(4):
            status, found = pool.request(
                "POST", "/api/recall", {"query": f"when does wombat{n} drain?"}
            )
            assert status == 200, found
            assert found["hits"][0]["id"] == memory, found
    status, listed = pool.request("GET", "/api/memories")
    assert status == 200
    assert len(listed) == 46


def test_a_key_is_held_by_every_process(pool: Pool) -> None:
    for _ in range(30):
        status, answer = pool.request("GET", "/api/memories", anonymous=True)
        assert status == 401, answer
        status, answer = pool.request("GET", "/api/memories", key="ctx_" + "A" * 43)
        assert status == 401, answer


def test_a_killed_worker_is_started_again_and_ctrl_c_stops_all(
    tmp_path: Path,
) -> None:
    pool = make_pool(tmp_path)
    try:
        killed = pool.workers[0]
        os.kill(killed, signal.SIGKILL)
        assert wait_until(lambda: gone(killed))
        # Its place is taken: as many processes answer again, one of them new.
        assert wait_until(lambda: len(pool.pids_answering(60) - {killed}) == WORKERS)
        status, found = pool.request("POST", "/api/recall", {"query": "quokka7"})
        assert status == 200
        assert "quokka7 " in found["hits"][0]["body"]
        started = pool.pids_answering() - {pool.proc.pid, *pool.workers}
        assert len(started) == 1
        pool.workers = (*pool.workers[1:], *started)
        # What a terminal's Ctrl-C sends: the first process stops them all.
        os.killpg(pool.proc.pid, signal.SIGINT)
        out, err = pool.proc.communicate(timeout=60)
        assert pool.proc.returncode == 0, err
        assert "Traceback" not in err, err
        assert out.endswith("Stopped.\n"), out
    finally:
        stop_pool(pool)


async def test_mcp_answers_without_sessions(pool: Pool) -> None:
    async with pool.mcp_client() as client:
        tools = await client.list_tools()
        assert "recall" in {tool.name for tool in tools.tools}
        for n in range(6):  # one connection or several: each answers whole
            result = await client.call_tool("recall", {"query": f"quokka{n}"})
            assert not result.is_error, result.content
            assert f"quokka{n} " in result.content[0].text


def connection_to(pool: Pool, pid: int) -> http.client.HTTPConnection:
    """A kept-alive connection that ``pid`` answers (the kernel picks, so try)."""
    host, port = urlsplit(pool.url).hostname, urlsplit(pool.url).port
    for _ in range(300):
        conn = http.client.HTTPConnection(host, port, timeout=60)
        conn.request("GET", "/health")
        if json.loads(conn.getresponse().read())["pid"] == pid:
            return conn
        conn.close()
    raise AssertionError(f"no connection reached {pid}")


def test_workers_of_a_replica_push_their_writes_and_say_the_same_lag(
    tmp_path: Path,
) -> None:
    remote = tmp_path / "memory.git"
    git = [str(GIT), "--git-dir", str(remote)]
    subprocess.run(
        [*git, "init", "-q", "--bare", "-b", "main"], check=True, env=git_env()
    )
    store = tmp_path / ".ctx"
    for args in (
        ("init",),
        ("remember", "The queue is Postgres"),
        ("remote", "add", "origin", str(remote)),
        ("push", "origin", "main"),
    ):
        done = run_ctx(store, *args)
        assert done.returncode == 0, done
    (store / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    pool = start_pool(store, "--workers", "2", "--sync", "origin", "--every", "0.3")
    try:
        # A write through the worker, on a branch made through it.
        conn = connection_to(pool, pool.workers[0])
        auth = {**pool.auth, "Content-Type": "application/json"}
        for path, body in (
            ("/api/branches", {"name": "agent/w"}),
            (
                "/api/memories",
                {"text": "Deploys wait for the canary", "branch": "agent/w"},
            ),
        ):
            conn.request("POST", path, json.dumps(body), headers=auth)
            answer = conn.getresponse()
            made = json.loads(answer.read())
            assert answer.status == 200, made
        conn.close()

        def pushed() -> bool:
            listed = subprocess.run(
                [*git, "ls-tree", "-r", "--name-only", "agent/w"],
                capture_output=True,
                text=True,
                check=False,
                env=git_env(),
            ).stdout
            return f"{made['id']}" in listed

        assert wait_until(pushed), "the worker's write never reached the remote"

        def settled() -> dict[int, dict]:
            seen = {}
            for _ in range(300):
                status, health = pool.request("GET", "/health", anonymous=True)
                assert status == 200, health
                seen[health["pid"]] = health["replica"]
                if len(seen) == WORKERS:
                    break
            return seen

        def agree() -> bool:
            seen = settled()
            return (
                len(seen) == WORKERS
                and len({json.dumps(r, sort_keys=True) for r in seen.values()}) == 1
                and all(
                    r["remote"] == "origin"
                    and r["every"] == 0.3
                    and r["last_sync"]
                    and (r["unpushed"], r["unmerged"], r["error"]) == (0, 0, None)
                    for r in seen.values()
                )
            )

        assert wait_until(agree), settled()
    finally:
        stop_pool(pool)


def test_a_worker_that_cannot_start_says_why(tmp_path: Path) -> None:
    stopped = []
    listening = listen_on("127.0.0.1", 0, shared=True)
    port = listening.getsockname()[1]
    spec = spec_for(
        [WorkerStore(name="gone", path=str(tmp_path / "none"), keys_required=True)],
        port,
        1,
        host="127.0.0.1",
        agent=None,
        branch=None,
    )
    workers = Workers(
        spec,
        1,
        stopping=lambda: False,
        stop_server=lambda: stopped.append(True),
        notice=lambda line: None,
    )
    with pytest.raises(WorkerError) as raised:
        workers.start()
    listening.close()
    assert raised.value.message.startswith(
        f"A worker of ctx serve did not start: No store at {tmp_path / 'none'}"
    ), raised.value.message
    assert "\n" not in raised.value.message
    assert workers.pids
    assert all(gone(pid) for pid in workers.pids)
    assert stopped == []
