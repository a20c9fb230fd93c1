"""``ctx serve --workers N``: N processes answer HTTP requests side by side.

A recall is mostly Python, which one process runs one thread at a time:
served by one process, four clients were answered no faster than one
(benchmarks/results/serve_reads.md). With ``--workers N`` the process that
was started does everything it does alone (it is the user's hub, prints
the keys, answers requests) and starts N - 1 workers, each a fresh
interpreter (``python -m ctx.porcelain.agents.workers``) that loads its stores
and then listens on the same port (``SO_REUSEPORT``): the kernel hashes
each new connection to one process's queue, and a keep-alive connection
stays with its process. A worker has an answerer of its own for each store
(its indexes loaded and warmed before it listens) and its own embedder; the
cores are shared out, so a model runs ``cores // N`` threads (at least one,
at most two, as one process alone) where the store's config names none.

What one process writes, the others see at their next request: every call
catches the index up with the branch's tip (docs/recall.md), writes are
compare-and-swap on the branch (the engine), and the key file is read
again when it changed. MCP over HTTP is served without sessions when there
are workers: a session lives in one process's memory, and a client's next
connection may reach another.

The first process watches its workers: one that exits while the server
runs is started again, and if that happens more than :data:`RESTARTS`
times in a minute, or one does not start again, the server stops, saying
why. Each worker watches the first process: its stdin is a pipe from it,
and when the pipe closes (the first process stopped, or was killed) the
worker stops too. A worker has a process group of its own, so Ctrl-C
reaches the first process only; stopping the server (Ctrl-C, SIGTERM,
``ctx hub stop``) stops the workers: SIGTERM, then SIGKILL after 10 s.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import msgspec

from ctx.engine import CtxError

if TYPE_CHECKING:
    import uvicorn

__all__ = [
    "RESTARTS",
    "WorkerError",
    "WorkerSpec",
    "WorkerStore",
    "Workers",
    "main",
    "spec_for",
]

RESTARTS = 5
"""The most times a minute the workers may be started again."""

_READY = "ready"
_FAILED = "failed: "
_START_S = 300.0  # the longest a worker may take to load its indexes
_STOP_S = 10.0  # the longest a worker may take to stop before SIGKILL


class WorkerError(CtxError):
    """A worker of ``ctx serve --workers`` did not start, or kept stopping."""


class WorkerStore(msgspec.Struct, frozen=True, kw_only=True):
    """A store the workers serve: its name in the URLs, its folder, its keys."""

    name: str
    path: str
    keys_required: bool


class WorkerSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What a worker serves, sent as one line of JSON on its stdin.

    ``port``: the port the first process listens on. ``threads``: a model's threads
    where the config names none. ``agent`` and ``branch``: who calls when
    a request names nobody (``ctx serve --branch``). ``sync`` and
    ``every``: the remote the first process syncs the first store with, and
    how often (``ctx serve --sync``), for ``/health``
    (:func:`~.replica.shared_health`).
    """

    stores: tuple[WorkerStore, ...]
    host: str
    port: int
    threads: int
    agent: str | None = None
    branch: str | None = None
    sync: str | None = None
    every: float | None = None


class Workers:
    """The workers of one server: started, watched, started again, stopped.

    Args:
        spec: What each worker serves.
        count: How many workers.
        stopping: Returns whether the server is stopping (a worker that
            exits then is not started again).
        stop_server: Stops the server: the workers kept stopping, or one
            did not start again (:attr:`failure` says why).
        notice: Takes a one-line notice (a worker stopped and was started
            again).
    """

    def __init__(
        self,
        spec: WorkerSpec,
        count: int,
        *,
        stopping: Callable[[], bool],
        stop_server: Callable[[], None],
        notice: Callable[[str], None],
    ) -> None:
        self.spec = spec
        self.count = count
        self.stopping = stopping
        self.stop_server = stop_server
        self.notice = notice
        self.failure: str | None = None
        """Why the workers stopped the server, if they did."""
        self._line = msgspec.json.encode(spec) + b"\n"
        self._procs: list[subprocess.Popen[bytes] | None] = [None] * count
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._restarts: deque[float] = deque()
        self._watchers: list[threading.Thread] = []

    @property
    def pids(self) -> tuple[int, ...]:
        """The process ids of the workers running now."""
        with self._lock:
            return tuple(p.pid for p in self._procs if p is not None)

    def start(self) -> None:
        """Starts every worker and waits until each is ready.

        Raises:
            WorkerError: A worker did not start (its error, in one line).
        """
        started = [self._spawn(slot) for slot in range(self.count)]
        try:
            for proc in started:
                assert proc is not None  # nothing stops them before this
                self._wait_ready(proc)
        except BaseException:
            self.stop()
            raise
        for slot in range(self.count):
            watcher = threading.Thread(
                target=self._watch, args=(slot,), name=f"ctx-worker-{slot}", daemon=True
            )
            watcher.start()
            self._watchers.append(watcher)

    def stop(self) -> None:
        """Stops every worker: SIGTERM, then SIGKILL past 10 s.

        No worker starts after this begins (:meth:`_spawn` refuses), and the
        watchers are waited for, so :attr:`failure` is settled on return.
        """
        with self._lock:
            self._stopped.set()
            procs = [p for p in self._procs if p is not None]
        for proc in procs:
            _close(proc)
        deadline = time.monotonic() + _STOP_S
        for proc in procs:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        for watcher in self._watchers:
            if watcher is not threading.current_thread():
                watcher.join()

    def _spawn(self, slot: int) -> subprocess.Popen[bytes] | None:
        """Starts the worker of ``slot``; its spec sent, its stdin kept open.

        None once the workers are stopping. A worker runs in a process group
        of its own: Ctrl-C reaches the first process only, which stops it.
        """
        with self._lock:
            if self._stopped.is_set():
                return None
            proc = subprocess.Popen(
                [sys.executable, "-m", "ctx.porcelain.agents.workers"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                process_group=0,
            )
            self._procs[slot] = proc
        assert proc.stdin is not None
        with contextlib.suppress(OSError):  # it died at once: its line says
            proc.stdin.write(self._line)
            proc.stdin.flush()
        return proc

    def _wait_ready(self, proc: subprocess.Popen[bytes]) -> None:
        """Waits for the worker's first line: ready, or why it failed.

        Raises:
            WorkerError: It failed, exited, or took longer than 5 minutes.
        """
        assert proc.stdout is not None
        late = threading.Event()

        def too_late() -> None:
            late.set()
            proc.kill()

        timer = threading.Timer(_START_S, too_late)
        timer.start()
        try:
            line = proc.stdout.readline().decode(errors="replace").strip()
        finally:
            timer.cancel()
        if line == _READY:
            return
        if line.startswith(_FAILED):
            reason = line.removeprefix(_FAILED)
        else:
            proc.kill()  # whatever it is doing, it is not serving
            proc.wait()
            if late.is_set():
                reason = f"it was not ready within {_START_S:g} s."
            else:
                reason = f"it exited ({_how(proc.returncode)}) before it was ready."
        raise WorkerError(
            f"A worker of ctx serve did not start: {reason}",
            hint="`ctx serve` without --workers serves from one process.",
        )

    def _watch(self, slot: int) -> None:
        """Starts the worker of ``slot`` again each time it exits, while serving."""
        while True:
            with self._lock:
                proc = self._procs[slot]
            assert proc is not None
            proc.wait()
            if self._stopped.wait(0.5) or self.stopping():
                return
            now = time.monotonic()
            with self._lock:
                self._restarts.append(now)
                while self._restarts and self._restarts[0] < now - 60:
                    self._restarts.popleft()
                restarts = len(self._restarts)
            if restarts > RESTARTS:
                self._give_up(
                    f"The workers of ctx serve stopped {restarts} times "
                    f"in a minute (the last: pid {proc.pid}, {_how(proc.returncode)}); "
                    "the server stopped."
                )
                return
            self.notice(
                f"Notice: The worker pid {proc.pid} stopped "
                f"({_how(proc.returncode)}); another one starts."
            )
            _close(proc)
            if proc.stdout is not None:
                proc.stdout.close()
            started = self._spawn(slot)
            if started is None:
                return
            try:
                self._wait_ready(started)
            except WorkerError as exc:
                if not self._stopped.is_set():  # not our own SIGTERM
                    self._give_up(exc.message)
                return

    def _give_up(self, reason: str) -> None:
        self.failure = reason
        self.stop_server()


def _close(proc: subprocess.Popen[bytes]) -> None:
    """Asks a worker to stop: its stdin closed, and SIGTERM."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):  # the pipe's reader is gone
            proc.stdin.close()
    if proc.poll() is None:
        proc.terminate()


def _how(code: int | None) -> str:
    """Says how a process ended, from its return code."""
    if code is not None and code < 0:
        return f"signal {-code}"
    return f"exit code {code}"


def spec_for(
    stores: Sequence[WorkerStore],
    port: int,
    count: int,
    *,
    host: str,
    agent: str | None,
    branch: str | None,
    sync: str | None = None,
    every: float | None = None,
) -> WorkerSpec:
    """Returns what each of ``count`` workers (beside the first process) serves."""
    from ctx.hub import cpu_count

    return WorkerSpec(
        stores=tuple(stores),
        host=host,
        port=port,
        # As many as one process runs alone at most (MiniLM's and e5's
        # default: two), shared among the processes.
        threads=max(1, min(2, cpu_count() // (count + 1))),
        agent=agent,
        branch=branch,
        sync=sync,
        every=every,
    )


def main() -> None:
    """A worker: reads its spec, loads its stores, listens, says ready, serves.

    Its stdout is the pipe the first process reads its one status line
    from; anything else this process writes there (a library's print, a
    native one) goes to stderr instead, so that the pipe never fills.
    """
    from ctx.porcelain.agents.listening import listen_on

    status = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    spec = msgspec.json.decode(sys.stdin.buffer.readline(), type=WorkerSpec)
    try:
        server = _server(spec)
        # Listening only once the stores are loaded: a connection the kernel
        # queues here waits for no load.
        sock = listen_on(spec.host, spec.port, shared=True)
    except CtxError as exc:
        status.write(f"{_FAILED}{exc.message}\n")
        status.close()
        sys.exit(1)
    status.write(f"{_READY}\n")
    status.close()

    def first_process_gone() -> None:
        sys.stdin.buffer.read()  # returns at end of file: the pipe closed
        server.should_exit = True

    threading.Thread(target=first_process_gone, daemon=True).start()
    with contextlib.suppress(KeyboardInterrupt):  # a Ctrl-C sent to it alone
        server.run(sockets=[sock])


def _server(spec: WorkerSpec) -> uvicorn.Server:
    """Returns the worker's uvicorn server, its stores' answerers warmed.

    Raises:
        CtxError: A store cannot be opened, or its indexes loaded.
    """
    from ctx.hub import Answerer, Caller, Embedders, Workspace, adopt_answerer
    from ctx.porcelain.agents.listening import http_server, stores_app
    from ctx.porcelain.agents.served import NamedStore

    embedders = Embedders(threads=spec.threads)
    named = []
    for store in spec.stores:
        ws = Workspace.find(store.path)
        answerer = Answerer(
            ws.store(write=True),
            ws.clock,
            defer=False,
            lock=ws.lock,
            embedders=embedders,
        )
        answerer.warm()
        adopt_answerer(ws, answerer)
        named.append(NamedStore(store.name, ws))
    replica = None
    if spec.sync is not None and spec.every is not None:
        from ctx.porcelain.agents.replica import shared_health

        # The syncing process is the one that started this worker.
        replica = shared_health(
            named[0].ws, spec.sync, spec.every, syncing=os.getppid()
        )
    app = stores_app(
        named,
        [s.keys_required for s in spec.stores],
        base=Caller(agent=spec.agent, branch=spec.branch),
        host=spec.host,
        replica=replica,
        stateless=True,
    )
    return http_server(app)


if __name__ == "__main__":
    main()
