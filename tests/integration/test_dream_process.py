"""Dream in real processes: a cycle killed mid-way, and the hub's background.

A cycle SIGKILLed at any point leaves the store's fsck clean, and the next
cycles go on to exactly the proposals an uninterrupted run makes. A hub
whose config says ``[dream] enabled = true`` runs cycles by itself.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from integration_support import (
    assert_healthy,
    opened,
    run_ctx,
    start_hub_process,
    wait_for,
)

from ctx.engine import RefNotFoundError, list_proposals
from ctx.hub import Workspace, dream

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)

CYCLE = """
import sys, time
from datetime import UTC, datetime
from ctx.hub import Workspace, dream
ws = Workspace(__import__("pathlib").Path(sys.argv[1]),
               clock=lambda: datetime(2026, 3, 20, 12, tzinfo=UTC))
def examined(mid):
    print(mid, flush=True)
    time.sleep(0.01)
report = dream.run(ws, budget=1000, examined=examined)
print("done", sum(report.proposed.values()), flush=True)
"""


def _fill(store: Path) -> None:
    (store / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    lines = []
    for n in range(12):
        lines.append(f'{{"text": "Service {n} stores its logs in bucket {n}"}}')
        lines.append(f'{{"text": "service {n} stores its logs in bucket {n}."}}')
        lines.append(f'{{"text": "Service {n} runs its report every Monday"}}')
    data = store.parent / "seed.jsonl"
    data.write_text("\n".join(lines) + "\n")
    assert run_ctx(store, "import", str(data)).returncode == 0


def _cycle(store: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CYCLE, str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _proposal_ids(store: Path) -> set[str]:
    with opened(store) as s:
        return {p.id for p in list_proposals(s, "main")}


def _finish(store: Path) -> None:
    ws = Workspace(store, clock=lambda: NOW)
    try:
        for _ in range(5):
            if not dream.run(ws, budget=1000).proposed:
                return  # nothing left to propose
    finally:
        ws.close()
    raise AssertionError("the cycles did not settle")


def test_a_killed_cycle_leaves_fsck_clean_and_the_next_goes_on(store_path: Path):
    _fill(store_path)
    reference = store_path.parent / "reference" / ".ctx"
    shutil.copytree(store_path, reference)
    _finish(reference)
    expected = _proposal_ids(reference)
    assert len(expected) >= 24  # 12 duplicates, 12 recurrences, some links
    for kill_after in (1, 11):
        proc = _cycle(store_path)
        assert proc.stdout is not None
        for _ in range(kill_after):
            assert proc.stdout.readline()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        assert_healthy(store_path)
        assert _proposal_ids(store_path) <= expected
    _finish(store_path)
    assert_healthy(store_path)
    assert _proposal_ids(store_path) == expected


def test_the_hub_runs_dream_in_the_background(store_path: Path):
    _fill(store_path)
    with (store_path / "config.toml").open("a") as f:
        f.write("[dream]\nenabled = true\ninterval = 1\nbudget = 30\n")

    def proposed() -> bool:
        with opened(store_path) as s:
            try:
                return len(list_proposals(s, "main")) >= 24
            except RefNotFoundError:
                return False

    hub = start_hub_process(store_path)
    try:
        wait_for(proposed, 60)
    finally:
        hub.kill()
        hub.communicate(timeout=30)
    assert_healthy(store_path)
