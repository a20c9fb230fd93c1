"""The hooks' log: where a hook's failures are written, and one line of it.

``<store>/private/hooks.log``, or ``hooks.log`` in the user's cache folder
when there is no store, or when the store's cannot be written (a read-only
store: the line then names the store); cut over to ``hooks.log.1`` past a
megabyte.
:mod:`~ctx.porcelain.hooks.runner` writes each failure here, ``ctx doctor``
(:mod:`~ctx.porcelain.install.doctor`) shows the last one, and a redaction
scrubs both files (:mod:`~ctx.hub.redaction`).

Light: it imports none of the hooks' events, so a redaction can find the
log without loading them.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.engine import CtxError
from ctx.hub.state import private_folder

if TYPE_CHECKING:
    from ctx.hub.workspace import Workspace

__all__ = ["LOG_FILE", "cache_log_path", "log_line", "log_path", "store_field"]

LOG_FILE = "hooks.log"
_LOG_MAX = 1 << 20


def log_path(ws: Workspace | None) -> Path:
    """Returns the hook log: in the store's private folder, else the cache.

    Raises:
        OSError: The store's private folder cannot be made.
        StoreError: It is not the user's.
    """
    if ws is not None and ws.on_disk and (ws.path / "git").is_dir():
        return private_folder(ws.path) / LOG_FILE
    return cache_log_path()


def cache_log_path() -> Path:
    """Returns the hook log in the user's cache folder."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("ctx", appauthor=False)) / LOG_FILE


def log_line(ws: Workspace | None, event: str, session: str, text: str) -> None:
    """Writes one line to the hooks' log: a failure, or what went wrong on the way.

    A log that cannot be written is skipped: the agent still goes on.
    """
    when = time.strftime("%Y-%m-%dT%H:%M:%S%z")

    def line(*extra: str) -> str:
        said = " ".join((when, f"event={event[:40]!r}", f"session={session[:100]!r}"))
        said = " ".join((said, *extra, text))
        return said.replace("\n", " ")[:1000] + "\n"

    try:
        _append(log_path(ws), line())
    except (OSError, CtxError):
        if ws is None or not ws.on_disk:
            return  # nowhere to say it: the agent still goes on
        # The store's own cannot be written (read-only): the user's, naming it.
        with contextlib.suppress(OSError):
            _append(cache_log_path(), line(store_field(ws.path)))


def store_field(path: Path) -> str:
    """Returns how a line of the user's log names the store it is about."""
    return f"store={str(path)!r}"


def _append(path: Path, line: str) -> None:
    """Appends ``line`` to the log at ``path``, cut over past a megabyte."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.stat().st_size > _LOG_MAX:
            os.replace(path, path.with_name(LOG_FILE + ".1"))
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, line.encode("utf-8", "replace"))
    finally:
        os.close(fd)
