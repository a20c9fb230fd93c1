"""The stores a user's hub serves: opened on demand, dropped when idle.

One hub serves every store of its user (:mod:`.listener`). A request names
its store; :class:`OpenStores` opens it on the first request (its
:class:`~ctx.hub.server.service.Answerer`, a backfill thread for its
embedding backlog, Dream's thread where the store enables it) and keeps it
while it is used. What it keeps, and for how long:

- One embedder per embedder configuration (:class:`Embedders`), shared by
  every store whose ``[embedder]`` names it: MiniLM is loaded once however
  many stores the hub serves (about 90 MB each time it is loaded).
- A store not asked anything for :attr:`Limits.idle_s` (``CTX_HUB_STORE_IDLE``,
  minutes, default 10) is dropped: its threads stop, its answerer lets go of
  the indexes, the projection and the code index, and its store is closed.
  The next request opens it again.
- A memory bound (:attr:`Limits.memory_bound`, ``CTX_HUB_MEMORY_MB``,
  default 1024): when the hub's resident memory is over it after a request,
  it drops idle stores, least recently used first, until it is under, and
  hands freed memory back to the system (``malloc_trim`` where glibc has
  it), so that a big code index or document does not keep it high once its
  work is done. A store answering a request or embedding its backlog is
  never dropped, nor the store asked last (:meth:`OpenStores.keep_bound`),
  nor the store of the process that hosts the hub (``ctx serve``, ``ctx
  mcp``: *pinned*).

A store's path must name a ctx store (a one-line failure otherwise); it is
resolved, so two spellings of one folder share their indexes.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ctx.engine import InvalidInputError, NotAStoreError
from ctx.hub.dream.background import start_background
from ctx.hub.retrieval.embedders import Embedder, make_embedder
from ctx.hub.server.backfill import Backfill
from ctx.hub.server.service import Answerer
from ctx.hub.server.wire import OpenStore

if TYPE_CHECKING:
    from ctx.hub.workspace import Workspace

__all__ = [
    "DEFAULT_MEMORY_MB",
    "DEFAULT_STORE_IDLE_MINUTES",
    "Embedders",
    "Limits",
    "OpenStores",
    "release_memory",
    "rss_bytes",
]

DEFAULT_STORE_IDLE_MINUTES = 10.0
"""Minutes a store may go unasked before the hub drops it."""
DEFAULT_MEMORY_MB = 1024
"""The hub's memory bound in MB: one store's hub with MiniLM is about 230 MB."""
_TRIM_EVERY_S = 5.0  # over the bound with nothing to drop: trim this often at most
_ENCODER = msgspec.json.Encoder(order="deterministic")


@dataclass(frozen=True)
class Limits:
    """How long the hub keeps an idle store, and the memory it keeps under."""

    idle_s: float = DEFAULT_STORE_IDLE_MINUTES * 60
    memory_bound: int = DEFAULT_MEMORY_MB * 1_000_000

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Returns the limits ``CTX_HUB_STORE_IDLE`` and ``CTX_HUB_MEMORY_MB`` set.

        A value that is not a positive number is ignored (the default holds).
        """
        env = os.environ if environ is None else environ
        idle = _positive(env.get("CTX_HUB_STORE_IDLE"), DEFAULT_STORE_IDLE_MINUTES)
        memory = _positive(env.get("CTX_HUB_MEMORY_MB"), DEFAULT_MEMORY_MB)
        return cls(idle_s=idle * 60, memory_bound=int(memory * 1_000_000))


def _positive(text: str | None, default: float) -> float:
    try:
        value = float(text) if text else default
    except ValueError:
        return default
    return value if value > 0 else default


def rss_bytes() -> int | None:
    """Returns this process's resident memory (Linux: /proc), or None."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def release_memory() -> None:
    """Collects garbage and hands freed heap back to the system where it can.

    glibc keeps freed memory in its arenas; ``malloc_trim(0)`` returns it.
    Elsewhere only the collection runs.
    """
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


class Embedders:
    """One embedder per configuration, shared by every store that names it.

    ``threads``: a model's threads where its configuration names none (see
    :func:`~ctx.hub.retrieval.embedders.make_embedder`).
    """

    def __init__(self, threads: int | None = None) -> None:
        self._made: dict[bytes, Embedder] = {}
        self._lock = threading.Lock()
        self._threads = threads

    def __call__(self, config: Mapping[str, object]) -> Embedder:
        """Returns the embedder ``config`` names, made on its first use."""
        key = _ENCODER.encode(dict(config))
        with self._lock:
            embedder = self._made.get(key)
            if embedder is None:
                embedder = self._made[key] = make_embedder(
                    config, threads=self._threads
                )
            return embedder

    def __len__(self) -> int:
        return len(self._made)

    def keep(self, configs: Iterable[Mapping[str, object]]) -> None:
        """Drops the embedders no configuration in ``configs`` names."""
        wanted = {_ENCODER.encode(dict(config)) for config in configs}
        with self._lock:
            for key in set(self._made) - wanted:
                del self._made[key]


@dataclass(eq=False)
class _Open:
    """A store the hub holds open."""

    path: Path
    answerer: Answerer
    workspace: Workspace | None  # None when pinned: its owner closes it
    backfill: Backfill
    stopping: threading.Event
    opened: datetime
    used: datetime
    last_used: float = field(default_factory=time.monotonic)
    active: int = 0

    @property
    def pinned(self) -> bool:
        return self.workspace is None

    def droppable(self) -> bool:
        return not self.pinned and self.active == 0 and not self.backfill.busy


class OpenStores:
    """The stores a hub holds open, keyed by resolved path (module docstring).

    Args:
        clock: The hub's clock (for the stores' workspaces and the report).
        limits: When to drop idle stores.
        stopping: Set when the hub stops; every store's threads stop then.
        threads: A model's threads where a store's config names none.
    """

    def __init__(
        self,
        clock: Callable[[], datetime],
        limits: Limits,
        stopping: threading.Event,
        *,
        threads: int | None = None,
    ) -> None:
        self.clock = clock
        self.limits = limits
        self.stopping = stopping
        self.embedders = Embedders(threads)
        self._open: dict[Path, _Open] = {}
        self._lock = threading.Lock()
        self._trimmed = 0.0

    # -- opening ----------------------------------------------------------

    def pin(self, answerer: Answerer) -> Answerer:
        """Serves ``answerer``'s store with it, never dropping it.

        The embedders it makes from now on are the hub's shared ones.
        """
        assert answerer.store.path is not None
        answerer.embedders = self.embedders
        path = answerer.store.path.resolve()
        with self._lock:
            self._open[path] = self._start(path, answerer, None)
        return answerer

    def open(self, name: str) -> Answerer:
        """Returns the answerer of the store at ``name``, opening it if needed.

        Raises:
            InvalidInputError: No store is named.
            NotAStoreError: ``name`` is not a ctx store.
        """
        with self.use(name) as answerer:
            return answerer

    @contextlib.contextmanager
    def use(self, name: str) -> Iterator[Answerer]:
        """Lends the answerer of the store at ``name`` for one request.

        A store in use is never dropped; its backfill is woken afterwards
        (the request may have left a backlog).

        Raises:
            InvalidInputError: No store is named.
            NotAStoreError: ``name`` is not a ctx store.
        """
        entry = self._acquire(name)
        try:
            yield entry.answerer
        finally:
            with self._lock:
                entry.active -= 1
                entry.last_used = time.monotonic()
                entry.used = self.clock()
            entry.backfill.wake.set()

    def _acquire(self, name: str) -> _Open:
        path = _store_path(name)
        with self._lock:
            entry = self._open.get(path)
            if entry is None:
                entry = self._open[path] = self._opened(path)
            entry.active += 1
            return entry

    def _opened(self, path: Path) -> _Open:
        """Opens the store at ``path`` (quick: its indexes load on first use)."""
        from ctx.hub.workspace import Workspace

        workspace = Workspace(path, clock=self.clock)
        try:
            store = workspace.store()
        except BaseException:
            workspace.close()
            raise
        answerer = Answerer(store, self.clock, embedders=self.embedders)
        return self._start(path, answerer, workspace)

    def _start(
        self, path: Path, answerer: Answerer, workspace: Workspace | None
    ) -> _Open:
        stopping = threading.Event()
        now = self.clock()
        entry = _Open(
            path=path,
            answerer=answerer,
            workspace=workspace,
            backfill=Backfill(answerer, answerer.lock, stopping),
            stopping=stopping,
            opened=now,
            used=now,
        )
        entry.backfill.start()
        start_background(path, self.clock, stopping)
        return entry

    # -- what it holds ----------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether any store is embedding its backlog."""
        with self._lock:
            return any(entry.backfill.busy for entry in self._open.values())

    def listed(self) -> tuple[OpenStore, ...]:
        """Returns the stores held open, least recently used first."""
        with self._lock:
            entries = sorted(self._open.values(), key=lambda e: e.last_used)
            return tuple(
                OpenStore(
                    store=str(entry.path),
                    opened=entry.opened,
                    last_used=entry.used,
                    pinned=entry.pinned,
                )
                for entry in entries
            )

    # -- dropping ---------------------------------------------------------

    def drop_idle(self) -> int:
        """Drops the stores idle for longer than the limit; returns how many."""
        now = time.monotonic()
        with self._lock:
            idle = [
                entry
                for entry in self._open.values()
                if entry.droppable() and now - entry.last_used > self.limits.idle_s
            ]
            for entry in idle:
                del self._open[entry.path]
        self._drop(idle)
        return len(idle)

    def keep_bound(self) -> int:
        """Drops idle stores, least recently used first, while over the bound.

        Never the store asked last: dropping it keeps the bound only until
        its next request opens it again, and a store that alone holds more
        than the bound would then be loaded anew for every request (a hub of
        one 100,000-memory store, about 1,050 MB, took 1.6 s a recall
        instead of 35 ms). It goes when it is idle, or another store is
        asked after it. Returns how many were dropped. Over the bound with
        none to drop, it hands freed memory back (at most every few seconds).
        """
        dropped = 0
        while (rss := rss_bytes()) is not None and rss > self.limits.memory_bound:
            with self._lock:
                last = max(self._open.values(), key=lambda e: e.last_used, default=None)
                idle = [
                    e for e in self._open.values() if e.droppable() and e is not last
                ]
                entry = min(idle, key=lambda e: e.last_used, default=None)
                if entry is not None:
                    del self._open[entry.path]
            if entry is None:
                if not dropped and time.monotonic() - self._trimmed > _TRIM_EVERY_S:
                    self._trimmed = time.monotonic()
                    release_memory()
                break
            self._drop([entry])
            dropped += 1
        return dropped

    def close(self) -> None:
        """Drops every store (the hub stops)."""
        with self._lock:
            entries = list(self._open.values())
            self._open.clear()
        for entry in entries:
            entry.stopping.set()
            entry.backfill.wake.set()
            if entry.workspace is not None:
                entry.workspace.close()

    def _drop(self, entries: list[_Open]) -> None:
        """Stops the stores' threads, lets go of their indexes, frees memory."""
        if not entries:
            return
        for entry in entries:
            entry.stopping.set()
            # Waits for a backfill step in flight; after it, none reopens.
            with entry.answerer.lock:
                entry.answerer.close()
            entry.backfill.wake.set()
            assert entry.workspace is not None  # a pinned store is never dropped
            entry.workspace.close()
        with self._lock:
            configs = [
                entry.answerer.config.embedder
                for entry in self._open.values()
                if entry.answerer.config is not None
            ]
        self.embedders.keep(configs)
        release_memory()


def _store_path(name: str) -> Path:
    """Returns the resolved store folder a request names.

    Raises:
        InvalidInputError: No store is named.
        NotAStoreError: ``name`` is not an absolute path to a ctx store.
    """
    if not name:
        raise InvalidInputError(
            "The request names no store.", hint="Name the store folder."
        )
    path = Path(name)
    if not path.is_absolute() or not (path / "git").is_dir():
        raise NotAStoreError(
            f"{name} is not a ctx store.",
            hint="Name the store folder by its absolute path.",
        )
    return path.resolve()
