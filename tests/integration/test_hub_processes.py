"""The hub under many processes: concurrent recalls and writes, killed catch-ups.

DESIGN.md: Tantivy allows one writer per index, so catching up takes a lock;
a recall that cannot get it still answers correctly, and a crash at any
point leaves an index that the next recall repairs or extends.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from integration_support import run_ctx, wall_clock

from ctx.engine import Draft, Intent, Store, remember_many
from ctx.hub.retrieval.index.lexical import LexicalIndex
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


def _fill(store_path: Path, count: int) -> None:
    store = Store.open(store_path, clock=wall_clock)
    drafts = [Draft(text=f"memory {i} about pelicans") for i in range(count)]
    remember_many(store, drafts, Intent(agent="bench", intent="import"))
    store.close()


def _kill_mid_rebuild(store_path: Path, *, at: int, re_embed: bool = False) -> int:
    """Starts a rebuild, SIGKILLs it once ``at`` blobs are durably indexed.

    Returns how many it had indexed: the last progress line it printed,
    which is less than the total (the kill landed while it indexed).
    """
    proc = _start(store_path, "reindex", 300, "re-embed" if re_embed else "keep")
    assert proc.stdout is not None
    done = total = 0
    while done < at:
        line = proc.stdout.readline()
        assert line.startswith("progress "), (line, proc.stderr)
        done, total = map(int, line.split()[1:])
    proc.send_signal(signal.SIGKILL)  # sleeping after that line: mid-rebuild
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err
    assert "done" not in out
    last = [line for line in out.splitlines() if line.startswith("progress ")]
    done = int(last[-1].split()[1]) if last else done
    assert at <= done < total, (done, total)
    return done


def _durable_documents(store_path: Path) -> int:
    """Returns the documents the index holds, without catching anything up."""
    folder = store_path / "index"
    state = json.loads((folder / "state.json").read_text())
    return LexicalIndex.open(folder / state["lexical"], create=False).count()


def test_a_killed_catch_up_leaves_an_index_the_next_recall_completes(
    store_path: Path,
) -> None:
    # Issue 12: this test used to kill at random moments and never checked
    # that the kill landed while the rebuild indexed.
    _hashing(store_path)
    _fill(store_path, 3000)
    for at in (512, 1024, 2048):
        done = _kill_mid_rebuild(store_path, at=at)
        assert done <= _durable_documents(store_path) < 3000  # a partial index
        result = run_ctx(store_path, "search", "pelicans", "-n", "5", "--json")
        assert result.returncode == 0, result.stderr
        assert len(json.loads(result.stdout)["hits"]) == 5
    status = json.loads(run_ctx(store_path, "index", "status", "--json").stdout)
    assert status["documents"] == status["vectors"] == 3000
    assert status["branches"][0]["current"] is True


def test_a_killed_reindex_keeps_every_vector_it_had(store_path: Path) -> None:
    # Issue 12: a killed reindex threw the saved vectors away, and the next
    # embedded everything again.
    _hashing(store_path)
    _fill(store_path, 3000)
    assert run_ctx(store_path, "reindex").returncode == 0
    _kill_mid_rebuild(store_path, at=1024)
    report = json.loads(run_ctx(store_path, "reindex", "--json").stdout)
    assert (report["embedded"], report["reused"]) == (0, 3000)
    assert report["documents"] == report["vectors"] == 3000


def test_a_killed_re_embed_keeps_the_vectors_it_made(store_path: Path) -> None:
    _hashing(store_path)
    _fill(store_path, 3000)
    assert run_ctx(store_path, "reindex").returncode == 0
    done = _kill_mid_rebuild(store_path, at=1024, re_embed=True)
    report = json.loads(run_ctx(store_path, "reindex", "--json").stdout)
    # What it had embedded is copied; only the rest is embedded.
    assert (report["embedded"], report["reused"]) == (3000 - done, done)
    state = json.loads((store_path / "index" / "state.json").read_text())
    assert state["reuse"] == {}  # complete: nothing left to copy from
