"""Serving the stores' HTTP app: its socket, the app, and its uvicorn server.

``ctx serve`` (:mod:`.serve`) and each of its workers (:mod:`.workers`)
serve the same app the same way: a socket listening on the port (shared
among the workers with ``SO_REUSEPORT``), the stores' app with each
store's key check (:mod:`.http_app`), and a uvicorn server running it.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ctx.engine import InvalidInputError
from ctx.hub import Caller, Workspace
from ctx.hub import Scope as KeyScope
from ctx.porcelain.agents.served import NamedStore

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

    from ctx.porcelain.agents.replica import ReplicaHealth

__all__ = ["bind", "http_server", "listen_on", "stores_app"]


def bind(host: str, port: int, *, shared: bool = False) -> socket.socket:
    """Returns a socket listening on ``host:port`` (port 0: a free one).

    ``shared``: this user's other processes may listen on the port too
    (:func:`listen_on`); the port is taken alone first, so that a server
    never joins one that already listens there.

    Raises:
        InvalidInputError: The port is taken, or the address is not this
            machine's.
    """
    if shared:
        alone = _bound(host, port, shared=False)  # not listening: none queued
        port = alone.getsockname()[1]
        alone.close()
    return listen_on(host, port, shared=shared)


def listen_on(host: str, port: int, *, shared: bool = False) -> socket.socket:
    """Returns a socket listening on ``host:port``.

    ``shared``: with ``SO_REUSEPORT``, so that the workers of ``ctx serve
    --workers`` (the same user: Linux lets no other join) listen on the same
    port, each with a queue of its own; the kernel spreads new connections
    evenly among them. Sharing one socket instead, the first process to
    wake took every connection made while all were idle.

    Raises:
        InvalidInputError: It cannot listen there.
    """
    sock = _bound(host, port, shared=shared)
    sock.listen(128)
    return sock


def _bound(host: str, port: int, *, shared: bool) -> socket.socket:
    """Returns a socket bound to ``host:port``, not listening yet.

    Raises:
        InvalidInputError: It cannot be bound there.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, so that asyncio turns Nagle off on each connection:
    # without it an answer written in two parts waited 40 ms for the
    # client's delayed ACK (benchmarks/results/agents.md).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidInputError(
            f"Cannot listen on {host}:{port} ({exc.strerror}).",
            hint="Choose another --port, or stop what listens there.",
        ) from None
    return sock


def stores_app(
    stores: Sequence[NamedStore],
    required: Sequence[bool],
    *,
    base: Caller | None,
    host: str,
    replica: Callable[[], ReplicaHealth] | None,
    stateless: bool,
) -> ASGIApp:
    """Returns the HTTP app of the stores, each checking its own keys.

    ``required``: whether each store needs a key on every request;
    ``replica``: the first store's lag behind its remote, for ``/health``.
    """
    from ctx.porcelain.agents.http_app import StoreApp, build_stores_app

    return build_stores_app(
        [
            StoreApp(
                name=named.name,
                ws=named.ws,
                check=_key_check(named.ws, needs),
                replica=replica if i == 0 else None,
            )
            for i, (named, needs) in enumerate(zip(stores, required, strict=True))
        ],
        base=base,
        host=host,
        stateless=stateless,
    )


def http_server(app: ASGIApp) -> uvicorn.Server:
    """Returns the uvicorn server of ``app``, not yet running."""
    import logging

    import uvicorn

    logging.getLogger("mcp").setLevel(logging.WARNING)  # its INFO lines are noise
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5
    )
    return uvicorn.Server(config)


def _key_check(
    ws: Workspace, required: bool
) -> Callable[[str | None], KeyScope | None]:
    from ctx.hub import AuthError, authenticate

    def check(header: str | None) -> KeyScope | None:
        if header is None:
            if required:
                raise AuthError(
                    "This server needs a key.",
                    hint="Send `Authorization: Bearer <token>` "
                    "(`ctx keys create` makes one).",
                )
            return None
        return authenticate(ws, header)

    return check
