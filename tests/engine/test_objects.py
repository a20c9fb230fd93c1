"""Reads that do not rescan the pack folder, beside a packer (issue 30)."""

from __future__ import annotations

import pytest

from ctx.engine import Draft, Store, list_memories, log, pack_loose, remember
from ctx.engine._objects import ObjectStore


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
