"""`ctx find` through a running hub, and `ctx code watch` (issue 20)."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

from integration_support import run_ctx, wait_for

from ctx.hub import Workspace, find_code, watch_code
from ctx.hub.server import routing

RETRY = (
    "import time\n\n\n"
    "def fetch_with_retries(url):\n"
    '    """Retries a request with exponential backoff."""\n'
    "    time.sleep(1)\n"
)


def _names(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [hit["chunk"]["name"] for hit in json.loads(result.stdout)["hits"]]


def test_the_hub_answers_find_and_sees_a_new_index(hub_store: Path, hub, tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "net.py").write_text(RETRY)
    assert run_ctx(hub_store, "code", "index", str(tree)).returncode == 0
    # The hub embeds the chunks in the background: wait, so that both
    # answers below see the same vectors.
    wait_for(lambda: _code_status(hub_store)["unembedded"] == 0, seconds=60)
    query = ("find", "retry a request", "--json")
    served = run_ctx(hub_store, *query)
    alone = run_ctx(hub_store, *query, env={"CTX_NO_HUB": "1"})
    assert _names(served) == _names(alone) == ["fetch_with_retries", ""]
    ws = Workspace.find(hub_store)
    try:
        assert find_code(ws, "retry").hits
        assert ws not in routing._ANSWERERS  # the hub answered, not this process
        (tree / "cache.py").write_text("def evict_stale_entries(cache):\n    pass\n")
        assert run_ctx(hub_store, "code", "index").returncode == 0
        assert find_code(ws, "evict stale entries").hits[0].chunk.name == (
            "evict_stale_entries"
        )
    finally:
        ws.close()


def test_watch_indexes_changes_as_they_happen(hub_store: Path, tmp_path):
    tree = tmp_path / "watched"
    tree.mkdir()
    (tree / "net.py").write_text(RETRY)
    ws = Workspace.find(hub_store)
    stop = threading.Event()
    reports = []
    watcher = threading.Thread(
        target=watch_code,
        args=(ws, tree),
        kwargs={"updated": reports.append, "stop": stop},
    )
    watcher.start()
    try:
        wait_for(lambda: len(reports) == 1, 30)
        (tree / "queue.py").write_text("def drain_queue(q):\n    pass\n")
        wait_for(lambda: len(reports) == 2, 30)
        assert (reports[1].parsed, reports[1].files) == (1, 2)
        (tree / "net.py").unlink()
        wait_for(lambda: len(reports) == 3, 30)
        assert reports[2].removed == 1
    finally:
        stop.set()
        watcher.join(30)
        ws.close()
    assert not watcher.is_alive()


def test_ctx_code_watch_reports_each_update_as_a_json_line(hub_store: Path, tmp_path):
    from integration_support import CTX

    tree = tmp_path / "cli-watched"
    tree.mkdir()
    (tree / "net.py").write_text(RETRY)
    proc = subprocess.Popen(
        [str(CTX), "--store", str(hub_store), "code", "watch", str(tree), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert (first["files"], first["parsed"]) == (1, 1)
        (tree / "queue.py").write_text("def drain_queue(q):\n    pass\n")
        second = json.loads(proc.stdout.readline())
        assert (second["files"], second["parsed"]) == (2, 1)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _code_status(store: Path) -> dict:
    done = run_ctx(store, "code", "status", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_indexing_leaves_the_vectors_to_the_hub_it_starts(hub_store: Path, tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "net.py").write_text(RETRY)
    (tree / "cache.py").write_text("def evict_stale_entries(cache):\n    pass\n")
    auto = {"CTX_HUB_AUTOSTART": "1"}
    try:
        done = run_ctx(hub_store, "code", "index", str(tree), "--json", env=auto)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert (report["embedded"], report["unembedded"]) == (0, report["chunks"])
        assert report["embedding"] == "started"
        wait_for(lambda: _code_status(hub_store)["unembedded"] == 0, seconds=60)
        status = _code_status(hub_store)
        assert status["hub"]
        assert status["embedder"] == "hashing-384@1"
        found = json.loads(run_ctx(hub_store, "find", "retry", "--json").stdout)
        assert found["unembedded"] == 0
        assert "vector" in found["hits"][0]["channels"]
        # A change: indexed at once, its one new chunk embedded by the hub.
        (tree / "cache.py").write_text("def drop_everything(cache):\n    pass\n")
        again = json.loads(run_ctx(hub_store, "code", "index", "--json").stdout)
        assert (again["parsed"], again["unembedded"], again["embedding"]) == (
            1,
            1,
            "hub",
        )
        wait_for(lambda: _code_status(hub_store)["unembedded"] == 0, seconds=60)
    finally:
        assert run_ctx(hub_store, "hub", "stop").returncode == 0
