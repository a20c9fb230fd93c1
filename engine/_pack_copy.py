"""Objects sent as their packs hold them, neither inflated nor deflated again.

A transfer of a whole store sends tens of thousands of objects that already
lie compressed in the store's packs. Reading each one (inflate, parse, hash)
and writing it again (serialise, deflate) cost most of a push of 10,000
memories (benchmarks/bench_remotes.py), where git sends its stored bytes as
they are. So does this: an object its pack holds whole goes out as the bytes
of its pack entry, header and compressed data, checked against the CRC32 its
pack index records (git's own check before it reuses pack data). Anything
else is read through the object store and compressed again: a loose object,
a delta (its base may not be sent), an entry whose CRC does not match, a
pack whose index is not version 2 or that is past 2 GiB.

Finding where an entry ends needs every offset of its pack: its index is
read whole (three arrays, no object touched) and sorted, about a microsecond
an object, where reading and compressing one object costs tens. So a pack
is used so only when the objects sent are at least a sixteenth of what it
holds: a push of ten memories into a store of a million reads its few
objects one by one, as before.

A pack written from these records for another repository on this machine
(:func:`write_records`) is indexed from what the writing already knows (each
object's id, offset and CRC), so the receiving end does not inflate and hash
every object again either.
"""

from __future__ import annotations

import array
import binascii
import itertools
import mmap
import os
import sys
from collections.abc import Iterator, Sequence

from dulwich.object_store import BaseObjectStore, DiskObjectStore
from dulwich.objects import ObjectID
from dulwich.pack import UnpackedObject, write_pack_data, write_pack_index

__all__ = ["in_runs", "pack_records", "write_records"]

_SHARE = 16
"""A pack's index is read whole for a transfer of at least 1/16 of its objects."""

_WHOLE = frozenset((1, 2, 3, 4))
"""Pack entry types of whole objects (commit, tree, blob, tag): not deltas."""
_IDX_V2 = b"\377tOc\0\0\0\2"
_FAN_OUT_END = 8 + 256 * 4
_SHA_SIZE = 20
_RUN_BYTES = 64 * 1024


def pack_records(
    objects: BaseObjectStore, ids: Sequence[ObjectID]
) -> tuple[int, Iterator[UnpackedObject]]:
    """Returns the records of a pack of objects ``ids``, for dulwich to write.

    Each id once; an object a pack holds whole keeps its stored bytes (see
    the module's notes). The records are read as they are written: the
    packs are mapped until the last one.

    Raises:
        KeyError: (while iterating) an object is missing.
    """
    unique = list(dict.fromkeys(ids))
    return len(unique), _records(objects, unique)


def _records(
    objects: BaseObjectStore, ids: Sequence[ObjectID]
) -> Iterator[UnpackedObject]:
    stored = None
    if isinstance(objects, DiskObjectStore):
        stored = _StoredEntries(objects, len(ids))
    try:
        for sha in ids:
            entry = stored.entry(sha) if stored is not None else None
            if entry is None:
                type_num, data = objects.get_raw(sha)
                # No id given: the record hashes what was read, so a
                # damaged object is not written under the id it lacks.
                yield UnpackedObject(type_num, decomp_chunks=[data])
            else:
                record = UnpackedObject(entry[0] >> 4 & 7, sha=binascii.unhexlify(sha))
                record.comp_chunks = [entry]  # header and data: written verbatim
                yield record
    finally:
        if stored is not None:
            stored.close()


def in_runs(
    count: int, records: Iterator[UnpackedObject]
) -> tuple[int, Iterator[UnpackedObject]]:
    """Returns the same pack, its stored entries sent in runs of about 64 KiB.

    dulwich writes each record to the connection as it comes, and its
    ``git://`` connection is unbuffered, with Nagle's delay off: a packet,
    and a system call, for each object (2 s of a push of 10,000 memories).
    Here the bytes of a run of stored entries ride on the run's last
    record, the records before it carrying none. The stream is the same
    bytes; only the offsets dulwich notes for each record, which a sending
    client never reads, are not where the objects lie. So this is for
    sending only, never for :func:`write_records`.
    """
    return count, _runs(records)


def _runs(records: Iterator[UnpackedObject]) -> Iterator[UnpackedObject]:
    held: list[UnpackedObject] = []
    size = 0
    for record in records:
        if record.comp_chunks is None:  # compressed by dulwich, as it comes
            yield from _run(held)
            held, size = [], 0
            yield record
            continue
        held.append(record)
        size += sum(map(len, record.comp_chunks))
        if size >= _RUN_BYTES:
            yield from _run(held)
            held, size = [], 0
    yield from _run(held)


def _run(held: list[UnpackedObject]) -> Iterator[UnpackedObject]:
    if not held:
        return
    chunks = [chunk for record in held for chunk in record.comp_chunks or ()]
    for record in held[:-1]:
        record.comp_chunks = []
        yield record
    held[-1].comp_chunks = [b"".join(chunks)]
    yield held[-1]


class _StoredEntries:
    """The entries of a store's packs, found through their whole indexes."""

    def __init__(self, objects: DiskObjectStore, wanted: int) -> None:
        self._packs: list[_PackEntries] = []
        for pack in objects.packs:
            found = _PackEntries.open(os.fspath(pack.data.path), wanted)
            if found is not None:
                self._packs.append(found)

    def entry(self, sha: ObjectID) -> bytes | None:
        """Returns the stored entry of whole object ``sha``, or None."""
        raw = binascii.unhexlify(sha)
        for pack in self._packs:
            found = pack.entry(raw)
            if found is not None:
                return found
        return None

    def close(self) -> None:
        for pack in self._packs:
            pack.close()


class _PackEntries:
    """One pack: where each object's entry starts and ends, and its CRC."""

    def __init__(
        self,
        data: mmap.mmap,
        rows: dict[bytes, int],
        crcs: array.array[int],
        starts: array.array[int],
        ends: array.array[int],
    ) -> None:
        self._data = data
        self._rows = rows
        self._crcs = crcs
        self._starts = starts
        self._ends = ends

    @classmethod
    def open(cls, pack_path: str, wanted: int) -> _PackEntries | None:
        """Reads the index of ``pack_path`` and maps the pack.

        None if the pack cannot be used so, or holds over :data:`_SHARE`
        times ``wanted`` objects.
        """
        try:
            with open(pack_path[: -len(".pack")] + ".idx", "rb") as f:
                head = f.read(_FAN_OUT_END)
                count = int.from_bytes(head[-4:], "big")
                if head[:8] != _IDX_V2 or len(head) < _FAN_OUT_END:
                    return None
                if count > _SHARE * wanted:
                    return None
                idx = head + f.read()
            with open(pack_path, "rb") as f:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None  # gone, or empty: read through the object store
        names_end = _FAN_OUT_END + _SHA_SIZE * count
        crcs = array.array("I", idx[names_end : names_end + 4 * count])
        starts = array.array("I", idx[names_end + 4 * count : names_end + 8 * count])
        if len(starts) != count or len(crcs) != count:
            data.close()
            return None
        if sys.byteorder == "little":
            crcs.byteswap()
            starts.byteswap()
        if any(start & 0x80000000 for start in starts):
            data.close()  # past 2 GiB: offsets in another table
            return None
        rows = {
            idx[_FAN_OUT_END + _SHA_SIZE * i : _FAN_OUT_END + _SHA_SIZE * (i + 1)]: i
            for i in range(count)
        }
        # An entry ends where the next one in the file starts; the last one
        # where the pack's trailing checksum does.
        order = sorted(range(count), key=starts.__getitem__)
        ends = array.array("I", bytes(4 * count))
        for here, after in itertools.pairwise(order):
            ends[here] = starts[after]
        if order:
            ends[order[-1]] = len(data) - _SHA_SIZE
        return cls(data, rows, crcs, starts, ends)

    def entry(self, raw: bytes) -> bytes | None:
        """Returns the entry of whole object ``raw`` (a binary id), or None."""
        row = self._rows.get(raw)
        if row is None:
            return None
        start, end = self._starts[row], self._ends[row]
        if end <= start or (self._data[start] >> 4) & 7 not in _WHOLE:
            return None
        entry = self._data[start:end]
        if binascii.crc32(entry) != self._crcs[row]:
            return None  # damaged: the object store's read says how
        return entry

    def close(self) -> None:
        self._data.close()


def write_records(
    incoming: DiskObjectStore, count: int, records: Iterator[UnpackedObject]
) -> None:
    """Writes ``count`` records as a new pack of ``incoming``, with its index.

    The index comes from what writing the pack told (each record's id,
    offset and CRC). ``incoming`` is a quarantine no reader opens: the pack
    is published from there (:func:`ctx.engine._packs.move_packs`).
    """
    if not count:
        return
    os.makedirs(incoming.pack_dir, exist_ok=True)
    written = os.path.join(incoming.pack_dir, "incoming.pack")
    with open(written, "wb") as f:
        entries, checksum = write_pack_data(
            f.write, records, num_records=count, object_format=incoming.object_format
        )
    named = os.path.join(incoming.pack_dir, f"pack-{checksum.hex()}")
    os.rename(written, named + ".pack")
    with open(named + ".idx", "wb") as f:
        write_pack_index(
            f, sorted((sha, at, crc) for sha, (at, crc) in entries.items()), checksum
        )
