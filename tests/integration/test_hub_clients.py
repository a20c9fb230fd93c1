"""A slow, idle or broken client cannot stall or break the hub (issue 12).

Real clients (raw sockets) against a real hub (`ctx hub start`).
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from integration_support import fill_hub_store, start_hub_process, wall_clock

from ctx.engine import Store
from ctx.hub.server.listener import MAX_REQUEST_BYTES
from ctx.hub.server.private import socket_path


@dataclass
class Hub:
    """The module's hub: its store, its process and where it listens."""

    store: Path
    proc: subprocess.Popen[str]
    socket: Path


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """One hub for the module: no case stops it or writes to its store.

    Every case checks that the hub still answers and runs after it, so a case
    that broke it fails there, whatever ran before. The socket is looked up
    once, in the module's runtime folder (each test has a runtime folder of
    its own).
    """
    store = tmp_path_factory.mktemp("hub") / ".ctx"
    Store.init(store, clock=wall_clock).close()
    fill_hub_store(store)
    proc = start_hub_process(store)
    yield Hub(store, proc, socket_path())
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=30)


def _connect(hub: Hub, timeout: float = 10.0) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    conn.connect(str(hub.socket))
    return conn


def _ask(hub: Hub, payload: bytes, timeout: float = 10.0) -> list[dict]:
    """Sends ``payload`` as one request; returns the reply lines, decoded."""
    with _connect(hub, timeout) as conn:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(payload)
            conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


def _recall(hub: Hub) -> bytes:
    """A recall of the module's store, as ctx sends it."""
    return json.dumps(
        {
            "op": "recall",
            "query": "postgres queue",
            "now": "2026-03-20T12:00:00Z",
            "store": str(hub.store.resolve()),
        }
    ).encode()


def test_an_idle_client_does_not_delay_another_clients_recall(hub: Hub) -> None:
    idle = [_connect(hub) for _ in range(100)]  # more than the old backlog of 64
    try:
        started = time.monotonic()
        [reply] = _ask(hub, _recall(hub))
        took = time.monotonic() - started
    finally:
        for conn in idle:
            conn.close()
    assert reply["result"]["hits"][0]["body"] == "We chose Postgres for the queue"
    assert took < 2.0


def test_a_client_that_sends_nothing_is_dropped(hub: Hub) -> None:
    with _connect(hub, timeout=15.0) as conn:
        started = time.monotonic()
        data = conn.recv(65536)  # the hub gives up: a failure, then EOF
        took = time.monotonic() - started
    assert 1.0 < took < 10.0
    assert b"stopped waiting" in data


def test_a_client_that_trickles_bytes_is_cut_off(hub: Hub) -> None:
    started = time.monotonic()
    with _connect(hub, timeout=15.0) as conn:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            for byte in _recall(hub)[:-1]:
                conn.send(bytes([byte]))
                time.sleep(0.5)  # the whole request would take 30 s
                assert time.monotonic() - started < 12.0, "never cut off"
                [reply] = _ask(hub, b'{"op": "ping"}')  # others are served
                assert reply["pid"] == hub.proc.pid
        took = time.monotonic() - started
    assert took < 12.0
    assert hub.proc.poll() is None


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b'{"op": "recall", "query": ', "could not read the request"),
        (b'{"op": "format_disk"}', "could not read the request"),
        (b'{"op": "recall", "query": "x", "evil": 1}', "could not read the request"),
        (b"[" * 100_000, "could not read the request"),
        (b" " * (MAX_REQUEST_BYTES + 1), "larger than 1,000,000 bytes"),
        (b" " * (5 * MAX_REQUEST_BYTES), "larger than 1,000,000 bytes"),
    ],
    ids=["malformed", "unknown-op", "unknown-field", "deep", "huge", "5-MB"],
)
def test_a_bad_request_gets_a_failure_and_the_hub_goes_on(
    hub: Hub, payload: bytes, message: str
) -> None:
    [reply] = _ask(hub, payload)
    assert reply["failure"]["type"] == "InvalidInputError"
    assert message in reply["failure"]["message"]
    assert reply["store"] == ""  # it names no store it could read
    [answer] = _ask(hub, _recall(hub))
    assert answer["result"]["hits"]
    assert hub.proc.poll() is None
