"""A pack a server sent: its checksum checked, indexed and read in one pass.

dulwich's ``add_thin_pack`` reads a received pack three times: as it copies
it (inflating every object to find where it ends), to index it (resolving
every delta and hashing every object), and once more in place (making every
object again, to refuse one that does not parse); ctx's checks
(:mod:`ctx.engine._incoming`) then read it a fourth time. dulwich's own
walk over delta chains still inflates every object twice. Here the pack is
written to its file as it comes, its trailing checksum checked, and one
walk from its header to its end inflates each object once: a whole object
is hashed there, a delta kept until its base is known (in the pack, by
offset or id, or, in a thin pack, held by the store), then applied and
hashed. That gives both each object's index entry and its type and bytes,
which the checks then read, and parse. A thin pack is completed as dulwich
completes one (:func:`dulwich.pack.extend_pack`).

The pack lies in a quarantine (:mod:`ctx.engine._fetching`) until the
objects pass the checks.
"""

from __future__ import annotations

import binascii
import hashlib
import os
import zlib
from collections.abc import Callable

from dulwich.errors import ApplyDeltaError, ChecksumMismatch
from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectID, RawObjectID
from dulwich.pack import (
    PackIndexEntry,
    UnresolvedDeltas,
    apply_delta,
    extend_pack,
    write_pack_index,
)

from ctx.engine._objects import (
    MAX_OBJECT_BYTES,
    OFS_DELTA,
    REF_DELTA,
    delta_header_size,
    entry_header,
)

__all__ = [
    "MAX_RECEIVED_BYTES",
    "RECEIVED_NAME",
    "Received",
    "fetch_limit",
    "index_received",
    "read_received",
]

RECEIVED_NAME = "incoming.pack"
"""The file in the quarantine's pack folder that a received pack is written to."""

Resolve = Callable[[RawObjectID | ObjectID], tuple[int, bytes]]
"""Reads an object of the store (a base of a thin pack's delta)."""

Received = dict[ObjectID, tuple[int, bytes]]
"""Every object of a pack, by id: its type number and its content."""

_TYPE_NAMES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}
_SHA_SIZE = 20
_HEADER = 12
_MORE = 64 * 1024
"""What is fed to zlib again when an object's stream did not end yet."""

MAX_RECEIVED_BYTES = 2 << 30
"""The most the objects of one received pack may make, together: each is
held in memory until the checks have read it. Deltas of 45 bytes each can
make a different object of 60 MiB, under :data:`MAX_OBJECT_BYTES` every one."""

ENTRY_COST = 512
"""What each object of a pack costs besides its bytes while the pack is read
(its id, offset, checksum and index entry, in dictionaries and lists: about
350 bytes measured), counted against :data:`MAX_RECEIVED_BYTES`: a pack of
a million empty blobs is 9 MB and held 350 MB."""


def fetch_limit() -> str:
    """Says the bound a received pack is held to: "the 2,048 MiB a fetch takes"."""
    return f"the {MAX_RECEIVED_BYTES // (1 << 20):,} MiB a fetch takes"


_MAX_RATIO = 1032
"""The most zlib's deflate inflates one byte into."""

_Delta = tuple[int, int | bytes, bytes]
"""A delta: its offset, its base (an offset or a binary id), itself."""


def index_received(incoming: DiskObjectStore, resolve: Resolve) -> Received:
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
        ValueError: the pack is not one, ends early, or goes on past its
            objects; an object's size is not what its header says; a delta
            does not apply.
        zlib.error: an object's data does not inflate.
    """
    path = os.path.join(incoming.pack_dir, RECEIVED_NAME)
    with open(path, "rb") as f:
        data = f.read()
    _check_checksum(data)
    walk = _Walk(data, resolve)
    entries = walk.run()
    bases = walk.outside
    if bases:
        with open(path, "r+b") as f:
            checksum, added = extend_pack(
                f, bases, get_raw=resolve, object_format=incoming.object_format
            )
        entries.extend(added)
    else:
        checksum = data[-_SHA_SIZE:]
    named = os.path.join(incoming.pack_dir, f"pack-{checksum.hex()}")
    os.rename(path, named + ".pack")
    with open(named + ".idx", "wb") as f:
        write_pack_index(f, sorted(entries), checksum)
    return walk.found


def read_received(data: bytes, resolve: Resolve) -> Received:
    """Returns every object of a received pack held in memory, by id.

    What a store in memory fetches: the same checks as
    :func:`index_received` (the checksum, every object's size, the bytes
    they make together, each delta), and nothing written; a thin pack's
    bases are read through ``resolve`` and are not among the objects.

    Raises:
        ChecksumMismatch, UnresolvedDeltas, ValueError, zlib.error: as
            :func:`index_received`.
    """
    _check_checksum(data)
    walk = _Walk(data, resolve)
    walk.run()
    return walk.found


def _check_checksum(data: bytes) -> None:
    if len(data) < _HEADER + _SHA_SIZE or data[:4] != b"PACK":
        raise ValueError("it is not a pack")
    if int.from_bytes(data[4:8], "big") not in (2, 3):
        raise ValueError("its version is not 2 or 3")
    stored = data[-_SHA_SIZE:]
    actual = hashlib.sha1(memoryview(data)[:-_SHA_SIZE]).digest()
    if actual != stored:
        raise ChecksumMismatch(stored, actual)


class _Walk:
    """One pass over a pack's entries, then its deltas resolved."""

    def __init__(self, data: bytes, resolve: Resolve) -> None:
        self.data = data
        self.resolve = resolve
        self.found: Received = {}
        self.outside: set[RawObjectID] = set()
        """The bases of deltas that the store holds (a thin pack)."""
        self._at: dict[int, tuple[int, bytes]] = {}
        """Each object resolved so far, by its offset (the store's: below 0)."""
        self._offset_of: dict[bytes, int] = {}
        self._crcs: dict[int, int] = {}
        self._entries: list[PackIndexEntry] = []
        self._made = 0
        """The bytes held so far: every object made (in ``found``), each with
        its :data:`ENTRY_COST`, and every delta not yet applied."""

    def run(self) -> list[PackIndexEntry]:
        """Returns the index entry of every object, each resolved and kept."""
        data, view = self.data, memoryview(self.data)
        count = int.from_bytes(data[8:12], "big")
        if count * ENTRY_COST > MAX_RECEIVED_BYTES:
            raise ValueError(
                f"it says it holds {count:,} objects, more than a fetch takes"
            )
        end = len(data) - _SHA_SIZE
        deltas: list[_Delta] = []
        pos = _HEADER
        for _ in range(count):
            start = pos
            kind, size, pos = entry_header(data, pos, end)
            base: int | bytes | None = None
            if kind == OFS_DELTA:
                back, pos = _base_distance(data, pos, end)
                base = start - back
                if not _HEADER <= base < start:
                    raise ValueError(f"a delta at {start} has no base at {base}")
            elif kind == REF_DELTA:
                if pos + _SHA_SIZE > end:
                    raise ValueError("it ends early")
                base = data[pos : pos + _SHA_SIZE]
                pos += _SHA_SIZE
            elif kind not in _TYPE_NAMES:
                raise ValueError(f"an object at {start} has type {kind}")
            content, pos = _inflate(view, pos, end, size)
            self._crcs[start] = binascii.crc32(view[start:pos])
            if base is None:
                self._keep(start, kind, content)
            else:
                self._count(len(content))  # held until applied, counted once made
                deltas.append((start, base, content))
        if pos != end:
            raise ValueError("it goes on past its objects")
        left = self._apply(deltas)
        while left and self._from_store(left):
            left = self._apply(left)
        if left:
            raise UnresolvedDeltas(
                [b"offset %d" % offset for offset, _base, _delta in left]
            )
        return self._entries

    def _count(self, size: int) -> None:
        """Counts ``size`` more bytes held; refuses past what a fetch takes."""
        self._made += size
        if self._made > MAX_RECEIVED_BYTES:  # each object small, their sum not
            raise ValueError(f"its objects make more than {fetch_limit()}")

    def _keep(self, offset: int, kind: int, content: bytes) -> None:
        self._count(ENTRY_COST + len(content))
        digest = hashlib.sha1(b"%s %d\0" % (_TYPE_NAMES[kind], len(content)))
        digest.update(content)
        raw = digest.digest()
        self._at[offset] = (kind, content)
        self._offset_of[raw] = offset
        self._entries.append((RawObjectID(raw), offset, self._crcs[offset]))
        self.found[ObjectID(binascii.hexlify(raw))] = (kind, content)

    def _apply(self, deltas: list[_Delta]) -> list[_Delta]:
        """Applies every delta whose base is known, chains included.

        Returns:
            The deltas whose bases are still unknown.
        """
        while deltas:
            left = []
            for offset, base, delta in deltas:
                found = self._base(base)
                if found is None:
                    left.append((offset, base, delta))
                    continue
                kind, source = found
                _check_sizes(offset, source, delta)
                try:
                    content = b"".join(apply_delta(source, delta))
                except ApplyDeltaError as exc:
                    raise ValueError(f"a delta at {offset} does not apply") from exc
                self._keep(offset, kind, content)
            if len(left) == len(deltas):
                return left
            deltas = left
        return []

    def _base(self, base: int | bytes) -> tuple[int, bytes] | None:
        if isinstance(base, int):
            return self._at.get(base)
        offset = self._offset_of.get(base)
        return None if offset is None else self._at[offset]

    def _from_store(self, left: list[_Delta]) -> bool:
        """Reads the bases, named by id, of a thin pack from the store.

        A base the store lacks may be a delta of the pack on a base the store
        holds (by id, as a server without offset deltas sends them): it is
        known once that one is applied. Returns whether a base was read.

        Raises:
            UnresolvedDeltas: the store holds one that is not an object.
        """
        read = False
        for _offset, base, _delta in left:
            if isinstance(base, int):
                continue  # on a delta on such a base, or on nothing
            raw = RawObjectID(base)
            if raw in self.outside:
                continue
            try:
                kind, content = self.resolve(raw)
            except KeyError:
                continue  # in the pack, or nowhere: the caller says which
            if kind not in _TYPE_NAMES:
                raise UnresolvedDeltas([binascii.hexlify(base)])
            self.outside.add(raw)
            self._at[-len(self.outside)] = (kind, content)
            self._offset_of[base] = -len(self.outside)
            read = True
        return read


def _check_sizes(offset: int, source: bytes, delta: bytes) -> None:
    """Refuses a delta whose header says what it cannot make of ``source``.

    Checked before it is applied, which makes room for the result first: a
    delta of a few bytes saying it makes a terabyte would fail for want of
    memory. Each instruction makes at most the base's length (a copy from
    it) or 127 bytes (an insert), so a delta makes at most its instructions'
    bytes times the larger of the two.

    Raises:
        ValueError: the sizes cannot be.
    """
    base, at = delta_header_size(delta, 0)
    made, at = delta_header_size(delta, at)
    if base != len(source):
        raise ValueError(f"a delta at {offset} is for a base of another size")
    if made > (len(delta) - at) * max(len(source), _INSERT_MOST):
        raise ValueError(f"a delta at {offset} says it makes more than it can")
    if made > MAX_OBJECT_BYTES:  # a few kilobytes copying their base over and over
        raise ValueError(
            f"a delta at {offset} makes an object of {made:,} bytes, more than "
            f"the {MAX_OBJECT_BYTES // (1024 * 1024)} MiB a store takes"
        )


_INSERT_MOST = 127


def _base_distance(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """Returns how far back an offset delta's base is, as git encodes it."""
    if pos >= end:
        raise ValueError("it ends early")
    byte = data[pos]
    distance = byte & 0x7F
    pos += 1
    while byte & 0x80:
        if pos >= end:
            raise ValueError("it ends early")
        byte = data[pos]
        distance = ((distance + 1) << 7) | (byte & 0x7F)
        pos += 1
    return distance, pos


def _inflate(view: memoryview, pos: int, end: int, size: int) -> tuple[bytes, int]:
    """Returns the ``size`` bytes a zlib stream at ``pos`` holds, and its end."""
    if size > MAX_OBJECT_BYTES:
        raise ValueError(
            f"an object's size, {size:,} bytes, is more than the "
            f"{MAX_OBJECT_BYTES // (1024 * 1024)} MiB a store takes"
        )
    if size > _MAX_RATIO * (end - pos):
        raise ValueError(f"an object's size, {size:,}, is more than its data holds")
    stream = zlib.decompressobj()
    fed = min(end, pos + size + 64 + size // 100)
    out = stream.decompress(view[pos:fed], size + 1)
    while not stream.eof and fed < end and len(out) <= size:
        more = min(end, fed + _MORE)
        if stream.unconsumed_tail:
            out += stream.decompress(stream.unconsumed_tail, size + 1 - len(out))
        else:
            out += stream.decompress(view[fed:more], size + 1 - len(out))
            fed = more
    if not stream.eof:
        raise ValueError("an object's data ends early or holds more than its size")
    if len(out) != size:
        raise ValueError(f"an object's size is {len(out)}, not {size} as it says")
    return out, fed - len(stream.unused_data)
