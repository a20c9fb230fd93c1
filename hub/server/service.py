"""A running hub: one process that keeps a store's indexes loaded and answers.

:func:`serve` opens the store and its
:class:`~ctx.hub.index.projection.Projection` once and answers
:class:`~ctx.hub.server.wire.Request` after request on the store's Unix socket
(:func:`~ctx.hub.server.wire.socket_path`), one at a time: recall, search,
index status and reindex (which reports its progress as it goes). Every
request catches the index up first, exactly as a recall in its own process
would, so commits made by any process are seen. ``config.toml`` is read again
for each request; a changed embedder gets a new projection. A ctx error in a
request is sent back as a :class:`~ctx.hub.server.wire.Failure` and the hub
goes on serving.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import msgspec

from ctx.engine import CtxError, InvalidInputError, Store, StoreBusyError
from ctx.hub.config import HubConfig, load_config
from ctx.hub.index.maintenance import index_status, reindex
from ctx.hub.index.projection import Projection
from ctx.hub.retrieval.packing import recall, search
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.retrieval.sources import open_sources
from ctx.hub.server.wire import Failure, Reply, Request, socket_path

__all__ = ["MAX_REQUEST_BYTES", "Answerer", "serve"]

MAX_REQUEST_BYTES = 1_000_000
"""A request larger than this is refused (a query is at most 10,000 chars)."""

_DECODER = msgspec.json.Decoder(Request)
_ENCODER = msgspec.json.Encoder()


def _read_all(conn: socket.socket) -> bytes:
    chunks = []
    size = 0
    while chunk := conn.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            raise ValueError("request too large")
    return b"".join(chunks)


class Answerer:
    """Answers requests for one store, keeping its projection between them.

    The hub serves with one; a call of the hub's API (:mod:`ctx.hub.api`)
    that finds no hub running makes one for its single request
    (``one_shot``: vectors are searched exactly rather than by loading an
    HNSW graph, see :class:`Projection`).
    """

    def __init__(
        self,
        store: Store,
        clock: Callable[[], datetime],
        *,
        one_shot: bool = False,
    ) -> None:
        self.store = store
        self.clock = clock
        self.one_shot = one_shot
        self.config: HubConfig | None = None
        self.projection: Projection | None = None

    def warm(self) -> None:
        """Loads the indexes and the embedder, and catches up HEAD."""
        projection, _ = self._projection()
        open_sources(projection)
        projection.embedder.embed(["warm up"])

    def _projection(self) -> tuple[Projection, HubConfig]:
        config = load_config(self.store.path)
        if self.projection is None or config != self.config:
            self.projection = Projection.for_store(
                self.store, config, exact=self.one_shot
            )
            self.config = config
        return self.projection, config

    def answer(
        self,
        request: Request,
        progress: Callable[[int, int], None] | None = None,
    ) -> Reply:
        """Returns the reply to ``request``.

        Args:
            request: What is asked.
            progress: Called with (done, total) while a reindex indexes.

        Raises:
            CtxError: Whatever recall, search or the index raise for it.
        """
        if request.op in ("ping", "stop"):
            return Reply(store=str(self.store.path), pid=os.getpid())
        projection, config = self._projection()
        try:
            if request.op == "index_status":
                return Reply(status=index_status(projection), pid=os.getpid())
            if request.op == "reindex":
                projection.progress = progress
                try:
                    report = reindex(projection, re_embed=request.re_embed)
                finally:
                    projection.progress = None
                return Reply(report=report, pid=os.getpid())
            result = self._recall(projection, config, request)
            notices = tuple(projection.notices)
            return Reply(
                result=msgspec.structs.replace(result, notices=notices),
                pid=os.getpid(),
            )
        finally:
            # The reply carries them; the next request starts with none.
            projection.notices.clear()
            projection.warnings.clear()

    def _recall(
        self, projection: Projection, config: HubConfig, request: Request
    ) -> RecallResult:
        now = request.now or self.clock()
        if request.op == "recall":
            sources = open_sources(
                projection,
                branch=request.branch,
                overlay=request.overlay,
                at=request.at_time or request.at,
            )
            return recall(
                projection,
                sources,
                request.query,
                config=config.recall,
                now=now,
                budget=request.budget,
                include_superseded=request.include_superseded,
                explain=request.explain,
            )
        [source] = open_sources(projection, branch=request.branch)
        return search(
            projection,
            source,
            request.query,
            config=config.recall,
            now=now,
            limit=request.limit,
            kind=request.kind,
            tag=request.tag,
            context=request.context,
            fuzzy=request.fuzzy,
            explain=request.explain,
        )

    def handle(self, conn: socket.socket) -> str | None:
        """Answers one connection; returns its op (None if unreadable)."""
        op = None
        try:
            request = _DECODER.decode(_read_all(conn))
            op = request.op

            def progress(done: int, total: int) -> None:
                with contextlib.suppress(OSError):
                    conn.sendall(_ENCODER.encode(Reply(progress=(done, total))) + b"\n")

            reply = self.answer(request, progress)
        except (ValueError, msgspec.DecodeError) as exc:
            failure = InvalidInputError(f"The hub could not read the request ({exc}).")
            reply = _failed(failure)
        except CtxError as exc:
            reply = _failed(exc)
        with contextlib.suppress(OSError):
            conn.sendall(_ENCODER.encode(reply) + b"\n")
        return op


def _failed(exc: CtxError) -> Reply:
    return Reply(
        failure=Failure(
            type=type(exc).__name__,
            message=exc.message,
            hint=exc.hint,
            exit_code=exc.exit_code,
        )
    )


def _claim(path: Path) -> socket.socket:
    """Binds the socket, refusing if a live hub already has it."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.exists():
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink(missing_ok=True)  # left by a hub that died
        else:
            raise StoreBusyError(
                "A hub is already running for this store.",
                hint="`ctx hub stop` stops it.",
            )
        finally:
            probe.close()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    os.chmod(path, 0o600)
    server.listen(64)
    return server


def serve(
    store: Store,
    *,
    clock: Callable[[], datetime],
    ready: Callable[[Path], None] | None = None,
    idle: float | None = None,
) -> None:
    """Answers requests for ``store`` until a ``stop`` request arrives.

    Args:
        store: The store (on disk).
        clock: The clock for requests that bring no ``now``.
        ready: Called with the socket path once requests are accepted.
        idle: If given, return after this many seconds without a recall or
            search (pings, as ``ctx hub status`` sends, do not count).

    Raises:
        StoreBusyError: Another hub serves this store.
    """
    assert store.path is not None
    path = socket_path(store.path)
    server = _claim(path)
    hub = Answerer(store, clock)
    try:
        hub.warm()
        if ready is not None:
            ready(path)
        deadline = None if idle is None else time.monotonic() + idle
        while True:
            if deadline is not None:
                server.settimeout(max(deadline - time.monotonic(), 0.001))
            try:
                conn, _ = server.accept()
            except TimeoutError:
                break  # idle for too long
            conn.settimeout(None)
            with conn:
                op = hub.handle(conn)
            if op == "stop":
                break
            if op not in ("ping", "stop", None) and idle is not None:
                deadline = time.monotonic() + idle
    finally:
        server.close()
        path.unlink(missing_ok=True)
