"""The hub's server: requests read side by side, recalls answered side by side.

:func:`serve` claims the store's socket (refusing if a live hub has it) and
runs until a ``stop`` request, SIGTERM, or ``idle`` seconds without a recall.
What runs where:

- One thread (the caller's) accepts connections and reads every pending
  request at once, without blocking on any (a selector). A request must
  arrive whole within :data:`REQUEST_TIMEOUT_S` of the connection and be at
  most :data:`MAX_REQUEST_BYTES` (the rest of a larger one is read and
  thrown away, so that the failure reaches the client): a client that sends
  nothing, trickles, or sends too much gets a failure and is dropped, and
  never delays another.
- ``ping`` and ``stop`` touch no index: that thread answers them at once,
  even during a long reindex. :data:`WORKERS` threads answer the other
  requests under the answerer's read-write lock (:mod:`ctx.hub.locking`):
  recalls and searches rank side by side once the index is caught up,
  which, like index status and reindex, runs alone (the projection,
  Tantivy's writer and the vector index change then).
  A client that does not read its reply for :data:`REPLY_TIMEOUT_S` is
  dropped; the lock is not held while a reply is sent.
- One more thread embeds the memories recalls did not wait for
  (:mod:`~ctx.hub.server.backfill`), taking the same lock only to read
  their texts and to add their vectors; a hub stays up while it works.
- Any error in a request is sent back as a
  :class:`~ctx.hub.server.wire.Failure` and the hub goes on serving. Every
  reply names the store it is for (``Reply.store``).
"""

from __future__ import annotations

import contextlib
import os
import queue
import selectors
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from ctx.engine import CtxError, InvalidInputError, Store, StoreBusyError
from ctx.hub.dream.background import start_background
from ctx.hub.locking import ReadWriteLock
from ctx.hub.server import registry
from ctx.hub.server.backfill import Backfill
from ctx.hub.server.client import hub_answers
from ctx.hub.server.private import hub_file
from ctx.hub.server.service import Answerer
from ctx.hub.server.wire import Failure, Reply, Request, socket_path

__all__ = [
    "MAX_REQUEST_BYTES",
    "REPLY_TIMEOUT_S",
    "REQUEST_TIMEOUT_S",
    "WORKERS",
    "serve",
]

MAX_REQUEST_BYTES = 1_000_000
"""A request larger than this is refused (a query is at most 10,000 chars)."""
REQUEST_TIMEOUT_S = 5.0
"""A request must arrive whole this soon after its connection (ctx sends one
in well under a millisecond)."""
REPLY_TIMEOUT_S = 30.0
"""A client that reads none of its reply for this long is dropped."""
WORKERS = 4
"""Threads that answer: recalls side by side, anything else one at a time."""
BACKLOG = socket.SOMAXCONN
"""Connections the kernel queues before the server accepts them."""
_MAX_READING = 256  # connections still sending: beyond, the oldest is dropped
_POLL_S = 0.25  # how soon a stop or the idle limit is noticed

_DECODER = msgspec.json.Decoder(Request)
_ENCODER = msgspec.json.Encoder()


@dataclass
class _Pending:
    """A connection whose request is still arriving."""

    deadline: float
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0


def _failed(exc: CtxError) -> Reply:
    return Reply(
        failure=Failure(
            type=type(exc).__name__,
            message=exc.message,
            hint=exc.hint,
            exit_code=exc.exit_code,
        )
    )


def _too_large() -> InvalidInputError:
    return InvalidInputError(
        f"The request is larger than {MAX_REQUEST_BYTES:,} bytes.",
        hint="A query is at most 10,000 characters.",
    )


class _Server:
    """One hub's connections, workers and lock (see the module docstring)."""

    def __init__(
        self,
        store: Path,
        answerer: Answerer,
        listener: socket.socket,
        lock: AbstractContextManager[Any],
        stopping: threading.Event,
    ) -> None:
        self.store = store
        self.name = str(store)
        self.answerer = answerer
        self.listener = listener
        self.lock = lock
        self.jobs: queue.Queue[tuple[socket.socket, Request | Reply] | None] = (
            queue.Queue()
        )
        self.stopping = stopping
        self.backfill = Backfill(answerer, lock, stopping)
        self.last_used = time.monotonic()
        self.reading: dict[socket.socket, _Pending] = {}
        self.selector = selectors.DefaultSelector()

    # The reading thread.

    def run(self, idle: float | None) -> None:
        """Reads requests and hands them to the workers until stopped or idle."""
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.last_used = time.monotonic()  # idle from now, not from warming up
        try:
            while not self.stopping.is_set():
                quiet = time.monotonic() - self.last_used
                busy = self.jobs.unfinished_tasks or self.backfill.busy
                if idle is not None and quiet > idle and not busy:
                    break
                for key, _ in self.selector.select(_POLL_S):
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        assert isinstance(key.fileobj, socket.socket)
                        self._read(key.fileobj)
                self._expire()
        finally:
            for conn in list(self.reading):
                self._drop(conn)
            self.selector.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # e.g. out of file descriptors: try again next round
            if len(self.reading) >= _MAX_READING:
                self._drop(min(self.reading, key=lambda c: self.reading[c].deadline))
            conn.setblocking(False)
            self.reading[conn] = _Pending(time.monotonic() + REQUEST_TIMEOUT_S)
            self.selector.register(conn, selectors.EVENT_READ)

    def _read(self, conn: socket.socket) -> None:
        pending = self.reading[conn]
        try:
            chunk = conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        too_large = pending.size > MAX_REQUEST_BYTES
        if not chunk:  # the client shut its side: the request is whole
            whole = b"".join(pending.chunks)
            self._dispatch(conn, _failed(_too_large()) if too_large else whole)
            return
        pending.size += len(chunk)
        if pending.size <= MAX_REQUEST_BYTES:
            pending.chunks.append(chunk)
        else:
            # Read on to the end (within the deadline) and throw it away: a
            # socket closed with unread bytes would reset the connection, and
            # the client would never read the failure.
            pending.chunks.clear()

    def _expire(self) -> None:
        now = time.monotonic()
        for conn, pending in list(self.reading.items()):
            if pending.deadline < now:
                late = InvalidInputError(
                    "The hub stopped waiting for the request after "
                    f"{REQUEST_TIMEOUT_S:g} s."
                )
                failure = late if pending.size <= MAX_REQUEST_BYTES else _too_large()
                with contextlib.suppress(OSError):  # never blocks this thread
                    conn.send(self.line(_failed(failure)))
                self._drop(conn)

    def _forget(self, conn: socket.socket) -> None:
        self.selector.unregister(conn)
        del self.reading[conn]

    def _drop(self, conn: socket.socket) -> None:
        self._forget(conn)
        conn.close()

    def _dispatch(self, conn: socket.socket, payload: bytes | Reply) -> None:
        """Hands a whole request to the workers; answers a ping or stop itself.

        A ping or stop touches no index: answered here, it never waits behind
        a long reindex (``ctx hub status`` and ``ctx hub stop`` stay prompt).
        """
        self._forget(conn)
        job: Request | Reply
        if isinstance(payload, Reply):
            job = payload
        else:
            try:
                job = _DECODER.decode(payload)
            except (msgspec.DecodeError, RecursionError) as exc:
                job = _failed(
                    InvalidInputError(f"The hub could not read the request ({exc}).")
                )
        if isinstance(job, Request) and job.op in ("ping", "stop"):
            with contextlib.suppress(OSError):  # a short line into an empty buffer
                conn.send(self.line(self.answerer.answer(job)))
            conn.close()
            if job.op == "stop":
                self.stopping.set()
            return
        conn.settimeout(REPLY_TIMEOUT_S)
        self.jobs.put((conn, job))

    # The workers.

    def work(self) -> None:
        """Answers the requests the reading thread hands over, until told."""
        while (job := self.jobs.get()) is not None:
            conn, payload = job
            try:
                with conn:
                    reply = (
                        self._reply(conn, payload)
                        if isinstance(payload, Request)
                        else payload
                    )
                    with contextlib.suppress(OSError):
                        conn.sendall(self.line(reply))
            except Exception:  # a worker must outlive any request
                traceback.print_exc(file=sys.stderr)
            finally:
                self.jobs.task_done()
        self.jobs.task_done()

    def _reply(self, conn: socket.socket, request: Request) -> Reply:
        sink = _ProgressSink(conn, self)
        try:
            return self.answerer.answer(request, sink)  # it holds the lock
        except CtxError as exc:
            return _failed(exc)
        except Exception as exc:  # one bad request must not end the hub
            traceback.print_exc(file=sys.stderr)
            return Reply(
                failure=Failure(
                    type="HubError",
                    message=f"The hub failed to answer ({type(exc).__name__}: {exc}).",
                    hint="The hub's log holds the details.",
                    exit_code=1,
                )
            )
        finally:
            self.last_used = time.monotonic()
            registry.touch(self.store)
            self.backfill.wake.set()  # the request may have left a backlog

    def line(self, reply: Reply) -> bytes:
        """Returns ``reply`` as one line of the protocol, naming the store."""
        reply.store = self.name
        return _ENCODER.encode(reply) + b"\n"


class _ProgressSink:
    """Sends a reindex's progress lines, until the client stops reading."""

    def __init__(self, conn: socket.socket, server: _Server) -> None:
        self.conn = conn
        self.server = server
        self.broken = False

    def __call__(self, done: int, total: int) -> None:
        if self.broken:
            return
        try:
            self.conn.sendall(self.server.line(Reply(progress=(done, total))))
        except OSError:
            self.broken = True  # the lock is held: never wait on it twice


def _claim(path: Path) -> socket.socket:
    """Binds the socket, refusing if a live hub already has it."""
    if hub_answers(path):
        raise StoreBusyError(
            "A hub is already running for this store.",
            hint="`ctx hub stop` stops it.",
        )
    path.unlink(missing_ok=True)  # left by a hub that died
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
    except OSError:
        server.close()  # another hub took the stale socket's place first
        raise StoreBusyError(
            "A hub is already running for this store.",
            hint="`ctx hub stop` stops it.",
        ) from None
    os.chmod(path, 0o600)
    server.listen(BACKLOG)
    return server


def serve(
    store: Store,
    *,
    clock: Callable[[], datetime],
    ready: Callable[[Path], None] | None = None,
    idle: float | None = None,
    autostarted: bool = False,
    answerer: Answerer | None = None,
    lock: ReadWriteLock | None = None,
    stopping: threading.Event | None = None,
) -> None:
    """Answers requests for ``store`` until a ``stop`` request arrives.

    Args:
        store: The store (on disk).
        clock: The clock for requests that bring no ``now``.
        ready: Called with the socket path once requests are accepted.
        idle: If given, return after this many seconds without a recall or
            search (pings, as ``ctx hub status`` sends, do not count).
        autostarted: Started by a recall (it counts towards the user's cap
            on such hubs, and may be stopped to make room for another).
        answerer: Answers the requests (default: a new one); ``ctx serve``
            passes the one its HTTP API answers with.
        lock: The answerer's read-write lock (default: its own); ``ctx
            serve`` gives the workspace's, which its calls hold too.
        stopping: Set to stop serving; set by a ``stop`` request too.

    Raises:
        StoreBusyError: Another hub serves this store.
        HubFolderError: The folder for its socket is not private.
    """
    assert store.path is not None
    path = socket_path(store.path)
    listener = _claim(path)
    # From here the socket answers: another autostart may be tried again.
    hub_file(store.path, ".start").unlink(missing_ok=True)
    answerer = answerer or Answerer(store, clock, lock=lock)
    if lock is not None:
        answerer.lock = lock
    server = _Server(
        store.path,
        answerer,
        listener,
        answerer.lock,
        stopping or threading.Event(),
    )
    workers = [
        threading.Thread(target=server.work, name=f"hub-worker-{i}", daemon=True)
        for i in range(WORKERS)
    ]
    try:
        server.answerer.warm()
        registry.register(store.path, path, autostarted=autostarted)
        for worker in workers:
            worker.start()
        server.backfill.start()
        start_background(store.path, clock, server.stopping)
        if ready is not None:
            ready(path)
        server.run(idle)
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        registry.unregister(store.path)
        for worker in workers:
            if worker.is_alive():
                server.jobs.put(None)
        for worker in workers:
            if worker.is_alive():
                worker.join(5.0)
        server.stopping.set()
        server.backfill.wake.set()
