"""The object store a store reads through: no pack-folder scan per loose read.

dulwich's ``DiskObjectStore`` looks an object up in its packs and, when
none holds it, lists the pack folder again (another process may just have
published a pack) before it reads the loose file. Every read of a loose
object so paid a scan of the folder; after 20,000 single writes, rebuilding
the history cache read 160,000 loose objects and scanned the folder as
often. Here a read looks in the packs already known, then for the loose
file, and only then rescans the pack folder.

That order loses nothing to a concurrent packer (``ctx gc --auto``): it
publishes a pack before it deletes the loose files the pack holds, so an
object missing from the known packs and from the loose files was in a pack
published before that look; the rescan finds it. A loose file is read and
inflated directly: dulwich's own read parses the object and serialises it
again only to give back the bytes it read. So is a whole (not deltified)
object of a pack, out of the mapped pack file.
"""

from __future__ import annotations

import array
import binascii
import mmap
import os
import sys
import zlib
from binascii import unhexlify
from pathlib import Path
from typing import Any

from dulwich.config import ConfigFile
from dulwich.object_store import BaseObjectStore, DiskObjectStore
from dulwich.objects import ObjectID, RawObjectID, sha_to_hex
from dulwich.pack import Pack, PackFileDisappeared
from dulwich.repo import Repo

__all__ = [
    "MAX_OBJECT_BYTES",
    "OFS_DELTA",
    "REF_DELTA",
    "ObjectStore",
    "ObjectTooLargeError",
    "delta_header_size",
    "entry_header",
    "index_offsets",
    "inflate_at",
    "open_repository",
]

_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
_WHOLE = frozenset(_TYPES.values())
MAX_OBJECT_BYTES = 64 * 1024 * 1024
"""The largest object a store takes from another repository.

A memory's file holds at most 100 KB of body (``MAX_BODY_BYTES``), and the
layout keeps trees small, so nothing a store writes comes near it. A delta
of a few kilobytes can say it copies its base thousands of times: a pack
of 30 KB would make gigabytes, and the process would die for want of
memory before any check saw the object."""
OFS_DELTA = 6
"""A pack entry that is a delta on the entry so many bytes before it."""
REF_DELTA = 7
"""A pack entry that is a delta on the object of the id that follows."""
_CHAIN_MOST = 5000  # git's deepest is 4095
_HEAD_MOST = 1 << 20  # the most of a delta's stream read for its two sizes
_PACK_HEADER = 12
_TABLE_SHARE = 25
"""A pack's index is read whole once more of its objects were looked up than
one in this many of those it holds: about where dulwich's bisection (a
Python call per step, some 10 us a look-up) has cost what reading the index
whole does (some 0.3 us an entry). A fixed 4,096 look-ups first made a push
of 20,000 objects bisect 4,096 times. (A repository not trusted has each
index read whole at once, by :func:`index_offsets`.)"""
_FAN_OUT_END = 8 + 256 * 4
_ONE_CALL = 16384
"""Objects up to this size are inflated in one call: a walk reads tens of
thousands of small ones, and a stream object per read cost a quarter more."""


class ObjectStore(DiskObjectStore):
    """A ``DiskObjectStore`` that reads loose objects before rescanning packs."""

    _readers: dict[str, _PackReader]
    _indexed: list[tuple[dict[bytes, int], mmap.mmap]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # dulwich's arguments
        super().__init__(*args, **kwargs)
        self._readers = {}
        self._indexed = []
        self.limit: int | None = None
        """The largest object read from a pack, for a repository not trusted
        (:func:`open_repository`); None for the store's own."""

    def get_raw(self, name: RawObjectID | ObjectID) -> tuple[int, bytes]:
        """Returns the type number and content of object ``name``.

        Raises:
            KeyError: no pack and no loose file holds it.
        """
        # (No ``RawObjectID(...)`` here: a NewType's call costs a Python
        # call, and this runs tens of thousands of times a walk.)
        if self.limit is not None:
            return self._get_untrusted(name, self.limit)
        if len(name) == 40:
            try:
                sha: bytes = unhexlify(name)
            except binascii.Error:
                return super().get_raw(name)  # not hex: dulwich says why
        elif len(name) == 20:
            sha = name
        else:
            return super().get_raw(name)  # another object format: dulwich's way
        # The packs indexed whole, asked first: a walk's tens of thousands
        # of reads pay two look-ups and an inflate each. A pack a repack
        # removed since stays mapped, and reads as it did.
        for table, data in self._indexed:
            offset = table.get(sha)
            if offset is not None:
                found = inflate_at(data, offset)
                if found is not None:
                    return found
                break  # a delta: read below
        return self._get_raw(sha, name)

    def _get_raw(self, sha: bytes, name: RawObjectID | ObjectID) -> tuple[int, bytes]:
        # dulwich's own list of open packs (a private name, read only): the
        # packs it knows, asked without listing the folder again.
        for key, pack in list(self._pack_cache.items()):
            reader = self._readers.get(key)
            if reader is None or reader.pack is not pack:
                reader = self._readers[key] = _PackReader(pack)
            try:
                if reader.table is None and reader.looked_up():
                    indexed = reader.index_whole()
                    if indexed is not None:
                        self._indexed.append(indexed)
                offset = reader.offset(sha)
                if offset is None:
                    continue
                found = reader.read(offset)
                if found is None:
                    found = pack.get_raw(RawObjectID(sha))  # a delta: dulwich's
            except (KeyError, PackFileDisappeared, OSError):
                break  # removed by a packer since: dulwich's way rescans
            return found
        loose = self._read_loose(sha_to_hex(RawObjectID(sha)))
        if loose is not None:
            return loose
        return super().get_raw(name)

    def _get_untrusted(
        self, name: RawObjectID | ObjectID, limit: int
    ) -> tuple[int, bytes]:
        """Reads an object of a repository not trusted, never one over ``limit``.

        Every read goes through here: each pack that holds the id is asked
        in turn, the entry and its delta chain checked before anything is
        inflated or applied (:func:`_refuse_oversized`); then the loose
        file, whose size dulwich's limit caps. Never dulwich's own search,
        which reads alternates and packs unchecked.

        Raises:
            KeyError: no pack and no loose file holds it whole.
            ObjectTooLargeError: making it would pass ``limit`` bytes.
        """
        try:
            sha = unhexlify(name) if len(name) == 40 else bytes(name)
        except binascii.Error:
            raise KeyError(name) from None
        if len(sha) != 20:
            raise KeyError(name)
        if not self._pack_cache:
            self._update_pack_cache()
        for key, pack in list(self._pack_cache.items()):
            reader = self._readers.get(key)
            if reader is None or reader.pack is not pack:
                reader = self._readers[key] = _PackReader(pack)
                # Read whole at once, by ctx's own reader, which refuses an
                # index it cannot read: dulwich's search of a damaged one
                # fails with errors that blame no one.
                reader.index_whole()
            offset = reader.offset(sha)
            if offset is None:
                continue
            _refuse_oversized(reader, offset, limit)
            try:
                found = reader.read(offset)
                return found if found is not None else pack.get_raw(RawObjectID(sha))
            except KeyError:  # a delta on a base elsewhere: another copy may do
                continue
        loose = self._read_loose(sha_to_hex(RawObjectID(sha)))
        if loose is not None:
            return loose
        raise KeyError(name)

    @property
    def alternates(self) -> list[BaseObjectStore]:
        """The alternate object folders: none for a repository not trusted.

        dulwich would read them as stores of its own, unchecked.
        """
        if self.limit is not None:
            return []
        return super().alternates

    def close(self) -> None:
        """Closes the packs and the files mapped to read them."""
        readers, self._readers = self._readers, {}
        self._indexed = []
        for reader in readers.values():
            reader.close()
        super().close()

    def _read_loose(self, hexsha: ObjectID) -> tuple[int, bytes] | None:
        path = os.path.join(self.path, hexsha[:2].decode(), hexsha[2:].decode())
        try:
            with open(path, "rb") as f:
                compressed = f.read()
        except FileNotFoundError:
            return None
        except OSError:
            return None  # dulwich's own read says what is wrong
        try:
            inflate = zlib.decompressobj()
            data = inflate.decompress(compressed, self.loose_object_size_limit + 64)
        except zlib.error:
            return None
        end = data.find(b"\0")
        if inflate.unconsumed_tail or end < 0:
            return None  # too large or damaged: dulwich's own read says so
        type_name, _, size = data[:end].partition(b" ")
        type_num = _TYPES.get(type_name)
        body = data[end + 1 :]
        if type_num is None or not size.isdigit() or int(size) != len(body):
            return None
        return type_num, body


class _PackReader:
    """What a store keeps to read one pack itself.

    The pack file, mapped; and, once the store has made many look-ups, the
    pack's whole index as a dictionary (:func:`index_offsets`).
    """

    def __init__(self, pack: Pack) -> None:
        self.pack = pack
        self._data: mmap.mmap | None = None
        self.table: dict[bytes, int] | None = None
        self._lookups = 0
        self._worth: int | None = None

    def looked_up(self) -> bool:
        """Counts a look-up; returns whether the index is now worth reading whole.

        See :data:`_TABLE_SHARE`.

        Raises:
            OSError: the pack's index is gone.
        """
        if self._worth is None:
            self._worth = len(self.pack.index) // _TABLE_SHARE
        self._lookups += 1
        return self._lookups > self._worth

    def index_whole(self) -> tuple[dict[bytes, int], mmap.mmap] | None:
        """Reads the pack's whole index; returns it and the mapped pack.

        A walk reads tens of thousands of objects: one dictionary of the
        whole index (30-80 ms for 160,000 objects) answers each look-up in
        well under a microsecond, where dulwich's bisection (a Python call
        per step) took about ten. ``None`` for an index :func:`index_offsets`
        does not read (dulwich's index answers then).

        Raises:
            OSError: the pack is gone.
        """
        path = os.fspath(self.pack.data.path)
        self.table = index_offsets(path[: -len(".pack")] + ".idx") or {}
        if not self.table:
            return None
        return self.table, self.mapped()

    def offset(self, sha: bytes) -> int | None:
        """Returns where object ``sha`` lies in the pack, ``None`` if not there."""
        if self.table:
            return self.table.get(sha)
        try:
            return self.pack.index.object_offset(RawObjectID(sha))
        except KeyError:
            return None

    def read(self, offset: int) -> tuple[int, bytes] | None:
        """Returns the object at ``offset`` unless it is a delta.

        Inflated straight out of the mapped file: dulwich's own read of one
        object (its header, then zlib in chunks) cost about five times this
        in a walk that reads tens of thousands of small objects.
        """
        return inflate_at(self.mapped(), offset)

    def mapped(self) -> mmap.mmap:
        if self._data is None:
            with open(self.pack.data.path, "rb") as f:
                self._data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return self._data

    def close(self) -> None:
        """Unmaps the pack file."""
        if self._data is not None:
            self._data.close()
            self._data = None


def index_offsets(idx_path: str) -> dict[bytes, int] | None:
    """Returns every object id of a pack index (version 2) and its offset.

    ``None`` for an index that cannot be read or is of another version or
    hash: dulwich's index answers each look-up then.
    """
    try:
        with open(idx_path, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if raw[:8] != b"\377tOc\0\0\0\2" or len(raw) < _FAN_OUT_END:
        return None
    count = int.from_bytes(raw[_FAN_OUT_END - 4 : _FAN_OUT_END], "big")
    names = raw[_FAN_OUT_END : _FAN_OUT_END + 20 * count]
    start = _FAN_OUT_END + 24 * count  # past the names and their CRCs
    offsets = array.array("I", raw[start : start + 4 * count])
    rest = raw[start + 4 * count : len(raw) - 40]  # before the two checksums
    if len(names) != 20 * count or len(offsets) != count or len(rest) % 8:
        return None
    large = array.array("Q", rest)
    if sys.byteorder == "little":
        offsets.byteswap()
        large.byteswap()
    ids = [names[i : i + 20] for i in range(0, 20 * count, 20)]
    table = dict(zip(ids, offsets, strict=True))
    # Offsets past 2 GiB: the high bit says the rest indexes a table of
    # 8-byte offsets that follows (one that is not there: a broken index).
    for sha, offset in table.items():
        if offset & 0x80000000:
            at = offset & 0x7FFFFFFF
            if at >= len(large):
                return None
            table[sha] = large[at]
    return table


def inflate_at(data: mmap.mmap, offset: int) -> tuple[int, bytes] | None:
    """Returns the type number and content of the object at ``offset`` of a pack.

    ``data`` is the mapped pack file. ``None`` for a delta, or an object
    that does not inflate to the size its header gives: dulwich reads those.
    """
    byte = data[offset]
    type_num = (byte >> 4) & 7
    if type_num not in _WHOLE:
        return None
    size, shift, at = byte & 15, 4, offset
    while byte & 0x80:
        at += 1
        byte = data[at]
        size |= (byte & 0x7F) << shift
        shift += 7
    # The stream ends within zlib's bound for its size (deflateBound);
    # what follows it is ignored.
    end = at + 1 + size + (size >> 12) + (size >> 14) + (size >> 25) + 64
    try:
        if size <= _ONE_CALL:
            body = zlib.decompress(data[at + 1 : end])
        else:  # inflated no further than its size, whatever the stream says
            body = zlib.decompressobj().decompress(data[at + 1 : end], size)
    except zlib.error:
        return None
    if len(body) != size:
        return None
    return type_num, body


def open_repository(git_dir: Path, *, untrusted: bool = False) -> Repo:
    """Opens the repository at ``git_dir`` reading through :class:`ObjectStore`.

    ``untrusted``: another repository, fetched from: an object over
    :data:`MAX_OBJECT_BYTES` is refused (:class:`ObjectTooLargeError`)
    before it is made, loose or packed, whole or by deltas.

    Raises:
        NotGitRepository: ``git_dir`` holds no repository.
    """
    try:
        config = ConfigFile.from_path(str(git_dir / "config"))
    except FileNotFoundError:
        return Repo(str(git_dir))  # no repository: Repo says so
    objects = ObjectStore.from_config(str(git_dir / "objects"), config)
    if untrusted:
        assert isinstance(objects, ObjectStore)
        objects.limit = MAX_OBJECT_BYTES
        objects.loose_object_size_limit = MAX_OBJECT_BYTES
    return Repo(str(git_dir), object_store=objects)


class ObjectTooLargeError(ValueError):
    """An object of a repository not trusted would pass :data:`MAX_OBJECT_BYTES`."""


def _refuse_oversized(reader: _PackReader, offset: int, limit: int) -> None:
    """Refuses the object at ``offset`` if making it could pass ``limit`` bytes.

    Walks the entry's delta chain as dulwich will, reading each entry's
    header and the first bytes of each delta (the size of its base and of
    what it makes): nothing is inflated whole. A base in another pack or
    loose ends the walk: dulwich cannot apply such a delta in this pack, and
    the read fails there. What cannot be read here is refused, not left to
    dulwich: a delta whose sizes do not inflate from its first mebibyte, a
    chain longer than git's deepest, one that comes back on itself.

    Raises:
        ObjectTooLargeError: an entry of the chain passes ``limit``, or the
            chain cannot be followed.
    """
    data = reader.mapped()
    seen: set[int] = set()
    while True:
        if offset in seen or len(seen) > _CHAIN_MOST:
            raise ObjectTooLargeError(
                f"it holds a chain of deltas longer than {_CHAIN_MOST:,} or "
                "that comes back on itself"
            )
        seen.add(offset)
        try:
            type_num, size, at = entry_header(data, offset, len(data))
        except ValueError:
            raise ObjectTooLargeError("it holds a pack entry that ends early") from None
        if size > limit:
            raise ObjectTooLargeError(_too_large(size, limit))
        if type_num in _WHOLE:
            return
        if type_num == OFS_DELTA:
            byte = data[at]
            distance = byte & 0x7F
            while byte & 0x80 and at + 1 < len(data):
                at += 1
                byte = data[at]
                distance = ((distance + 1) << 7) | (byte & 0x7F)
            at += 1
            base: int | None = offset - distance
        elif type_num == REF_DELTA:
            base = reader.offset(bytes(data[at : at + 20]))
            at += 20
        else:
            return  # not an entry: dulwich refuses it
        made = max(_delta_sizes(data, at))
        if made > limit:
            raise ObjectTooLargeError(_too_large(made, limit))
        if base is None or base < _PACK_HEADER:
            return
        offset = base


def _delta_sizes(data: mmap.mmap, at: int) -> tuple[int, int]:
    """Returns the two sizes a delta's zlib stream at ``at`` starts with.

    Inflated no further than those (at most 20 bytes), from at most its
    first mebibyte: a stream may start with empty blocks.

    Raises:
        ObjectTooLargeError: they cannot be read there.
    """
    stream = zlib.decompressobj()
    head = b""
    fed, end = at, min(len(data), at + _HEAD_MOST)
    try:
        while len(head) < 20 and not stream.eof and fed < end:
            chunk = data[fed : min(fed + 4096, end)]
            fed += len(chunk)
            head += stream.decompress(chunk, 20 - len(head))
    except zlib.error:
        head = b""
    try:
        base, pos = delta_header_size(head, 0)
        made, _ = delta_header_size(head, pos)
    except ValueError:
        raise ObjectTooLargeError(
            "it holds a delta whose sizes cannot be read"
        ) from None
    return base, made


def entry_header(data: bytes | mmap.mmap, pos: int, end: int) -> tuple[int, int, int]:
    """Returns a pack entry's type, its inflated size, and where what follows starts.

    Raises:
        ValueError: the header passes ``end``.
    """
    if pos >= end:
        raise ValueError("it ends early")
    byte = data[pos]
    kind, size, shift = byte >> 4 & 7, byte & 0x0F, 4
    pos += 1
    while byte & 0x80:
        if pos >= end:
            raise ValueError("it ends early")
        byte = data[pos]
        size |= (byte & 0x7F) << shift
        shift += 7
        pos += 1
    return kind, size, pos


def delta_header_size(delta: bytes, at: int) -> tuple[int, int]:
    """Returns a size in a delta's header, and where what follows starts.

    7 bits a byte, the least significant first.

    Raises:
        ValueError: the delta ends within it.
    """
    value = shift = 0
    while True:
        if at >= len(delta):
            raise ValueError("a delta ends within its header")
        byte = delta[at]
        value |= (byte & 0x7F) << shift
        shift += 7
        at += 1
        if not byte & 0x80:
            return value, at


def _too_large(size: int, limit: int) -> str:
    return (
        f"it would make an object of {size:,} bytes, more than the "
        f"{limit // (1024 * 1024)} MiB a store takes"
    )
