"""Packing loose objects, as ``git gc --auto`` does after a command that wrote.

Every single write leaves a few loose objects (a blob, the trees above it,
a commit). Tens of thousands of them slow every read that reaches one:
rebuilding the history cache of 20,000 commits read 160,000 loose files.
:func:`auto_pack` packs them once there are more than
:data:`AUTO_PACK_LOOSE` (the hub starts it in the background; see
:mod:`ctx.hub.upkeep`).

Safe beside writers, readers and crashes:

- No write lock is taken: the new pack is published (written under
  temporary names, then the ``.pack`` renamed into place and its ``.idx``
  after it; readers open only a pack whose index is there) before any
  loose file is deleted, so every object is at every moment loose, in a
  published pack, or both. Objects written meanwhile are not in its list
  and stay loose.
- A packer killed before the index is published leaves temporary files no
  reader opens (``ctx gc`` removes them); one killed while deleting leaves
  objects both packed and loose, which the next run packs again (a
  duplicate, not a loss).
- One packer at a time: ``objects/ctx-pack.lock`` held with ``flock``,
  which the kernel drops when its holder dies, even by SIGKILL.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectID, ShaFile, valid_hexsha
from dulwich.repo import Repo

from ctx.engine._packs import write_pack
from ctx.engine.store import Store

__all__ = [
    "AUTO_PACK_LIMIT",
    "AUTO_PACK_LOOSE",
    "PackReport",
    "auto_pack",
    "loose_objects",
    "merge_packs",
    "pack_loose",
    "packing_now",
]

AUTO_PACK_LOOSE = 6700
"""Loose objects past which ``ctx gc --auto`` packs them (git's ``gc.auto``)."""

AUTO_PACK_LIMIT = 50
"""Packs past which ``ctx gc --auto`` merges them (git's ``gc.autoPackLimit``)."""

PACK_LOCK = "ctx-pack.lock"
"""The packers' lock file, in the ``objects`` folder."""


class PackReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``gc --auto`` did.

    Attributes:
        loose: About how many loose objects there were (:func:`loose_objects`).
        packed: How many it packed (0: too few to pack, or another packer ran).
        merged: How many packs it merged into one (0: few enough packs).
    """

    loose: int
    packed: int
    merged: int = 0


def auto_pack(
    store: Store,
    threshold: int = AUTO_PACK_LOOSE,
    pack_limit: int = AUTO_PACK_LIMIT,
) -> PackReport:
    """Packs the loose objects if there are more than ``threshold``.

    Then, if the store has more than ``pack_limit`` packs, merges them all
    into one (:func:`merge_packs`).
    """
    loose = loose_objects(store)
    packed = pack_loose(store) if loose > threshold else 0
    merged = merge_packs(store) if _pack_count(store) > pack_limit else 0
    return PackReport(loose=loose, packed=packed, merged=merged)


def _pack_count(store: Store) -> int:
    objects = store.repo.object_store
    if not isinstance(objects, DiskObjectStore):
        return 0
    return len(objects.packs)


def merge_packs(store: Store) -> int:
    """Writes every object of every pack into one pack; returns how many packs went.

    As ``git gc --auto`` does past ``gc.autoPackLimit``: a read searches the
    packs one by one, and each packing of loose objects adds one. The new
    pack is published before any old one is removed (its ``.idx`` first,
    so that no reader opens it again); a reader that had an old one open
    keeps reading it, and one that finds it gone rescans the folder. Takes
    the pack lock; a second packer at once does nothing and returns 0.
    """
    objects = store.repo.object_store
    if not isinstance(objects, DiskObjectStore):
        return 0
    with _pack_lock(Path(objects.path)) as held:
        if not held:
            return 0
        old = list(objects.packs)
        if len(old) < 2:
            return 0
        everything: dict[bytes, ShaFile] = {}
        for pack in old:
            for obj in pack.iterobjects():
                everything[obj.id] = obj
        kept = write_pack(
            objects, list(everything.values()), zlib.Z_DEFAULT_COMPRESSION
        )
        gone = 0
        for pack in old:
            base = os.fspath(pack.data.path)[: -len(".pack")]
            if base == kept:
                continue  # the same objects made the same pack again
            for suffix in (".idx", ".pack"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(base + suffix)
            gone += 1
        objects.packs  # noqa: B018  (drops the removed packs from dulwich's list)
        return gone


def loose_objects(store: Store) -> int:
    """Returns about how many loose objects the store holds.

    As ``git gc --auto`` counts them: those of one fan-out folder
    (``objects/17``), times 256. An in-memory store holds none.
    """
    repo = store.repo
    if not isinstance(repo, Repo):
        return 0
    folder = Path(repo.object_store.path) / "17"
    try:
        with os.scandir(folder) as entries:
            found = sum(1 for e in entries if len(e.name) == 38)
    except OSError:
        return 0
    return found * 256


def pack_loose(store: Store) -> int:
    """Packs every loose object into one new pack; returns how many it packed.

    It prunes nothing and takes no write lock (see the module's notes). A
    second packer at once does nothing and returns 0.
    """
    repo = store.repo
    if not isinstance(repo, Repo):
        return 0
    objects = repo.object_store
    assert isinstance(objects, DiskObjectStore)
    with _pack_lock(Path(objects.path)) as held:
        if not held:
            return 0
        loose = []
        for sha in _loose_ids(Path(objects.path)):
            with contextlib.suppress(KeyError):  # gone since: in a pack now
                loose.append(objects[sha])
        if not loose:
            return 0
        # Published as every ctx pack is (_packs.py): data and index under
        # temporary names, then renamed. dulwich's own pack_loose_objects
        # writes the index through an .idx.lock that a packer killed there
        # leaves behind, and every later packer of the same objects fails.
        write_pack(objects, loose, compression_level=zlib.Z_DEFAULT_COMPRESSION)
        for obj in loose:
            with contextlib.suppress(FileNotFoundError):
                objects.delete_loose_object(obj.id)
        return len(loose)


def _loose_ids(objects: Path) -> Iterator[ObjectID]:
    """Yields the ids of the loose objects under ``objects``."""
    with os.scandir(objects) as folders:
        fan_out = [f.name for f in folders if len(f.name) == 2 and f.is_dir()]
    for name in fan_out:
        try:
            with os.scandir(objects / name) as entries:
                found = [e.name for e in entries]
        except FileNotFoundError:
            continue
        for rest in found:
            sha = (name + rest).encode("ascii", "replace")
            if valid_hexsha(sha):
                yield ObjectID(sha)


def packing_now(store: Store) -> bool:
    """Returns whether a packer holds the store's pack lock now."""
    repo = store.repo
    if not isinstance(repo, Repo):
        return False
    with _pack_lock(Path(repo.object_store.path)) as held:
        return not held


@contextmanager
def _pack_lock(objects: Path) -> Iterator[bool]:
    """Takes the pack lock if it is free; yields whether it was taken."""
    try:
        fd = os.open(objects / PACK_LOCK, os.O_WRONLY | os.O_CREAT, 0o644)
    except OSError:
        yield False  # a read-only store: nothing to pack into
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing the file drops the lock
