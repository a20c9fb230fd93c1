"""A slow, idle or broken client cannot stall or break the hub (issue 12).

Real clients (raw sockets) against a real hub (`ctx hub start`).
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

import pytest

from ctx.hub.server.listener import MAX_REQUEST_BYTES
from ctx.hub.server.wire import socket_path


@pytest.fixture
def store(hub_store: Path) -> Path:
    return hub_store


def _connect(store: Path, timeout: float = 10.0) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    conn.connect(str(socket_path(store)))
    return conn


def _ask(store: Path, payload: bytes, timeout: float = 10.0) -> list[dict]:
    """Sends ``payload`` as one request; returns the reply lines, decoded."""
    with _connect(store, timeout) as conn:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(payload)
            conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return [json.loads(line) for line in data.splitlines()]


RECALL = json.dumps(
    {"op": "recall", "query": "postgres queue", "now": "2026-03-20T12:00:00Z"}
).encode()


def test_an_idle_client_does_not_delay_another_clients_recall(store: Path, hub) -> None:
    idle = [_connect(store) for _ in range(100)]  # more than the old backlog of 64
    try:
        started = time.monotonic()
        [reply] = _ask(store, RECALL)
        took = time.monotonic() - started
    finally:
        for conn in idle:
            conn.close()
    assert reply["result"]["hits"][0]["body"] == "We chose Postgres for the queue"
    assert took < 2.0


def test_a_client_that_sends_nothing_is_dropped(store: Path, hub) -> None:
    with _connect(store, timeout=15.0) as conn:
        started = time.monotonic()
        data = conn.recv(65536)  # the hub gives up: a failure, then EOF
        took = time.monotonic() - started
    assert 1.0 < took < 10.0
    assert b"stopped waiting" in data


def test_a_client_that_trickles_bytes_is_cut_off(store: Path, hub) -> None:
    started = time.monotonic()
    with _connect(store, timeout=15.0) as conn:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            for byte in RECALL[:-1]:
                conn.send(bytes([byte]))
                time.sleep(0.5)  # the whole request would take 30 s
                assert time.monotonic() - started < 12.0, "never cut off"
                [reply] = _ask(store, b'{"op": "ping"}')  # others are served
                assert reply["pid"] == hub.pid
        took = time.monotonic() - started
    assert took < 12.0
    assert hub.poll() is None


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
    store: Path, hub, payload: bytes, message: str
) -> None:
    [reply] = _ask(store, payload)
    assert reply["failure"]["type"] == "InvalidInputError"
    assert message in reply["failure"]["message"]
    assert reply["store"] == str(store)
    [answer] = _ask(store, RECALL)
    assert answer["result"]["hits"]
    assert hub.poll() is None
