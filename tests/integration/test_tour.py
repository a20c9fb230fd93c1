"""The README's tour (scripts/tour.sh, what `make tour` runs) works, twice."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from integration_support import VENV_BIN

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "scripts" / "tour.sh"


def _commands(text: str) -> list[str]:
    """Returns each shown command: "ctx remember", "export"."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    words = [line.split()[1:3] for line in re.findall(r"^\$ .*", plain, re.M)]
    return [" ".join(w if w[0] == "ctx" else w[:1]) for w in words]


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
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    for _ in range(2):
        done = subprocess.run(
            ["bash", str(TOUR)], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert "Error:" not in done.stderr
        assert "Since the merge base" in done.stdout
        # Each run starts from main: the same memories, never twice as many
        # (the recall's footer counts the whole live branch).
        assert "): 3 memories, 98 tokens (" in done.stdout
        assert ": ok." in done.stdout  # fsck
        # Every command the tour runs is shown, and the README shows them all
        # (issue 16: four were only in the script), quotes kept.
        assert _commands(done.stdout) == _commands(tour)
        assert '$ ctx recall "which database backs the job queue?"' in done.stdout
