"""`ctx lens` in a real terminal (tmux): keys in, the screen read back, a clean exit."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lens_builders import story

TMUX = shutil.which("tmux")
CTX = Path(sys.executable).with_name("ctx")

pytestmark = pytest.mark.skipif(TMUX is None, reason="needs tmux")


def test_ctx_lens_in_tmux_shows_screens_and_restores_the_terminal(tmp_path):
    story(tmp_path).ws.close()
    socket = str(tmp_path / "tmux.sock")

    def tmux(*args: str) -> str:
        done = subprocess.run(
            [TMUX, "-S", socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def screen_with(*texts: str, seconds: float = 60) -> str:
        """The screen once it shows every one of texts (a screen fills in parts)."""
        deadline = time.monotonic() + seconds
        while True:
            shown = tmux("capture-pane", "-p", "-t", "lens")
            found = all(text in shown for text in texts)
            if found or time.monotonic() > deadline:
                assert found, shown
                assert "Traceback" not in shown, shown
                return shown
            time.sleep(0.1)

    command = f"{CTX} lens; echo LENS-EXIT=$?; sleep 60"
    tmux(
        "new-session",
        "-d",
        "-s",
        "lens",
        "-x",
        "100",
        "-y",
        "30",
        "-c",
        str(tmp_path),
        command,
    )
    try:
        # the log, read
        screen_with("agreed in the design review", "history of main", "agent/bob")
        tmux("send-keys", "-t", "lens", "2")
        screen_with("Retry policy", "5 memories (all)")
        tmux("send-keys", "-t", "lens", "3")
        screen_with("graph around", "◉ dec Queue on Postgres")
        tmux("send-keys", "-t", "lens", "q")
        shown = screen_with("LENS-EXIT=0")
        assert "Retry policy" not in shown  # the lens's screen is gone
        flags = tmux(
            "display-message",
            "-p",
            "-t",
            "lens",
            "#{alternate_on} #{cursor_flag} #{mouse_any_flag}",
        )
        assert flags.split() == ["0", "1", "0"]  # main screen, cursor shown, no mouse
    finally:
        subprocess.run([TMUX, "-S", socket, "kill-server"], check=False)
