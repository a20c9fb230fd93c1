"""The store's private state: a folder beside ``git/`` that is never committed.

API keys (:mod:`ctx.hub.keys`) and the agents' hook sessions
(:mod:`ctx.hub.session_state`) keep what is not memory under ``<store>/private/``:
mode 0700, owned by the user, with a ``.gitignore`` of ``*`` so that a
project repository holding ``.ctx/`` does not take it either. Files there
are replaced whole (:func:`write_atomically`): a reader sees the old file or
the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from ctx.engine import StoreError

__all__ = [
    "PRIVATE_FOLDER",
    "SCRUB_PENDING",
    "private_folder",
    "process_alive",
    "write_atomically",
]

PRIVATE_FOLDER = "private"
"""The store's private state: never committed, never in git's folder."""

SCRUB_PENDING = "scrub.pending"
"""The note, in the store folder, of the texts a redaction still scrubs
(:mod:`ctx.hub.redaction`): kept here so that opening a store looks for it
without loading the redaction's machinery."""


def private_folder(store_path: Path) -> Path:
    """Returns the store's private folder, made (mode 0700) if missing.

    Raises:
        StoreError: It is a symlink, not a folder or another user's.
        OSError: It cannot be made or closed to others.
    """
    folder = store_path / PRIVATE_FOLDER
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise StoreError(
            f"{folder} is not a folder of yours; nothing private is written "
            "through it.",
            hint="Remove it; ctx makes the folder again.",
        )
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(folder, 0o700)  # the store is ours; a umask may have opened it
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# ctx's private state: never committed.\n*\n")
    return folder


def write_atomically(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replaces the file ``path`` whole (mode 0600), synced to disk.

    A temporary file beside it is written and synced, then renamed over it,
    and the folder is synced: a reader sees the old file or the new one.
    Without ``durable`` nothing is synced (two fsyncs cost about 10 ms): a
    reader still sees one file or the other, but a crash of the machine
    may lose the change, or leave an empty file.

    Raises:
        OSError: The file cannot be written.
    """
    temp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            if durable:
                os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    if not durable:
        return
    folder_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder_fd)
    finally:
        os.close(folder_fd)


def process_alive(pid: int) -> bool:
    """Returns whether process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
