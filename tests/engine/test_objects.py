"""Reads that do not rescan the pack folder, beside a packer (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctx.engine import Draft, Store, list_memories, log, pack_loose, remember
from ctx.engine._objects import ObjectStore, index_offsets


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
    from ctx.engine import _objects

    ids = [remember(disk_store, Draft(text=f"n {i}"), intent).ids[0] for i in range(8)]
    before = log(disk_store)
    assert pack_loose(disk_store) > 0
    monkeypatch.setattr(_objects, "_TABLE_AFTER", 0)  # as after 4,096 look-ups
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
