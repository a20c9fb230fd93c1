"""Snapshot tests: each screen and the help at 80x24 and 120x40, on the small story.

The baselines (``__snapshots__/``) were made with ``--snapshot-update`` and
reviewed by looking at them; they are never edited by hand. The data is
fixed (ids from a seeded generator, a clock that starts at a fixed time),
the refresh timer is off and the text cursor does not blink.
"""

from __future__ import annotations

import pytest
from lens_builders import lens_app, settle
from textual.widgets import Input

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


def _steps(*keys: str | tuple[str, ...], query: str | None = None):
    """Presses each key (or typed group of keys) and lets the app settle."""

    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(*((key,) if isinstance(key, str) else key))
            await settle(pilot)
        if query is not None:
            # Typed at once (as a paste): one recall, whatever the machine's load.
            pilot.app.screen.query_one(Input).value = query
            await pilot.pause(0.4)
            await settle(pilot)
        for box in pilot.app.screen.query(Input):
            box.cursor_blink = False
        # Tables size their columns when the app is next idle: let it be.
        for _ in range(3):
            await pilot.pause(0.05)
        await settle(pilot)

    return run_before


SCREENS = {
    "history": _steps(),
    "memories": _steps("2"),
    "memory": _steps("2", "down", "down", "enter"),
    "graph": _steps("3", "plus"),
    # A query whose hits tie in no channel: the hub breaks ties in BM25 by
    # the process's string hash order, which differs from run to run.
    "recall": _steps("4", query="postgres queue"),
    "review": _steps("5", "m", "y"),
    "help": _steps("question_mark"),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen(snap_compare, story_ws, screen, size):
    app = lens_app(story_ws.ws)
    assert snap_compare(app, terminal_size=size, run_before=SCREENS[screen])


@pytest.mark.parametrize("size", SIZES)
def test_dream_proposals(snap_compare, dreamed_ws, size):
    """The review screen's Dream tab: one proposal accepted, one rejected."""

    async def run_before(pilot) -> None:
        await _steps("5")(pilot)
        await pilot.click("#--content-tab-dream")
        # The reason is typed as one group: no read to wait for between its keys.
        await _steps("a", "down", "x", tuple("not now"), "enter", "down")(pilot)
        # Toasts expire on a timer: whether one is still up depends on the
        # machine's speed, so the picture is taken without them.
        pilot.app.clear_notifications()
        await pilot.pause()

    app = lens_app(dreamed_ws.ws)
    assert snap_compare(app, terminal_size=size, run_before=run_before)
