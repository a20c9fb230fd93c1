"""`ctx serve` answers reads side by side while writes go on (issue 30).

Several clients on threads, a real server on loopback: recalls, searches,
shows, listings and logs at once, with a writer beside them. Every answer
must be whole and right, and the store and its index sound after.
"""

from __future__ import annotations

import subprocess
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration_support import run_ctx
from serve_support import Served, start_serve

CLIENTS = 4
ROUNDS = 6


@pytest.fixture
def served(store_path: Path) -> Iterator[Served]:
    (store_path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    lines = "".join(
        f'{{"text": "The service named quokka{n} answers behind the gateway."}}\n'
        for n in range(60)
    )
    source = store_path.parent / "notes.jsonl"
    source.write_text(lines)
    assert run_ctx(store_path, "import", str(source)).returncode == 0
    server = start_serve(store_path)
    yield server
    server.stop()


def test_reads_side_by_side_with_a_writer(served: Served, store_path: Path) -> None:
    status, listed = served.request("GET", "/api/memories")
    assert status == 200
    ids = [m["id"] for m in listed]
    failures: list[str] = []

    def reader(n: int) -> None:
        try:
            for i in range(ROUNDS):
                k = (n * ROUNDS + i) % 60
                status, found = served.request(
                    "POST", "/api/recall", {"query": f"where does quokka{k} answer?"}
                )
                assert status == 200, found
                assert f"quokka{k} " in found["hits"][0]["body"], found
                status, found = served.request(
                    "POST", "/api/search", {"query": f"quokka{k}"}
                )
                assert status == 200, found
                assert f"quokka{k} " in found["hits"][0]["body"], found
                status, shown = served.request("GET", f"/api/memories/{ids[k]}")
                assert (status, shown["memory"]["id"]) == (200, ids[k])
                status, every = served.request("GET", "/api/memories")
                assert (status, len(every) >= 60) == (200, True), every
                status, log = served.request("GET", "/api/log", query={"limit": 3})
                assert (status, len(log) >= 1) == (200, True), log
        except Exception:  # the test's thread reports, the test fails
            failures.append(f"reader {n}: {traceback.format_exc()}"[-3000:])

    written: list[str] = []

    def writer() -> None:
        try:
            for i in range(ROUNDS):
                status, made = served.request(
                    "POST", "/api/memories", {"text": f"Written beside the reads, {i}."}
                )
                assert status == 200, made
                written.append(made["id"])
        except Exception as exc:  # the test's thread reports, the test fails
            failures.append(f"writer: {exc!r}"[:2000])

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(CLIENTS)]
    threads.append(threading.Thread(target=writer))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    status, found = served.request(
        "POST", "/api/search", {"query": "written beside the reads", "limit": 20}
    )
    assert {h["id"] for h in found["hits"]} >= set(written)
    assert len(served.request("GET", "/api/memories")[1]) == 60 + ROUNDS
    fsck = subprocess.run(
        ["git", "--git-dir", str(store_path / "git"), "fsck", "--strict"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stderr
