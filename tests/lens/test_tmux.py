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

    def screen_with(text: str, seconds: float = 30) -> str:
        deadline = time.monotonic() + seconds
        while True:
            shown = tmux("capture-pane", "-p", "-t", "lens")
            if text in shown or time.monotonic() > deadline:
                assert text in shown, shown
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
        shown = screen_with("agreed in the design review")  # the log, read
        assert "history of main" in shown
        assert "agent/bob" in shown
        tmux("send-keys", "-t", "lens", "2")
        assert "5 memories (all)" in screen_with("Retry policy")
        tmux("send-keys", "-t", "lens", "3")
        assert "◉ dec Queue on Postgres" in screen_with("graph around")
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
