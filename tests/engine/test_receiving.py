"""A received pack indexed in one pass (issue 34): as git's index-pack does.

Each pack here comes from stock git (``pack-objects``): whole objects, deltas
on an offset, deltas on an id, a thin pack whose bases the store holds. The
index ctx writes must be git's own for the same pack, and every object's
type and bytes what git reads; a damaged pack is refused.
"""

from __future__ import annotations

import hashlib
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich.errors import ChecksumMismatch
from dulwich.object_store import DiskObjectStore
from dulwich.pack import UnresolvedDeltas
from hostile_repos import GIT, GIT_ENV, git
from packs_by_hand import delta_size, entry_header

from ctx.engine._receiving import RECEIVED_NAME, index_received

_KINDS = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


def history(tmp_path: Path, commits: int = 6) -> Path:
    """A repository whose files change a little at each commit (deltas)."""
    repo = tmp_path / "repo.git"
    subprocess.run(
        [GIT, "init", "-q", "--bare", "-b", "main", str(repo)], check=True, env=GIT_ENV
    )
    body = "".join(f"line {i} of a file that changes a little\n" for i in range(200))
    parent: list[str] = []
    for n in range(commits):
        listing = b""
        for name in ("a.txt", "b.txt"):
            text = f"{name} {n}\n{body}" + "x\n" * n
            blob = git(repo, "hash-object", "-w", "--stdin", input=text.encode())
            listing += b"100644 blob " + blob.strip() + b"\t" + name.encode() + b"\n"
        tree = git(repo, "mktree", input=listing).decode().strip()
        made = git(repo, "commit-tree", tree, *parent, input=f"commit {n}".encode())
        parent = ["-p", made.decode().strip()]
    git(repo, "update-ref", "refs/heads/main", parent[1])
    return repo


def packed(repo: Path, *args: str, revs: str) -> bytes:
    return git(
        repo,
        "pack-objects",
        "--revs",
        "--stdout",
        "-q",
        "--window=10",
        *args,
        input=revs.encode(),
    )


def objects_of(repo: Path, revs: str) -> dict[bytes, tuple[int, bytes]]:
    """What git reads for every object ``revs`` names (``rev-list --objects``)."""
    ids = [
        line.split()[0]
        for line in git(repo, "rev-list", "--objects", *revs.split()).splitlines()
    ]
    out = git(repo, "cat-file", "--batch", input=b"\n".join(ids) + b"\n")
    found = {}
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        sha, kind, size = out[at:end].split()
        found[sha] = (_KINDS[kind], out[end + 1 : end + 1 + int(size)])
        at = end + 1 + int(size) + 1
    return found


def quarantine(tmp_path: Path, pack: bytes) -> DiskObjectStore:
    folder = tmp_path / "incoming"
    store = DiskObjectStore.init(str(folder))
    (folder / "pack" / RECEIVED_NAME).write_bytes(pack)
    return store


def nothing(sha: bytes) -> tuple[int, bytes]:
    raise KeyError(sha)


def received(tmp_path: Path, pack: bytes, resolve: Callable = nothing):
    store = quarantine(tmp_path, pack)
    try:
        return index_received(store, resolve), store
    finally:
        store.close()


def same_index_as_git(tmp_path: Path, store: DiskObjectStore, pack: bytes) -> None:
    """ctx's index of the pack is the one git's index-pack writes for it."""
    (idx,) = Path(store.pack_dir).glob("pack-*.idx")
    theirs = tmp_path / "theirs.pack"
    theirs.write_bytes(Path(str(idx)[: -len(".idx")] + ".pack").read_bytes())
    git(repo_of(tmp_path), "index-pack", str(theirs))
    assert idx.read_bytes() == theirs.with_suffix(".idx").read_bytes()


@pytest.mark.parametrize("offsets", [True, False], ids=["ofs-delta", "ref-delta"])
def test_a_pack_with_deltas_is_indexed_as_git_indexes_it(tmp_path: Path, offsets: bool):
    repo = history(tmp_path)
    pack = packed(repo, *(["--delta-base-offset"] if offsets else []), revs="main\n")
    listed = git(repo, "verify-pack", "-v", str(write(tmp_path, pack)))
    assert b"chain length" in listed  # git stored deltas
    found, store = received(tmp_path, pack)
    wanted = objects_of(repo, "main")
    assert {sha: value for sha, value in found.items()} == wanted
    same_index_as_git(tmp_path, store, pack)


def write(tmp_path: Path, pack: bytes) -> Path:
    path = tmp_path / "check" / "p.pack"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(pack)
    git(repo_of(tmp_path), "index-pack", str(path))
    return path.with_suffix(".idx")


def repo_of(tmp_path: Path) -> Path:
    return tmp_path / "repo.git"


@pytest.mark.parametrize("offsets", [True, False], ids=["ofs-delta", "ref-delta"])
def test_a_thin_pack_is_completed_from_the_store(tmp_path: Path, offsets: bool):
    # By id, a delta's base may be another delta of the pack, on an object
    # of the store (a server that sends no offset deltas).
    repo = history(tmp_path)
    pack = packed(
        repo,
        "--thin",
        *(["--delta-base-offset"] if offsets else []),
        revs="main\n^main~2\n",
    )
    old = objects_of(repo, "main~2")
    asked = []

    def resolve(sha: bytes) -> tuple[int, bytes]:
        key = sha.hex().encode() if len(sha) == 20 else sha
        asked.append(key)
        return old[key]

    found, store = received(tmp_path, pack, resolve)
    assert asked  # it was thin: bases the pack lacks were read from the store
    new = objects_of(repo, "main ^main~2")
    assert found == new
    (idx,) = Path(store.pack_dir).glob("pack-*.idx")
    git(repo, "verify-pack", str(idx))  # completed: every base inside


def test_a_thin_pack_whose_base_nobody_holds_is_refused(tmp_path: Path):
    repo = history(tmp_path)
    pack = packed(repo, "--thin", revs="main\n^main~2\n")
    with pytest.raises(UnresolvedDeltas):
        received(tmp_path, pack)


def resealed(pack: bytes) -> bytes:
    """``pack`` with its trailing checksum made its own again."""
    return pack[:-20] + hashlib.sha1(pack[:-20]).digest()


def damaged(pack: bytes, how: str) -> bytes:
    if how == "checksum":
        return pack[:-1] + bytes([pack[-1] ^ 1])
    if how == "cut":
        return resealed(pack[: len(pack) // 2] + pack[-20:])
    if how == "more":
        return resealed(pack[:-20] + zlib.compress(b"more") + pack[-20:])
    if how == "data":  # a byte inside the first object's zlib stream
        return resealed(pack[:14] + bytes([pack[14] ^ 0xFF]) + pack[15:])
    if how == "count":
        more = int.from_bytes(pack[8:12], "big") + 1
        return resealed(pack[:8] + more.to_bytes(4, "big") + pack[12:])
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["checksum", "cut", "more", "data", "count"])
def test_a_damaged_pack_is_refused(tmp_path: Path, how: str):
    repo = history(tmp_path, commits=2)
    pack = damaged(packed(repo, "--delta-base-offset", revs="main\n"), how)
    with pytest.raises((ChecksumMismatch, ValueError, zlib.error)):
        received(tmp_path, pack)
    refused = subprocess.run(
        [GIT, "index-pack", "--stdin"],
        input=pack,
        capture_output=True,
        cwd=repo,
        env=GIT_ENV,
    )
    assert refused.returncode != 0  # git refuses it too


def one_entry_pack(entry: bytes) -> bytes:
    body = b"PACK" + (2).to_bytes(4, "big") + (1).to_bytes(4, "big") + entry
    return body + hashlib.sha1(body).digest()


_DELTA = b"\x05\x05\x90\x05\x00"  # five bytes, as its header says


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        # A blob that says it holds far more than its data can inflate to.
        (entry_header(3, 1 << 70) + zlib.compress(b"small"), "size"),
        # A delta on an offset before the pack's first entry.
        (entry_header(6, 5) + bytes([0x7F]) + zlib.compress(_DELTA), "no base"),
        # A delta on itself (distance 0).
        (entry_header(6, 5) + bytes([0]) + zlib.compress(_DELTA), "no base"),
    ],
    ids=["size", "base-before", "base-itself"],
)
def test_an_entry_that_cannot_be_is_refused(tmp_path: Path, entry: bytes, why: str):
    with pytest.raises(ValueError, match=why):
        received(tmp_path, one_entry_pack(entry))


def pack_of(*entries: bytes) -> bytes:
    body = b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big")
    body += b"".join(entries)
    return body + hashlib.sha1(body).digest()


@pytest.mark.parametrize(
    ("base", "made", "why"),
    [(5, 1 << 40, "makes more than it can"), (6, 5, "base of another size")],
    ids=["a terabyte", "another base"],
)
def test_a_delta_whose_sizes_cannot_be_is_refused_before_it_is_applied(
    tmp_path: Path, base: int, made: int, why: str
):
    # A delta of a few bytes that says it makes a terabyte out of five
    # bytes: applied, it would fail for want of memory.
    blob = entry_header(3, 5) + zlib.compress(b"hello")
    delta = delta_size(base) + delta_size(made) + b"\x90\x05"  # copy 5 bytes
    on_blob = hashlib.sha1(b"blob 5\0hello").digest()
    ref_delta = entry_header(7, len(delta)) + on_blob + zlib.compress(delta)
    with pytest.raises(ValueError, match=why):
        received(tmp_path, pack_of(blob, ref_delta))


def test_a_delta_written_by_hand_is_applied(tmp_path: Path):
    # The same writing as the refused ones above, with nothing wrong.
    blob = entry_header(3, 5) + zlib.compress(b"hello")
    delta = delta_size(5) + delta_size(5) + b"\x90\x05"
    on_blob = hashlib.sha1(b"blob 5\0hello").digest()
    ref_delta = entry_header(7, len(delta)) + on_blob + zlib.compress(delta)
    found, _ = received(tmp_path, pack_of(blob, ref_delta))
    assert found == {hashlib.sha1(b"blob 5\0hello").hexdigest().encode(): (3, b"hello")}


def test_a_pack_of_one_blob_written_by_hand_is_indexed(tmp_path: Path):
    # The same writing as the refused ones above, with nothing wrong.
    pack = one_entry_pack(entry_header(3, 5) + zlib.compress(b"hello"))
    found, _ = received(tmp_path, pack)
    assert found == {hashlib.sha1(b"blob 5\0hello").hexdigest().encode(): (3, b"hello")}


def test_a_delta_that_makes_too_large_an_object_is_refused_before_it_is_applied(
    tmp_path: Path,
):
    # Two hundred bytes that copy a mebibyte of zeros a hundred times: what
    # they say they make is what they can make, and it is 100 MiB.
    zeros = bytes(1 << 20)
    blob = entry_header(3, len(zeros)) + zlib.compress(zeros)
    delta = delta_size(len(zeros)) + delta_size(100 << 20) + b"\xc0\x10" * 100
    on_blob = hashlib.sha1(b"blob %d\0" % len(zeros) + zeros).digest()
    ref_delta = entry_header(7, len(delta)) + on_blob + zlib.compress(delta)
    with pytest.raises(ValueError, match="more than the 64 MiB a store takes"):
        received(tmp_path, pack_of(blob, ref_delta))


def test_a_whole_object_too_large_is_refused_before_it_is_inflated(tmp_path: Path):
    stream = zlib.compressobj(1)
    data = b"".join(stream.compress(bytes(1 << 20)) for _ in range(65))
    blob = entry_header(3, 65 << 20) + data + stream.flush()
    with pytest.raises(ValueError, match="more than the 64 MiB a store takes"):
        received(tmp_path, one_entry_pack(blob))


def test_a_pack_whose_objects_make_too_much_together_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Each delta makes a different mebibyte from 64 KiB of zeros, under the
    # limit of one object; together they pass what a fetch takes (3 MiB
    # here, 2 GiB by default: deltas of 45 bytes each made 60 MiB).
    from ctx.engine import _receiving

    monkeypatch.setattr(_receiving, "MAX_RECEIVED_BYTES", 3 << 20)
    zeros = bytes(64 << 10)
    blob = entry_header(3, len(zeros)) + zlib.compress(zeros)
    on_blob = hashlib.sha1(b"blob %d\0" % len(zeros) + zeros).digest()
    deltas = []
    for n in range(4):
        delta = delta_size(len(zeros)) + delta_size((1 << 20) + 1)
        delta += b"\x80" * 16 + b"\x01" + bytes([n])  # 16 copies, then one byte
        deltas.append(entry_header(7, len(delta)) + on_blob + zlib.compress(delta))
    with pytest.raises(ValueError, match="more than the 3 MiB a fetch takes"):
        received(tmp_path, pack_of(blob, *deltas))
    monkeypatch.setattr(_receiving, "MAX_RECEIVED_BYTES", 8 << 20)
    (tmp_path / "again").mkdir()
    found, _ = received(tmp_path / "again", pack_of(blob, *deltas))
    assert len(found) == 5


def test_each_object_counts_what_it_costs_besides_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # A million empty blobs are a pack of 9 MB and held 350 MB before each
    # object counted its bookkeeping: here 200 of them, against a bound of
    # 100 objects' cost; the header's count alone is under it.
    from ctx.engine import _receiving

    empty = entry_header(3, 0) + zlib.compress(b"")
    monkeypatch.setattr(_receiving, "MAX_RECEIVED_BYTES", 300 * _receiving.ENTRY_COST)
    found, _ = received(tmp_path, pack_of(*[empty] * 200))
    assert len(found) == 1  # the one empty blob, 200 times
    monkeypatch.setattr(_receiving, "MAX_RECEIVED_BYTES", 100 * _receiving.ENTRY_COST)
    (tmp_path / "again").mkdir()
    with pytest.raises(ValueError, match="says it holds 200 objects"):
        received(tmp_path / "again", pack_of(*[empty] * 200))


def test_what_a_pack_holds_is_counted_as_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from ctx.engine import _receiving
    from ctx.engine._receiving import read_received

    blobs = [b"blob %d" % n for n in range(20)]
    pack = pack_of(*[entry_header(3, len(b)) + zlib.compress(b) for b in blobs])
    cost = 20 * _receiving.ENTRY_COST + sum(map(len, blobs))
    monkeypatch.setattr(_receiving, "MAX_RECEIVED_BYTES", cost)
    assert len(read_received(pack, nothing)) == 20
    monkeypatch.setattr(_receiving, "MAX_RECEIVED_BYTES", cost - 1)
    with pytest.raises(ValueError, match="a fetch takes"):
        read_received(pack, nothing)
