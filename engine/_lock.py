"""The per-store write lock: one writer at a time, released if it dies.

``flock`` locks belong to the open file, so the kernel drops them when the
holder exits, even by SIGKILL: a crashed writer never wedges the store.

The lock file also holds a note: the ref its holder is moving right now, set
just before a ref update and cleared just after. A holder that finds a note
on taking the lock knows that the previous holder died mid-move, and which
ref's ``.lock`` file it may have left (see ``Store`` in ``store.py``).
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ctx.engine.errors import ReadOnlyStoreError, StoreBusyError, StoreError

__all__ = ["HeldLock", "write_lock"]


class HeldLock:
    """The store's lock while it is held, with the note of the ref being moved.

    Args:
        fd: The open, locked lock file.

    Attributes:
        previous: The ref a dead previous holder was moving, or ``b""``.
        previous_ns: When that note was written (the lock file's mtime).
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        note = os.pread(fd, 4096, 0)
        complete = note.endswith(b"\n") and note.count(b"\n") == 1
        self.previous = note[:-1] if complete else b""
        self.previous_ns = os.fstat(fd).st_mtime_ns

    def announce(self, ref: bytes) -> None:
        """Notes that the holder is about to take ``ref``'s lock."""
        note = ref + b"\n"
        os.pwrite(self._fd, note, 0)
        os.ftruncate(self._fd, len(note))

    def clear(self) -> None:
        """Notes that the holder holds no ref lock."""
        os.ftruncate(self._fd, 0)

    def now_ns(self) -> int:
        """Returns the file system's time now, the clock of files' mtimes."""
        os.utime(self._fd)
        return os.fstat(self._fd).st_mtime_ns


@contextmanager
def write_lock(path: Path, timeout: float) -> Iterator[HeldLock]:
    """Holds the exclusive lock file ``path`` for the duration of the block.

    Raises:
        ReadOnlyStoreError: the lock file cannot be opened for writing.
        StoreBusyError: the lock stayed taken for ``timeout`` seconds.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise ReadOnlyStoreError(
                f"The store at {path.parent} is read-only.",
                hint="Check the folder's permissions, or use another store.",
            ) from exc
        raise StoreError(f"Cannot open the store's lock file: {exc.strerror}.") from exc
    try:
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreBusyError(
                        f"Another writer held the store for over {timeout:g} s.",
                        hint="Try again; `ctx status` shows the store.",
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        yield HeldLock(fd)
    finally:
        os.close(fd)
