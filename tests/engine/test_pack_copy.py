"""Push and local clone send objects as the store's packs hold them (issue 34).

Each test checks both ends with ``git fsck --strict`` and compares every
object the two repositories hold, content included, through stock git: a
pack entry copied at the wrong length, or under the wrong id, shows there.
"""

from __future__ import annotations

import binascii
import hashlib
import shutil
import subprocess
import zlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from hostile_repos import GIT, GIT_ENV, git

from ctx.engine import (
    Draft,
    Intent,
    Store,
    add_remote,
    clone,
    edit,
    gc,
    list_memories,
    push,
    remember,
    remember_many,
)

ALICE = Intent(agent="alice", intent="observe")


def bare(path: Path) -> Path:
    subprocess.run(
        [GIT, "init", "-q", "--bare", "-b", "main", str(path)], check=True, env=GIT_ENV
    )
    return path


def contents(repo: Path) -> dict[str, bytes]:
    """Every object a repository holds (packed or loose), with its content."""
    ids = git(
        repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"
    ).split()
    out = git(repo, "cat-file", "--batch", input=b"\n".join(ids) + b"\n")
    found: dict[str, bytes] = {}
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        sha, _kind, size = out[at:end].split()
        body = out[end + 1 : end + 1 + int(size)]
        found[sha.decode()] = body
        at = end + 1 + int(size) + 1
    return found


def reachable(repo: Path, tip: str) -> set[str]:
    listed = git(repo, "rev-list", "--objects", tip).decode().split("\n")
    return {line.split()[0] for line in listed if line}


def fsck(repo: Path) -> None:
    git(repo, "fsck", "--strict", "--no-progress")


def many(store: Store, n: int, start: int = 0) -> None:
    drafts = [Draft(text=f"Memory number {i} of the copy") for i in range(start, n)]
    remember_many(store, drafts, ALICE)


def same_objects(source: Path, target: Path, tip: str) -> None:
    """The target holds every object ``tip`` reaches, as the source does."""
    fsck(target)
    theirs = contents(target)
    ours = contents(source)
    wanted = reachable(source, tip)
    assert wanted <= set(theirs)
    assert all(theirs[sha] == ours[sha] for sha in wanted)


def push_and_clone(store: Store, tmp_path: Path, clock: Callable[[], datetime]) -> None:
    """Pushes store ``a`` whole, clones the remote and ``a``: all hold the same."""
    source = tmp_path / "a" / "git"
    remote = bare(tmp_path / "remote.git")
    add_remote(store, "origin", str(remote))
    push(store)
    tip = store.branch_tip("main")
    same_objects(source, remote, tip)
    clone(tmp_path / "b", str(remote), clock=clock)
    same_objects(source, tmp_path / "b" / "git", tip)
    clone(tmp_path / "c", str(tmp_path / "a"), clock=clock)
    same_objects(source, tmp_path / "c" / "git", tip)


def packed_entries(repo: Path) -> dict[str, bytes]:
    """The stored bytes of every whole object in the repository's packs."""
    found: dict[str, bytes] = {}
    for idx in sorted((repo / "objects" / "pack").glob("*.idx")):
        listed = git(repo, "verify-pack", "-v", str(idx)).decode().splitlines()
        data = idx.with_suffix(".pack").read_bytes()
        for line in listed:
            parts = line.split()
            if len(parts) == 5 and parts[1] in ("blob", "tree", "commit"):
                sha, _kind, _size, stored, offset = parts
                found[sha] = data[int(offset) : int(offset) + int(stored)]
    return found


def test_a_whole_push_sends_the_stored_entries_and_the_remote_has_every_object(
    tmp_path: Path, clock: Callable[[], datetime]
):
    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 300)
    gc(store)
    remote = bare(tmp_path / "remote.git")
    add_remote(store, "origin", str(remote))
    push(store)
    source = tmp_path / "a" / "git"
    tip = store.branch_tip("main")
    same_objects(source, remote, tip)
    # The remote's pack holds the very bytes the store's pack held: the
    # objects were neither inflated nor deflated again.
    ours, theirs = packed_entries(source), packed_entries(remote)
    assert len(ours) > 600
    assert all(theirs[sha] == ours[sha] for sha in reachable(source, tip))
    store.close()


def test_a_store_with_packs_and_loose_objects_is_pushed_and_cloned_whole(
    tmp_path: Path, clock: Callable[[], datetime]
):
    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 200)
    gc(store)
    many(store, 260, start=200)  # a second pack
    first = list_memories(store)[0].memory.id
    for i in range(5):  # loose objects: single writes
        remember(store, Draft(text=f"Loose memory {i}"), ALICE)
    edit(store, first, ALICE, body="Edited after the packs")
    source = tmp_path / "a" / "git"
    assert list((source / "objects" / "pack").glob("*.idx"))
    assert any(len(p.name) == 2 for p in (source / "objects").iterdir())
    push_and_clone(store, tmp_path, clock)
    store.close()


def test_a_store_whose_pack_holds_deltas_is_pushed_and_cloned_whole(
    tmp_path: Path, clock: Callable[[], datetime]
):
    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 300)
    memories = list_memories(store)
    for i, found in enumerate(memories[:40]):
        edit(store, found.memory.id, ALICE, body=f"{found.memory.body} (edit {i})")
    source = tmp_path / "a" / "git"
    git(source, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=20")
    listed = git(
        source, "verify-pack", "-v", *map(str, source.glob("objects/pack/*.idx"))
    )
    assert b"chain length" in listed  # git stored deltas
    push_and_clone(store, tmp_path, clock)
    store.close()


def test_an_entry_whose_crc_does_not_match_its_index_is_read_and_sent_whole(
    tmp_path: Path, clock: Callable[[], datetime]
):
    from ctx.engine._pack_copy import pack_records

    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 100)
    gc(store)
    source = tmp_path / "a" / "git"
    (idx,) = (source / "objects" / "pack").glob("*.idx")
    raw = bytearray(idx.read_bytes())
    count = int.from_bytes(raw[8 + 255 * 4 : 8 + 256 * 4], "big")
    first_crc = 8 + 256 * 4 + 20 * count
    sha = raw[8 + 256 * 4 : 8 + 256 * 4 + 20].hex()
    raw[first_crc : first_crc + 4] = bytes(4)  # CRC of the first object
    idx.chmod(0o644)
    idx.write_bytes(bytes(raw))
    store.close()
    store = Store.open(tmp_path / "a", clock=clock)
    objects = store.repo.object_store
    ids = list(reachable(source, store.branch_tip("main")))
    assert sha in ids
    count_, records = pack_records(objects, [i.encode() for i in ids])
    by_id = {r.sha().hex(): r for r in records}
    assert count_ == len(ids) == len(by_id)
    assert by_id[sha].comp_chunks is None  # read and compressed again
    _, data = objects.get_raw(sha.encode())
    assert b"".join(by_id[sha].decomp_chunks) == data
    reused = [r for r in by_id.values() if r.comp_chunks is not None]
    assert len(reused) == len(ids) - 1
    entry = reused[0].comp_chunks[0]
    # The entry is its header and the zlib stream of the object, whole.
    at = 1
    while entry[at - 1] & 0x80:
        at += 1
    assert (
        zlib.decompress(entry[at:])
        == objects.get_raw(reused[0].sha().hex().encode())[1]
    )
    store.close()


def test_entries_sent_in_runs_make_the_same_pack_bytes(
    tmp_path: Path, clock: Callable[[], datetime]
):
    from dulwich.pack import PackChunkGenerator

    from ctx.engine._pack_copy import in_runs, pack_records

    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 400)
    gc(store)
    remember(store, Draft(text="A loose memory between the runs"), ALICE)
    objects = store.repo.object_store
    ids = [i.encode() for i in reachable(tmp_path / "a" / "git", "main")]

    def stream(runs: bool) -> tuple[bytes, int]:
        count, records = pack_records(objects, ids)
        if runs:
            count, records = in_runs(count, records)
        chunks = list(
            PackChunkGenerator(
                num_records=count,
                records=records,
                object_format=objects.object_format,
            )
        )
        return b"".join(chunks), len(chunks)

    whole, _ = stream(runs=False)
    in_runs_, writes = stream(runs=True)
    assert in_runs_ == whole
    # A write for each run of about 64 KiB, not one for each object (a
    # packed store's whole pack comes in runs already).
    assert writes * 20 < len(set(ids))
    pack = tmp_path / "sent.pack"
    pack.write_bytes(whole)
    git(tmp_path / "a" / "git", "index-pack", str(pack))
    store.close()


def deltified_store(tmp_path: Path, clock: Callable[[], datetime]) -> Store:
    """A store of one pack (every object of main) that git stored deltas in."""
    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 200)
    for i, found in enumerate(list_memories(store)[:30]):
        edit(store, found.memory.id, ALICE, body=f"{found.memory.body} (edit {i})")
    source = tmp_path / "a" / "git"
    git(source, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=20")
    git(source, "prune-packed")
    store.close()
    return Store.open(tmp_path / "a", clock=clock)


def only_pack(repo: Path) -> Path:
    (pack,) = (repo / "objects" / "pack").glob("*.pack")
    return pack


def test_a_pack_all_of_whose_objects_go_is_streamed_as_it_is_deltas_included(
    tmp_path: Path, clock: Callable[[], datetime]
):
    from dulwich.pack import PackChunkGenerator

    from ctx.engine._pack_copy import in_runs, pack_records

    store = deltified_store(tmp_path, clock)
    source = tmp_path / "a" / "git"
    pack = only_pack(source)
    assert b"chain length" in git(source, "verify-pack", "-v", str(pack))
    held = git(
        source, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"
    ).split()
    # Every object the store holds is sent: so the pack goes whole.
    assert set(held) == {s.encode() for s in reachable(source, "main")}
    objects = store.repo.object_store
    count, records = in_runs(*pack_records(objects, held))
    sent = b"".join(
        PackChunkGenerator(
            num_records=count, records=records, object_format=objects.object_format
        )
    )
    assert sent == pack.read_bytes()
    store.close()


def test_a_whole_push_copies_the_pack_file_and_its_deltas(
    tmp_path: Path, clock: Callable[[], datetime]
):
    # A clone from a path writes each object as it read and hashed it (the
    # test below), so only the push, from the store's own packs, copies them.
    store = deltified_store(tmp_path, clock)
    source = tmp_path / "a" / "git"
    pack = only_pack(source)
    push_and_clone(store, tmp_path, clock)
    for copy in (tmp_path / "remote.git",):
        names = [p.name for p in (copy / "objects" / "pack").glob("*.pack")]
        assert pack.name in names, copy
        copied = copy / "objects" / "pack" / pack.name
        assert copied.read_bytes() == pack.read_bytes()
        assert (
            copied.with_suffix(".idx").read_bytes()
            == pack.with_suffix(".idx").read_bytes()
        )
    store.close()


def test_a_pack_holding_objects_of_a_branch_not_pushed_is_not_sent_whole(
    tmp_path: Path, clock: Callable[[], datetime]
):
    from ctx.engine import create_branch

    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 50)
    create_branch(store, "private")
    remember(store, Draft(text="Only on the private branch"), ALICE, branch="private")
    gc(store)
    source = tmp_path / "a" / "git"
    private_only = reachable(source, "private") - reachable(source, "main")
    assert private_only
    remote = bare(tmp_path / "remote.git")
    add_remote(store, "origin", str(remote))
    push(store, branches=["main"])
    same_objects(source, remote, store.branch_tip("main"))
    assert not private_only & set(contents(remote))
    store.close()


@pytest.mark.parametrize("damage", ["index checksum", "crc"])
def test_a_pack_that_fails_a_check_is_sent_object_by_object(
    tmp_path: Path, clock: Callable[[], datetime], damage: str
):
    from ctx.engine._pack_copy import _StoredEntries

    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 80)
    gc(store)
    tip = store.branch_tip("main")
    store.close()
    source = tmp_path / "a" / "git"
    pristine = tmp_path / "pristine.git"
    shutil.copytree(source, pristine)
    ids = [s.encode() for s in reachable(source, "main")]
    pack = only_pack(source)
    idx = pack.with_suffix(".idx")
    count = int.from_bytes(idx.read_bytes()[8 + 255 * 4 : 8 + 256 * 4], "big")
    target, at = {
        "index checksum": (idx, -1),
        "crc": (idx, 8 + 256 * 4 + 20 * count),  # the first object's CRC
    }[damage]
    raw = bytearray(target.read_bytes())
    raw[at] ^= 0xFF
    target.chmod(0o644)
    target.write_bytes(bytes(raw))
    store = Store.open(tmp_path / "a", clock=clock)
    stored = _StoredEntries(store.repo.object_store, ids)
    assert len(stored.whole) == 0
    stored.close()
    remote = bare(tmp_path / "remote.git")
    add_remote(store, "origin", str(remote))
    push(store)
    same_objects(pristine, remote, tip)
    assert only_pack(remote).name != pack.name
    store.close()


def one_memory_store(path: Path, clock: Callable[[], datetime]) -> Path:
    """Makes a store of one memory (its objects loose); returns its git folder."""
    store = Store.init(path, clock=clock)
    remember(store, Draft(text="The queue is Postgres"), ALICE)
    store.close()
    return path / "git"


def test_a_local_clone_copies_each_checked_entry_as_stored(
    tmp_path: Path, clock: Callable[[], datetime]
):
    # A repository on this machine is not trusted, so its packs never go
    # whole; but an entry that inflates to the object its index names, and
    # to nothing more, goes as it is stored, not compressed again. Packed
    # by git with no compression at all, the clone's entries stay so.
    store = Store.init(tmp_path / "a", clock=clock)
    many(store, 30)
    store.close()
    source = tmp_path / "a" / "git"
    git(source, "-c", "pack.compression=0", "repack", "-a", "-d", "-f", "--window=0")
    stored = packed_entries(source)
    assert stored
    clone(tmp_path / "b", str(tmp_path / "a"), clock=clock)
    same_objects(source, tmp_path / "b" / "git", "main")
    copied = packed_entries(tmp_path / "b" / "git")
    assert {sha: copied.get(sha) for sha in stored} == stored


def test_a_local_clone_never_reads_an_entry_longer_than_its_object_can_be(
    tmp_path: Path, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
):
    # A hostile repository on this machine: its index says the memory's file
    # runs to the end of a pack padded with a mebibyte (of any size, sparse:
    # no disk). Reading it whole before its header was a way to exhaust
    # memory; an entry longer than its size compressed can be is not read.
    from dulwich.pack import write_pack_index

    from ctx.engine import _pack_copy

    source = one_memory_store(tmp_path / "a", clock)
    (blob,) = [
        found
        for found in reachable(source, "main")
        if git(source, "cat-file", "-t", found) == b"blob\n"
    ]
    entry = _entry(3, git(source, "cat-file", "blob", blob))
    pack = _pack_of([entry + bytes(1 << 20)])
    name = source / "objects" / "pack" / f"pack-{pack[-20:].hex()}"
    name.with_suffix(".pack").write_bytes(pack)
    padded = entry + bytes(1 << 20)
    with open(f"{name}.idx", "wb") as f:
        write_pack_index(
            f, [(binascii.unhexlify(blob), 12, binascii.crc32(padded))], pack[-20:]
        )
    seen: list[int] = []
    checked = _pack_copy._is_object

    def spy(sha: bytes, found: bytes) -> bool:
        seen.append(len(found))
        return checked(sha, found)

    monkeypatch.setattr(_pack_copy, "_is_object", spy)
    clone(tmp_path / "b", str(tmp_path / "a"), clock=clock)
    same_objects(source, tmp_path / "b" / "git", "main")
    assert all(length < 1 << 16 for length in seen)  # the file's is never read


def test_only_an_entry_that_is_exactly_its_object_is_copied_as_stored():
    from ctx.engine._pack_copy import _is_object

    data = b"The queue is Postgres"
    sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().encode()
    entry = _entry(3, data)
    assert _is_object(sha, entry)
    assert not _is_object(sha, entry + b"garbage")  # bytes after its data
    assert not _is_object(sha.replace(b"a", b"b", 1), entry)  # another id
    assert not _is_object(sha, _entry(2, data))  # a tree of those bytes
    assert not _is_object(sha, entry[:-4])  # cut short
    assert not _is_object(sha, bytes([entry[0] | 0x80]))  # a size never ending
    longer = _entry(3, data + b"!")
    assert not _is_object(sha, bytes([entry[0]]) + longer[1:])  # more than its size
    delta = bytes([6 << 4 | len(data)]) + zlib.compress(data)
    assert not _is_object(sha, delta)
    # A size past MAX_OBJECT_BYTES is never inflated.
    huge = bytes([3 << 4 | 0x80, 0x80, 0x80, 0x80, 0x40]) + zlib.compress(data)
    assert not _is_object(sha, huge)


@pytest.mark.parametrize("kind", ["blob", "tree", "commit"])
def test_a_local_clone_refuses_an_object_whose_content_is_not_its_id(
    tmp_path: Path, clock: Callable[[], datetime], kind: str
):
    from ctx.engine import RemoteError

    source = one_memory_store(tmp_path / "a", clock)
    if kind == "commit":  # the tip
        sha = git(source, "rev-parse", "main").decode().strip()
    elif kind == "tree":  # the top folder
        sha = git(source, "rev-parse", "main^{tree}").decode().strip()
    else:  # the memory's file
        (sha,) = [
            found
            for found in reachable(source, "main")
            if git(source, "cat-file", "-t", found) == b"blob\n"
        ]
    content = git(source, "cat-file", kind, sha)
    # Another file's text, the top folder with an entry renamed, or the tip
    # with another message.
    if kind == "blob":
        other = b"The queue is Kafka"
    elif kind == "tree":
        nul = content.index(b"\0")
        other = content[:nul] + b"x" + content[nul:]
    else:
        other = content + b"Forged.\n"
    loose = source / "objects" / sha[:2] / sha[2:]
    assert loose.exists()  # a single write leaves its objects loose
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(b"%s %d\0" % (kind.encode(), len(other)) + other))
    with pytest.raises(
        RemoteError, match=f"cannot be read \\(its content is not object {sha}\\)"
    ):
        clone(tmp_path / "b", str(tmp_path / "a"), clock=clock)
    assert not (tmp_path / "b").exists()


def _pack_of(entries: list[bytes]) -> bytes:
    body = b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big")
    body += b"".join(entries)
    return body + hashlib.sha1(body).digest()


def _entry(kind: int, data: bytes) -> bytes:
    """A pack entry of a whole object: its type and size header, then zlib."""
    size = len(data)
    first, size = kind << 4 | size & 15, size >> 4
    header = []
    while size:
        header.append(first | 0x80)
        first, size = size & 0x7F, size >> 7
    header.append(first)
    return bytes(header) + zlib.compress(data)


@pytest.mark.parametrize("lookup", ["missed by dulwich", "beside a good pack"])
def test_a_local_clone_never_copies_a_pack_entry_that_is_not_its_id(
    tmp_path: Path, clock: Callable[[], datetime], lookup: str
):
    # A hostile repository on this machine: a pack whose index names the top
    # folder's id for an entry that is another folder. The checks read the
    # object through dulwich, which finds the good copy; what is copied must
    # be what was checked, not the entry the index names.
    from dulwich.pack import write_pack_index

    from ctx.engine import RemoteError

    source = one_memory_store(tmp_path / "a", clock)
    tree = git(source, "rev-parse", "main^{tree}").decode().strip()
    if lookup == "beside a good pack":
        # Every object packed, and one more: that pack never goes whole.
        extra = git(source, "hash-object", "-w", "--stdin", input=b"unreachable")
        wanted = [*sorted(reachable(source, "main")), extra.decode().strip()]
        prefix = str(source / "objects" / "pack" / "pack")
        git(source, "pack-objects", "-q", prefix, input="\n".join(wanted).encode())
    content = git(source, "cat-file", "tree", tree)
    nul = content.index(b"\0")
    entry = _entry(2, content[:nul] + b"x" + content[nul:])  # an entry renamed
    pack = _pack_of([entry])
    name = source / "objects" / "pack" / f"pack-{pack[-20:].hex()}"
    name.with_suffix(".pack").write_bytes(pack)
    with open(f"{name}.idx", "wb") as f:
        write_pack_index(
            f, [(binascii.unhexlify(tree), 12, binascii.crc32(entry))], pack[-20:]
        )
    if lookup == "missed by dulwich":
        # A fan-out that says the pack holds nothing below the last bucket:
        # dulwich's look-up misses the entry, the table of names does not.
        idx = bytearray(Path(f"{name}.idx").read_bytes()[:-20])
        idx[8 : 8 + 255 * 4] = bytes(255 * 4)
        idx += hashlib.sha1(idx).digest()
        Path(f"{name}.idx").write_bytes(bytes(idx))
    refused: RemoteError | None = None
    try:
        clone(tmp_path / "b", str(tmp_path / "a"), clock=clock)
    except RemoteError as exc:
        refused = exc
    if refused is not None:  # refused in one line is right too
        assert "\n" not in refused.message
        assert not (tmp_path / "b").exists()
        return
    fsck(tmp_path / "b" / "git")
    copied = git(tmp_path / "b" / "git", "cat-file", "tree", tree)
    assert copied == content


def test_a_local_clone_refuses_a_delta_that_makes_too_large_an_object(
    tmp_path: Path, clock: Callable[[], datetime]
):
    # A hostile repository on this machine: the memory's file is a delta of
    # two hundred bytes that copies a mebibyte of zeros a hundred times.
    # Applied, it would make 100 MiB before any check saw the object.
    from dulwich.pack import write_pack_index

    from ctx.engine import RemoteError

    source = one_memory_store(tmp_path / "a", clock)
    (blob,) = [
        found
        for found in reachable(source, "main")
        if git(source, "cat-file", "-t", found) == b"blob\n"
    ]
    zeros = bytes(1 << 20)
    base = _entry(3, zeros)
    base_id = hashlib.sha1(b"blob %d\0" % len(zeros) + zeros).digest()
    delta = b"\x80\x80\x40" + b"\x80\x80\x80\x32" + b"\xc0\x10" * 100  # 1 MiB -> 100
    bomb = bytes([7 << 4 | 0x80 | len(delta) & 15, len(delta) >> 4]) + base_id
    bomb += zlib.compress(delta)
    pack = _pack_of([base, bomb])
    name = source / "objects" / "pack" / f"pack-{pack[-20:].hex()}"
    name.with_suffix(".pack").write_bytes(pack)
    entries = [
        (base_id, 12, binascii.crc32(base)),
        (binascii.unhexlify(blob), 12 + len(base), binascii.crc32(bomb)),
    ]
    with open(f"{name}.idx", "wb") as f:
        write_pack_index(f, sorted(entries), pack[-20:])
    (source / "objects" / blob[:2] / blob[2:]).unlink()  # only the pack has it
    with pytest.raises(RemoteError) as refused:
        clone(tmp_path / "b", str(tmp_path / "a"), clock=clock)
    assert refused.value.message.endswith(
        "which cannot be read (it would make an object of 104,857,600 bytes, "
        "more than the 64 MiB a store takes)."
    ), refused.value.message
    assert not (tmp_path / "b").exists()
