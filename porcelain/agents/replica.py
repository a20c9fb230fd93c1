"""``ctx serve --sync REMOTE --every SECONDS``: a server that is a replica.

Several servers, each with its own store and indexes, share one remote (a
forge, a bare repository): the remote is the system of record, and each
server keeps its store close to it from a thread of its own. Every round:

1. fetch: every branch of the remote, as ``ctx fetch`` does (the network
   transfer runs without the workspace's lock; the fetched branches move
   under the store's write lock);
2. merge, holding the workspace's lock (reads wait only for this): the
   redactions the fetch brought are applied first, as ``ctx pull`` applies
   them; then each branch of the remote goes into the branch of the same
   name here, with ctx's own merge (conflicts are committed as data), and a
   branch the store lacks is made at the remote's tip;
3. push: the remote's branches and those written here while the server runs
   (every branch whose tip moved since it started, and those an earlier run
   had to push: :data:`STATE_FILE` keeps them across a restart), where the
   remote lacks their tips, as ``ctx push`` does. When another replica pushed first the
   push is refused (not a fast forward, or the remote's update of the
   branch failed when both pushes arrived at once); then this one fetches,
   merges and pushes again, up to :data:`ATTEMPTS` times.

A round that fails (the remote unreachable, a race lost every time) leaves
a one-line notice and its error for ``/health``; the next round tries
again. The thread opens a store of its own (the workspace's store object is
not shared between threads outside the workspace's lock), so the server's
requests go on while it transfers.

With ``ctx serve --workers``, the first process syncs and its workers
answer ``/health`` too: what only the syncing process knows (when the last
round ended, its error, the branches' tips at the start and those written
since) is in ``private/replica.json`` (:data:`STATE_FILE`), written at the
start and after each round, and each worker reckons the lag from it and
the store as :meth:`Replica.health` does (:func:`shared_health`). The
workspace's lock is one process's: a worker's reads and writes do not wait
for a merge (each branch still moves by compare-and-swap in the store's
file lock), and a branch a worker makes while a round would make it from
the remote is merged as any other.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from datetime import datetime

import msgspec

from ctx.engine import (
    Access,
    CommitId,
    ConflictError,
    CtxError,
    InvalidInputError,
    RemoteError,
    Store,
    apply_redactions,
    create_branch,
    differing_branches,
    fetch,
    merge,
    plural,
    push,
    remote_lag,
    remote_url,
)
from ctx.hub import PRIVATE_FOLDER, Workspace

__all__ = [
    "ATTEMPTS",
    "DEFAULT_EVERY",
    "STATE_FILE",
    "Replica",
    "ReplicaHealth",
    "open_replica",
    "shared_health",
]

ATTEMPTS = 3
"""Pushes a round tries, each after fetching and merging what beat it."""

DEFAULT_EVERY = 60.0
"""Seconds between the end of one round and the start of the next."""

_STOP_WAIT = 30.0  # seconds a stopping server waits for a round in flight

STATE_FILE = "replica.json"
"""In the store's private folder: what the syncing process knows, for its
workers' ``/health`` and its next run (:class:`_State`)."""


class ReplicaHealth(msgspec.Struct, frozen=True, kw_only=True):
    """How far a replica is behind its remote (part of ``GET /health``).

    Attributes:
        remote: The remote it syncs with.
        every: Seconds between rounds.
        last_sync: When the last round that succeeded ended (None: none yet).
        unpushed: Commits here the remote lacks, on the branches a round
            pushes (as the remote was last fetched; None: unknown).
        unmerged: Commits of the remote, as last fetched, that no branch
            here has (None: unknown).
        error: Why the last round failed, if it did.
    """

    remote: str
    every: float
    last_sync: datetime | None
    unpushed: int | None
    unmerged: int | None
    error: str | None = None


class _State(msgspec.Struct, frozen=True, kw_only=True):
    """What only the syncing process knows, as :data:`STATE_FILE` holds it.

    Attributes:
        remote: The remote it syncs with (a file of another run's remote is
            not this one's).
        last_sync: When the last round that succeeded ended.
        error: Why the last round failed, if it did.
        pid: The syncing process (a file another run left names another).
        started: The branches' tips when it started (None: not yet).
        written: The branches written since, as last noted.
        pushed: The tips its pushes sent, by branch (a branch written and
            pushed is not pushed again by the next run: the remote may have
            deleted it since).
    """

    remote: str
    pid: int = 0
    last_sync: datetime | None = None
    error: str | None = None
    started: dict[str, CommitId] | None = None
    written: frozenset[str] = frozenset()
    pushed: dict[str, CommitId] = msgspec.field(default_factory=dict)


def shared_health(
    ws: Workspace, remote: str, every: float, *, syncing: int
) -> Callable[[], ReplicaHealth]:
    """Returns ``/health``'s replica part for a worker of a server that syncs.

    Read from :data:`STATE_FILE` at each call. Until process ``syncing``
    writes it (or when it is unreadable, or another run's or another
    remote's), the lag is reckoned as before any round.
    """

    def health() -> ReplicaHealth:
        state = _read_state(ws)
        if state is None or (state.remote, state.pid) != (remote, syncing):
            state = _State(remote=remote)
        return _health(ws, remote, every, state)

    return health


def _read_state(ws: Workspace) -> _State | None:
    """Returns what :data:`STATE_FILE` holds, or None (none, or unreadable)."""
    try:
        return msgspec.json.decode(
            (ws.path / PRIVATE_FOLDER / STATE_FILE).read_bytes(), type=_State
        )
    except (OSError, msgspec.DecodeError):
        return None


def _carried(store: Store, before: _State) -> set[str]:
    """Returns the branches an earlier run of a replica had to push.

    Those it had noted as written, and those made or moved since it
    started (a write it acknowledged just before it stopped, or was
    killed, while the remote was away), but for those whose tip it pushed.
    """
    mine = set(store.branches())
    return {
        b
        for b in set(before.written) | _moved(store, before.started)
        if b in mine and store.branch_tip(b) != before.pushed.get(b)
    }


def _health(ws: Workspace, remote: str, every: float, state: _State) -> ReplicaHealth:
    """Returns how far the store is behind ``remote``, as last fetched."""
    error = state.error
    unpushed = unmerged = None
    try:
        with ws.lock.reading():
            store = ws.store()
            written = set(state.written) | _moved(store, state.started)
            lag = remote_lag(store, remote, written)
        unpushed, unmerged = lag.unpushed, lag.unmerged
    except CtxError as exc:  # the remote removed meanwhile, say
        error = error or exc.message
    return ReplicaHealth(
        remote=remote,
        every=every,
        last_sync=state.last_sync,
        unpushed=unpushed,
        unmerged=unmerged,
        error=error,
    )


def _moved(store: Store, started: dict[str, CommitId] | None) -> set[str]:
    """Returns the branches made or moved since ``started`` (none before it)."""
    if started is None:
        return set()
    return {b for b in store.branches() if started.get(b) != store.branch_tip(b)}


def open_replica(
    ws: Workspace,
    remote: str | None,
    every: float | None,
    *,
    access: Access,
    notice: Callable[[str], None],
) -> Replica | None:
    """Returns the replica ``--sync REMOTE --every SECONDS`` asks for, if any.

    Checked before the server starts: nothing is changed by a refusal.

    Raises:
        InvalidInputError: an interval without a remote, or one that is not
            a positive number of seconds.
        RemoteNotFoundError: the store has no such remote.
    """
    if remote is None:
        if every is not None:
            raise InvalidInputError(
                "--every needs --sync REMOTE.",
                hint="`ctx serve --sync origin --every 30` syncs with origin.",
            )
        return None
    seconds = DEFAULT_EVERY if every is None else every
    if not (math.isfinite(seconds) and 0 < seconds <= threading.TIMEOUT_MAX):
        raise InvalidInputError(
            f"--every must be a positive number of seconds, not {seconds:g}.",
        )
    remote_url(ws.store(), remote)  # refuses an unknown remote
    return Replica(ws, remote, seconds, access=access, notice=notice)


class Replica:
    """Syncs the workspace's store with a remote, every few seconds, in a thread.

    Args:
        ws: The workspace served.
        remote: The remote's name (``ctx remote add``).
        every: Seconds between rounds.
        access: How to reach the remote.
        notice: Takes the one-line notice of a round that failed, or that
            left conflicts.
        attempts: Pushes a round tries (see :data:`ATTEMPTS`).
    """

    def __init__(
        self,
        ws: Workspace,
        remote: str,
        every: float,
        *,
        access: Access,
        notice: Callable[[str], None],
        attempts: int = ATTEMPTS,
    ) -> None:
        self.ws = ws
        self.remote = remote
        self.every = every
        self.access = access
        self.notice = notice
        self.attempts = attempts
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._store: Store | None = None
        self._started: dict[str, CommitId] | None = None  # tips at the start
        self._written: set[str] = set()
        self._pushed: dict[str, CommitId] = {}
        self._state = threading.Lock()  # guards the fields below, and _written
        self._last_sync: datetime | None = None
        self._error: str | None = None

    def begin(self) -> None:
        """Notes the branches' tips (once), for the workers too.

        Called before the workers start, so that a branch one of them
        writes counts as written here and is pushed; :meth:`start` calls
        it if nothing did.
        """
        if self._store is None:
            self._open()

    def start(self) -> None:
        """Notes the branches' tips, then syncs now and every :attr:`every` s."""
        self.begin()
        self._thread = threading.Thread(target=self._run, name="ctx-replica")
        self._thread.daemon = True  # a transfer that hangs cannot keep us up
        self._thread.start()

    def stop(self) -> None:
        """Stops the thread (a round in flight finishes first) and its store."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(_STOP_WAIT)
            if self._thread.is_alive():
                return  # still transferring: the store stays open for it
        if self._store is not None:
            self._store.close()
            self._store = None

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.sync()
            except Exception as exc:  # the thread must go on
                # Not one of ctx's errors: a fault of this round, said in
                # /health and the log as any failure is; the next round runs.
                self._failed(f"{type(exc).__name__}: {exc}")
            self._stopping.wait(self.every)

    def _failed(self, message: str) -> None:
        with self._state:
            self._error = message
        self.notice(
            f"Notice: The sync with {self.remote} failed: {message} "
            f"The next one is in {self.every:g} s."
        )
        self._share()

    def sync(self) -> bool:
        """Runs one round; returns whether it succeeded (see the module docstring).

        The thread runs it; without :meth:`start` it runs one round here,
        the branches' tips noted at the first.
        """
        try:
            self._round(self._store or self._open())
        except CtxError as exc:
            self._failed(exc.message)
            return False
        with self._state:
            self._last_sync = self.ws.clock()
            self._error = None
        self._share()
        return True

    def health(self) -> ReplicaHealth:
        """Returns how far the store is behind the remote, as last fetched."""
        return _health(self.ws, self.remote, self.every, self._snapshot())

    def _snapshot(self) -> _State:
        with self._state:
            return _State(
                remote=self.remote,
                last_sync=self._last_sync,
                error=self._error,
                started=self._started,
                written=frozenset(self._written),
                pushed=dict(self._pushed),
            )

    def _share(self, *, durable: bool = False) -> None:
        """Writes what only this process knows (:data:`STATE_FILE`).

        For the workers' ``/health``, and for the next run, which pushes
        what this one had to (:meth:`_carried`). Synced to disk at the
        start only (``durable``): the tips noted then are what the next
        run needs; a later crash loses only a health report. Raises
        nothing: a failure (the branches unreadable, the folder not
        writable) is a notice, and the sync goes on.
        """
        from ctx.hub import private_folder, write_atomically

        if self._started is None:
            return
        try:
            if self._store is not None:
                self._note_written(self._store)
            snapshot = msgspec.structs.replace(self._snapshot(), pid=os.getpid())
            path = private_folder(self.ws.path) / STATE_FILE
            write_atomically(path, msgspec.json.encode(snapshot), durable=durable)
        except CtxError as exc:
            self._share_failed(exc.message)
        except Exception as exc:  # a report must not stop the rounds
            self._share_failed(f"{type(exc).__name__}: {exc}")

    def _share_failed(self, why: str) -> None:
        self.notice(f"Notice: The replica's state was not written: {why}")

    def _open(self) -> Store:
        """Opens the store the rounds use, and notes its branches' tips."""
        from ctx.hub import SecretScreen

        store = Store.open(
            self.ws.path, clock=self.ws.clock, screen=SecretScreen(self.ws.secrets_mode)
        )
        self._store = store
        before = _read_state(self.ws)
        if before is not None and before.remote == self.remote:
            with self._state:
                self._written |= _carried(store, before)
                self._pushed.update(before.pushed)
        self._started = {b: store.branch_tip(b) for b in store.branches()}
        self._share(durable=True)
        return store

    def _round(self, store: Store) -> None:
        self._fetch_and_merge(store)
        for attempt in range(1, self.attempts + 1):
            branches = self._to_push(store)
            if not branches:
                return
            tips = {b: store.branch_tip(b) for b in branches}
            try:
                push(store, self.remote, branches, access=self.access)
            except (ConflictError, RemoteError):
                # Another replica pushed first: refused as not a fast forward,
                # or, when both sent at once, the remote's ref update failed
                # for one of them. Take its work, then try again.
                if attempt == self.attempts or self._stopping.is_set():
                    raise
                self._fetch_and_merge(store)
            else:
                with self._state:
                    self._pushed.update(tips)
                return

    def _fetch_and_merge(self, store: Store) -> None:
        fetched = fetch(store, self.remote, access=self.access)
        intent = self.ws.intent("merge", reason=f"sync with {self.remote}")
        with self.ws.lock:
            if apply_redactions(store):
                from ctx.hub import drop_index

                drop_index(store)  # as a pull that applied one: the text goes
            mine = set(store.branches())
            for branch, tip in sorted(fetched.branches.items()):
                source = f"{self.remote}/{branch}"
                if branch not in mine:
                    try:
                        create_branch(store, branch, source)
                        continue
                    except ConflictError:
                        pass  # a worker made it meanwhile: merged as any other

                if store.branch_tip(branch) == tip:
                    continue
                result = merge(store, source, intent, into=branch)
                if result.conflicts:
                    self.notice(
                        f"Notice: Merging {source} into {branch} left "
                        f"{plural(len(result.conflicts), 'conflict')} "
                        "(`ctx status` lists them)."
                    )

    def _to_push(self, store: Store) -> list[str]:
        """Returns the branches whose tips the remote (as last fetched) lacks."""
        return list(differing_branches(store, self.remote, self._note_written(store)))

    def _note_written(self, store: Store) -> set[str]:
        """Returns the branches written since the start (made or moved)."""
        moved = _moved(store, self._started)  # none before the start
        with self._state:
            self._written |= moved
            return set(self._written)
