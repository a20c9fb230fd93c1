"""``ctx serve``: one process that is the user's hub and the store's HTTP server.

It keeps the indexes and the embedder loaded (one
:class:`~ctx.hub.server.service.Answerer`), answers ``ctx recall`` in a
shell over the hub's Unix socket (a thread), and serves the HTTP app
(:mod:`.http_app`: MCP at ``/mcp``, the API at ``/api``) with uvicorn. The
socket's requests, the HTTP calls and the MCP tools all hold the
workspace's read-write lock while they use the store or the indexes: reads
(recall, search, show, ls, log) side by side, writes alone.

Keys: every request needs a key by default, on loopback too (TCP carries
no peer credentials: any local user can reach a loopback port). On
loopback, a store with no key gets one at the first start, an admin key
labelled ``owner`` whose token is printed once; bound to any other
address, the server refuses to start while the store has none. Only a
store whose config sets ``[serve] require_keys = false`` answers loopback
requests without a key, as its owner, and then every local user is its
owner too. A request that presents a key is held to it everywhere.
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
from ctx.hub.keys import CreatedKey
from ctx.hub.workspace import Workspace

__all__ = ["HostedHub", "Serving", "host_hub", "serve_http"]


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
        owner_key: The key made at this start because the store had none
            (its token is known only now), else None.
    """

    store: str
    url: str
    mcp: str
    api: str
    keys_required: bool
    stopped_hub: int | None
    pid: int
    owner_key: CreatedKey | None = None


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
    # IPPROTO_TCP named, so that asyncio turns Nagle off on each connection:
    # without it an answer written in two parts waited 40 ms for the
    # client's delayed ACK (benchmarks/results/agents.md).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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


class HostedHub:
    """This process as the user's hub, serving the socket from a thread.

    One answerer (indexes and embedder loaded, the HNSW graph at scale)
    answers the hub's socket and this process's own calls, which it adopts
    (:func:`ctx.hub.server.routing.adopt_answerer`), all under the workspace's lock.

    Args:
        ws: The workspace (its store on disk).
        stopped: Called when the socket stops serving (``ctx hub stop``).
    """

    def __init__(
        self, ws: Workspace, stopped: Callable[[], None] | None = None
    ) -> None:
        self.ws = ws
        self.stopped = stopped
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, *, wait: bool = True) -> None:
        """Claims the store's socket and serves it, its answerer adopted.

        Args:
            wait: Return once the socket listens (the indexes loaded), and
                raise what stopped it; else return at once: this process's
                own calls wait for the indexes under the workspace's lock,
                and a hub that cannot claim the socket leaves them to the
                answerer alone.

        Raises:
            StoreBusyError: Another hub serves the store.
            HubFolderError: The folder for hub sockets is not private.
        """
        from ctx.hub.server.listener import serve
        from ctx.hub.server.routing import adopt_answerer
        from ctx.hub.server.service import Answerer

        store = self.ws.store(write=True)
        answerer = Answerer(store, self.ws.clock, lock=self.ws.lock)
        if not wait:
            adopt_answerer(self.ws, answerer)
        listening = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            try:
                serve(
                    store,
                    clock=self.ws.clock,
                    ready=lambda _: listening.set(),
                    answerer=answerer,
                    lock=self.ws.lock,
                    stopping=self.stopping,
                )
            except BaseException as exc:  # handed to start()
                failure.append(exc)
            finally:
                listening.set()
                if self.stopped is not None:
                    self.stopped()

        self._thread = threading.Thread(target=run, name="ctx-hub", daemon=True)
        self._thread.start()
        if not wait:
            return
        listening.wait()
        if failure:
            raise failure[0]
        adopt_answerer(self.ws, answerer)

    def stop(self) -> None:
        """Stops serving the socket (its file is removed)."""
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(10)


def host_hub(ws: Workspace) -> HostedHub | None:
    """Makes this long-running process the user's hub, if none runs.

    What ``ctx mcp`` does: with no hub, it serves the socket itself (a
    shell's ``ctx recall`` and other ``ctx mcp`` processes then use it); with
    one, its calls go to that hub. With ``CTX_NO_HUB=1``, or a hub folder
    that is not private, it only keeps a hub's answerer for its own calls
    (the HNSW graph loaded, not the one-shot exact search of a single
    command). Returns the hub it serves, if any.
    """
    from ctx.hub.server.control import hub_status
    from ctx.hub.server.private import HubFolderError
    from ctx.hub.server.routing import adopt_answerer
    from ctx.hub.server.service import Answerer

    if not ws.on_disk:
        return None  # the user store, not made yet: the first write makes it
    if not os.environ.get("CTX_NO_HUB"):
        try:
            if not hub_status(ws).running:
                hub = HostedHub(ws)
                hub.start(wait=False)  # answers the client at once
                return hub
            return None
        except HubFolderError:
            pass
    # No hub here: nothing would embed a backlog, so catch-ups embed at once.
    adopt_answerer(ws, Answerer(ws.store(), ws.clock, defer=False, lock=ws.lock))
    return None


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
    from ctx.hub.keys import create_key, is_loopback, keys_required, list_keys
    from ctx.hub.server.control import hub_status, stop_hub

    required = keys_required(ws, host=host)
    has_key = any(k.revoked_at is None for k in list_keys(ws))
    if required and not has_key and not is_loopback(host):
        raise InvalidInputError(
            f"ctx serve on {host} needs keys, and the store has none.",
            hint="`ctx keys create LABEL --read PATTERN` makes one.",
        )
    ws.store(write=True)
    sock = _bind(host, port)
    stopped = hub_status(ws).pid if hub_status(ws).running else None
    if stopped is not None:
        stop_hub(ws)
    logging.getLogger("mcp").setLevel(logging.WARNING)  # its INFO lines are noise
    app = build_app(ws, _key_check(ws, required), base=base, host=host)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5
    )
    server = uvicorn.Server(config)

    def end() -> None:
        server.should_exit = True  # `ctx hub stop` stops it all

    hub = HostedHub(ws, stopped=end)
    try:
        hub.start()
    except BaseException:
        sock.close()
        raise
    owner_key = None
    if required and not any(k.revoked_at is None for k in list_keys(ws)):
        # Made once the port and the store are this server's, so a start
        # that fails mints no key whose token nobody saw.
        owner_key = create_key(ws, "owner", write=("*",), admin=True)
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
                owner_key=owner_key,
            )
        )
    try:
        server.run(sockets=[sock])
    finally:
        hub.stop()
        sock.close()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
