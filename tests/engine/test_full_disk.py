"""A write the disk refuses: one error, no lock left, the store intact (issue #28).

Finding 13: a full disk during ``remember`` or ``import`` gave a 54-line
``OSError`` traceback and left ``objects/xx/<id>.lock`` files. The disk is
made to fill up at every point a write writes at (see ``full_disk.py``).
"""

from __future__ import annotations

import errno
import gc
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dulwich.objects import Commit, ObjectID, Tree
from full_disk import FullDisk, leftovers

import ctx.engine.ids
from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.engine.errors import DiskFullError, StoreError
from ctx.engine.reflogs import reflog

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
WHO = Intent(agent="tester", intent="observe")
ONE = [Draft(text="The queue lives in Postgres.", kind="decision")]
MANY = [Draft(text=f"Note {n} about the build.") for n in range(80)]  # a pack


class Entropy:
    """Memory ids' random part from a counter each store restarts."""

    draws = itertools.count()

    @classmethod
    def urandom(cls, size: int) -> bytes:
        return next(cls.draws).to_bytes(size)


@pytest.fixture(autouse=True)
def same_ids(monkeypatch):
    """Every store made by ``make_store`` is written with the same bytes."""
    monkeypatch.setattr(ctx.engine.ids, "os", Entropy)


def make_store(folder: Path) -> Store:
    """A store with one memory, the same bytes every time it is made."""
    Entropy.draws = itertools.count()
    ticks = itertools.count()
    store = Store.init(folder, clock=lambda: T0 + timedelta(seconds=next(ticks)))
    engine.remember(store, Draft(text="Acknowledged before the disk filled."), WHO)
    return store


def bodies(store: Store) -> list[str]:
    return sorted(r.memory.body for r in engine.list_memories(store, None, ""))


def check_every_object(store: Store) -> None:
    """Every object the branches reach can be read."""
    objects = store.repo.object_store
    stack = [ObjectID(store.branch_tip(b).encode()) for b in store.branches()]
    seen = set()
    while stack:
        sha = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        obj = objects[sha]
        if isinstance(obj, Commit):
            stack.extend([obj.tree, *obj.parents])
        elif isinstance(obj, Tree):
            stack.extend(entry.sha for entry in obj.items())


def cut_points(tmp_path: Path, drafts: list[Draft]) -> list[int]:
    """Where the write's writes start, and one byte into each."""
    store = make_store(tmp_path / "measured")
    with pytest.MonkeyPatch.context() as patch:
        disk = FullDisk().install(patch)
        engine.remember_many(store, drafts, WHO)
    store.close()
    return sorted({p for o in disk.offsets for p in (o, o + 1)})


def refuse_at(tmp_path: Path, drafts: list[Draft], room: int) -> None:
    folder = tmp_path / f"at-{room}"
    store = make_store(folder)
    tip = store.branch_tip("main")
    before = bodies(store)
    with pytest.MonkeyPatch.context() as patch:
        disk = FullDisk(room).install(patch)
        with pytest.raises(DiskFullError) as raised:
            engine.remember_many(store, drafts, WHO)
    gc.collect()  # a file dulwich left open would complain (and fail) now
    assert disk.refused
    assert raised.value.message == (
        f"No space left on the disk of the store at {folder}; the write was not made."
    )
    assert (
        raised.value.hint == "Free some space on that disk, then run the command again."
    )
    assert leftovers(folder) == []
    store.close()
    # The store reads as before, and takes the next write once there is room.
    again = Store.open(folder, clock=lambda: T0 + timedelta(days=1))
    try:
        assert again.branch_tip("main") == tip
        assert bodies(again) == before
        check_every_object(again)
        written = engine.remember_many(again, drafts, WHO)
        assert written.ids
        assert reflog(again, "main")[-1].new == again.branch_tip("main")
        assert [e.new for e in reflog(again, "main")][-2] == tip
        check_every_object(again)
    finally:
        again.close()


@pytest.mark.parametrize("drafts", [ONE, MANY], ids=["remember", "import"])
def test_a_write_refused_anywhere_leaves_no_trace(tmp_path, drafts):
    # ONE writes loose objects, MANY a pack; then the lock's note, the
    # reflog and the ref.
    points = cut_points(tmp_path, drafts)
    assert len(points) > 15
    for room in points:
        refuse_at(tmp_path, drafts, room)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (errno.EDQUOT, "The disk quota is used up for the store at {}; "),
        (errno.EIO, "Cannot write to the store at {}: Input/output error; "),
    ],
)
def test_what_the_disk_said(tmp_path, error, message):
    store = make_store(tmp_path / "s")
    with pytest.MonkeyPatch.context() as patch:
        FullDisk(0, error=error).install(patch)
        with pytest.raises(StoreError) as raised:
            engine.remember_many(store, ONE, WHO)
    assert raised.value.message == (
        message.format(tmp_path / "s") + "the write was not made."
    )
    gc.collect()
    assert leftovers(tmp_path / "s") == []
    store.close()


def test_a_git_file_that_never_opened_is_left_alone(tmp_path):
    """Its opening failed (a file where its folder goes): nothing to abort."""
    from dulwich.file import GitFile

    from ctx.engine._lock import abandon_git_files

    (tmp_path / "main").write_text("a ref")
    with pytest.raises(NotADirectoryError) as caught:
        GitFile(tmp_path / "main" / "sub", "wb")
    abandon_git_files(caught.value)  # raised AttributeError: _closed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["main"]
