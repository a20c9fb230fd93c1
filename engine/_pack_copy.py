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

A pack every object of which is sent (a whole store pushed or cloned) goes
whole, deltas included, as git reuses a pack: its entries in the order the
file holds them, so that each delta's offset to its base stays right; to
another repository on this machine (:func:`copy_objects`), as the file
itself with its index. Only a pack whose checksums (its own, and its
index's) and every entry's CRC match goes so, one holding no entry its
index does not list and no delta on a base outside it; any other is sent
object by object, as above.

Nothing here hashes an entry against the id its index gives it: the packs
are trusted to hold what they say, as the store's own are. Objects read
from a repository that is not trusted (a fetch from a path) are copied
with ``reuse`` off: no pack goes whole, and an entry goes verbatim only
once inflated and hashed to the id its index gives it, its size as its
header says and nothing after its compressed data
(:func:`_is_object`); any other object is read and written under the id
of what was read. That still saves compressing each object again, most of
what copying one costs.
"""

from __future__ import annotations

import array
import binascii
import bisect
import hashlib
import mmap
import os
import sys
import zlib
from collections.abc import Callable, Iterator, KeysView, Sequence

from dulwich.object_store import BaseObjectStore, DiskObjectStore
from dulwich.objects import ObjectID
from dulwich.pack import UnpackedObject, write_pack_data, write_pack_index

from ctx.engine._objects import MAX_OBJECT_BYTES, entry_header

__all__ = ["copy_objects", "in_runs", "pack_records", "write_records"]

_SHARE = 16
"""A pack's index is read whole for a transfer of at least 1/16 of its objects."""

_WHOLE = frozenset((1, 2, 3, 4))
"""Pack entry types of whole objects (commit, tree, blob, tag): not deltas."""
_TYPE_NAMES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}
_OFS_DELTA = 6
_REF_DELTA = 7
_PACK_HEADER = 12
_HASH_STEP = 1 << 20
_IDX_V2 = b"\377tOc\0\0\0\2"
_FAN_OUT_END = 8 + 256 * 4
_SHA_SIZE = 20
_HEADER_MOST = 10  # bytes of an entry's type and size, for sizes up to 2**67
_HEADER_LONGEST = 6  # the most a whole object's header may take here (36 bits)
_RUN_BYTES = 64 * 1024


def pack_records(
    objects: BaseObjectStore, ids: Sequence[ObjectID]
) -> tuple[int, Iterator[UnpackedObject]]:
    """Returns the records of a pack of objects ``ids``, for dulwich to write.

    Each id once; a pack all of whose objects are sent goes first, whole,
    and an object another pack holds whole keeps its stored bytes (see the
    module's notes). The records are read as they are written: the packs
    are mapped until the last one.

    Raises:
        KeyError: (while iterating) an object is missing.
    """
    unique = list(dict.fromkeys(ids))
    return len(unique), _records(objects, unique)


def copy_objects(
    target: DiskObjectStore,
    objects: BaseObjectStore,
    ids: Sequence[ObjectID],
    *,
    reuse: bool = True,
) -> None:
    """Writes objects ``ids`` of ``objects`` into ``target``'s pack folder.

    A pack of ``objects`` all of whose objects are among ``ids`` is copied
    as it is, with its index; the others become one new pack
    (:func:`write_records`). ``target`` is a quarantine no reader opens.

    Args:
        target: Where the objects go.
        objects: Where they are read.
        ids: The objects.
        reuse: Whether ``objects``' packs may be copied and their entries
            reused as they are. Nothing hashes them: an index may name an
            entry that is not the object it says (a repository not trusted
            to hold what it claims). False: every object is read and
            written under the id of what was read.

    Raises:
        KeyError: an object is missing.
    """
    unique = list(dict.fromkeys(ids))
    if not reuse:
        write_records(target, len(unique), _checked_records(objects, unique))
        return
    if not isinstance(objects, DiskObjectStore):
        write_records(target, len(unique), _records(objects, unique))
        return
    stored = _StoredEntries(objects, unique)
    try:
        os.makedirs(target.pack_dir, exist_ok=True)
        for pack in stored.whole:
            pack.copy_to(os.fspath(target.pack_dir))
        rest = stored.not_whole(unique)
        write_records(target, len(rest), _single_records(objects, rest, stored))
    finally:
        stored.close()


def _records(
    objects: BaseObjectStore, ids: Sequence[ObjectID]
) -> Iterator[UnpackedObject]:
    if not isinstance(objects, DiskObjectStore):
        yield from _single_records(objects, ids, None)
        return
    stored = _StoredEntries(objects, ids)
    try:
        for pack in stored.whole:
            yield from pack.runs()
        yield from _single_records(objects, stored.not_whole(ids), stored)
    finally:
        stored.close()


def _single_records(
    objects: BaseObjectStore,
    ids: Sequence[ObjectID],
    stored: _StoredEntries | None,
) -> Iterator[UnpackedObject]:
    for sha in ids:
        entry = stored.entry(sha) if stored is not None else None
        if entry is None:
            type_num, data = objects.get_raw(sha)
            # No id given: the record hashes what was read, so a
            # damaged object is not written under the id it lacks.
            yield UnpackedObject(type_num, decomp_chunks=[data])
        else:
            yield _stored_record(binascii.unhexlify(sha), entry)


def _checked_records(
    objects: BaseObjectStore, ids: Sequence[ObjectID]
) -> Iterator[UnpackedObject]:
    """Returns the records of objects ``ids`` of a repository not trusted.

    An entry its pack holds whole goes verbatim when :func:`_is_object`
    says it is that object; any other object is read and hashed as read.
    """
    if not isinstance(objects, DiskObjectStore):
        yield from _single_records(objects, ids, None)
        return
    stored = _StoredEntries(objects, ids, whole=False)
    try:
        for sha in ids:
            entry = stored.bounded_entry(sha)
            if entry is not None and _is_object(sha, entry):
                yield _stored_record(binascii.unhexlify(sha), entry)
            else:
                yield from _single_records(objects, [sha], None)
    finally:
        stored.close()


def _is_object(sha: ObjectID, entry: bytes) -> bool:
    """Returns whether pack entry ``entry`` is exactly the whole object ``sha``.

    Its header's type is a whole object's and its size at most
    :data:`~ctx.engine._objects.MAX_OBJECT_BYTES`; its data inflates to
    that size with nothing left over, and hashes to ``sha``.
    """
    header = _header(entry)
    if header is None:
        return False
    name, size, at = header
    inflate = zlib.decompressobj()
    try:
        data = inflate.decompress(entry[at:], size + 1)
    except zlib.error:
        return False
    if len(data) != size or not inflate.eof or inflate.unused_data:
        return False
    digest = hashlib.sha1(b"%s %d\0" % (name, size))
    digest.update(data)
    return digest.hexdigest().encode() == sha


def _header(entry: bytes) -> tuple[bytes, int, int] | None:
    """Returns a whole object's type name, size and header length, from ``entry``.

    None for a delta, an unknown type, a size past
    :data:`~ctx.engine._objects.MAX_OBJECT_BYTES` or a header cut short.
    """
    try:
        kind, size, at = entry_header(entry, 0, len(entry))
    except ValueError:
        return None
    name = _TYPE_NAMES.get(kind)
    if name is None or size > MAX_OBJECT_BYTES or at > _HEADER_LONGEST:
        return None
    return name, size, at


def _deflated_most(size: int) -> int:
    """Returns the most bytes zlib's data of ``size`` bytes can take.

    More than zlib's ``deflateBound``, and than data stored in blocks of
    16 KiB (five bytes a block) takes.
    """
    return size + (size >> 10) + 64


def _stored_record(raw: bytes, entry: bytes) -> UnpackedObject:
    """Returns the record of stored entry ``entry`` of object ``raw``, verbatim."""
    record = UnpackedObject(entry[0] >> 4 & 7, sha=raw)
    record.comp_chunks = [entry]  # header and data: written verbatim
    return record


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

    def __init__(
        self, objects: DiskObjectStore, ids: Sequence[ObjectID], *, whole: bool = True
    ) -> None:
        self._packs: list[_PackEntries] = []
        self.whole: list[_PackEntries] = []
        """The packs sent whole: every object they hold is sent (none
        unless ``whole``)."""
        left = {binascii.unhexlify(sha) for sha in ids}
        for pack in objects.packs:
            found = _PackEntries.open(os.fspath(pack.data.path), len(ids))
            if found is None:
                continue
            self._packs.append(found)
            sent = whole and left.issuperset(found.names())
            if sent and found.can_go_whole():
                self.whole.append(found)
                left.difference_update(found.names())
        self._left = left

    def not_whole(self, ids: Sequence[ObjectID]) -> list[ObjectID]:
        """Returns those of ``ids`` that no pack sent whole holds."""
        if not self.whole:
            return list(ids)
        left = self._left
        return [sha for sha in ids if binascii.unhexlify(sha) in left]

    def entry(self, sha: ObjectID) -> bytes | None:
        """Returns the stored entry of whole object ``sha``, or None."""
        return self._first(sha, _PackEntries.entry)

    def bounded_entry(self, sha: ObjectID) -> bytes | None:
        """Returns the entry of whole object ``sha`` in a pack not trusted, or None.

        Its header is read first, and the entry is taken only if no longer
        than its size compressed can be: an index may say an entry runs to
        the end of a pack of any size.
        """
        return self._first(sha, _PackEntries.bounded_entry)

    def _first(
        self, sha: ObjectID, read: Callable[[_PackEntries, bytes], bytes | None]
    ) -> bytes | None:
        """Returns the first entry ``read`` finds of ``sha`` in the packs."""
        raw = binascii.unhexlify(sha)
        for pack in self._packs:
            found = read(pack, raw)
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
        idx: bytes,
        rows: dict[bytes, int],
        crcs: array.array[int],
        starts: array.array[int],
    ) -> None:
        self._data = data
        self._idx = idx
        self._rows = rows
        self._crcs = crcs
        self._starts = starts
        # An entry ends where the next one in the file starts; the last one
        # where the pack's trailing checksum does.
        self._bounds = sorted(starts)
        self._order: list[int] | None = None
        """The rows in the file's order, once checked to go whole."""
        self._bounds.append(len(data) - _SHA_SIZE)

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
        if max(starts, default=0) & 0x80000000:
            data.close()  # past 2 GiB: offsets in another table
            return None
        names = [
            idx[at : at + _SHA_SIZE] for at in range(_FAN_OUT_END, names_end, _SHA_SIZE)
        ]
        rows = dict(zip(names, range(count), strict=True))
        return cls(data, idx, rows, crcs, starts)

    def names(self) -> KeysView[bytes]:
        """Returns the (binary) ids of every object the pack holds."""
        return self._rows.keys()

    def can_go_whole(self) -> bool:
        """Returns whether the pack can be sent as it is (see the module's notes).

        Its checksum and its index's match their contents, its index's
        names its checksum, the index lists every entry (the pack's count,
        and entries that follow each other from the header to the checksum),
        every entry matches its CRC, and every delta on an id has its base
        in the pack.
        """
        data, idx, count = self._data, self._idx, len(self._starts)
        size = len(data)
        if size < _PACK_HEADER + _SHA_SIZE or data[:4] != b"PACK":
            return False
        if int.from_bytes(data[8:12], "big") != count or len(self._rows) != count:
            return False
        if count and (
            self._bounds[0] != _PACK_HEADER or len(set(self._starts)) != count
        ):
            return False
        trailer = data[size - _SHA_SIZE :]
        if idx[-2 * _SHA_SIZE : -_SHA_SIZE] != trailer:
            return False
        if hashlib.sha1(idx[:-_SHA_SIZE]).digest() != idx[-_SHA_SIZE:]:
            return False
        digest = hashlib.sha1()
        for at in range(0, size - _SHA_SIZE, _HASH_STEP):
            digest.update(data[at : min(at + _HASH_STEP, size - _SHA_SIZE)])
        if digest.digest() != trailer:
            return False
        # Each entry checked where it lies in the file (no copy of it made):
        # a transfer of 20,000 objects made and checked 20,000 slices.
        starts = self._starts
        order = sorted(range(count), key=starts.__getitem__)
        view = memoryview(data)
        try:
            for row, end in zip(order, [*self._bounds[1:]], strict=True):
                if not self._sendable(row, view[starts[row] : end]):
                    return False
        finally:
            view.release()
        self._order = order
        return True

    def _sendable(self, row: int, entry: memoryview) -> bool:
        """Returns whether ``entry`` (of ``row``) matches its CRC, its base here."""
        if not entry or binascii.crc32(entry) != self._crcs[row]:
            return False
        kind = entry[0] >> 4 & 7
        if kind == _REF_DELTA:
            at = 1
            while at < len(entry) and entry[at - 1] & 0x80:
                at += 1
            return bytes(entry[at : at + _SHA_SIZE]) in self._rows
        return kind in _WHOLE or kind == _OFS_DELTA

    def _entry_at(self, row: int) -> bytes | None:
        span = self._span(row)
        return None if span is None else self._data[span[0] : span[1]]

    def _span(self, row: int) -> tuple[int, int] | None:
        """Returns where entry ``row`` starts and ends, None if it is empty."""
        start = self._starts[row]
        after = bisect.bisect_right(self._bounds, start)
        if after >= len(self._bounds):
            return None  # past the pack's end: an index not to be believed
        end = self._bounds[after]
        return (start, end) if end > start else None

    def runs(self) -> Iterator[UnpackedObject]:
        """Returns a record of every entry, in the file's order, for sending.

        As :func:`in_runs` sends stored entries: the bytes of a run of
        about :data:`_RUN_BYTES` ride on its last record, here one slice of
        the file, the records before it carrying none. Only for a pack
        :meth:`can_go_whole` said can.
        """
        assert self._order is not None
        names = list(self._rows)  # in the index's order, as the rows count
        data, starts, order = self._data, self._starts, self._order
        ends = self._bounds[1:]
        run = _PACK_HEADER
        last = len(order) - 1
        for n, row in enumerate(order):
            end = ends[n]
            chunks: list[bytes] = []
            if end - run >= _RUN_BYTES or n == last:
                chunks, run = [data[run:end]], end
            record = UnpackedObject(data[starts[row]] >> 4 & 7, sha=names[row])
            record.comp_chunks = chunks  # header and data: sent verbatim
            yield record

    def copy_to(self, pack_dir: str) -> None:
        """Writes the pack and its index, as they are, into ``pack_dir``."""
        named = os.path.join(pack_dir, f"pack-{self._data[-_SHA_SIZE:].hex()}")
        with open(named + ".pack", "wb") as f:
            f.write(self._data)
        with open(named + ".idx", "wb") as f:
            f.write(self._idx)

    def bounded_entry(self, raw: bytes) -> bytes | None:
        """Returns the entry of whole object ``raw`` if its size allows it, or None.

        See :meth:`_StoredEntries.bounded_entry`.
        """
        row = self._rows.get(raw)
        span = None if row is None else self._span(row)
        if span is None:
            return None
        start, end = span
        header = _header(self._data[start : start + _HEADER_MOST])
        if header is None or end - start > header[2] + _deflated_most(header[1]):
            return None
        return self._data[start:end]

    def entry(self, raw: bytes) -> bytes | None:
        """Returns the entry of whole object ``raw`` (a binary id), or None."""
        row = self._rows.get(raw)
        if row is None:
            return None
        entry = self._entry_at(row)
        if entry is None or (entry[0] >> 4) & 7 not in _WHOLE:
            return None
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
