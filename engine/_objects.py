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
import mmap
import os
import sys
import zlib
from pathlib import Path
from typing import Any

from dulwich.config import ConfigFile
from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectID, RawObjectID, hex_to_sha, sha_to_hex
from dulwich.pack import Pack, PackFileDisappeared
from dulwich.repo import Repo

__all__ = ["ObjectStore", "inflate_at", "open_repository"]

_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
_WHOLE = frozenset(_TYPES.values())
_TABLE_AFTER = 4096
"""Index look-ups by one store after which each pack's index is read whole."""
_FAN_OUT_END = 8 + 256 * 4


class ObjectStore(DiskObjectStore):
    """A ``DiskObjectStore`` that reads loose objects before rescanning packs."""

    _maps: dict[str, mmap.mmap]
    _tables: dict[str, dict[bytes, int | None]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # dulwich's arguments
        super().__init__(*args, **kwargs)
        self._maps = {}
        self._tables = {}
        self._lookups = 0

    def get_raw(self, name: RawObjectID | ObjectID) -> tuple[int, bytes]:
        """Returns the type number and content of object ``name``.

        Raises:
            KeyError: no pack and no loose file holds it.
        """
        if len(name) == 40:
            hexsha, sha = ObjectID(name), hex_to_sha(ObjectID(name))
        elif len(name) == 20:
            hexsha, sha = sha_to_hex(RawObjectID(name)), RawObjectID(name)
        else:
            return super().get_raw(name)  # another object format: dulwich's way
        # dulwich's own list of open packs (a private name, read only): the
        # packs it knows, asked without listing the folder again.
        for pack in list(self._pack_cache.values()):
            try:
                offset = self._offset(pack, sha)
            except KeyError:
                continue
            except (PackFileDisappeared, OSError):
                break  # a repack removed it: dulwich's way rescans
            try:
                whole = self._inflate(pack, offset)
            except OSError:
                break  # removed by a packer since: dulwich's way rescans
            if whole is not None:
                return whole
            try:
                return pack.get_raw(sha)  # a delta: dulwich resolves it
            except (KeyError, PackFileDisappeared):
                break
        loose = self._read_loose(hexsha)
        if loose is not None:
            return loose
        return super().get_raw(name)

    def _offset(self, pack: Pack, sha: RawObjectID) -> int:
        """Returns where object ``sha`` lies in ``pack``.

        Raises:
            KeyError: the pack does not hold it.
        """
        path = os.fspath(pack.data.path)
        table = self._tables.get(path)
        if table is not None:
            offset = table[sha]
            return pack.index.object_offset(sha) if offset is None else offset
        self._lookups += 1
        if self._lookups > _TABLE_AFTER:
            # A walk reads tens of thousands of objects: one dictionary of
            # the whole index (30-80 ms for 160,000 objects) answers each
            # look-up in well under a microsecond, where dulwich's bisection
            # (a Python call per step) took about ten.
            self._tables[path] = _offsets(path[: -len(".pack")] + ".idx")
        return pack.index.object_offset(sha)

    def _inflate(self, pack: Pack, offset: int) -> tuple[int, bytes] | None:
        """Returns the object at ``offset`` of ``pack`` unless it is a delta.

        Inflated straight out of the mapped file: dulwich's own read of one
        object (its header, then zlib in chunks) cost about five times this
        in a walk that reads tens of thousands of small objects.
        """
        path = os.fspath(pack.data.path)
        data = self._maps.get(path)
        if data is None:
            with open(path, "rb") as f:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._maps[path] = data
        return inflate_at(data, offset)

    def close(self) -> None:
        """Closes the packs and the files mapped to read them."""
        maps, self._maps = self._maps, {}
        for data in maps.values():
            data.close()
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


def _offsets(idx_path: str) -> dict[bytes, int | None]:
    """Returns every object id of a pack index (version 2) and its offset.

    ``None`` for an offset past 2 GiB (dulwich reads the large-offset
    table); an empty table for an index of another version or hash, so
    that every look-up goes to dulwich.
    """
    try:
        with open(idx_path, "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    if raw[:8] != b"\377tOc\0\0\0\2" or len(raw) < _FAN_OUT_END:
        return {}
    count = int.from_bytes(raw[_FAN_OUT_END - 4 : _FAN_OUT_END], "big")
    names = raw[_FAN_OUT_END : _FAN_OUT_END + 20 * count]
    start = _FAN_OUT_END + 24 * count  # past the names and their CRCs
    offsets = array.array("I", raw[start : start + 4 * count])
    if len(names) != 20 * count or len(offsets) != count:
        return {}
    if sys.byteorder == "little":
        offsets.byteswap()
    return {
        names[20 * i : 20 * i + 20]: (None if offset & 0x80000000 else offset)
        for i, offset in enumerate(offsets)
    }


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
    inflate = zlib.decompressobj()
    try:
        body = inflate.decompress(data[at + 1 : at + 1 + size + 1024], size)
    except zlib.error:
        return None
    if len(body) != size or not inflate.eof:
        return None
    return type_num, body


def open_repository(git_dir: Path) -> Repo:
    """Opens the repository at ``git_dir`` reading through :class:`ObjectStore`.

    Raises:
        NotGitRepository: ``git_dir`` holds no repository.
    """
    try:
        config = ConfigFile.from_path(str(git_dir / "config"))
    except FileNotFoundError:
        return Repo(str(git_dir))  # no repository: Repo says so
    objects = ObjectStore.from_config(str(git_dir / "objects"), config)
    return Repo(str(git_dir), object_store=objects)
