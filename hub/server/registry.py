"""The hubs a user runs: one small file per hub in the private folder.

A hub writes ``hub-<hash>.json`` (a :class:`~ctx.hub.server.wire.HubEntry`:
its store, pid, socket, whether a recall started it, when it last answered)
once it listens, touches it as it answers (at most once a second), and
removes it when it stops. A file whose process is gone (a killed hub) is
removed by the next reader. ``ctx hub status`` lists them with their
resident memory; an autostart reads them to keep the number of autostarted
hubs under the user's cap (:func:`ctx.hub.server.client.start_hub`).
"""

from __future__ import annotations

import contextlib
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from ctx.hub.server.private import HubFolderError, hub_file, private_folder
from ctx.hub.server.wire import HubEntry
from ctx.hub.state import process_alive

__all__ = ["register", "running_hubs", "touch", "unregister"]

_TOUCH_EVERY_S = 1.0
_touched: dict[Path, float] = {}
_entries: dict[Path, HubEntry] = {}


def _write(path: Path, entry: HubEntry) -> None:
    # The folder is private; write then rename, so a reader never sees half.
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(msgspec.json.encode(entry))
    os.replace(tmp, path)


def register(store: Path, socket: Path, *, autostarted: bool) -> None:
    """Lists this process as the hub of ``store``, listening on ``socket``."""
    now = datetime.now(UTC)
    entry = HubEntry(
        store=str(store),
        pid=os.getpid(),
        socket=str(socket),
        autostarted=autostarted,
        started=now,
        last_used=now,
    )
    _entries[store] = entry
    _touched[store] = time.monotonic()
    with contextlib.suppress(OSError, HubFolderError):
        _write(hub_file(store, ".json"), entry)


def touch(store: Path) -> None:
    """Records that the hub of ``store`` (this process) has just answered."""
    entry = _entries.get(store)
    if entry is None or time.monotonic() - _touched[store] < _TOUCH_EVERY_S:
        return
    entry = msgspec.structs.replace(entry, last_used=datetime.now(UTC))
    _entries[store] = entry
    _touched[store] = time.monotonic()
    with contextlib.suppress(OSError, HubFolderError):
        _write(hub_file(store, ".json"), entry)


def unregister(store: Path) -> None:
    """Removes this process's entry as the hub of ``store``."""
    _entries.pop(store, None)
    _touched.pop(store, None)
    with contextlib.suppress(OSError, HubFolderError):
        path = hub_file(store, ".json")
        entry = _read(path)
        if entry is not None and entry.pid == os.getpid():
            path.unlink()


def _read(path: Path) -> HubEntry | None:
    try:
        return msgspec.json.decode(path.read_bytes(), type=HubEntry)
    except (OSError, msgspec.DecodeError):
        return None


def _rss_bytes(pid: int) -> int | None:
    """Returns the resident memory of ``pid`` (Linux: /proc), or None."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def running_hubs() -> list[HubEntry]:
    """Returns the hubs this user runs, least recently used first.

    Entries of hubs that are gone are removed on the way.

    Raises:
        HubFolderError: The private folder is not private.
    """
    hubs = []
    for path in private_folder().glob("hub-*.json"):
        entry = _read(path)
        # A pid reused by another process after a hub was killed has no socket.
        if (
            entry is None
            or not process_alive(entry.pid)
            or not Path(entry.socket).exists()
        ):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        hubs.append(msgspec.structs.replace(entry, rss_bytes=_rss_bytes(entry.pid)))
    return sorted(hubs, key=lambda entry: entry.last_used)
