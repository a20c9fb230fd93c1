"""``ctx serve``: one process that is the store's hub and its HTTP server.

It keeps the indexes and the embedder loaded (one
:class:`~ctx.hub.server.service.Answerer`), answers ``ctx recall`` in a
shell over the hub's Unix socket (a thread), and serves the HTTP app
(:mod:`.http_app`: MCP at ``/mcp``, the API at ``/api``) with uvicorn. The
socket's requests, the HTTP calls and the MCP tools all hold the
workspace's lock while they use the store or the indexes.

Keys: on loopback a request without a key is answered unless the store's
config sets ``[serve] require_keys``; bound to any other address, every
request needs a key, and the server refuses to start while the store has
none. A request that presents a key is held to it everywhere.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable

import msgspec

from ctx.engine import InvalidInputError
from ctx.hub.agents.access import Caller
from ctx.hub.agents.access import Scope as KeyScope
from ctx.hub.workspace import Workspace

__all__ = ["Serving", "serve_http"]


class Serving(msgspec.Struct, frozen=True, kw_only=True):
    """What ``ctx serve`` serves, once it accepts requests.

    Attributes:
        store: The store folder.
        url: The server's address (``http://host:port``).
        mcp: MCP's Streamable HTTP endpoint.
        api: The JSON API's root.
        keys_required: Whether every request needs a key.
        stopped_hub: The pid of a hub this server took over from, if any.
        pid: This process.
    """

    store: str
    url: str
    mcp: str
    api: str
    keys_required: bool
    stopped_hub: int | None
    pid: int


def _key_check(
    ws: Workspace, required: bool
) -> Callable[[str | None], KeyScope | None]:
    from ctx.hub.keys import AuthError, authenticate

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


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidInputError(
            f"Cannot listen on {host}:{port} ({exc.strerror}).",
            hint="Choose another --port, or stop what listens there.",
        ) from None
    sock.listen(128)
    return sock


def serve_http(
    ws: Workspace,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    base: Caller | None = None,
    ready: Callable[[Serving], None] | None = None,
) -> None:
    """Serves the workspace's store over HTTP (and as its hub) until stopped.

    Stops on SIGINT or SIGTERM, and on ``ctx hub stop``. A hub already
    serving the store is stopped first: this process serves it instead.

    Raises:
        InvalidInputError: The address cannot be listened on, or keys are
            required (an address other than loopback, or the config) and the
            store has none.
        StoreBusyError: Another hub took the store's socket meanwhile.
    """
    import logging

    import uvicorn

    from ctx.hub.agents.http_app import build_app
    from ctx.hub.api import adopt_answerer, hub_status, stop_hub
    from ctx.hub.keys import keys_required, list_keys
    from ctx.hub.server.listener import serve
    from ctx.hub.server.service import Answerer

    required = keys_required(ws, host=host)
    if required and not any(k.revoked_at is None for k in list_keys(ws)):
        raise InvalidInputError(
            f"ctx serve on {host} needs keys, and the store has none.",
            hint="`ctx keys create LABEL --read PATTERN` makes one; "
            "or serve on 127.0.0.1 (without [serve] require_keys).",
        )
    store = ws.store(write=True)
    sock = _bind(host, port)
    stopped = hub_status(ws).pid if hub_status(ws).running else None
    if stopped is not None:
        stop_hub(ws)
    answerer = Answerer(store, ws.clock)
    adopt_answerer(ws, answerer)
    stopping = threading.Event()
    listening = threading.Event()
    failure: list[BaseException] = []

    def hub() -> None:
        try:
            serve(
                store,
                clock=ws.clock,
                ready=lambda _: listening.set(),
                answerer=answerer,
                lock=ws.lock,
                stopping=stopping,
            )
        except BaseException as exc:  # handed to the main thread
            failure.append(exc)
        finally:
            listening.set()
            server.should_exit = True  # `ctx hub stop` stops it all

    logging.getLogger("mcp").setLevel(logging.WARNING)  # its INFO lines are noise
    app = build_app(ws, _key_check(ws, required), base=base, host=host)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=hub, name="ctx-hub", daemon=True)
    thread.start()
    listening.wait()
    if failure:
        sock.close()
        raise failure[0]
    bound_host, bound_port = sock.getsockname()[:2]
    url = f"http://{_url_host(bound_host)}:{bound_port}"
    if ready is not None:
        ready(
            Serving(
                store=str(ws.path),
                url=url,
                mcp=f"{url}/mcp",
                api=f"{url}/api",
                keys_required=required,
                stopped_hub=stopped,
                pid=os.getpid(),
            )
        )
    try:
        server.run(sockets=[sock])
    finally:
        stopping.set()
        thread.join(10)
        sock.close()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
