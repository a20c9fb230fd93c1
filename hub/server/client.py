"""Asking a running hub (``ctx hub start``) instead of loading the indexes.

Imports nothing heavy: a recall answered by a hub costs this process only
the socket round trip. ``CTX_NO_HUB=1`` makes every command work in-process;
``CTX_HUB_AUTOSTART=0`` keeps recall from starting a hub whatever the store's
config says.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec

from ctx.engine import CtxError
from ctx.hub.server.wire import Failure, Reply, Request, socket_path

__all__ = ["HubError", "ask", "start_hub"]

_TIMEOUT_S = 300.0  # a hub catching up a large import may take a while
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Reply)


class HubError(CtxError):
    """An error the hub raised that is not one of the engine's classes.

    It keeps the exit code it had there.
    """

    def __init__(self, message: str, *, hint: str | None, exit_code: int) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = exit_code


def ask(
    store: Path,
    request: Request,
    progress: Callable[[int, int], None] | None = None,
) -> Reply | None:
    """Returns the hub's reply, or ``None`` when no hub answers for ``store``.

    Args:
        store: The store folder.
        request: What to ask.
        progress: Called with (done, total) as the hub reports progress.

    Raises:
        HubError: The hub answered with an error.
    """
    if os.environ.get("CTX_NO_HUB"):
        return None
    path = socket_path(store)
    if not path.exists():
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(_TIMEOUT_S)
    last: bytes | None = None
    try:
        conn.connect(str(path))
        conn.sendall(_ENCODER.encode(request))
        conn.shutdown(socket.SHUT_WR)
        for line in conn.makefile("rb"):
            if last is not None and progress is not None:
                _progress(last, progress)
            last = line
    except OSError:
        return None  # no hub (a stale socket), or it died: answer in-process
    finally:
        conn.close()
    try:
        reply = _DECODER.decode(last or b"")
    except msgspec.DecodeError:
        return None
    if reply.failure is not None:
        raise _error(reply.failure)
    return reply


def _error(failure: Failure) -> CtxError:
    """Returns the error the hub raised, of the same class where the engine's.

    A caller then catches the same errors whether a hub answered or not.
    """
    import ctx.engine

    kind = getattr(ctx.engine, failure.type, None)
    if isinstance(kind, type) and issubclass(kind, CtxError):
        error = kind(failure.message, hint=failure.hint)
        if error.exit_code == failure.exit_code:
            return error
    return HubError(failure.message, hint=failure.hint, exit_code=failure.exit_code)


def _progress(line: bytes, progress: Callable[[int, int], None]) -> None:
    with contextlib.suppress(msgspec.DecodeError):
        reply = _DECODER.decode(line)
        if reply.progress is not None:
            progress(*reply.progress)


def start_hub(store: Path, idle_minutes: float) -> bool:
    """Starts a hub (``python -m ctx.hub.server``) for ``store`` in the background.

    The hub runs in its own session (a terminal's ^C does not reach it) and
    writes its output to ``hub-<hash>.log`` beside its socket. If another
    hub wins the race for the socket, this one exits at once.

    Returns:
        Whether a hub was started (not when ``CTX_NO_HUB`` is set or
        ``CTX_HUB_AUTOSTART`` is ``0``).
    """
    if os.environ.get("CTX_NO_HUB") or os.environ.get("CTX_HUB_AUTOSTART") == "0":
        return False
    path = socket_path(store)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ctx.hub.server", str(store)]
    argv += ["--idle", f"{idle_minutes:g}"]
    with open(path.with_suffix(".log"), "wb") as log:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    return True
