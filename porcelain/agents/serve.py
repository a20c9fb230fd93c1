"""``ctx serve``: one process that is the user's hub and the stores' HTTP server.

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

With ``--sync REMOTE`` the server is also a replica (:mod:`.replica`): a
thread fetches, merges and pushes every few seconds, and ``/health`` says
how far behind the remote the store is.

Several stores (``ctx serve --store A --store B``, :mod:`.served`): each
answers under ``/s/<name>/`` with its own keys, key rules and owner key,
and has its own answerer under its own lock; one embedder per
configuration serves them all. ``--sync`` makes the first store a replica.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from ctx.engine import InvalidInputError
from ctx.hub import Caller, CreatedKey, Workspace
from ctx.porcelain.agents.listening import bind, http_server, stores_app
from ctx.porcelain.agents.served import PREFIX, NamedStore
from ctx.porcelain.agents.workers import WorkerError

if TYPE_CHECKING:
    from types import FrameType

    import uvicorn

    from ctx.porcelain.agents.replica import Replica
    from ctx.porcelain.agents.workers import Workers

__all__ = [
    "HostedHub",
    "Serving",
    "ServingStore",
    "host_hub",
    "serve_http",
]


class ServingStore(msgspec.Struct, frozen=True, kw_only=True):
    """One of the stores ``ctx serve`` serves, once it accepts requests.

    Attributes:
        name: Its name in the URLs.
        store: The store folder.
        mcp: Its MCP endpoint (``.../s/<name>/mcp``).
        api: Its JSON API's root (``.../s/<name>/api``).
        keys_required: Whether every request to it needs one of its keys.
        owner_key: The key made for it at this start, else None.
    """

    name: str
    store: str
    mcp: str
    api: str
    keys_required: bool
    owner_key: CreatedKey | None = None


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
        sync: The remote the server syncs with, if it is a replica.
        every: Seconds between its syncs (with ``sync``).
        stores: Every store served, the first one first: where each answers
            under its name, whether it needs keys, the key made for it.
        workers: The process ids of the workers that answer beside this
            process (``ctx serve --workers``), none by default.

    With one store, ``mcp`` and ``api`` are its unprefixed URLs; with
    several, the first store's under its name. ``keys_required`` and
    ``owner_key`` are the first store's.
    """

    store: str
    url: str
    mcp: str
    api: str
    keys_required: bool
    stopped_hub: int | None
    pid: int
    owner_key: CreatedKey | None = None
    sync: str | None = None
    every: float | None = None
    stores: tuple[ServingStore, ...] = ()
    workers: tuple[int, ...] = ()


class HostedHub:
    """This process as the user's hub, serving the socket from a thread.

    One answerer (indexes and embedder loaded, the HNSW graph at scale)
    answers the hub's socket and this process's own calls, which it adopts
    (:func:`ctx.hub.server.routing.adopt_answerer`), all under the workspace's lock.

    Args:
        ws: The workspace (its store on disk).
        stopped: Called when the socket stops serving (``ctx hub stop``).
        also: Other workspaces this process serves (``ctx serve`` with
            several stores): each gets an answerer of its own, under its
            own workspace's lock, adopted for its calls and pinned in the
            hub beside the first: one load of its indexes answers this
            process's calls and the socket's (a shell's ``ctx recall``),
            the hub's embedders shared, loaded before :meth:`start` returns.
        threads: A model's threads where a store's config names none
            (``ctx serve --workers`` shares the cores out); None: its own.
    """

    def __init__(
        self,
        ws: Workspace,
        stopped: Callable[[], None] | None = None,
        *,
        also: Sequence[Workspace] = (),
        threads: int | None = None,
    ) -> None:
        self.ws = ws
        self.stopped = stopped
        self.also = tuple(also)
        self.threads = threads
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
        from ctx.hub import Answerer, adopt_answerer, serve
        from ctx.porcelain.hooks import relayed_answer

        store = self.ws.store(write=True)
        answerer = Answerer(store, self.ws.clock, lock=self.ws.lock)
        answerers = {self.ws: answerer} | {
            ws: Answerer(ws.store(write=True), ws.clock, lock=ws.lock)
            for ws in self.also
        }
        if not wait:
            for ws, each in answerers.items():
                adopt_answerer(ws, each)
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
                    also=[answerers[ws] for ws in self.also],
                    hooks=relayed_answer,
                    threads=self.threads,
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
        for ws, each in answerers.items():
            adopt_answerer(ws, each)

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
    from ctx.hub import Answerer, HubFolderError, adopt_answerer, hub_status

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
    stores: Sequence[NamedStore],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    base: Caller | None = None,
    ready: Callable[[Serving], None] | None = None,
    sync: str | None = None,
    every: float | None = None,
    notice: Callable[[str], None] = lambda line: None,
    workers: int = 1,
) -> None:
    """Serves the stores over HTTP (and as the user's hub) until stopped.

    Each store answers under ``/s/<name>/``, with its own keys and its own
    ``[serve] require_keys``; a single store answers at ``/mcp`` and
    ``/api`` as well (:func:`~.http_app.build_stores_app`). Stops on SIGINT
    or SIGTERM, and on ``ctx hub stop``. A hub already running is stopped
    first: this process is the hub instead. With ``sync``, the first store
    syncs with that remote every ``every`` seconds (:mod:`.replica`), and
    ``notice`` takes the line of a sync that failed. With ``workers`` above
    one, that many processes answer requests, this one and ``workers - 1``
    it starts (:mod:`.workers`); ``notice`` takes the line of a worker that
    stopped and was started again. This process alone syncs; every one
    says in ``/health`` how far behind the store is.

    Raises:
        InvalidInputError: The address cannot be listened on, or keys are
            required (an address other than loopback, or the config) and a
            store has none; ``every`` without ``sync``, or not a positive
            number of seconds; ``workers`` below 1.
        NotAStoreError: A store's folder is not a store.
        RemoteNotFoundError: The first store has no remote ``sync``.
        StoreBusyError: Another hub took the user's socket meanwhile.
        WorkerError: A worker did not start, or the workers kept stopping.
    """
    from ctx.hub import remote_access
    from ctx.porcelain.agents.replica import open_replica

    if workers < 1:
        raise InvalidInputError(f"ctx serve needs at least one worker, not {workers}.")
    first = stores[0].ws
    # Refused before anything else loads or changes.
    replica = open_replica(first, sync, every, access=remote_access(), notice=notice)

    from ctx.hub import hub_status, keys_required, stop_hub

    required = [keys_required(s.ws, host=host) for s in stores]
    for named, needs in zip(stores, required, strict=True):
        _check_keys(named, needs, host, alone=len(stores) == 1)
        named.ws.store(write=True)
    sock = bind(host, port, shared=workers > 1)
    stopped = hub_status(first).pid if hub_status(first).running else None
    if stopped is not None:
        stop_hub(first)
    app = stores_app(
        stores,
        required,
        base=base,
        host=host,
        replica=None if replica is None else replica.health,
        stateless=workers > 1,
    )
    server = http_server(app)
    pool = _workers(
        stores,
        required,
        sock,
        workers,
        server,
        base=base,
        host=host,
        notice=notice,
        replica=replica,
    )
    threads = None if pool is None else pool.spec.threads

    def end() -> None:
        server.should_exit = True  # `ctx hub stop` stops it all

    hub = HostedHub(
        first, stopped=end, also=[s.ws for s in stores[1:]], threads=threads
    )
    with _signals_stop(server) as serving:
        try:
            if replica is not None:
                replica.begin()  # the tips noted before any worker can write
            hub.start()
            if pool is not None:
                pool.start()
            serving()
            _announce(
                ready,
                stores,
                required,
                sock,
                first=first,
                stopped=stopped,
                replica=replica,
                pool=pool,
            )
            if replica is not None:
                replica.start()
            server.run(sockets=[sock])
        finally:
            serving()  # the stopping is not cut short
            if pool is not None:
                pool.stop()  # first: no write lands while a round finishes
            if replica is not None:
                replica.stop()
            hub.stop()
            sock.close()
    if pool is not None and pool.failure is not None:
        raise WorkerError(
            pool.failure,
            hint="`ctx serve` without --workers serves from one process.",
        )


@contextlib.contextmanager
def _signals_stop(server: uvicorn.Server) -> Iterator[Callable[[], None]]:
    """SIGTERM and Ctrl-C stop ``server`` as ``ctx hub stop`` does, once it serves.

    Yields ``serving``, to be called when the ready line is about to go out.
    Before, while the indexes load and the workers start, a signal does what
    it did (Ctrl-C and SIGTERM interrupt the start, and what was started is
    stopped). From then on, and while everything stops, it asks the server
    to stop and raises nothing: between the ready line and uvicorn's own
    handlers, an exception raised inside the making of the event loop left a
    half-made loop whose end printed a traceback, and one raised while the
    workers and the hub stop skipped the rest of the stopping. As uvicorn
    does, a second Ctrl-C stops without waiting for open connections. Only
    in the main thread, where signals are handled; the handlers before are
    put back after.
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    starting = True

    def stop(signum: int, frame: FrameType | None) -> None:
        handler = before[signum]
        if starting and callable(handler):
            handler(signum, frame)  # Ctrl-C: KeyboardInterrupt
            return
        if signum == signal.SIGINT and server.should_exit:
            server.force_exit = True
        server.should_exit = True

    def serving() -> None:
        nonlocal starting
        starting = False

    handled = (signal.SIGINT, signal.SIGTERM)
    before: dict[int, Any] = {signum: signal.signal(signum, stop) for signum in handled}
    try:
        yield serving
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _announce(
    ready: Callable[[Serving], None] | None,
    stores: Sequence[NamedStore],
    required: Sequence[bool],
    sock: socket.socket,
    *,
    first: Workspace,
    stopped: int | None,
    replica: Replica | None,
    pool: Workers | None,
) -> None:
    """Makes the owner keys the stores lack and tells ``ready`` what is served."""
    bound_host, bound_port = sock.getsockname()[:2]
    url = f"http://{_url_host(bound_host)}:{bound_port}"
    served = tuple(
        ServingStore(
            name=named.name,
            store=str(named.ws.path),
            mcp=f"{url}{PREFIX}{named.name}/mcp",
            api=f"{url}{PREFIX}{named.name}/api",
            keys_required=needs,
            owner_key=_owner_key(named.ws) if needs else None,
        )
        for named, needs in zip(stores, required, strict=True)
    )
    alone = len(stores) == 1
    if ready is not None:
        ready(
            Serving(
                store=str(first.path),
                url=url,
                mcp=f"{url}/mcp" if alone else served[0].mcp,
                api=f"{url}/api" if alone else served[0].api,
                keys_required=required[0],
                stopped_hub=stopped,
                pid=os.getpid(),
                owner_key=served[0].owner_key,
                sync=None if replica is None else replica.remote,
                every=None if replica is None else replica.every,
                stores=served,
                workers=() if pool is None else pool.pids,
            )
        )


def _workers(
    stores: Sequence[NamedStore],
    required: Sequence[bool],
    sock: socket.socket,
    workers: int,
    server: uvicorn.Server,
    *,
    base: Caller | None,
    host: str,
    notice: Callable[[str], None],
    replica: Replica | None,
) -> Workers | None:
    """Returns the workers beside this process (:mod:`.workers`), not started."""
    from ctx.porcelain.agents.workers import Workers, WorkerStore, spec_for

    if workers == 1:
        return None
    spec = spec_for(
        [
            WorkerStore(name=s.name, path=str(s.ws.path), keys_required=needs)
            for s, needs in zip(stores, required, strict=True)
        ],
        sock.getsockname()[1],
        workers - 1,
        host=host,
        agent=None if base is None else base.agent,
        branch=None if base is None else base.branch,
        sync=None if replica is None else replica.remote,
        every=None if replica is None else replica.every,
    )

    def stop_server() -> None:
        server.should_exit = True

    return Workers(
        spec,
        workers - 1,
        stopping=lambda: server.should_exit,
        stop_server=stop_server,
        notice=notice,
    )


def _owner_key(ws: Workspace) -> CreatedKey | None:
    """Makes the store's owner key if it has no key; returns it, else None.

    Called once the port and the stores are this server's, so a start that
    fails mints no key whose token nobody saw.
    """
    from ctx.hub import create_key

    if _has_key(ws):
        return None
    return create_key(ws, "owner", write=("*",), admin=True)


def _has_key(ws: Workspace) -> bool:
    from ctx.hub import list_keys

    return any(k.revoked_at is None for k in list_keys(ws))


def _check_keys(named: NamedStore, required: bool, host: str, *, alone: bool) -> None:
    """Refuses to serve a store that needs keys and has none, off loopback.

    Raises:
        InvalidInputError: It does.
    """
    from ctx.hub import is_loopback

    if required and not is_loopback(host) and not _has_key(named.ws):
        which = "the store has" if alone else f"the store {named.name!r} has"
        raise InvalidInputError(
            f"ctx serve on {host} needs keys, and {which} none.",
            hint="`ctx keys create LABEL --read PATTERN` makes one"
            + ("." if alone else f" (with --store {named.ws.path})."),
        )


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
