"""Loose objects are packed in the background after writes (issue 30)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.hub.upkeep import pack_in_background

WHO = Intent(agent="tester", intent="observe")


def loose_files(store: Path) -> int:
    objects = store / "git" / "objects"
    return sum(
        1
        for folder in objects.iterdir()
        if len(folder.name) == 2
        for _ in folder.iterdir()
    )


def test_a_writer_past_the_threshold_packs_in_the_background(tmp_path: Path) -> None:
    from dulwich.objects import Blob

    path = tmp_path / ".ctx"
    store = Store.init(path, clock=lambda: datetime.now(UTC))
    ids = [
        engine.remember(store, Draft(text=f"note {i}"), WHO).ids[0] for i in range(5)
    ]
    assert not pack_in_background(store)  # a few loose objects: nothing
    fan_out = path / "git" / "objects" / "17"
    n = 0
    while engine.loose_objects(store) <= engine.AUTO_PACK_LOOSE:
        store.repo.object_store.add_object(Blob.from_string(b"blob %d" % n))
        n += 1
    assert pack_in_background(store)
    until = time.monotonic() + 120
    while fan_out.exists() and any(fan_out.iterdir()):
        assert time.monotonic() < until, "the background packer never ran"
        time.sleep(0.2)
    while engine.packing_now(store):
        assert time.monotonic() < until
        time.sleep(0.2)
    assert loose_files(path) == 0
    store.close()
    again = Store.open(path, clock=lambda: datetime.now(UTC))
    assert {m.memory.id for m in engine.list_memories(again)} == set(ids)
    assert len(engine.log(again)) == 6
    again.close()
    fsck = subprocess.run(
        ["git", "--git-dir", str(path / "git"), "fsck", "--strict"],
        capture_output=True,
        text=True,
    )
    assert fsck.returncode == 0, fsck.stderr


def test_no_packer_starts_while_one_runs(tmp_path: Path) -> None:
    path = tmp_path / ".ctx"
    store = Store.init(path, clock=lambda: datetime.now(UTC))
    engine.remember(store, Draft(text="one"), WHO)
    fd = os.open(path / "git" / "objects" / "ctx-pack.lock", os.O_WRONLY | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a packer at work
        assert not pack_in_background(store, threshold=0)
    finally:
        os.close(fd)
    store.close()
