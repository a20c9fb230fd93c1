"""The hub under many processes: concurrent recalls and writes, killed catch-ups.

DESIGN.md: Tantivy allows one writer per index, so catching up takes a lock;
a recall that cannot get it still answers correctly, and a crash at any
point leaves an index that the next recall repairs or extends.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from integration_support import CTX, run_ctx, wall_clock

from ctx.engine import Draft, Intent, Store, remember_many
from ctx.hub.retrieval.packing import MAX_HITS

HUB_WORKER = Path(__file__).with_name("_hub_worker.py")


def _hashing(store_path: Path) -> None:
    with (store_path / "config.toml").open("a", encoding="utf-8") as f:
        f.write('\n[embedder]\nkind = "hashing"\n')


def _start(store_path: Path, mode: str, count: int, tag: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HUB_WORKER), str(store_path), mode, str(count), tag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_concurrent_recalls_and_writes_from_many_processes(store_path: Path) -> None:
    _hashing(store_path)
    writers = [_start(store_path, "write", 25, f"w{i}") for i in range(3)]
    readers = [_start(store_path, "recall", 10, f"r{i}") for i in range(3)]
    written: set[str] = set()
    for proc in writers + readers:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
        assert "Traceback" not in err, err
        if proc in writers:
            written.update(out.split())
        else:
            for line in out.splitlines():
                live, hits, listed = map(int, line.split())
                assert hits == min(live, MAX_HITS)
                assert listed == live  # every memory of the view is found
    assert len(written) == 75
    result = run_ctx(store_path, "recall", "turbines", "--budget", "100000", "--json")
    assert result.returncode == 0, result.stderr
    found = {hit["id"] for hit in json.loads(result.stdout)["hits"]}
    assert len(found) == MAX_HITS
    search = run_ctx(store_path, "search", "turbines", "-n", "100", "--json")
    assert {hit["id"] for hit in json.loads(search.stdout)["hits"]} == written
    status = json.loads(run_ctx(store_path, "index", "status", "--json").stdout)
    assert status["documents"] == status["vectors"] == 75


def test_a_killed_catch_up_leaves_an_index_the_next_recall_completes(
    store_path: Path,
) -> None:
    _hashing(store_path)
    store = Store.open(store_path, clock=wall_clock)
    drafts = [Draft(text=f"memory {i} about pelicans") for i in range(3000)]
    remember_many(store, drafts, Intent(agent="bench", intent="import"))
    store.close()
    rng = random.Random(7)
    for _ in range(4):
        proc = subprocess.Popen(
            [str(CTX), "--store", str(store_path), "reindex"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        result = run_ctx(store_path, "search", "pelicans", "-n", "5", "--json")
        assert result.returncode == 0, result.stderr
        assert len(json.loads(result.stdout)["hits"]) == 5
    status = json.loads(run_ctx(store_path, "index", "status", "--json").stdout)
    assert status["documents"] == status["vectors"] == 3000
    assert status["branches"][0]["current"] is True
