"""Reads that do not rescan the pack folder, beside a packer (issue 30)."""

from __future__ import annotations

import binascii
import hashlib
import zlib
from pathlib import Path

import pytest
from dulwich.pack import write_pack_index
from dulwich.repo import Repo
from packs_by_hand import delta_size, entry_header, ofs_distance

from ctx.engine import Draft, Store, list_memories, log, pack_loose, remember
from ctx.engine._objects import (
    ObjectStore,
    ObjectTooLargeError,
    index_offsets,
    open_repository,
)


def test_loose_objects_are_read_without_rescanning_the_packs(
    disk_store, intent, monkeypatch
):
    ids = [remember(disk_store, Draft(text=f"n {i}"), intent).ids[0] for i in range(8)]
    reader = Store.open(disk_store.path, clock=disk_store.clock)
    objects = reader.repo.object_store
    assert isinstance(objects, ObjectStore)
    scans = []
    real = objects._update_pack_cache

    def counting():
        scans.append(1)
        return real()

    monkeypatch.setattr(objects, "_update_pack_cache", counting)
    assert {m.memory.id for m in list_memories(reader)} == set(ids)
    assert len(log(reader)) == 9  # dozens of loose commits and trees read
    assert scans == []
    reader.close()


def test_a_reader_finds_objects_a_packer_moved_after_it_opened(disk_store, intent):
    ids = [remember(disk_store, Draft(text=f"n {i}"), intent).ids[0] for i in range(8)]
    reader = Store.open(disk_store.path, clock=disk_store.clock)
    first = reader.repo.object_store[reader.repo.head()]  # a loose read
    packer = Store.open(disk_store.path, clock=disk_store.clock)
    assert pack_loose(packer) > 0  # every loose file gone into a new pack
    packer.close()
    assert reader.repo.object_store[reader.repo.head()] == first
    assert {m.memory.id for m in list_memories(reader)} == set(ids)
    assert len(log(reader)) == 9
    reader.close()


def test_a_missing_object_is_still_missing(disk_store):
    with pytest.raises(KeyError):
        disk_store.repo.object_store[b"1" * 40]


def test_a_long_walk_reads_packs_through_their_whole_index(
    disk_store, intent, monkeypatch
):

    ids = [remember(disk_store, Draft(text=f"n {i}"), intent).ids[0] for i in range(8)]
    before = log(disk_store)
    assert pack_loose(disk_store) > 0
    # About thirty objects: read whole from the second look-up on.
    reader = Store.open(disk_store.path, clock=disk_store.clock)
    assert {m.memory.id for m in list_memories(reader)} == set(ids)
    assert log(reader) == before
    objects = reader.repo.object_store
    assert isinstance(objects, ObjectStore)
    tables = [r.table for r in objects._readers.values() if r.table is not None]
    assert len(tables) == 1
    assert len(tables[0]) > 8 * 3  # every object of the pack
    with pytest.raises(KeyError):
        objects[b"1" * 40]
    reader.close()


def test_a_few_look_ups_in_a_big_pack_leave_its_index_unread(disk_store, intent):
    # A pull of ten objects read each of its remote's indexes whole: a pack
    # is read whole only once one in 25 of its objects was looked up.
    from ctx.engine._objects import _TABLE_SHARE

    blobs = []
    for i in range(2 * _TABLE_SHARE):
        remember(disk_store, Draft(text=f"n {i}"), intent)
    assert pack_loose(disk_store) > 0
    reader = Store.open(disk_store.path, clock=disk_store.clock)
    objects = reader.repo.object_store
    assert isinstance(objects, ObjectStore)
    [pack] = objects.packs
    blobs = [sha for sha, _, _ in pack.index.iterentries()]
    assert len(blobs) > 3 * _TABLE_SHARE
    objects.get_raw(blobs[0])
    assert all(r.table is None for r in objects._readers.values())
    for sha in blobs[1 : len(blobs) // _TABLE_SHARE + 2]:
        objects.get_raw(sha)
    assert [len(r.table or ()) for r in objects._readers.values()] == [len(blobs)]
    reader.close()


def test_a_pack_index_read_whole_equals_dulwichs(disk_store, intent):
    for i in range(12):
        remember(disk_store, Draft(text=f"n {i}"), intent)
    assert pack_loose(disk_store) > 0
    [pack] = disk_store.repo.object_store.packs
    table = index_offsets(pack.index.path)
    assert table == {sha: offset for sha, offset, _ in pack.index.iterentries()}


def test_a_broken_pack_index_is_left_to_dulwich(tmp_path, disk_store, intent):
    for i in range(12):
        remember(disk_store, Draft(text=f"n {i}"), intent)
    pack_loose(disk_store)
    [pack] = disk_store.repo.object_store.packs
    raw = bytearray(Path(pack.index.path).read_bytes())
    broken = tmp_path / "broken.idx"
    broken.write_bytes(raw[: len(raw) // 2])  # cut short
    assert index_offsets(str(broken)) is None
    count = int.from_bytes(raw[8 + 255 * 4 : 8 + 256 * 4], "big")
    first_offset = 8 + 256 * 4 + 24 * count
    raw[first_offset] |= 0x80  # a large offset, and no table of them
    broken.write_bytes(raw)
    assert index_offsets(str(broken)) is None
    assert index_offsets(str(tmp_path / "none.idx")) is None


# A repository not trusted (a clone's source on this machine) read with a
# limit of 1 MiB: each bomb below would make 4 MiB if the guard let it.
KIB = 1 << 10
LIMIT = 1 << 20


def _blob_id(data: bytes) -> bytes:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).digest()


_ZEROS = bytes(64 * KIB)
_BASE = _blob_id(_ZEROS)
_BASE_ENTRY = entry_header(3, len(_ZEROS)) + zlib.compress(_ZEROS)
_BOMB = (
    delta_size(len(_ZEROS)) + delta_size(4 << 20) + b"\x80" * 64
)  # copy 64 KiB, 64 times
_SMALL = delta_size(10) + delta_size(10) + b"\x0a" + b"0123456789"
_ASKED = hashlib.sha1(b"the id asked for").digest()


def _write_pack(objects: Path, entries: list[tuple[bytes | None, bytes]]) -> None:
    body = b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big")
    rows = []
    for sha, entry in entries:
        rows.append((sha, len(body), binascii.crc32(entry)))
        body += entry
    pack = body + hashlib.sha1(body).digest()
    (objects / "pack").mkdir(parents=True, exist_ok=True)
    name = objects / "pack" / f"pack-{pack[-20:].hex()}"
    name.with_suffix(".pack").write_bytes(pack)
    with open(f"{name}.idx", "wb") as f:
        write_pack_index(f, sorted(r for r in rows if r[0] is not None), pack[-20:])


def _padded(data: bytes) -> bytes:
    """zlib of ``data`` after sixteen empty stored blocks (valid, and slow to start)."""
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = b"\x00\x00\x00\xff\xff" * 16 + raw.compress(data) + raw.flush()
    return b"\x78\x01" + body + zlib.adler32(data).to_bytes(4, "big")


def _bomb_delta(entry_zlib=zlib.compress) -> bytes:
    return entry_header(7, len(_BOMB)) + _BASE + entry_zlib(_BOMB)


def _whole(objects: Path) -> None:
    big = bytes(4 << 20)
    _write_pack(objects, [(_ASKED, entry_header(3, len(big)) + zlib.compress(big))])


def _delta(objects: Path) -> None:
    _write_pack(objects, [(_BASE, _BASE_ENTRY), (_ASKED, _bomb_delta())])


def _slow_start(objects: Path) -> None:
    _write_pack(objects, [(_BASE, _BASE_ENTRY), (_ASKED, _bomb_delta(_padded))])


def _deep(objects: Path) -> None:
    entries = [(_BASE, _BASE_ENTRY)]
    at = [12, 12 + len(_BASE_ENTRY)]
    bomb = (
        entry_header(6, len(_BOMB)) + ofs_distance(at[1] - at[0]) + zlib.compress(_BOMB)
    )
    entries.append((hashlib.sha1(b"0").digest(), bomb))
    end = at[1] + len(bomb)
    for n in range(1, 5002):  # deeper than git makes, over the bomb
        entry = (
            entry_header(6, len(_SMALL))
            + ofs_distance(end - at[-1])
            + zlib.compress(_SMALL)
        )
        sha = _ASKED if n == 5001 else hashlib.sha1(b"%d" % n).digest()
        entries.append((sha, entry))
        at.append(end)
        end += len(entry)
    _write_pack(objects, entries)


def _base_after(objects: Path) -> None:
    middle = hashlib.sha1(b"middle").digest()
    top = entry_header(7, len(_SMALL)) + middle + zlib.compress(_SMALL)
    _write_pack(objects, [(_ASKED, top), (_BASE, _BASE_ENTRY), (middle, _bomb_delta())])


def _two_packs(objects: Path) -> None:
    nowhere = hashlib.sha1(b"nowhere").digest()
    on_nothing = entry_header(7, len(_SMALL)) + nowhere + zlib.compress(_SMALL)
    _write_pack(objects, [(_ASKED, on_nothing)])
    _delta(objects)


@pytest.mark.parametrize(
    "build",
    [_whole, _delta, _slow_start, _deep, _base_after, _two_packs],
    ids=["whole", "delta", "slow-start", "deeper-than-git", "base-after", "two-packs"],
)
def test_a_repository_not_trusted_never_makes_an_object_over_the_limit(
    tmp_path: Path, build
):
    git_dir = tmp_path / "r.git"
    Repo.init_bare(str(git_dir), mkdir=True).close()
    build(git_dir / "objects")
    repo = open_repository(git_dir, untrusted=True)
    repo.object_store.limit = LIMIT
    with pytest.raises(ObjectTooLargeError):
        repo.object_store.get_raw(binascii.hexlify(_ASKED))
    repo.close()


def test_a_repository_not_trusted_is_read_by_its_index_whole(disk_store, intent):
    # A fetch's remote whose index has a fan-out table that lies: dulwich's
    # search of it fails with a TypeError, which blamed the local store.
    for i in range(6):
        remember(disk_store, Draft(text=f"n {i}"), intent)
    assert pack_loose(disk_store) > 0
    [pack] = disk_store.repo.object_store.packs
    shas = [sha for sha, _, _ in pack.index.iterentries()]
    idx = Path(pack.index.path)
    raw = bytearray(idx.read_bytes())
    raw[8 : 8 + 255 * 4] = b"\xff" * (255 * 4)  # all but the count
    idx.write_bytes(bytes(raw))
    repo = open_repository(disk_store.path / "git", untrusted=True)
    try:
        for sha in shas:
            type_num, _ = repo.object_store.get_raw(binascii.hexlify(sha))
            assert type_num in (1, 2, 3)
    finally:
        repo.close()


def test_a_repository_not_trusted_has_no_alternates(tmp_path: Path):
    git_dir = tmp_path / "r.git"
    Repo.init_bare(str(git_dir), mkdir=True).close()
    other = tmp_path / "other" / "objects"
    _delta(other)
    (git_dir / "objects" / "info").mkdir(exist_ok=True)
    (git_dir / "objects" / "info" / "alternates").write_text(f"{other}\n")
    repo = open_repository(git_dir, untrusted=True)
    with pytest.raises(KeyError):
        repo.object_store.get_raw(binascii.hexlify(_ASKED))
    repo.close()
    trusted = open_repository(git_dir)
    assert trusted.object_store.alternates  # the store's own reads keep them
    trusted.close()
