"""Packing loose objects beside writers and readers, and through crashes (issue 30)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ctx.engine import (
    Draft,
    Store,
    list_memories,
    log,
    loose_objects,
    pack_loose,
    packing_now,
    remember,
)


def loose_files(store: Store) -> int:
    objects = Path(store.repo.object_store.path)
    return sum(
        1
        for folder in objects.iterdir()
        if len(folder.name) == 2 and folder.is_dir()
        for _ in folder.iterdir()
    )


def git_fsck(store: Store) -> None:
    fsck = subprocess.run(
        ["git", "--git-dir", str(store.path / "git"), "fsck", "--strict"],
        capture_output=True,
        text=True,
    )
    assert fsck.returncode == 0, fsck.stderr


def written(store: Store, n: int, intent, prefix: str = "note") -> list[str]:
    return [
        remember(store, Draft(text=f"{prefix} {i}"), intent).ids[0] for i in range(n)
    ]


def test_packing_moves_every_loose_object_into_a_pack(disk_store, intent):
    ids = written(disk_store, 20, intent)
    before = log(disk_store)
    assert loose_files(disk_store) > 20
    assert pack_loose(disk_store) > 20
    assert loose_files(disk_store) == 0
    assert loose_objects(disk_store) == 0
    again = Store.open(disk_store.path, clock=disk_store.clock)
    assert {m.memory.id for m in list_memories(again)} == set(ids)
    assert log(again) == before
    again.close()
    git_fsck(disk_store)


def test_a_second_packer_does_nothing_while_one_holds_the_lock(disk_store, intent):
    written(disk_store, 2, intent)
    lock = Path(disk_store.repo.object_store.path) / "ctx-pack.lock"
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert packing_now(disk_store)
        assert pack_loose(disk_store) == 0
    finally:
        os.close(fd)
    assert not packing_now(disk_store)
    assert pack_loose(disk_store) > 0


def test_a_killed_packer_leaves_no_lock_behind(disk_store, intent):
    written(disk_store, 2, intent)
    lock = Path(disk_store.repo.object_store.path) / "ctx-pack.lock"
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys\n"
            "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
            str(lock),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline() == "held\n"
            assert pack_loose(disk_store) == 0
        finally:
            holder.kill()
    assert lock.exists()  # what a dead packer leaves: a file, no lock
    assert pack_loose(disk_store) > 0


# A packer that dies at a chosen point: `os._exit` skips every cleanup, as a
# SIGKILL or a power cut of the process would.
_CRASHING_PACKER = """
import os, sys
from datetime import UTC, datetime
from pathlib import Path
import dulwich.object_store as object_store
from ctx.engine import Store, pack_loose

where, after = sys.argv[2], int(sys.argv[3])
if where == "delete":
    real = object_store.DiskObjectStore.delete_loose_object
    count = [0]
    def delete(self, sha):
        if count[0] == after:
            os._exit(17)
        count[0] += 1
        real(self, sha)
    object_store.DiskObjectStore.delete_loose_object = delete
else:  # die while the pack's index is being written
    import ctx.engine._packs as packs
    def die(*args, **kwargs):
        os._exit(17)
    packs.write_pack_index = die
store = Store.open(Path(sys.argv[1]), clock=lambda: datetime.now(UTC))
pack_loose(store)
"""


@pytest.mark.parametrize(("where", "after"), [("index", 0), ("delete", 7)])
def test_a_packer_killed_midway_loses_no_write(disk_store, intent, where, after):
    ids = written(disk_store, 25, intent)
    before = log(disk_store)
    loose = loose_files(disk_store)
    died = subprocess.run(
        [
            sys.executable,
            "-c",
            _CRASHING_PACKER,
            str(disk_store.path),
            where,
            str(after),
        ],
        capture_output=True,
        text=True,
    )
    assert died.returncode == 17, died.stderr
    left = loose_files(disk_store)
    assert left == (loose if where == "index" else loose - after)
    again = Store.open(disk_store.path, clock=disk_store.clock)
    assert {m.memory.id for m in list_memories(again)} == set(ids)
    assert log(again) == before
    git_fsck(again)
    assert pack_loose(again) == left  # the next packer packs what is still loose
    assert loose_files(again) == 0
    assert log(again) == before
    again.close()
    git_fsck(disk_store)


def test_writes_during_packing_are_all_kept(disk_store, intent):
    first = written(disk_store, 40, intent)
    packer = Store.open(disk_store.path, clock=disk_store.clock)
    packed: list[int] = []
    thread = threading.Thread(target=lambda: packed.append(pack_loose(packer)))
    thread.start()
    during = written(disk_store, 15, intent, prefix="during")
    thread.join(timeout=60)
    assert not thread.is_alive()
    packer.close()
    assert packed[0] > 0
    after = written(disk_store, 3, intent, prefix="after")
    reader = Store.open(disk_store.path, clock=disk_store.clock)
    assert {m.memory.id for m in list_memories(reader)} == set(first + during + after)
    assert len(log(reader)) == len(first + during + after) + 1
    reader.close()
    git_fsck(disk_store)


def test_many_packs_are_merged_into_one(disk_store, intent):
    from ctx.engine import auto_pack

    ids = []
    for round_ in range(3):
        ids += written(disk_store, 4, intent, prefix=f"round {round_}")
        assert pack_loose(disk_store) > 0
    before = log(disk_store)
    pack_dir = Path(disk_store.repo.object_store.path) / "pack"
    assert len(list(pack_dir.glob("*.idx"))) == 3
    reader = Store.open(disk_store.path, clock=disk_store.clock)
    assert log(reader) == before  # holds the three packs open
    ids += written(disk_store, 1, intent, prefix="loose")
    report = auto_pack(disk_store, threshold=10**6, pack_limit=2)
    assert (report.packed, report.merged) == (0, 3)
    assert len(list(pack_dir.glob("*.idx"))) == 1
    assert len(list(pack_dir.glob("*.pack"))) == 1
    after = log(disk_store)
    assert after[1:] == before
    assert log(reader) == after  # its packs are gone: it finds the new one
    assert {m.memory.id for m in list_memories(reader)} == set(ids)
    reader.close()
    git_fsck(disk_store)
    assert auto_pack(disk_store, threshold=10**6, pack_limit=2).merged == 0
