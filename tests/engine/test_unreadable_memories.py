"""Reading a branch that holds what a store should not (issue #28, finding 11).

A memory file that does not decode is left out of ``ls``, ``status`` and
``export`` with its name, never failing the whole branch, and ``fsck``
reports it. What stock git may commit into a store's repository by hand (a
submodule link, a symbolic link) reads the same way. Processes killed
midway leave folders that the next look at the store removes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_repos import (
    World,
    copy_of_base,
    fixed_clock,
    git,
    hostile_world,
    undecodable_id,
)

from ctx.engine import (
    Access,
    Store,
    clone,
    export_lines,
    fsck,
    gc,
    init_store,
    list_sorted,
    status,
)

world = pytest.fixture(scope="module", name="world")(hostile_world)


@pytest.fixture
def base(world: World, tmp_path: Path) -> Iterator[Store]:
    store = copy_of_base(world, tmp_path / "store")
    yield store
    store.close()


@pytest.mark.parametrize("transport", ["path", "ssh"])
def test_a_memory_that_does_not_decode_is_left_out_with_its_name(
    world, tmp_path, transport
):
    url = world.url("undecodable", transport)
    access = Access(ssh_command=str(world.ssh))
    clone(tmp_path / "c", url, clock=fixed_clock(), access=access)
    store = Store.open(tmp_path / "c", clock=fixed_clock())
    bad = undecodable_id(world.good)
    listed = list_sorted(store)
    assert len(listed.memories) == 2
    (left_out,) = listed.unreadable
    assert left_out.path.endswith(f"/{bad}.json")
    assert left_out.warning().startswith(f"{left_out.path} is not a valid memory: ")
    assert left_out.warning().endswith("; it is left out.")
    assert status(store).memories == 2
    assert status(store).unreadable == (left_out,)
    lines = export_lines(store)
    assert lines.unreadable == (left_out,)
    assert b"".join(lines).count(b'"type":"memory"') == 2
    report = fsck(store)
    assert [p for p in report.problems if bad in p] == [
        f"branch main: {left_out.reason.rstrip('.')}"
    ]
    store.close()


def test_a_submodule_link_stock_git_committed_is_passed_by(world, base):
    # Not through a fetch, which refuses it: stock git fetching into the
    # store's own repository.
    git_dir = base.path / "git"
    git(git_dir, "fetch", "-q", str(world.remotes["gitlink-in-memory"]), "main:main")
    listed = list_sorted(base)
    assert len(listed.memories) == 2
    assert listed.unreadable == ()
    assert status(base).memories == 2
    assert b"".join(export_lines(base)).count(b'"type":"memory"') == 2
    (problem,) = fsck(base).problems
    assert "holds a submodule link at 'memory/" in problem


def test_a_symlink_stock_git_committed_is_an_unreadable_memory(world, base):
    remote = str(world.remotes["symlink-in-memory"])
    git(base.path / "git", "fetch", "-q", remote, "main:main")
    (left_out,) = list_sorted(base).unreadable
    assert "is not a valid memory" in left_out.reason
    assert any("a symbolic link at 'memory/" in p for p in fsck(base).problems)


def test_a_killed_clone_or_init_is_cleared_by_any_look_at_the_store(base):
    # A clone killed midway leaves its git.new-* folder (209 MB at 20,000
    # branches); status, fsck, gc and init each remove it.
    folder = base.path
    assert folder is not None
    for look in (status, fsck, gc):
        (folder / "git.new-killed" / "objects").mkdir(parents=True)
        look(base)
        assert not (folder / "git.new-killed").exists()
    (folder / "git.new-killed").mkdir()
    init_store(folder, clock=fixed_clock())
    assert not (folder / "git.new-killed").exists()


def test_gc_removes_a_quarantine_a_killed_fetch_left(base):
    objects = base.path / "git" / "objects"
    old, new = objects / "ctx-incoming-killed", objects / "ctx-incoming-running"
    (old / "pack").mkdir(parents=True)
    (new / "pack").mkdir(parents=True)
    os.utime(old, (0, 0))  # an hour and more before the store's clock
    os.utime(new, (base.clock().timestamp(),) * 2)
    gc(base)
    assert not old.exists()
    assert new.exists()  # a fetch may still be filling it
