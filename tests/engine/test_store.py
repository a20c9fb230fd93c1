import fcntl
import os
import threading

import pytest
from dulwich.repo import Repo

from ctx.engine import (
    ConflictError,
    Draft,
    InvalidInputError,
    NotAStoreError,
    Store,
    StoreBusyError,
    fsck,
    gc,
    list_memories,
    remember,
    remember_many,
    status,
)
from ctx.engine.reflogs import reflog


def test_open_refuses_what_is_not_a_store(tmp_path, clock):
    with pytest.raises(NotAStoreError, match="is not a ctx store"):
        Store.open(tmp_path / "missing", clock=clock)
    (tmp_path / "plain" / "git").mkdir(parents=True)
    with pytest.raises(NotAStoreError):
        Store.open(tmp_path / "plain", clock=clock)
    (tmp_path / "gitonly").mkdir()
    Repo.init_bare(str(tmp_path / "gitonly" / "git"), mkdir=True)
    with pytest.raises(NotAStoreError, match="holds a git repository, not a ctx store"):
        Store.open(tmp_path / "gitonly", clock=clock)


def test_init_twice(tmp_path, clock):
    Store.init(tmp_path / "s", clock=clock)
    with pytest.raises(ConflictError):
        Store.init(tmp_path / "s", clock=clock)
    assert (
        Store.init(tmp_path / "s", clock=clock, exist_ok=True).head_branch() == "main"
    )


def test_a_new_store_does_not_look_for_a_multi_pack_index(disk_store, intent):
    # dulwich would look for one before every object read; ctx writes none.
    remember(disk_store, Draft(text="read back"), intent)
    assert disk_store.repo.object_store.get_midx() is None
    again = Repo(str(disk_store.path / "git"))
    assert again.get_config().get((b"core",), b"multiPackIndex") == b"false"
    again.close()


def test_disk_store_round_trip(disk_store, intent, clock):
    mid = remember(disk_store, Draft(text="persisted"), intent).ids[0]
    again = Store.open(disk_store.path, clock=clock)
    assert [r.memory.id for r in list_memories(again)] == [mid]


def test_status_counts(store, intent):
    remember(store, Draft(text="a", kind="decision", context="decisions"), intent)
    remember(store, Draft(text="b"), intent)
    remember(store, Draft(text="c", pinned=True, title="Rule"), intent)
    st = status(store)
    assert st.branch == "main"
    assert st.memories == 3
    assert st.by_kind == {"decision": 1, "fact": 2}
    assert st.by_area == {"memory/decisions": 1, "memory/general": 1, "pinned": 1}
    assert st.conflicts == ()


def test_gc_packs_loose_objects_and_fsck_stays_clean(disk_store, intent):
    for i in range(5):
        remember(disk_store, Draft(text=f"m{i}"), intent)
    report = gc(disk_store)
    assert report.loose_before > 0
    assert report.loose_after == 0
    assert report.packs_after == 1
    result = fsck(disk_store)
    assert result.ok
    assert result.memories == 5
    assert result.commits == 6


def test_fsck_finds_a_corrupt_object(disk_store, intent):
    remember(disk_store, Draft(text="soon broken"), intent)
    objects = disk_store.path / "git" / "objects"
    loose = [p for p in objects.glob("??/*") if p.is_file()]
    victim = loose[0]
    os.chmod(victim, 0o644)
    victim.write_bytes(b"garbage")
    report = fsck(disk_store)
    assert not report.ok
    assert any(victim.parent.name + victim.name in p for p in report.problems)


def test_fsck_finds_a_memory_at_the_wrong_path(store, intent):
    from ctx.engine.model import encode

    good = remember(store, Draft(text="x"), intent)
    memory = list_memories(store)[0].memory

    def build(snap):
        return {"memory/general/0/0/0/01ARZ3NDEKTSV4RRFFQ69G5FAV.json": encode(memory)}

    store.write("main", intent, "tamper", build)
    report = fsck(store)
    assert not report.ok
    assert good.ids[0] in report.problems[0]


def test_batch_writes_one_pack(disk_store, intent):
    packs = disk_store.path / "git" / "objects" / "pack"
    before = len(list(packs.glob("*.pack")))
    remember_many(disk_store, [Draft(text=f"m{i}") for i in range(200)], intent)
    assert len(list(packs.glob("*.pack"))) == before + 1
    assert len(list_memories(disk_store)) == 200


def test_gc_removes_abandoned_temporary_packs(disk_store, intent):
    remember(disk_store, Draft(text="x"), intent)
    pack_dir = disk_store.path / "git" / "objects" / "pack"
    old = pack_dir / "tmpabandoned.pack"
    fresh = pack_dir / "tmpfresh.pack"
    old.write_bytes(b"half a pack")
    fresh.write_bytes(b"being written")
    two_hours_ago = disk_store.clock().timestamp() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    report = gc(disk_store)
    assert report.temp_files_removed == 1
    assert not old.exists()
    assert fresh.exists()


def test_a_batch_with_repeated_content_writes_a_valid_pack(disk_store, intent, clock):
    # Many paths with equal bytes (link files are often identical) must not
    # repeat the object in the pack, or the pack and its index disagree.
    same = b'{"same": true}\n'
    disk_store.write(
        "main",
        intent,
        "many equal files",
        lambda snap: {f"x/{i}": same for i in range(200)},
    )
    again = Store.open(disk_store.path, clock=clock)
    assert again.snapshot(again.branch_tip("main")).read("x/199") == same
    assert fsck(again).ok
    again.close()


def _count_up(snap, writer):
    """A build that depends on the tip it is given: counter + 1, and a mark."""
    count = int(snap.read("counter") or b"0")
    return {"counter": str(count + 1).encode(), f"by/{writer}": b"x"}


def test_a_write_is_rebuilt_on_a_tip_that_moved_under_it(store, intent, clock):
    # Another writer (a second Store on the same repository, which an
    # in-memory store does not lock) commits on main after our build has
    # read the tip and before our ref moves: the compare-and-swap must fail,
    # and our change must be rebuilt on the other writer's commit.
    other = Store(store.repo, None, clock=clock)
    start = store.branch_tip("main")
    seen, theirs = [], []

    def ours(snap):
        seen.append(snap.commit)
        if len(seen) == 1:
            theirs.append(
                other.write("main", intent, "theirs", lambda s: _count_up(s, "theirs"))
            )
        return _count_up(snap, "ours")

    result = store.write("main", intent, "ours", ours)

    assert seen == [start, theirs[0].id]  # built twice, the second time on theirs
    assert result.parents == (theirs[0].id,)
    assert theirs[0].parents == (start,)
    assert store.branch_tip("main") == result.id
    tree = store.snapshot(result.id)
    assert tree.read("counter") == b"2"  # both increments, none lost
    assert tree.read("by/theirs") == tree.read("by/ours") == b"x"
    assert [(e.old, e.new) for e in reflog(store, "main")][-2:] == [
        (start, theirs[0].id),
        (theirs[0].id, result.id),
    ]


def test_a_write_gives_up_when_the_branch_keeps_moving(store, intent, clock):
    other = Store(store.repo, None, clock=clock)
    calls = []

    def ours(snap):
        calls.append(snap.commit)
        other.write("main", intent, "theirs", lambda s: _count_up(s, "theirs"))
        return _count_up(snap, "ours")

    with pytest.raises(StoreBusyError, match="kept moving; gave up after 20 tries"):
        store.write("main", intent, "ours", ours)
    assert len(calls) == 20
    assert store.snapshot(store.branch_tip("main")).read("counter") == b"20"
    assert store.snapshot(store.branch_tip("main")).read("by/ours") is None


def test_every_write_takes_the_store_lock(disk_store, intent):
    # A write must hold the store's flock (and let it go after): taken by
    # someone else, the write waits for it and then gives up, writing nothing.
    remember(disk_store, Draft(text="first"), intent)
    tip = disk_store.branch_tip("main")
    disk_store.lock_timeout = 0.2
    fd = os.open(disk_store.path / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(StoreBusyError, match="Another writer held the store"):
            remember(disk_store, Draft(text="second"), intent)
    finally:
        os.close(fd)
    assert disk_store.branch_tip("main") == tip
    # Held for a moment only, the lock is waited for.
    disk_store.lock_timeout = 10
    fd = os.open(disk_store.path / "lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    release = threading.Timer(0.2, os.close, [fd])
    release.start()
    remember(disk_store, Draft(text="third"), intent)
    release.join()
    assert (disk_store.path / "lock").stat().st_mode & 0o777 == 0o644 & ~_umask()


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_the_store_lock_is_reentrant(disk_store):
    disk_store.lock_timeout = 0.2
    with disk_store.locked():
        with disk_store.locked():
            pass
        with disk_store.locked():  # still held: not taken a second time
            pass


def test_a_write_to_a_bad_branch_name_is_refused(store, intent):
    with pytest.raises(InvalidInputError, match="not a valid branch name"):
        store.write("a..b", intent, "x", lambda snap: {}, allow_empty=True)
