"""A running hub (`ctx hub start`) answers recall and search for other processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from integration_support import (
    fill_hub_store,
    run_ctx,
    start_hub_process,
    wait_for,
    wall_clock,
)

from ctx.engine import Store
from ctx.hub.server.private import socket_path

NOW = "2026-03-20T12:00"


@pytest.fixture
def store(hub_store: Path) -> Path:
    return hub_store


@dataclass
class SharedHub:
    """The module's hub: its store, its process and where they are found."""

    store: Path
    proc: subprocess.Popen[str]
    socket: Path
    env: dict[str, str]
    """The folders the hub runs with (each test has folders of its own)."""


@pytest.fixture(scope="module")
def shared_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedHub]:
    """One hub for the cases that only ask it: none stops it or writes to it."""
    store = tmp_path_factory.mktemp("hub") / ".ctx"
    Store.init(store, clock=wall_clock).close()
    fill_hub_store(store)
    proc = start_hub_process(store)
    env = {k: v for k, v in os.environ.items() if k == "HOME" or k.startswith("XDG_")}
    yield SharedHub(store, proc, socket_path(), env)
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=30)


def _hits(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [hit["id"] for hit in json.loads(result.stdout)["hits"]]


def test_the_hub_answers_as_the_process_would(shared_hub: SharedHub) -> None:
    store, hub, env = shared_hub.store, shared_hub.proc, shared_hub.env
    alone_env = {**env, "CTX_NO_HUB": "1"}
    args = ("recall", "postgres queue", "--now", NOW, "--explain", "--json")
    served = run_ctx(store, *args, env=env)
    alone = run_ctx(store, *args, env=alone_env)
    assert _hits(served) == _hits(alone)
    assert json.loads(served.stdout)["hits"] == json.loads(alone.stdout)["hits"]
    search = ("search", "api", "-n", "1", "--json")
    assert _hits(run_ctx(store, *search, env=env)) == _hits(
        run_ctx(store, *search, env=alone_env)
    )
    status = json.loads(run_ctx(store, "hub", "status", "--json", env=env).stdout)
    assert {key: status[key] for key in ("running", "pid", "socket")} == {
        "running": True,
        "pid": hub.pid,
        "socket": str(shared_hub.socket),
    }
    assert (status["open"], status["autostarted"]) == (True, False)
    [listed] = status["stores"]
    assert listed["store"] == str(store.resolve())
    assert status["rss_bytes"] > 10_000_000
    assert status["embedders"] == 1


def test_the_hub_sees_new_commits_and_passes_errors_back(store: Path, hub) -> None:
    new = run_ctx(store, "remember", "Kites fly in the park", "--json")
    memory_id = json.loads(new.stdout)["id"]
    assert _hits(run_ctx(store, "search", "kites", "--json"))[0] == memory_id
    empty = run_ctx(store, "recall", "  ")
    assert empty.returncode == 4
    assert empty.stderr.startswith("Error: The query is empty.")
    unknown = run_ctx(store, "recall", "q", "--branch", "nope")
    assert unknown.returncode == 3
    assert hub.poll() is None  # still serving


def test_one_hub_per_user(shared_hub: SharedHub) -> None:
    second = run_ctx(shared_hub.store, "hub", "start", env=shared_hub.env)
    assert second.returncode == 7
    assert "already running" in second.stderr
    assert shared_hub.proc.poll() is None


def test_stop_and_sigterm_remove_the_socket(store: Path) -> None:
    proc = start_hub_process(store)
    stopped = json.loads(run_ctx(store, "hub", "stop", "--json").stdout)
    assert stopped == {"stopped": True, "pid": proc.pid}
    proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert not socket_path().exists()
    proc = start_hub_process(store)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert not socket_path().exists()
    assert run_ctx(store, "hub", "status").stdout.startswith("No hub is running")


def test_a_command_kept_from_the_hub_still_sees_and_stops_it(store: Path) -> None:
    """CTX_NO_HUB keeps a command's own calls in-process, not the hub unseen."""
    proc = start_hub_process(store)
    alone = {"CTX_NO_HUB": "1"}
    status = json.loads(run_ctx(store, "hub", "status", "--json", env=alone).stdout)
    assert (status["running"], status["pid"]) == (True, proc.pid)
    stopped = json.loads(run_ctx(store, "hub", "stop", "--json", env=alone).stdout)
    assert stopped == {"stopped": True, "pid": proc.pid}
    proc.communicate(timeout=30)
    assert not socket_path().exists()


def test_a_killed_hub_leaves_recall_working(store: Path) -> None:
    proc = start_hub_process(store)
    proc.kill()
    proc.communicate(timeout=30)
    assert socket_path().exists()  # stale
    assert len(_hits(run_ctx(store, "recall", "postgres", "--json"))) >= 1
    again = start_hub_process(store)  # takes the stale socket over
    assert run_ctx(store, "hub", "stop").returncode == 0
    again.communicate(timeout=30)


def _hub_pid(store: Path) -> int | None:
    result = run_ctx(store, "hub", "status", "--json")
    assert result.returncode == 0, result.stderr
    pid: int | None = json.loads(result.stdout)["pid"]
    return pid


def test_recall_starts_a_hub_that_answers_next_and_exits_when_idle(
    store: Path,
) -> None:
    with (store / "config.toml").open("a", encoding="utf-8") as f:
        # 18 s: long enough that a loaded machine's `remember` and second
        # process fit inside it, short enough to watch the hub exit
        f.write("\n[hub]\nidle_minutes = 0.3\n")
    auto = {"CTX_HUB_AUTOSTART": "1"}
    args = ("recall", "postgres queue", "--now", NOW, "--json")
    assert _hub_pid(store) is None
    first = run_ctx(store, *args, env=auto)
    wait_for(lambda: _hub_pid(store) is not None)
    pid = _hub_pid(store)
    assert (
        run_ctx(store, "remember", "Postgres replaced the Redis queue").returncode == 0
    )
    second = run_ctx(store, *args, env=auto)  # answered by the hub: sees the commit
    assert len(_hits(second)) == len(_hits(first)) + 1
    assert _hub_pid(store) == pid  # the same hub, not a second one
    wait_for(lambda: _hub_pid(store) is None, seconds=90)
    assert not socket_path().exists()
    assert "Hub stopped." in socket_path().with_suffix(".log").read_text()


@pytest.mark.parametrize(
    ("config", "env"),
    [
        ("\n[hub]\nautostart = false\n", {"CTX_HUB_AUTOSTART": "1"}),
        ("", {"CTX_HUB_AUTOSTART": "0"}),
        ("", {"CTX_HUB_AUTOSTART": "1", "CTX_NO_HUB": "1"}),
    ],
    ids=["config", "CTX_HUB_AUTOSTART=0", "CTX_NO_HUB"],
)
def test_recall_starts_no_hub_when_told_not_to(
    store: Path, config: str, env: dict[str, str]
) -> None:
    with (store / "config.toml").open("a", encoding="utf-8") as f:
        f.write(config)
    assert run_ctx(store, "recall", "postgres", env=env).returncode == 0
    time.sleep(1.0)
    assert _hub_pid(store) is None
    assert not socket_path().with_suffix(".log").exists()


@pytest.mark.parametrize("deleted", ["index", "lexical-*", "vectors-*"])
def test_deleting_the_index_under_a_running_hub_rebuilds_it(
    store: Path, hub, deleted: str
) -> None:
    # Deleting .ctx/index/ (or one of its indexes) loses nothing: the next
    # recall rebuilds it, with a hub running too (it used to fail with
    # "Cannot read the lexical index" until the hub was stopped).
    args = ("recall", "postgres queue", "--now", NOW, "--json")
    before = _hits(run_ctx(store, *args))
    assert before
    index = store / "index"
    for path in [index] if deleted == "index" else index.glob(deleted):
        shutil.rmtree(path)
    first = run_ctx(store, *args)
    assert _hits(first) == before
    assert "Notice: " in first.stderr
    assert "rebuilt" in first.stderr
    second = run_ctx(store, *args)
    assert _hits(second) == before
    assert "Notice: " not in second.stderr
    assert _hub_pid(store) == hub.pid  # answered by the same hub throughout
    status = json.loads(run_ctx(store, "index", "status", "--json").stdout)
    assert status["documents"] == status["vectors"] == 2


def test_reindex_and_status_through_a_hub_whose_index_was_deleted(
    store: Path, hub
) -> None:
    assert _hits(run_ctx(store, "recall", "postgres", "--now", NOW, "--json"))
    shutil.rmtree(store / "index")
    status = run_ctx(store, "index", "status", "--json")
    assert status.returncode == 0, status.stderr
    assert "Notice: " in status.stderr
    report = run_ctx(store, "reindex", "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["documents"] == 2
    status = json.loads(run_ctx(store, "index", "status", "--json").stdout)
    assert status["documents"] == status["vectors"] == 2
    assert [b["current"] for b in status["branches"]] == [True]
    assert _hub_pid(store) == hub.pid


def test_a_damaged_lexical_segment_under_a_running_hub_is_rebuilt(
    store: Path, hub
) -> None:
    # Issue 12: a corrupt Tantivy segment made the hub die of a Rust panic,
    # and every search failed until `ctx reindex`.
    args = ("recall", "postgres queue", "--now", NOW, "--json")
    before = _hits(run_ctx(store, *args))
    assert before
    for path in (store / "index").glob("lexical-*/*.term"):
        data = bytearray(path.read_bytes())
        for i in range(len(data) // 2, min(len(data), len(data) // 2 + 64)):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))
    first = run_ctx(store, *args)
    assert _hits(first) == before
    assert "Notice: The index was unreadable" in first.stderr
    assert "rebuilt it." in first.stderr
    assert "panicked at" not in first.stderr
    second = run_ctx(store, *args)
    assert _hits(second) == before
    assert "Notice: " not in second.stderr
    assert _hub_pid(store) == hub.pid  # the same hub answered throughout
