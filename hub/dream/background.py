"""Dream in the running hub: cycles on a thread while ``[dream] enabled``.

The hub (``ctx hub start``, the background hub, ``ctx serve``) calls
:func:`start_background` once it serves; with ``[dream] enabled = true`` in
the store's config a daemon thread runs a cycle on the store's HEAD branch,
then waits a second when it examined something and ``[dream] interval``
seconds when nothing was due. It uses a workspace and indexes of its own,
so requests are answered meanwhile (the index and store locks keep the two
apart). A failed cycle is logged to stderr and tried again after the
interval; the hub stopping (or dying) between two writes leaves what a
killed cycle leaves: nothing half-written.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ctx.engine import CtxError
from ctx.hub.config import load_config

__all__ = ["start_background"]

_BUSY_PAUSE = 1.0


def start_background(
    store_path: Path, clock: Callable[[], datetime], stopping: threading.Event
) -> threading.Thread | None:
    """Starts Dream's thread if the store's config enables it; returns it.

    Args:
        store_path: The store folder.
        clock: The hub's clock.
        stopping: Set when the hub stops; the thread ends at its next pause.
    """
    try:
        settings = load_config(store_path).dream
    except CtxError:
        return None  # the hub reports a bad config on the calls that read it
    if not settings.enabled:
        return None
    thread = threading.Thread(
        target=_cycles,
        args=(store_path, clock, stopping, settings.interval),
        name="dream",
        daemon=True,
    )
    thread.start()
    return thread


def _cycles(
    store_path: Path,
    clock: Callable[[], datetime],
    stopping: threading.Event,
    interval: float,
) -> None:
    from ctx.hub.dream.calls import run
    from ctx.hub.workspace import Workspace

    ws = Workspace(store_path, clock=clock)
    try:
        while not stopping.is_set():
            pause = interval
            try:
                report = run(ws)
                if report.examined:
                    pause = _BUSY_PAUSE
            except CtxError as exc:
                sys.stderr.write(f"ctx dream: {exc.message}\n")
            stopping.wait(pause)
    finally:
        ws.close()
