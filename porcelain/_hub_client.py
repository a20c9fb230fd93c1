"""Asking a running hub (``ctx hub start``) instead of loading the indexes.

Imports nothing heavy: a recall answered by a hub costs this process only
the socket round trip. ``CTX_NO_HUB=1`` makes every command work in-process.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import msgspec

from ctx.engine import CtxError
from ctx.hub.wire import Reply, Request, socket_path

__all__ = ["HubError", "ask"]

_TIMEOUT_S = 300.0  # a hub catching up a large import may take a while
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Reply)


class HubError(CtxError):
    """A ctx error the hub raised, with the exit code it had there."""

    def __init__(self, message: str, *, hint: str | None, exit_code: int) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = exit_code


def ask(store: Path, request: Request) -> Reply | None:
    """Returns the hub's reply, or ``None`` when no hub answers for ``store``.

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
    try:
        conn.connect(str(path))
        conn.sendall(_ENCODER.encode(request))
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(1 << 16):
            chunks.append(chunk)
    except OSError:
        return None  # no hub (a stale socket), or it died: answer in-process
    finally:
        conn.close()
    try:
        reply = _DECODER.decode(b"".join(chunks))
    except msgspec.DecodeError:
        return None
    if reply.failure is not None:
        failure = reply.failure
        raise HubError(failure.message, hint=failure.hint, exit_code=failure.exit_code)
    return reply
