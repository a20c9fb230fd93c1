"""The per-store write lock: one writer at a time, released if it dies.

``flock`` locks belong to the open file, so the kernel drops them when the
holder exits, even by SIGKILL: a crashed writer never wedges the store.
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

__all__ = ["write_lock"]


@contextmanager
def write_lock(path: Path, timeout: float) -> Iterator[None]:
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
        yield
    finally:
        os.close(fd)
