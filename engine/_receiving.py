"""A pack a server sent: its checksum checked, indexed and read in one pass.

dulwich's ``add_thin_pack`` reads a received pack three times: as it copies
it (inflating every object to find where it ends), to index it (resolving
every delta and hashing every object), and once more in place (making every
object again, to refuse one that does not parse); ctx's checks
(:mod:`ctx.engine._incoming`) then read it a fourth time. Here the pack is
written to its file as it comes, its trailing checksum checked, and one walk
over its delta chains gives both each object's index entry and the object
itself, parsed (an object that does not parse is refused there, as dulwich
refuses it). A thin pack, whose deltas have bases the store holds, is
completed as dulwich completes one (:func:`dulwich.pack.extend_pack`).

The pack lies in a quarantine (:mod:`ctx.engine._fetching`) until the
objects pass the checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import closing

from dulwich.errors import ChecksumMismatch
from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectID, RawObjectID, ShaFile, sha_to_hex
from dulwich.pack import (
    DeltaChainIterator,
    PackData,
    PackIndexEntry,
    UnpackedObject,
    extend_pack,
    write_pack_index,
)

__all__ = ["RECEIVED_NAME", "index_received"]

RECEIVED_NAME = "incoming.pack"
"""The file in the quarantine's pack folder that a received pack is written to."""

Resolve = Callable[[RawObjectID | ObjectID], tuple[int, bytes]]
"""Reads an object of the store (a base of a thin pack's delta)."""


def index_received(
    incoming: DiskObjectStore, resolve: Resolve
) -> dict[ObjectID, ShaFile]:
    """Indexes the pack written to :data:`RECEIVED_NAME` in ``incoming``.

    The pack is named by its checksum, as git names packs, and its index
    written beside it; a thin pack gets the bases it lacks, read through
    ``resolve``, first.

    Returns:
        Every object the pack holds, by id (the bases added to complete a
        thin pack are not among them: the store holds them).

    Raises:
        ChecksumMismatch: the pack's trailing checksum is not its own.
        UnresolvedDeltas: a delta's base is neither in the pack nor held.
        ObjectFormatException: an object does not parse.
    """
    path = os.path.join(incoming.pack_dir, RECEIVED_NAME)
    entries: list[PackIndexEntry] = []
    found: dict[ObjectID, ShaFile] = {}
    with closing(PackData(path, object_format=incoming.object_format)) as data:
        checksum = data.get_stored_checksum()
        if data.calculate_checksum() != checksum:
            raise ChecksumMismatch(checksum, data.calculate_checksum())
        walker = _Received.for_pack_data(data, resolve_ext_ref=resolve)
        for entry, obj in walker:
            entries.append(entry)
            found[obj.id] = obj
        bases = set(walker.ext_refs())
    if bases:
        with open(path, "r+b") as f:
            checksum, added = extend_pack(
                f, bases, get_raw=resolve, object_format=incoming.object_format
            )
        entries.extend(added)
    named = os.path.join(incoming.pack_dir, f"pack-{checksum.hex()}")
    os.rename(path, named + ".pack")
    with open(named + ".idx", "wb") as f:
        write_pack_index(f, sorted(entries), checksum)
    return found


class _Received(DeltaChainIterator[tuple[PackIndexEntry, ShaFile]]):
    """Each object of a pack with its index entry, every delta resolved once."""

    _compute_crc32 = True

    def _result(self, unpacked: UnpackedObject) -> tuple[PackIndexEntry, ShaFile]:
        assert unpacked.obj_type_num is not None
        assert unpacked.obj_chunks is not None
        assert unpacked.offset is not None
        sha = unpacked.sha()
        obj = ShaFile.from_raw_chunks(
            unpacked.obj_type_num,
            unpacked.obj_chunks,
            sha_to_hex(RawObjectID(sha)),
            object_format=self._object_format,
        )
        return (sha, unpacked.offset, unpacked.crc32), obj
