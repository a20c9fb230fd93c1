"""A disk that fills up, for tests of writes it refuses (issue #28, finding 13).

:class:`FullDisk` takes the place of the files the store is written through:
dulwich's lock files (objects, packs, refs), the reflog and the note in the
store's lock. Once ``room`` bytes are written, a write writes what fits and
the next one fails with ``ENOSPC`` (or the errno given), as a full file
system does. Without a ``room`` it only counts: ``offsets`` holds where each
write started, the points a test can make the disk fill up at.
:func:`leftovers` lists what a refused write must not leave.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
from pathlib import Path
from typing import Any

import dulwich.file
import dulwich.repo
import pytest

import ctx.engine._lock


def leftovers(folder: Path) -> list[str]:
    """Returns the lock and temporary pack files under the store ``folder``."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.name.endswith(".lock") or p.name.startswith("tmp_ctx_")
    )


class FullDisk:
    """Writes that fail once ``room`` bytes are written (None: never)."""

    def __init__(self, room: int | None = None, *, error: int = errno.ENOSPC) -> None:
        self.room = room
        self.error = error
        self.written = 0
        self.offsets: list[int] = []
        self.refused = 0

    def take(self, size: int) -> int:
        """Returns how many of ``size`` bytes fit; raises when none does."""
        self.offsets.append(self.written)
        fits = (
            size if self.room is None else max(0, min(size, self.room - self.written))
        )
        if size and not fits:
            self.refused += 1
            raise OSError(self.error, os.strerror(self.error))
        self.written += fits
        return fits

    def install(self, monkeypatch: pytest.MonkeyPatch) -> FullDisk:
        """Puts the disk under dulwich's files, the reflog and the lock's note."""
        disk = self

        class Raw(io.FileIO):
            def write(self, data: Any) -> int:
                view = memoryview(data).cast("B")
                return super().write(view[: disk.take(len(view))])

        def writer(file: int | str | bytes, mode: str) -> io.BufferedWriter:
            return io.BufferedWriter(Raw(file, mode.replace("b", "")))

        class Os:
            def __getattr__(self, name: str) -> Any:
                return getattr(os, name)

            @staticmethod
            def fdopen(fd: int, mode: str = "r", *args: Any) -> Any:
                if "r" in mode:
                    return os.fdopen(fd, mode, *args)
                return writer(fd, mode)

            @staticmethod
            def pwrite(fd: int, data: bytes, offset: int) -> int:
                return os.pwrite(fd, data[: disk.take(len(data))], offset)

        def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if "a" in mode or "w" in mode:
                return writer(file, mode)
            return builtins.open(file, mode, *args, **kwargs)

        monkeypatch.setattr(dulwich.file, "os", Os())
        monkeypatch.setattr(ctx.engine._lock, "os", Os())
        monkeypatch.setattr(dulwich.repo, "open", open_, raising=False)
        return self
