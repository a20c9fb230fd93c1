"""Hostile remotes (issue #28): what a clone, fetch or pull refuses, and reads after.

Each hostile remote is a bare repository built with stock git
(tests/hostile_repos.py): submodule links and symlinks in a store's tree,
names git refuses, entries and tips of the wrong type, missing objects, bad
names in ``packed-refs``. Through a path (ctx reads the other repository
itself) and through ssh to git's own server (dulwich's network client, a
quarantine), each is refused with one line, before any ref moves and
leaving no object behind; every read command works after. A memory that does
not decode is fetched, and left out of listings with a warning instead of
failing its branch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hostile_repos import (
    GIT,
    GIT_ENV,
    REFUSED,
    SERVER_IGNORES,
    SERVER_REFUSES,
    World,
    blob,
    copy_of_base,
    fixed_clock,
    git,
    hostile_world,
    write_tree,
)

from ctx.engine import (
    Access,
    Draft,
    Intent,
    RemoteError,
    Store,
    add_remote,
    clone,
    export_lines,
    fetch,
    fsck,
    list_memories,
    op_log,
    pull,
    push,
    remember,
    status,
)

WHO = Intent(agent="tester", intent="observe")
TRANSPORTS = ["path", "ssh"]


world = pytest.fixture(scope="module", name="world")(hostile_world)


@pytest.fixture
def access(world: World) -> Access:
    return Access(ssh_command=str(world.ssh))


@pytest.fixture
def base(world: World, tmp_path: Path) -> Iterator[Store]:
    store = copy_of_base(world, tmp_path / "store")
    yield store
    store.close()


def test_a_killed_clone_is_cleared_by_the_next_clone_there(world, tmp_path):
    # A clone killed midway leaves its git.new-* folder (209 MB at 20,000
    # branches); the next clone into the same folder removes it.
    folder = tmp_path / ".ctx"
    (folder / "git.new-killed" / "objects").mkdir(parents=True)
    clone(folder, str(world.good.repo), clock=fixed_clock())
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("git")) == [
        "git"
    ]


def files(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` (but derived caches) with its size."""
    return {
        str(p.relative_to(folder)): p.stat().st_size
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "cache" not in p.relative_to(folder).parts
    }


def assert_one_line(error: RemoteError) -> None:
    assert "\n" not in error.message
    assert error.message.endswith(".")
    assert "\n" not in (error.hint or "")


def assert_readable(store: Store) -> None:
    """Every read of the branch works: listing, status, export, fsck."""
    assert {r.memory.body for r in list_memories(store)} == {
        "The queue is Postgres",
        "The API listens on 8080",
    }
    assert status(store).memories == 2
    assert b"".join(export_lines(store)).count(b'"type":"memory"') == 2
    report = fsck(store)
    assert report.ok, report.problems
    git(store.path / "git", "fsck", "--strict", "--no-progress")


def _refused(world: World, name: str, transport: str) -> str | None:
    """Returns what the error says, or None when any one-line error will do."""
    if transport == "ssh" and name in SERVER_REFUSES | SERVER_IGNORES:
        return None
    return REFUSED[name][1]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_clone_refuses_a_hostile_remote_and_leaves_nothing(
    world, access, tmp_path, name, transport
):
    outside = tmp_path / "here"
    outside.mkdir()
    url = world.url(name, transport)
    if transport == "ssh" and name in SERVER_IGNORES:
        result = clone(outside / "c", url, clock=fixed_clock(), access=access)
        assert result.branches == {"main": world.good.tip}  # the bad ref left out
        return
    with pytest.raises(RemoteError) as caught:
        clone(outside / "c", url, clock=fixed_clock(), access=access)
    assert_one_line(caught.value)
    expected = _refused(world, name, transport)
    if expected is not None:
        assert " cannot be fetched: " in caught.value.message
        assert expected in caught.value.message
    assert list(outside.iterdir()) == []  # no store, nothing written anywhere


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_fetch_refuses_a_hostile_remote_and_moves_no_ref(
    world, access, base, name, transport
):
    add_remote(base, "evil", world.url(name, transport))
    git_dir = base.path / "git"
    refs, before = git(git_dir, "for-each-ref"), files(git_dir)
    if transport == "ssh" and name in SERVER_IGNORES:
        assert fetch(base, "evil", access=access).branches == {"main": world.good.tip}
        return
    with pytest.raises(RemoteError) as caught:
        fetch(base, "evil", access=access)
    assert_one_line(caught.value)
    expected = _refused(world, name, transport)
    if expected is not None:
        assert " cannot be fetched: " in caught.value.message
        assert expected in caught.value.message
    assert git(git_dir, "for-each-ref") == refs
    assert files(git_dir) == before  # no object kept, no quarantine left
    assert_readable(base)


def remote_with_a_record(world: World, folder: Path, entry: bytes) -> Path:
    """A copy of the good remote whose record of redactions holds ``entry``.

    ``entry`` is a tree entry's mode; the record's tree holds one entry of
    it, named ``evil``, pointing at a blob.
    """
    repo = folder / "record.git"
    shutil.copytree(world.good.repo, repo)
    target = bytes.fromhex(blob(repo, b"../../../../../../etc/passwd"))
    tree = write_tree(repo, [(entry, b"evil", target)])
    record = git(repo, "commit-tree", tree, "-m", "Redaction 0123456789ab")
    (repo / "refs" / "ctx").mkdir(parents=True)
    (repo / "refs" / "ctx" / "redactions").write_bytes(record)
    return repo


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_record_of_redactions_is_checked_as_a_branch_is(
    world, access, base, tmp_path, transport
):
    # The record comes in a second fetch of its own, when it is new here:
    # through the same checks and bounds as a branch, not around them.
    repo = remote_with_a_record(world, tmp_path, b"120000")
    add_remote(
        base, "evil", str(repo) if transport == "path" else f"ssh://localhost{repo}"
    )
    git_dir = base.path / "git"
    refs, before = git(git_dir, "for-each-ref"), files(git_dir)
    with pytest.raises(RemoteError) as caught:
        fetch(base, "evil", access=access)
    assert_one_line(caught.value)
    assert (
        "cannot be fetched: the record of redactions has a symbolic link at 'evil'"
        in caught.value.message
    )
    assert git(git_dir, "for-each-ref") == refs
    assert files(git_dir) == before  # no object kept, no quarantine left
    assert_readable(base)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_clone_refuses_a_hostile_record_of_redactions(
    world, access, tmp_path, transport
):
    repo = remote_with_a_record(world, tmp_path, b"160000")
    outside = tmp_path / "here"
    outside.mkdir()
    url = str(repo) if transport == "path" else f"ssh://localhost{repo}"
    with pytest.raises(RemoteError) as caught:
        clone(outside / "c", url, clock=fixed_clock(), access=access)
    assert_one_line(caught.value)
    assert (
        "the record of redactions has a submodule link at 'evil'"
        in caught.value.message
    )
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "name", ["gitlink-in-memory", "name-dotdot", "tip-is-a-blob", "packed-ref-dotdot"]
)
def test_pull_refuses_a_hostile_remote_and_moves_no_branch(world, base, name):
    add_remote(base, "evil", world.url(name, "path"))
    refs = git(base.path / "git", "for-each-ref")
    with pytest.raises(RemoteError, match="cannot be fetched"):
        pull(base, WHO, "evil", "main")
    assert git(base.path / "git", "for-each-ref") == refs
    assert_readable(base)


def test_clone_of_many_branches_writes_the_refs_at_once(world, tmp_path):
    remote = tmp_path / "many.git"
    shutil.copytree(world.good.repo, remote)
    lines = "".join(
        f"create refs/heads/agent/b{n:03d} {world.good.tip}\n" for n in range(50)
    )
    subprocess.run(
        [GIT, "--git-dir", str(remote), "update-ref", "--stdin"],
        input=lines,
        text=True,
        check=True,
        env=GIT_ENV,
    )
    result = clone(tmp_path / "c", str(remote), clock=fixed_clock())
    assert len(result.branches) == 51
    git_dir = tmp_path / "c" / "git"
    loose = sorted(
        str(p.relative_to(git_dir))
        for p in (git_dir / "refs").rglob("*")
        if p.is_file()
    )
    assert loose == ["refs/heads/main"]  # the rest in one packed-refs
    packed = (git_dir / "packed-refs").read_text()
    assert packed.count("refs/heads/agent/") == 50
    assert packed.count("refs/remotes/origin/") == 51
    store = Store.open(tmp_path / "c", clock=fixed_clock())
    assert len(store.branches()) == 51
    assert [op.message for op in op_log(store)] == [f"ctx clone: from {remote}"]
    assert fetch(store).updated == ()
    store.close()


def _remote_ahead(world: World, tmp_path: Path, text: str) -> str:
    """Returns the ssh address of a copy of the good remote, one memory ahead."""
    remote = tmp_path / "ahead.git"
    shutil.copytree(world.good.repo, remote)
    shutil.copytree(world.base, tmp_path / "writer")
    writer = Store.open(tmp_path / "writer", clock=fixed_clock())
    add_remote(writer, "copy", str(remote))
    remember(writer, Draft(text=text), WHO)
    push(writer, "copy")
    writer.close()
    return f"ssh://localhost{remote}"


def test_a_good_fetch_through_the_quarantine_keeps_its_pack(
    world, access, base, tmp_path
):
    add_remote(
        base, "copy", _remote_ahead(world, tmp_path, "Sent through git's own server")
    )
    result = pull(base, WHO, "copy", "main", access=access)
    assert result.merge.fast_forward
    assert "Sent through git's own server" in {
        r.memory.body for r in list_memories(base)
    }
    objects = base.path / "git" / "objects"
    assert not list(objects.glob("ctx-incoming-*"))
    git(base.path / "git", "fsck", "--strict", "--no-progress")


def test_any_command_clears_a_killed_clones_build_folder(tmp_path: Path) -> None:
    """A build left beside a finished store goes at the next open, not clone."""
    from ctx.engine import Store

    store = tmp_path / ".ctx"
    Store.init(store, clock=lambda: datetime.now(UTC)).close()
    left = store / "git.new-killed"
    (left / "objects").mkdir(parents=True)
    (left / "objects" / "pack").write_bytes(b"x" * 1000)
    Store.open(store, clock=lambda: datetime.now(UTC)).close()
    assert not left.exists()


# Stands in for ssh as FAKE_SSH does, and relays git's own server's answer
# with its pack damaged: the pack's sideband packets are held until the flush
# that ends them, then the last one is changed (DAMAGE: the checksum's last
# byte flipped, or the last ten bytes cut off).
BREAKING_SSH = """#!{python}
import subprocess, sys
server = subprocess.Popen(["sh", "-c", sys.argv[-1]], stdout=subprocess.PIPE)
source, out, held = server.stdout, sys.stdout.buffer, []
while head := source.read(4):
    size = int(head, 16)
    payload = source.read(size - 4) if size > 4 else b""
    if payload[:1] == b"\\x01" and (held or payload[1:5] == b"PACK"):
        held.append(payload)
        continue
    if size == 0 and held:
        last = held[-1]
        held[-1] = {damage}
        for packet in held:
            out.write(b"%04x" % (len(packet) + 4) + packet)
        held = []
    out.write(head + payload)
    out.flush()
sys.exit(server.wait())
"""
DAMAGE = {
    "checksum": "last[:-1] + bytes([last[-1] ^ 1])",
    "cut": "last[:-10]",
}


@pytest.fixture(params=sorted(DAMAGE))
def breaking(request: pytest.FixtureRequest, tmp_path: Path) -> Access:
    import sys

    ssh = tmp_path / "breaking-ssh"
    damage = DAMAGE[request.param]
    ssh.write_text(BREAKING_SSH.format(python=sys.executable, damage=damage))
    ssh.chmod(0o755)
    return Access(ssh_command=str(ssh))


def test_a_damaged_pack_is_refused_and_leaves_nothing(world, base, breaking, tmp_path):
    url = _remote_ahead(world, tmp_path, "Sent with a broken pack")
    add_remote(base, "copy", url)
    git_dir = base.path / "git"
    refs, before = git(git_dir, "for-each-ref"), files(git_dir)
    with pytest.raises(RemoteError) as caught:
        fetch(base, "copy", access=breaking)
    assert_one_line(caught.value)
    assert " cannot be fetched: the pack it sent " in caught.value.message
    assert git(git_dir, "for-each-ref") == refs
    assert files(git_dir) == before  # no object kept, no quarantine left
    assert_readable(base)

    outside = tmp_path / "here"
    outside.mkdir()
    with pytest.raises(RemoteError) as caught:
        clone(outside / "c", url, clock=fixed_clock(), access=breaking)
    assert_one_line(caught.value)
    assert list(outside.iterdir()) == []

    # The same server through a relay that changes nothing: fetched whole.
    assert fetch(base, "copy", access=Access(ssh_command=str(world.ssh))).updated


# A store in memory (a user store not made yet, dry runs): the server's pack
# is read in memory by the same pass, and no object is added before the
# checks pass; before, dulwich wrote what the server sent into the store.


@pytest.mark.parametrize("name", sorted(set(REFUSED) - SERVER_IGNORES))
def test_a_store_in_memory_refuses_a_hostile_remote_and_keeps_no_object(
    world, access, name
):
    store = Store.memory(clock=fixed_clock())
    add_remote(store, "evil", world.url(name, "ssh"))
    before = set(store.repo.object_store)
    with pytest.raises(RemoteError) as caught:
        fetch(store, "evil", access=access)
    assert_one_line(caught.value)
    assert set(store.repo.object_store) == before


def test_a_store_in_memory_refuses_a_hostile_record_and_keeps_its_objects_out(
    world, access, tmp_path
):
    repo = remote_with_a_record(world, tmp_path, b"120000")
    store = Store.memory(clock=fixed_clock())
    add_remote(store, "evil", f"ssh://localhost{repo}")
    with pytest.raises(RemoteError, match="the record of redactions has a symbolic"):
        fetch(store, "evil", access=access)
    # The branches' objects came in the first fetch; the record's never did.
    record = git(repo, "rev-parse", "refs/ctx/redactions").strip()
    assert record not in store.repo.object_store


def test_a_store_in_memory_refuses_a_damaged_pack_then_fetches_a_good_one(
    world, breaking, tmp_path
):
    url = _remote_ahead(world, tmp_path, "Sent with a broken pack")
    store = Store.memory(clock=fixed_clock())
    add_remote(store, "copy", url)
    before = set(store.repo.object_store)
    with pytest.raises(RemoteError) as caught:
        fetch(store, "copy", access=breaking)
    assert " cannot be fetched: the pack it sent " in caught.value.message
    assert set(store.repo.object_store) == before
    remote = Path(url.removeprefix("ssh://localhost"))
    tip = git(remote, "rev-parse", "main").decode().strip()
    fetched = fetch(store, "copy", access=Access(ssh_command=str(world.ssh)))
    assert fetched.branches == {"main": tip}
    assert fetched.updated
    assert tip.encode() in store.repo.object_store


def test_a_second_fetch_into_a_store_in_memory_is_checked_as_the_first(
    world, access, breaking, tmp_path
):
    # The second pack may be thin: its deltas' bases are the store's.
    store = Store.memory(clock=fixed_clock())
    add_remote(store, "good", f"ssh://localhost{world.good.repo}")
    assert fetch(store, "good", access=access).updated
    add_remote(store, "ahead", _remote_ahead(world, tmp_path, "A later memory"))
    held = set(store.repo.object_store)
    with pytest.raises(RemoteError) as caught:
        fetch(store, "ahead", access=breaking)
    assert " cannot be fetched: the pack it sent " in caught.value.message
    assert set(store.repo.object_store) == held
    assert fetch(store, "ahead", access=access).updated
    assert set(store.repo.object_store) > held


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_a_pack_past_what_a_fetch_takes_is_refused_as_it_comes(
    world, access, tmp_path, monkeypatch: pytest.MonkeyPatch, where
):
    # Random hex compresses to no less than half (4 KiB here): the pack is
    # past the bound before its objects are read (the bound on what they make
    # is tested with packs written by hand, tests/engine/test_receiving.py).
    from ctx.engine import _receiving

    url = _remote_ahead(world, tmp_path, os.urandom(4096).hex())
    monkeypatch.setattr(_receiving, "MAX_RECEIVED_BYTES", 2048)
    if where == "memory":
        store = Store.memory(clock=fixed_clock())
    else:
        store = copy_of_base(world, tmp_path / "store")
    add_remote(store, "copy", url)
    before = set(store.repo.object_store)
    on_disk = None if store.path is None else files(store.path / "git")
    with pytest.raises(RemoteError) as caught:
        fetch(store, "copy", access=access)
    assert_one_line(caught.value)
    assert "the pack it sent is larger than" in caught.value.message
    assert set(store.repo.object_store) == before
    if on_disk is not None:
        assert files(store.path / "git") == on_disk  # no quarantine left
    store.close()
