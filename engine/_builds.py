"""The folders a new repository is built in, and clearing those left behind.

``Store.init`` and ``clone`` build a store's repository in a ``git.new-*``
folder beside where ``git/`` goes and rename it into place, so ``git/`` is
either absent or complete. A process killed midway leaves its folder: a
clone of 20,000 branches left 209 MB. :func:`remove_abandoned_builds` clears
them; it costs one listing of the store folder when there is none.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

__all__ = ["BUILD_PREFIX", "GITIGNORE", "remove_abandoned_builds", "write_gitignore"]

BUILD_PREFIX = "git.new-"
"""Names the folders a repository is built in (``.gitignore`` lists them)."""


def remove_abandoned_builds(folder: Path, *, locked: bool = False) -> int:
    """Removes the ``git.new-*`` folders that killed processes left in ``folder``.

    A build runs under the store's lock, and only while ``git/`` does not
    exist (both ``Store.init`` and ``clone`` look for it under the lock
    first). So a caller holding the lock (``locked``) removes every one, and
    any other caller removes them only once ``git/`` is there.

    Returns:
        How many were removed.
    """
    try:
        with os.scandir(folder) as entries:
            found = [e.path for e in entries if e.name.startswith(BUILD_PREFIX)]
    except OSError:
        return 0
    if not found or not (locked or (folder / "git").is_dir()):
        return 0
    for path in found:
        shutil.rmtree(path, ignore_errors=True)
    return len(found)


GITIGNORE = """\
# Written by `ctx init`. The memories are in git/ (a git repository of its
# own) and the settings in config.toml. What follows is derived from them or
# private to this machine, and must never be committed.
cache/
index/
private/
lock
git.new-*/
*.pending
"""
"""The ``.gitignore`` a project store holds: a project that commits its
``.ctx/`` commits only ``git/`` and ``config.toml`` (docs/storage.md)."""


def write_gitignore(folder: Path) -> None:
    """Writes the store folder's ``.gitignore`` unless it has one.

    ``init`` and ``clone`` both do, so that a project which commits its
    ``.ctx/`` never commits the index or the private state.
    """
    ignore = folder / ".gitignore"
    if not ignore.exists():
        with contextlib.suppress(OSError):  # a read-only store: nothing to protect
            ignore.write_text(GITIGNORE, encoding="utf-8")
