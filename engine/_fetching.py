"""Bringing a remote's objects in, each one checked before the store keeps it.

Two ways, by where the remote is:

- on this machine (a path, ``file://``): the new objects are read from the
  other repository and checked there (:mod:`ctx.engine._incoming`), and only
  then copied here as the other's packs hold them
  (:mod:`ctx.engine._pack_copy`): a pack all of whose objects come as its
  file, the others as one pack indexed as it is written;
- anywhere else (``git://``, ssh, http): the pack the server sends goes into
  a quarantine, an object folder of its own inside ``objects/`` that can
  read the store's objects (for the bases of a thin pack); it is indexed
  and read there in one pass (:mod:`ctx.engine._receiving`), checked, and
  moved into the store's packs only if nothing is wrong, as git's
  ``receive-pack`` does. A store in memory holds the pack in memory, read
  by the same pass with the same bounds, and adds its objects only once
  they are checked.

Either way a fetch these checks refuse leaves no object behind: ``git
fsck`` and ``ctx fsck`` stay clean, and no later fetch mistakes a refused
object for one it holds. (A remote refused as not a ctx store is refused
after: its objects, which passed the checks, stay until ``ctx gc``.) A
fetch killed midway leaves at most a quarantine folder, which
:func:`remove_abandoned_quarantines` clears.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import struct
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import closing
from pathlib import Path

from dulwich.client import GitClient
from dulwich.errors import ChecksumMismatch, ObjectFormatException, PackedRefsException
from dulwich.object_store import BaseObjectStore, DiskObjectStore
from dulwich.objects import ObjectID, ShaFile
from dulwich.pack import UnresolvedDeltas
from dulwich.refs import SYMREF, Ref

from ctx.engine import _receiving
from ctx.engine._incoming import Checked, Held, RefusedError, check_incoming
from ctx.engine._objects import ObjectTooLargeError, open_repository
from ctx.engine._pack_copy import copy_objects
from ctx.engine._packs import move_packs
from ctx.engine._receiving import (
    RECEIVED_NAME,
    Received,
    index_received,
    read_received,
)
from ctx.engine.store import Store

__all__ = [
    "QUARANTINE_PREFIX",
    "Fetched",
    "UnreadableRefsError",
    "fetch_local",
    "fetch_remote",
    "receive_objects",
    "remove_abandoned_quarantines",
]

QUARANTINE_PREFIX = "ctx-incoming-"
"""Names the quarantine folders in ``objects/``."""

Moving = Callable[[Mapping[Ref, ObjectID]], dict[str, ObjectID]]
"""Picks, from the remote's refs, the branches a fetch moves, with their tips."""

Fetched = tuple[dict[Ref, ObjectID], dict[Ref, Ref], Checked]
"""The remote's refs and symbolic refs, and what the check walked."""

_HEAD = Ref(b"HEAD")
_ABANDONED_S = 3600.0
"""A quarantine folder this old is left by a killed fetch."""


class UnreadableRefsError(Exception):
    """The other repository's refs cannot be read (its ``packed-refs``)."""


def fetch_local(
    store: Store,
    path: str,
    moving: Moving,
    redacted: Mapping[ObjectID, str] | None = None,
) -> Fetched:
    """Fetches from the repository at ``path`` on this machine.

    ``redacted``: what a redaction removed, refused (:func:`check_incoming`).

    Raises:
        RefusedError: what the branches reach is not what a store may hold
            (an object over :data:`~ctx.engine._objects.MAX_OBJECT_BYTES`
            among it).
        UnreadableRefsError: the repository's refs cannot be read.
    """
    with closing(open_repository(Path(path), untrusted=True)) as source:
        try:
            refs = source.get_refs()
            # Only HEAD's target is wanted; get_symrefs reads every ref again.
            head = source.refs.read_ref(_HEAD)
        except PackedRefsException as exc:
            raise UnreadableRefsError(str(exc)) from None
        target = store.repo.object_store
        try:
            checked = check_incoming(
                source.object_store,
                moving(refs),
                _held(target),
                collect=True,
                redacted=redacted,
            )
            ids = checked.ids
            if ids and isinstance(target, DiskObjectStore):
                # Each object as read and hashed, never its stored entry: the
                # other repository's packs may hold, under an object's id, an
                # entry that is not that object (the checks read another copy).
                receive_objects(target, source.object_store, ids, reuse=False)
            elif ids:
                target.add_objects([(source.object_store[sha], None) for sha in ids])
        except ObjectTooLargeError as exc:
            raise RefusedError(str(exc)) from None
    symrefs = (
        {_HEAD: Ref(head[len(SYMREF) :])} if head and head.startswith(SYMREF) else {}
    )
    return dict(refs), symrefs, checked


def fetch_remote(
    store: Store,
    client: GitClient,
    path: str,
    moving: Moving,
    redacted: Mapping[ObjectID, str] | None = None,
) -> Fetched:
    """Fetches from a git server through ``client``, through a quarantine.

    ``redacted``: what a redaction removed, refused (:func:`check_incoming`).

    Raises:
        RefusedError: what the branches reach is not what a store may hold.
    """
    objects = store.repo.object_store
    tips: dict[str, ObjectID] = {}

    def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
        tips.update(moving(refs))
        return sorted({sha for sha in tips.values() if sha not in objects})

    if not isinstance(objects, DiskObjectStore):  # a store in memory: the pack too
        pack = io.BytesIO()
        result = client.fetch_pack(
            path.encode(), wants, store.repo.get_graph_walker(), _Bounded(pack.write)
        )
        found: Received = {}
        if pack.tell():
            data = pack.getvalue()
            found = _read(lambda: read_received(data, objects.get_raw))
        checked = _checked(found, objects, tips, redacted)
        for sha, (kind, raw) in found.items():
            objects.add_object(ShaFile.from_raw_string(kind, raw, sha))
        return _refs(result.refs), dict(result.symrefs or {}), checked
    with _quarantine(objects) as incoming:
        os.makedirs(incoming.pack_dir, exist_ok=True)
        received = os.path.join(incoming.pack_dir, RECEIVED_NAME)
        with open(received, "wb") as f:
            result = client.fetch_pack(
                path.encode(), wants, store.repo.get_graph_walker(), _Bounded(f.write)
            )
        found = {}
        if os.path.getsize(received):
            found = _read(lambda: index_received(incoming, objects.get_raw))
        checked = _checked(found, objects, tips, redacted)
        move_packs(incoming, objects)
    return _refs(result.refs), dict(result.symrefs or {}), checked


class _Bounded:
    """Writes a server's pack through ``write``; refuses one past what a fetch takes.

    The pack is read whole after (:mod:`ctx.engine._receiving`), so its size
    is bounded as what its objects make is: by ``MAX_RECEIVED_BYTES``.
    """

    def __init__(self, write: Callable[[bytes], object]) -> None:
        self._write = write
        self._size = 0

    def __call__(self, data: bytes) -> int:
        self._size += len(data)
        if self._size > _receiving.MAX_RECEIVED_BYTES:
            limit = _receiving.fetch_limit()
            raise RefusedError(f"the pack it sent is larger than {limit}")
        self._write(data)
        return len(data)


def _read(received: Callable[[], Received]) -> Received:
    """Returns what a received pack holds, as ``received`` reads it.

    Raises:
        RefusedError: the pack is damaged (its checksum is not its own, it
            ends early, a delta has no base, an object does not parse).
    """
    try:
        return received()
    except ChecksumMismatch:
        raise RefusedError("the pack it sent does not match its checksum") from None
    except UnresolvedDeltas:
        raise RefusedError("the pack it sent holds deltas without a base") from None
    except (ObjectFormatException, ValueError, zlib.error, struct.error) as exc:
        raise RefusedError(f"the pack it sent cannot be read ({exc})") from None


def receive_objects(
    target: DiskObjectStore,
    objects: BaseObjectStore,
    ids: Sequence[ObjectID],
    *,
    reuse: bool = True,
) -> None:
    """Copies objects ``ids`` of ``objects`` into ``target``, through a quarantine.

    They are written there (:func:`~ctx.engine._pack_copy.copy_objects`: with
    ``reuse``, as ``objects``' packs hold them, for a repository whose packs
    are trusted, the store's own; else each object hashed as read), and the
    packs moved into the store's only once whole; an error on the way (a
    missing object) leaves nothing behind.
    """
    if not ids:
        return
    with _quarantine(target) as incoming:
        copy_objects(incoming, objects, ids, reuse=reuse)
        move_packs(incoming, target)


def _checked(
    found: Received,
    objects: BaseObjectStore,
    tips: Mapping[str, ObjectID],
    redacted: Mapping[ObjectID, str] | None,
) -> Checked:
    """Checks what a server sent over the store's objects, before any is kept.

    What the moved branches reach (:func:`check_incoming`), then every other
    object of the pack parsed (:func:`_parse_unchecked`).
    """
    checked = check_incoming(
        _Over(found, objects), tips, _held(objects), redacted=redacted
    )
    _parse_unchecked(found, checked.seen)
    return checked


def _parse_unchecked(found: Received, seen: AbstractSet[ObjectID]) -> None:
    """Refuses an object of the pack that the checks did not read, if it does not parse.

    Such an object no branch reaches, or the store held it already; dulwich
    refuses a pack with an object that does not parse, and so does a fetch.

    Raises:
        RefusedError: such an object does not parse.
    """
    for sha, (type_num, data) in found.items():
        if sha in seen:
            continue
        try:
            ShaFile.from_raw_string(type_num, data, sha)
        except (ObjectFormatException, ValueError) as exc:
            raise RefusedError(f"the pack it sent cannot be read ({exc})") from None


class _Over:
    """The objects a server sent (:mod:`ctx.engine._receiving`), over the store's."""

    def __init__(self, new: Received, objects: BaseObjectStore) -> None:
        self._new = new
        self._old = objects

    def __getitem__(self, sha: ObjectID, /) -> ShaFile:
        found = self._new.get(sha)
        if found is None:
            return self._old[sha]
        return ShaFile.from_raw_string(found[0], found[1], sha)

    def get_raw(self, sha: ObjectID, /) -> tuple[int, bytes]:
        """Returns the type number and content of object ``sha``."""
        found = self._new.get(sha)
        return self._old.get_raw(sha) if found is None else found


def _held(objects: BaseObjectStore) -> Held:
    """Returns what ``objects`` holds now, for many questions in a row.

    A miss in a ``DiskObjectStore`` lists its pack folder again (for packs
    written meanwhile) and looks for a loose file; a clone asks once per new
    object, every one a miss: 3 s of a clone of 10,000 memories. The packs
    are listed once here.
    """
    if isinstance(objects, DiskObjectStore):
        return _Held(objects)
    return objects


class _Held:
    def __init__(self, objects: DiskObjectStore) -> None:
        self._packs = objects.packs
        self._loose = objects.contains_loose
        # A loose object lies in the folder named by its id's first two
        # digits: where there is none (a new store has none at all), no
        # file is looked for. A folder made meanwhile only costs a check.
        self._folders: set[bytes] | None = None
        try:
            with os.scandir(objects.path) as entries:
                self._folders = {e.name.encode() for e in entries if len(e.name) == 2}
        except OSError:
            pass  # every id is looked for

    def __contains__(self, sha: ObjectID, /) -> bool:
        if any(sha in pack for pack in self._packs):
            return True
        if self._folders is not None and sha[:2] not in self._folders:
            return False
        return self._loose(sha)


def _refs(refs: Mapping[Ref, ObjectID | None] | None) -> dict[Ref, ObjectID]:
    return {ref: sha for ref, sha in (refs or {}).items() if sha is not None}


@contextlib.contextmanager
def _quarantine(objects: DiskObjectStore) -> Iterator[DiskObjectStore]:
    folder = tempfile.mkdtemp(prefix=QUARANTINE_PREFIX, dir=objects.path)
    try:
        DiskObjectStore.init(folder).close()
        incoming = DiskObjectStore(folder, alternates=[objects.path])
        try:
            yield incoming
        finally:
            incoming.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def remove_abandoned_quarantines(objects_dir: Path, now: float) -> int:
    """Removes the quarantine folders of fetches killed over an hour ago.

    Returns:
        How many were removed.
    """
    removed = 0
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(objects_dir):
            if not entry.name.startswith(QUARANTINE_PREFIX):
                continue
            with contextlib.suppress(FileNotFoundError):
                if now - entry.stat().st_mtime > _ABANDONED_S:
                    shutil.rmtree(entry.path, ignore_errors=True)
                    removed += 1
    return removed
