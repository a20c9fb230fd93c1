"""A read-write lock: reads side by side, writes one at a time.

``ctx serve`` and a hub answer many clients from threads of one process,
over one store object and one set of indexes. A lock around every call made
four clients as slow as one; but reading (a recall's ranking, ``show``,
``ls``, ``log``) changes nothing that another read uses, so any number may
run at once, while a write (a memory written, an index caught up to a new
commit, a vector added) runs alone: every write of a store, whatever its
branch, waits for the others, so writes are serialised per branch.

:class:`ReadWriteLock` is the workspace's lock (``Workspace.lock``).
``with lock:`` takes it to write, as the plain lock it replaces did, so a
caller that does not say it only reads stays exclusive;
``with lock.reading():`` takes it to read. Both are re-entrant in a thread:
a writer may read or write again, a reader may read again. A reader that
asks to write would wait for itself: it raises instead.

Neither side starves the other. A writer that waits keeps new readers out
(other than those that read already), so a stream of reads cannot starve a
write; and when a write ends, the readers that waited for it go in before
the next writer, so a stream of writes cannot starve the reads (two
writers in turn kept every read out for seconds).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

__all__ = ["LockUpgradeError", "ReadWriteLock"]


class LockUpgradeError(RuntimeError):
    """A thread that holds the lock to read asked for it to write."""


class ReadWriteLock:
    """Shared reads and exclusive, re-entrant writes (see the module docstring)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers: dict[int, int] = {}  # thread id -> depth
        self._writer: int | None = None
        self._depth = 0  # the writer's
        self._waiting = 0  # writers waiting
        self._read_waiting = 0  # readers waiting
        self._readers_turn = False  # a write ended with readers waiting

    def __enter__(self) -> ReadWriteLock:
        self.acquire_write()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release_write()

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Holds the lock to read for the block."""
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Holds the lock to write for the block (as ``with lock:``)."""
        with self:
            yield

    def acquire_read(self) -> None:
        """Waits until no other thread writes (nor waits to, for a new reader)."""
        me = threading.get_ident()
        with self._cond:
            if self._writer == me or me in self._readers:
                self._readers[me] = self._readers.get(me, 0) + 1
                return
            self._read_waiting += 1
            try:
                while self._writer is not None or (
                    self._waiting and not self._readers_turn
                ):
                    self._cond.wait()
            finally:
                self._read_waiting -= 1
                if not self._read_waiting:
                    self._readers_turn = False  # every reader that waited is in
            self._readers[me] = 1

    def release_read(self) -> None:
        """Releases one read of this thread."""
        me = threading.get_ident()
        with self._cond:
            depth = self._readers[me] - 1
            if depth:
                self._readers[me] = depth
                return
            del self._readers[me]
            if not self._readers:
                self._cond.notify_all()

    def acquire_write(self) -> None:
        """Waits until no other thread reads or writes.

        Raises:
            LockUpgradeError: This thread holds the lock to read only.
        """
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._depth += 1
                return
            if me in self._readers:
                raise LockUpgradeError(
                    "A thread that reads cannot start writing: it would wait "
                    "for itself."
                )
            self._waiting += 1
            try:
                while self._writer is not None or self._readers or self._readers_turn:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._writer, self._depth = me, 1

    def release_write(self) -> None:
        """Releases one write of this thread."""
        with self._cond:
            self._depth -= 1
            if self._depth:
                return
            self._writer = None
            self._readers_turn = self._read_waiting > 0
            self._cond.notify_all()
