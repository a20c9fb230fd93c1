"""The user's hub: one process that answers for every store it is asked about.

:func:`serve` claims the user's socket (refusing if a live hub has it) and
runs until a ``stop`` request, SIGTERM, or ``idle`` seconds without a
request. Each request names its store; the stores are opened on their first
request, share one embedder per configuration and are dropped when idle or
when the hub's memory is over its bound (:mod:`~ctx.hub.server.stores`).
What runs where:

- One thread (the caller's) accepts connections and reads every pending
  request at once, without blocking on any (a selector). A request must
  arrive whole within :data:`REQUEST_TIMEOUT_S` of the connection and be at
  most :data:`MAX_REQUEST_BYTES` (the rest of a larger one is read and
  thrown away, so that the failure reaches the client): a client that sends
  nothing, trickles, or sends too much gets a failure and is dropped, and
  never delays another. The same thread drops the stores left idle.
- Requests are decoded in one step into their type
  (:data:`~ctx.hub.server.wire.AnyAsk`) and dispatched by it.
  ``ping`` and ``stop`` touch no index: that thread answers them at once,
  even during a long reindex (a ping with the hub's :class:`HubReport`: its
  stores and memory). :data:`WORKERS` threads answer the other requests,
  each under its store's answerer's read-write lock
  (:mod:`ctx.hub.locking`): recalls and searches rank side by side once the
  index is caught up, which, like index status and reindex, runs alone (the
  projection, Tantivy's writer and the vector index change then); requests
  for different stores never wait for each other's lock. After each, the
  worker keeps the hub under its memory bound.
  A client that does not read its reply for :data:`REPLY_TIMEOUT_S` is
  dropped; the lock is not held while a reply is sent.
- A relayed hook (``ctx hook``'s call, :class:`~ctx.hub.server.wire.HookAsk`)
  is taken up at once (a :class:`~ctx.hub.server.wire.ProgressReply`, 0 of
  1) and answered in a thread of its own, at most :data:`HOOKS` at once (one
  more is refused, and its process answers it): a hook asks the hub for its
  recall as the hook's process would, so it must never wait for a worker
  behind a long reindex, nor hold one while it waits
  (:mod:`ctx.porcelain.hooks.relayed`). That recall is handed to the
  workers' queue directly (:meth:`_Server.ask_here`), not through the
  socket, and waited for no longer than the hook's share of its deadline.
- Each open store has a thread that embeds the memories recalls did not
  wait for (:mod:`~ctx.hub.server.backfill`), taking the store's lock only
  to read their texts and to add their vectors; a hub stays up while one
  works.
- Any error in a request (a path that is not a store among them) is sent
  back as a :class:`~ctx.hub.server.wire.FailureReply` and the hub goes on
  serving. Every reply names the store its request named (``Reply.store``).
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
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import msgspec

from ctx.engine import CtxError, InvalidInputError, Store, StoreBusyError
from ctx.hub.locking import ReadWriteLock
from ctx.hub.server.client import answered_here, hub_answers
from ctx.hub.server.private import hub_file, socket_path
from ctx.hub.server.service import Answerer
from ctx.hub.server.stores import Limits, OpenStores, rss_bytes
from ctx.hub.server.wire import (
    AnyAsk,
    AnyStoreAsk,
    Failure,
    FailureReply,
    HookAsk,
    HookReply,
    HubReport,
    PingAsk,
    PingReply,
    ProgressReply,
    Reply,
    StopAsk,
    StopReply,
)

__all__ = [
    "HOOKS",
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
HOOKS = 16
"""Relayed hooks answered at once, each in a thread of its own."""
BACKLOG = socket.SOMAXCONN
"""Connections the kernel queues before the server accepts them."""
_MAX_READING = 256  # connections still sending: beyond, the oldest is dropped
_POLL_S = 0.25  # how soon a stop or the idle limit is noticed
_SWEEP_S = 1.0  # how often idle stores are looked for

_DECODER = msgspec.json.Decoder(AnyAsk)
_ENCODER = msgspec.json.Encoder()


@dataclass
class _Pending:
    """A connection whose request is still arriving."""

    deadline: float
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0


def _failed(exc: CtxError) -> FailureReply:
    return FailureReply(
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
    """The hub's connections, workers and stores (see the module docstring)."""

    def __init__(
        self,
        stores: OpenStores,
        listener: socket.socket,
        *,
        autostarted: bool,
        hooks: Callable[[HookAsk], HookReply] | None = None,
    ) -> None:
        self.stores = stores
        self.listener = listener
        self.autostarted = autostarted
        self.hooks = hooks
        self.started = stores.clock()
        self.jobs: queue.Queue[
            tuple[socket.socket | Future[Reply], AnyStoreAsk | FailureReply] | None
        ] = queue.Queue()
        self.stopping = stores.stopping
        self.last_used = time.monotonic()
        self.reading: dict[socket.socket, _Pending] = {}
        self.selector = selectors.DefaultSelector()
        self.hooking = 0  # relayed hooks being answered
        self.closing = False  # the workers are told to end: no job is queued
        self.counting = threading.Lock()  # around hooking and closing

    # The reading thread.

    def run(self, idle: float | None) -> None:
        """Reads requests and hands them to the workers until stopped or idle."""
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.last_used = time.monotonic()  # idle from now, not from warming up
        swept = time.monotonic()
        try:
            while not self.stopping.is_set():
                quiet = time.monotonic() - self.last_used
                busy = self.jobs.unfinished_tasks or self.stores.busy or self.hooking
                if idle is not None and quiet > idle and not busy:
                    break
                if time.monotonic() - swept > _SWEEP_S:
                    swept = time.monotonic()
                    self.stores.drop_idle()
                    self.stores.keep_bound()
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
                    conn.send(line(_failed(failure), ""))
                self._drop(conn)

    def _forget(self, conn: socket.socket) -> None:
        self.selector.unregister(conn)
        del self.reading[conn]

    def _drop(self, conn: socket.socket) -> None:
        self._forget(conn)
        conn.close()

    def _dispatch(self, conn: socket.socket, payload: bytes | FailureReply) -> None:
        """Hands a whole request to the workers; answers a ping or stop itself.

        A ping or stop touches no index: answered here, it never waits behind
        a long reindex (``ctx hub status`` and ``ctx hub stop`` stay prompt).
        """
        self._forget(conn)
        job: AnyAsk | FailureReply
        if isinstance(payload, FailureReply):
            job = payload
        else:
            try:
                job = _DECODER.decode(payload)
            except (msgspec.DecodeError, RecursionError) as exc:
                job = _failed(
                    InvalidInputError(f"The hub could not read the request ({exc}).")
                )
        match job:
            case PingAsk():
                self._answer_now(conn, PingReply(pid=os.getpid(), hub=self.report()))
            case StopAsk():
                self._answer_now(conn, StopReply(pid=os.getpid()))
                self.stopping.set()
            case HookAsk():
                self._hook(conn, job)
            case _:
                conn.settimeout(REPLY_TIMEOUT_S)
                self.jobs.put((conn, job))

    def _answer_now(self, conn: socket.socket, reply: Reply) -> None:
        """Sends a reply about the hub itself from the reading thread."""
        with contextlib.suppress(OSError):  # a short line into an empty buffer
            conn.send(line(reply, ""))
        conn.close()

    def _hook(self, conn: socket.socket, request: HookAsk) -> None:
        """Answers a relayed hook in a thread of its own, or refuses it at once."""
        if self.hooks is None:
            refused = InvalidInputError("This hub answers no relayed hooks.")
            self._answer_now(conn, _failed(refused))
            return
        with self.counting:
            full = self.hooking >= HOOKS
            self.hooking += not full
        if full:
            busy = StoreBusyError(f"The hub answers {HOOKS} hooks already.")
            self._answer_now(conn, _failed(busy))
            return
        # Taken up: the relay, told at once, then waits as long as the hook may
        # run; a hub that never says so is hung, and the hook's process answers.
        with contextlib.suppress(OSError):  # a short line into an empty buffer
            conn.send(line(ProgressReply(done=0, total=1), ""))
        conn.settimeout(REPLY_TIMEOUT_S)
        thread = threading.Thread(
            target=self._answer_hook, args=(conn, request), name="hook", daemon=True
        )
        thread.start()

    def _answer_hook(self, conn: socket.socket, request: HookAsk) -> None:
        try:
            with conn:
                reply: Reply
                try:
                    assert self.hooks is not None  # checked by _hook
                    with answered_here(self.ask_here):
                        reply = self.hooks(request)
                except CtxError as exc:
                    reply = _failed(exc)
                with contextlib.suppress(OSError):
                    conn.sendall(line(reply, ""))
        except Exception:  # a hook must not end the hub
            traceback.print_exc(file=sys.stderr)
        finally:
            self.last_used = time.monotonic()
            with self.counting:
                self.hooking -= 1

    def ask_here(self, request: AnyStoreAsk, timeout: float) -> Reply | None:
        """Hands a request of this process to the workers; its reply, or None.

        As a request read from the socket is answered, without the socket:
        a relayed hook's own recall (:func:`~ctx.hub.server.client.
        answered_here`). None when no reply came within ``timeout`` seconds
        (the worker answers it all the same, to no one), or the hub is
        ending. Unlike a client of the socket, it gets no progress lines, and
        ``timeout`` bounds the whole wait, not each read.
        """
        reply: Future[Reply] = Future()
        with self.counting:  # never after the workers were told to end
            if self.closing:
                return None
            self.jobs.put((reply, request))
        try:
            return reply.result(timeout)
        except FutureTimeout:
            return None

    def report(self) -> HubReport:
        """Returns what the hub holds: its stores and its memory."""
        return HubReport(
            pid=os.getpid(),
            autostarted=self.autostarted,
            started=self.started,
            stores=self.stores.listed(),
            rss_bytes=rss_bytes(),
            memory_bound=self.stores.limits.memory_bound,
            embedders=len(self.stores.embedders),
        )

    # The workers.

    def work(self) -> None:
        """Answers the requests the reading thread hands over, until told."""
        while (job := self.jobs.get()) is not None:
            conn, payload = job
            try:
                if isinstance(conn, Future):  # asked in this process (ask_here)
                    assert not isinstance(payload, FailureReply)
                    conn.set_result(self._reply(None, payload))
                else:
                    with conn:
                        reply: Reply
                        if isinstance(payload, FailureReply):
                            reply, store = payload, ""
                        else:
                            reply, store = self._reply(conn, payload), payload.store
                        with contextlib.suppress(OSError):
                            conn.sendall(line(reply, store))
                # Once the reply is on its way: reading the process's memory
                # alone costs a quarter of a millisecond.
                self.stores.keep_bound()
            except Exception:  # a worker must outlive any request
                traceback.print_exc(file=sys.stderr)
            finally:
                self.jobs.task_done()
        self.jobs.task_done()

    def _reply(self, conn: socket.socket | None, request: AnyStoreAsk) -> Reply:
        sink = None if conn is None else _ProgressSink(conn, request.store)
        try:
            with self.stores.use(request.store) as answerer:
                return answerer.answer(request, sink)  # it holds the lock
        except CtxError as exc:
            return _failed(exc)
        except Exception as exc:  # one bad request must not end the hub
            traceback.print_exc(file=sys.stderr)
            return FailureReply(
                failure=Failure(
                    type="HubError",
                    message=f"The hub failed to answer ({type(exc).__name__}: {exc}).",
                    hint="The hub's log holds the details.",
                    exit_code=1,
                )
            )
        finally:
            self.last_used = time.monotonic()


def line(reply: Reply, store: str) -> bytes:
    """Returns ``reply`` as one line of the protocol, naming ``store``."""
    return _ENCODER.encode(msgspec.structs.replace(reply, store=store)) + b"\n"


class _ProgressSink:
    """Sends a reindex's progress lines, until the client stops reading."""

    def __init__(self, conn: socket.socket, store: str) -> None:
        self.conn = conn
        self.store = store
        self.broken = False

    def __call__(self, done: int, total: int) -> None:
        if self.broken:
            return
        try:
            progress = ProgressReply(done=done, total=total)
            self.conn.sendall(line(progress, self.store))
        except OSError:
            self.broken = True  # the lock is held: never wait on it twice


def _claim(path: Path) -> socket.socket:
    """Binds the socket, refusing if a live hub already has it."""
    if hub_answers(path):
        raise StoreBusyError(
            "A hub is already running for this user.",
            hint="`ctx hub stop` stops it.",
        )
    path.unlink(missing_ok=True)  # left by a hub that died
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
    except OSError:
        server.close()  # another hub took the stale socket's place first
        raise StoreBusyError(
            "A hub is already running for this user.",
            hint="`ctx hub stop` stops it.",
        ) from None
    os.chmod(path, 0o600)
    server.listen(BACKLOG)
    return server


def serve(
    store: Store | None = None,
    *,
    clock: Callable[[], datetime],
    ready: Callable[[Path], None] | None = None,
    idle: float | None = None,
    autostarted: bool = False,
    answerer: Answerer | None = None,
    lock: ReadWriteLock | None = None,
    stopping: threading.Event | None = None,
    limits: Limits | None = None,
    also: Sequence[Answerer] = (),
    hooks: Callable[[HookAsk], HookReply] | None = None,
    threads: int | None = None,
) -> None:
    """Answers requests for any store until a ``stop`` request arrives.

    Args:
        store: A store (on disk) to open and load before listening: the one
            whose recall started the hub, or ``ctx hub start``'s.
        clock: The clock for requests that bring no ``now``.
        ready: Called with the socket path once requests are accepted.
        idle: If given, return after this many seconds without a request
            (pings, as ``ctx hub status`` sends, do not count).
        autostarted: Started by a recall (``ctx hub status`` says so).
        answerer: ``store``'s answerer, pinned: never dropped (``ctx serve``
            and ``ctx mcp`` pass the one their own calls use).
        lock: The answerer's read-write lock (default: its own); ``ctx
            serve`` gives the workspace's, which its calls hold too.
        stopping: Set to stop serving; set by a ``stop`` request too.
        limits: When idle stores are dropped (default:
            :meth:`~ctx.hub.server.stores.Limits.from_env`).
        also: More stores' answerers, pinned beside ``answerer`` (``ctx
            serve`` of several stores: each under its own lock, the hub's
            embedders shared).
        hooks: Answers a relayed hook (``ctx hook``'s call), in a thread
            of its own: the entry points that run a hub give
            :func:`~ctx.porcelain.hooks.relayed.relayed_answer`, which knows the
            hooks and the calls they make, as the hub's rooms may not. None:
            a relayed hook is refused, and ``ctx hook`` answers it itself.
        threads: A model's threads where a store's config names none
            (``ctx serve --workers`` shares the cores out); None: its own.

    Raises:
        StoreBusyError: A hub already serves this user.
        HubFolderError: The folder for its socket is not private.
        NotAStoreError: ``store`` cannot be opened.
    """
    path = socket_path()
    listener = _claim(path)
    # From here the socket answers: another autostart may be tried again.
    hub_file(".start").unlink(missing_ok=True)
    stores = OpenStores(
        clock,
        limits or Limits.from_env(),
        stopping or threading.Event(),
        threads=threads,
    )
    server = _Server(stores, listener, autostarted=autostarted, hooks=hooks)
    workers = [
        threading.Thread(target=server.work, name=f"hub-worker-{i}", daemon=True)
        for i in range(WORKERS)
    ]
    try:
        if answerer is not None:
            if lock is not None:
                answerer.lock = lock
            stores.pin(answerer).warm()
        elif store is not None:
            assert store.path is not None
            stores.open(str(store.path.resolve())).warm()
        for more in also:
            stores.pin(more).warm()
        for worker in workers:
            worker.start()
        if ready is not None:
            ready(path)
        server.run(idle)
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        with server.counting:  # a job asked in this process comes before the ends
            server.closing = True
        for worker in workers:
            if worker.is_alive():
                server.jobs.put(None)
        for worker in workers:
            if worker.is_alive():
                worker.join(5.0)
        server.stopping.set()
        stores.close()
