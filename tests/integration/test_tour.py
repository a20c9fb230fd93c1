"""The README's tour (scripts/tour.sh, what `make tour` runs) works, twice."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from integration_support import VENV_BIN

TOUR = Path(__file__).resolve().parents[2] / "scripts" / "tour.sh"


def test_the_tour_runs_twice_on_the_user_store(tmp_path: Path) -> None:
    # A change to a command the tour relies on (branch -d refusing unmerged
    # work) once broke `make tour` with every test passing.
    env = {
        **os.environ,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "CTX_HUB_AUTOSTART": "0",
    }
    for _ in range(2):
        done = subprocess.run(
            ["bash", str(TOUR)], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert "Error:" not in done.stderr
        assert "Since the merge base" in done.stdout
        assert "3 memories, 98 tokens of a 200 budget" in done.stdout
        assert ": ok." in done.stdout  # fsck
