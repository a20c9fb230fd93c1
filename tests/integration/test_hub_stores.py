"""One hub per user serves every store it is asked about (issue 30).

Real hubs (`ctx hub start`) and real clients (`ctx`, raw sockets): each store
answers its own memories and never another's, one embedder serves them all,
an idle store is dropped, and a path that is not a store is refused.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration_support import run_ctx, start_hub_process, wait_for, wall_clock

from ctx.engine import Store
from ctx.hub.server.private import socket_path

ANIMALS = ("aardvark", "bison", "cobra", "dingo")


def _make_stores(root: Path, count: int) -> list[Path]:
    """Makes ``count`` stores, each holding its own secret animal."""
    stores = []
    for animal in ANIMALS[:count]:
        path = root / animal / ".ctx"
        Store.init(path, clock=wall_clock).close()
        (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
        text = f"The secret password of this project is {animal}"
        assert run_ctx(path, "remember", text).returncode == 0
        stores.append(path)
    return stores


@pytest.fixture
def hub_of(tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    """Hubs started by the test, killed after it."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def _status(store: Path) -> dict:
    result = run_ctx(store, "hub", "status", "--json")
    assert result.returncode == 0, result.stderr
    status: dict = json.loads(result.stdout)
    return status


def _recalled(store: Path, query: str) -> str:
    result = run_ctx(store, "recall", query, "--json")
    assert result.returncode == 0, result.stderr
    return " ".join(hit["body"] for hit in json.loads(result.stdout)["hits"])


def test_one_hub_answers_each_store_its_own_memories(
    tmp_path: Path, hub_of: list[subprocess.Popen[str]]
) -> None:
    count = 4  # four stores: each against three others (two was a part of it)
    stores = _make_stores(tmp_path, count)
    hub = start_hub_process(stores[0])
    hub_of.append(hub)
    for _ in range(2):  # the second round finds every store open
        for store, animal in zip(stores, ANIMALS, strict=False):
            found = _recalled(store, "what is the secret password?")
            assert animal in found
            assert not [a for a in ANIMALS if a != animal and a in found]
            for other in ANIMALS[:count]:
                if other != animal:  # another store's word finds nothing here
                    assert other not in _recalled(store, other)
    status = _status(stores[-1])
    assert (status["running"], status["pid"], status["open"]) == (True, hub.pid, True)
    assert sorted(entry["store"] for entry in status["stores"]) == sorted(
        str(store.resolve()) for store in stores
    )
    assert status["embedders"] == 1  # shared by every store
    assert status["rss_bytes"] > 10_000_000
    text = run_ctx(stores[0], "hub", "status").stdout
    assert f"It holds {count} stores open:" in text
    assert all(str(store.resolve()) in text for store in stores)
    assert hub.poll() is None


def test_a_second_hub_of_the_user_is_refused_from_any_store(
    tmp_path: Path, hub_of: list[subprocess.Popen[str]]
) -> None:
    first, second = _make_stores(tmp_path, 2)
    hub_of.append(start_hub_process(first))
    again = run_ctx(second, "hub", "start")
    assert again.returncode == 7
    assert "A hub is already running for this user." in again.stderr
    stopped = json.loads(run_ctx(second, "hub", "stop", "--json").stdout)
    assert stopped == {"stopped": True, "pid": hub_of[0].pid}
    hub_of[0].communicate(timeout=30)
    assert not socket_path().exists()


def test_an_idle_store_is_dropped_and_opened_again(
    tmp_path: Path,
    hub_of: list[subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CTX_HUB_STORE_IDLE", "0.02")  # 1.2 s
    first, second = _make_stores(tmp_path, 2)
    hub = start_hub_process(first)
    hub_of.append(hub)
    assert "bison" in _recalled(second, "secret password")
    wait_for(lambda: not _status(second)["open"], seconds=60)
    assert "This store is not open" in run_ctx(second, "hub", "status").stdout
    assert "bison" in _recalled(second, "secret password")  # opened again
    assert hub.poll() is None


def _raw(store: str) -> dict:
    """Asks the hub a recall naming ``store`` over a raw socket."""
    request = {"op": "recall", "query": "password", "store": store}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(str(socket_path()))
        conn.sendall(json.dumps(request).encode())
        conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    [reply] = [json.loads(line) for line in data.splitlines()]
    return reply


def test_a_path_that_is_not_a_store_is_refused(
    tmp_path: Path, hub_of: list[subprocess.Popen[str]]
) -> None:
    [store] = _make_stores(tmp_path, 1)
    hub = start_hub_process(store)
    hub_of.append(hub)
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in (str(plain), "relative/.ctx", str(tmp_path / "missing")):
        reply = _raw(name)
        assert reply["store"] == name
        assert reply["failure"]["type"] == "NotAStoreError"
        assert reply["failure"]["message"] == f"{name} is not a ctx store."
    nameless = _raw("")
    assert nameless["failure"]["message"] == "The request names no store."
    assert _raw(str(store.resolve()))["result"]["hits"]
    assert [e["store"] for e in _status(store)["stores"]] == [str(store.resolve())]
    assert hub.poll() is None
