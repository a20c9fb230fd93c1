"""The per-store write lock: one writer at a time, released if it dies.

``flock`` locks belong to the open file, so the kernel drops them when the
holder exits, even by SIGKILL: a crashed writer never wedges the store.

The lock file also holds a note: the ref its holder is moving right now, set
just before a ref update and cleared just after. A holder that finds a note
on taking the lock knows that the previous holder died mid-move, and which
ref's ``.lock`` file it may have left (see ``Store`` in ``store.py``).

:func:`disk_error` says what an ``OSError`` of writing the store means to
the user: a full disk, a quota used up, a read-only store, or the system's
own words; :func:`abandon_git_files` removes the ``.lock`` files such an
error left behind.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dulwich.file import _GitFile

from ctx.engine.errors import (
    DiskFullError,
    ReadOnlyStoreError,
    StoreBusyError,
    StoreError,
)

__all__ = ["HeldLock", "abandon_git_files", "disk_error", "write_lock"]


def disk_error(folder: Path, exc: OSError) -> StoreError:
    """Returns the error to raise for ``exc``, met writing the store ``folder``.

    Args:
        folder: The store folder.
        exc: What the system said.
    """
    if exc.errno == errno.ENOSPC:
        return DiskFullError(
            f"No space left on the disk of the store at {folder}; "
            "the write was not made.",
            hint="Free some space on that disk, then run the command again.",
        )
    if exc.errno == errno.EDQUOT:
        return DiskFullError(
            f"The disk quota is used up for the store at {folder}; "
            "the write was not made.",
            hint="Free some space or raise the quota, then run the command again.",
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ReadOnlyStoreError(
            f"The store at {folder} is read-only.",
            hint="Check the folder's permissions, or use another store.",
        )
    reason = exc.strerror or type(exc).__name__
    return StoreError(
        f"Cannot write to the store at {folder}: {reason}; the write was not made."
    )


def abandon_git_files(exc: BaseException) -> None:
    """Closes the dulwich files an error left open, and removes their locks.

    dulwich's ``GitFile`` writes ``NAME.lock`` and renames it over ``NAME``
    when closed. On a full disk the flush in ``close()`` fails, and so does
    the one ``abort()`` makes before removing the lock: the lock stays, and
    so does the open file, which the garbage collector aborts later (and may
    fail again). The frames of the error hold every such file; a second
    ``abort()`` finds the file closed and removes the lock. Only a file that
    was never renamed is aborted: a finished one is left alone.
    """
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        for frame, _ in traceback.walk_tb(error.__traceback__):
            for value in frame.f_locals.values():
                if isinstance(value, _GitFile):
                    for _attempt in range(2):
                        try:
                            value.abort()
                            break
                        except OSError:
                            continue
                        except AttributeError:
                            break  # its opening failed: no file, no lock
        error = error.__context__


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
        DiskFullError: it cannot be made for want of space.
        StoreError: it cannot be opened for another reason.
        StoreBusyError: the lock stayed taken for ``timeout`` seconds.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise disk_error(path.parent, exc) from exc
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
