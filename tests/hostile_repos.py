"""Hostile remotes built with stock git (issue #28): one bare repository each.

Every repository starts as a copy of a good ctx store's remote (two memories
and a link on ``main``). Most then get one commit on top of ``main`` whose
tree holds what stock git itself refuses in a fetch with
``transfer.fsckObjects`` or what ctx cannot read: a submodule link, a
symlink, a bad name, an entry of the wrong type, a missing object. Others break the refs instead: a branch tip
that is a blob, a tree or a commit nobody has, a bad name in ``packed-refs``.
Trees are written as raw bytes with ``git hash-object --literally``, so that
names no ``git mktree`` accepts (``..``, ``a/b``, a NUL) can be made.

:func:`make_world` makes them all under one folder, with a store cloned from
the good remote; the tests clone, fetch and pull each one and check that
nothing moved.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ctx.engine import Store

GIT = "/usr/bin/git"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "g",
    "GIT_AUTHOR_EMAIL": "g@example.com",
    "GIT_AUTHOR_DATE": "2026-01-05T09:30:00Z",
    "GIT_COMMITTER_NAME": "g",
    "GIT_COMMITTER_EMAIL": "g@example.com",
    "GIT_COMMITTER_DATE": "2026-01-05T09:30:00Z",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin",
}
MISSING = "1234567890abcdef1234567890abcdef12345678"
"""An object id no repository here holds."""
OTHER_ID = "01JA0000000000000000000000"
"""A memory id of the good store's shape that it does not hold."""


def git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    """Runs stock git on the bare repository ``repo``."""
    done = subprocess.run(
        [GIT, "--git-dir", str(repo), *args],
        input=input,
        capture_output=True,
        check=True,
        env=GIT_ENV,
    )
    return done.stdout


def _sha(repo: Path, *args: str, input: bytes | None = None) -> str:
    return git(repo, *args, input=input).decode().strip()


Entry = tuple[bytes, bytes, bytes]
"""Mode, name and binary id of one tree entry, as git stores them."""


def read_tree(repo: Path, sha: str) -> list[Entry]:
    raw = git(repo, "cat-file", "tree", sha)
    out: list[Entry] = []
    at = 0
    while at < len(raw):
        space = raw.index(b" ", at)
        nul = raw.index(b"\0", space)
        out.append((raw[at:space], raw[space + 1 : nul], raw[nul + 1 : nul + 21]))
        at = nul + 21
    return out


def write_tree(repo: Path, entries: list[Entry], tail: bytes = b"") -> str:
    """Writes a tree of ``entries`` as given (no checks), ``tail`` appended raw."""
    raw = b"".join(mode + b" " + name + b"\0" + sha for mode, name, sha in entries)
    return _sha(
        repo,
        "hash-object",
        "-t",
        "tree",
        "--literally",
        "-w",
        "--stdin",
        input=raw + tail,
    )


def _key(entry: Entry) -> bytes:
    return entry[1] + b"/" if entry[0] == b"40000" else entry[1]


def put(
    repo: Path,
    tree: str,
    folder: list[bytes],
    mode: bytes,
    name: bytes,
    sha: str,
    *,
    tail: bytes = b"",
) -> str:
    """Returns ``tree`` with entry ``name`` (``mode``, ``sha``) put in ``folder``."""
    entries = read_tree(repo, tree)
    if folder:
        head = next(e for e in entries if e[1] == folder[0])
        sub = put(repo, head[2].hex(), folder[1:], mode, name, sha, tail=tail)
        entries = [e for e in entries if e[1] != folder[0]]
        entries.append((b"40000", folder[0], bytes.fromhex(sub)))
        entries.sort(key=_key)
        return write_tree(repo, entries)
    entries = [e for e in entries if e[1] != name]
    entries.append((mode, name, bytes.fromhex(sha)))
    entries.sort(key=_key)
    return write_tree(repo, entries, tail)


def blob(repo: Path, data: bytes) -> str:
    return _sha(repo, "hash-object", "-w", "--stdin", input=data)


def commit_raw(repo: Path, tree: str, parent: str) -> str:
    """Writes a commit without git's checks (its tree or parent may be anything)."""
    text = (
        f"tree {tree}\nparent {parent}\n"
        "author g <g@example.com> 1767605400 +0000\n"
        "committer g <g@example.com> 1767605400 +0000\n\nhostile\n"
    ).encode()
    return _sha(
        repo, "hash-object", "-t", "commit", "--literally", "-w", "--stdin", input=text
    )


@dataclass(frozen=True)
class Good:
    """The good remote every hostile one starts from."""

    repo: Path
    tip: str
    tree: str
    leaf: list[bytes]
    """The folder of its one memory: ``memory/<context>/<a>/<b>/<c>``."""
    memory: bytes
    """That memory's file name."""
    blob: str


Maker = Callable[[Path, Good], None]
"""Turns a copy of the good remote into a hostile one."""


def set_ref(repo: Path, branch: str, sha: str) -> None:
    """Points ``branch`` at ``sha`` whatever it is (``update-ref`` checks it)."""
    (repo / "refs" / "heads" / branch).write_text(sha + "\n")


def _on_top(tree: Callable[[Path, Good], str]) -> Maker:
    def make(repo: Path, good: Good) -> None:
        set_ref(repo, "main", commit_raw(repo, tree(repo, good), good.tip))

    return make


def _entry(folder: str, mode: bytes, name: bytes, what: str = "blob") -> Maker:
    """A commit on top of main with one more entry in ``folder``."""

    def tree(repo: Path, good: Good) -> str:
        place = (
            good.leaf if folder == "leaf" else [p.encode() for p in folder.split("/")]
        )
        target = {"blob": good.blob, "tree": good.tree, "commit": good.tip}[what]
        return put(repo, good.tree, [p for p in place if p], mode, name, target)

    return _on_top(tree)


def _symlink(repo: Path, good: Good) -> str:
    target = blob(repo, b"../../../../../../../etc/passwd")
    return put(
        repo, good.tree, good.leaf, b"120000", f"{OTHER_ID}.json".encode(), target
    )


def _nul_in_name(repo: Path, good: Good) -> str:
    # An entry whose name holds a NUL: git reads the name up to the NUL and the
    # next 20 bytes as the id, so the rest of the tree is garbage.
    tail = b"100644 bad\0name\0" + bytes.fromhex(good.blob)
    return put(repo, good.tree, [b"memory"], b"100644", b"a", good.blob, tail=tail)


def _missing_blob(repo: Path, good: Good) -> str:
    return put(
        repo, good.tree, good.leaf, b"100644", f"{OTHER_ID}.json".encode(), MISSING
    )


def undecodable_id(good: Good) -> str:
    """The id of the undecodable memory: in the good memory's shard folder."""
    a, b, c = (part.decode() for part in good.leaf[-3:])
    return OTHER_ID[:-3] + c + b + a


def _undecodable(repo: Path, good: Good) -> str:
    mid = undecodable_id(good)
    bad = blob(repo, b'{"id": "' + mid.encode() + b'", "body": ')
    return put(repo, good.tree, good.leaf, b"100644", f"{mid}.json".encode(), bad)


def _tip_is(what: str) -> Maker:
    def make(repo: Path, good: Good) -> None:
        set_ref(
            repo,
            "main",
            {"blob": good.blob, "tree": good.tree, "missing": MISSING}[what],
        )

    return make


def _packed_ref(name: bytes) -> Maker:
    def make(repo: Path, good: Good) -> None:
        with (repo / "packed-refs").open("ab") as f:
            f.write(good.tip.encode() + b" " + name + b"\n")

    return make


def _side_branch(maker: Maker) -> Maker:
    """The hostile commit on a second branch; ``main`` stays good."""

    def make(repo: Path, good: Good) -> None:
        maker(repo, good)
        set_ref(repo, "side", (repo / "refs" / "heads" / "main").read_text().strip())
        set_ref(repo, "main", good.tip)

    return make


REFUSED: dict[str, tuple[Maker, str]] = {
    # name: (how it is made, what the one-line error says)
    "gitlink-in-memory": (
        _entry("leaf", b"160000", f"{OTHER_ID}.json".encode(), "commit"),
        "has a submodule link at 'memory/",
    ),
    "gitlink-in-links": (
        _entry("links", b"160000", b"x", "commit"),
        "has a submodule link at 'links/x'",
    ),
    "gitlink-on-side-branch": (
        _side_branch(_entry("memory", b"160000", b"sub", "commit")),
        "branch 'side' has a submodule link at 'memory/sub'",
    ),
    "symlink-in-memory": (_on_top(_symlink), "has a symbolic link at 'memory/"),
    "name-dotdot": (
        _entry("memory", b"40000", b"..", "tree"),
        "has an entry named '..' in 'memory'",
    ),
    "name-dot": (_entry("memory", b"40000", b".", "tree"), "named '.' in"),
    "name-dotgit": (_entry("memory", b"40000", b".git", "tree"), "named '.git' in"),
    "name-dotgit-upper": (
        _entry("memory", b"40000", b".GIT", "tree"),
        "named '.GIT' in",
    ),
    "name-ntfs-short": (
        _entry("", b"40000", b"GIT~1", "tree"),
        "named 'GIT~1' in the top folder",
    ),
    "name-gitmodules": (_entry("", b"100644", b".gitmodules"), "named '.gitmodules'"),
    "name-slash": (_entry("memory", b"100644", b"a/b"), "named 'a/b' in"),
    "name-empty": (_entry("memory", b"100644", b""), "named '' in"),
    "name-nul": (_on_top(_nul_in_name), "holds the folder 'memory', which cannot"),
    "folder-is-a-blob": (
        _entry("memory", b"40000", b"zz", "blob"),
        "holds a blob as the folder 'memory/zz', not a tree",
    ),
    "file-is-a-tree": (
        _entry("leaf", b"100644", f"{OTHER_ID}.json".encode(), "tree"),
        "holds a tree as the file 'memory/",
    ),
    "missing-blob": (_on_top(_missing_blob), "lacks the file 'memory/"),
    "commit-tree-is-a-blob": (
        lambda repo, good: set_ref(repo, "main", commit_raw(repo, good.blob, good.tip)),
        "holds a blob as the tree of commit",
    ),
    "parent-is-a-tree": (
        lambda repo, good: set_ref(
            repo, "main", commit_raw(repo, good.tree, good.tree)
        ),
        "holds a tree as a parent of commit",
    ),
    "tip-is-a-blob": (_tip_is("blob"), "branch 'main' holds a blob as its tip, not"),
    "tip-is-a-tree": (_tip_is("tree"), "branch 'main' holds a tree as its tip, not"),
    "tip-is-missing": (_tip_is("missing"), f"branch 'main' lacks its tip ({MISSING})."),
    "packed-ref-dotdot": (
        _packed_ref(b"refs/heads/bad..name"),
        "its refs cannot be read",
    ),
    "packed-ref-escape": (
        _packed_ref(b"refs/heads/../../../escaped"),
        "its refs cannot be read",
    ),
    "packed-ref-control": (
        _packed_ref(b"refs/heads/bad\x01name"),
        "its refs cannot be read",
    ),
}
"""Remotes a clone, fetch or pull refuses, changing nothing (through a path)."""

SERVER_REFUSES = {
    "name-empty",
    "name-nul",
    "folder-is-a-blob",
    "file-is-a-tree",
    "missing-blob",
    "commit-tree-is-a-blob",
    "parent-is-a-tree",
    "tip-is-missing",
    "packed-ref-escape",
}
"""Remotes git's own server (``git-upload-pack``) refuses to send from: any
one-line error will do."""

SERVER_IGNORES = {"packed-ref-dotdot", "packed-ref-control"}
"""Remotes whose bad ref git's server leaves out: the fetch brings ``main``."""

UNDECODABLE: Maker = _on_top(_undecodable)
"""A remote whose ``main`` holds a memory file that is not a memory."""


def build(folder: Path, good_repo: Path) -> tuple[Good, dict[str, Path]]:
    """Makes every hostile remote under ``folder`` from the good remote.

    Returns:
        The good remote and each hostile one by name (those of ``REFUSED``,
        and ``undecodable``).
    """
    tip = _sha(good_repo, "rev-parse", "refs/heads/main")
    tree = _sha(good_repo, "rev-parse", "refs/heads/main^{tree}")
    files = git(good_repo, "ls-tree", "-r", "--full-tree", tip).decode().splitlines()
    memory = next(line for line in files if line.split("\t")[1].startswith("memory/"))
    path = memory.split("\t")[1].encode().split(b"/")
    good = Good(
        repo=good_repo,
        tip=tip,
        tree=tree,
        leaf=path[:-1],
        memory=path[-1],
        blob=memory.split()[2],
    )
    makers: dict[str, Maker] = {name: m for name, (m, _) in REFUSED.items()}
    makers["undecodable"] = UNDECODABLE
    out: dict[str, Path] = {}
    for name, make in makers.items():
        repo = folder / f"{name}.git"
        shutil.copytree(good_repo, repo)
        make(repo, good)
        out[name] = repo
    return good, out


FAKE_SSH = """#!/bin/sh
# Stands in for ssh: runs the remote command (the last argument) here, so
# that git's own server answers through dulwich's network client.
for last; do :; done
exec sh -c "$last"
"""


@dataclass(frozen=True)
class World:
    """The good remote, every hostile one, and a store cloned from the good one.

    Attributes:
        good: The good remote.
        remotes: Each hostile remote by name.
        base: A store cloned from the good remote (copy it before changing it).
        ssh: A stand-in ``ssh`` program (``Access(ssh_command=...)``).
    """

    good: Good
    remotes: dict[str, Path]
    base: Path
    ssh: Path

    def url(self, name: str, transport: str) -> str:
        """Returns the address of hostile remote ``name`` through ``transport``."""
        repo = self.remotes[name]
        return str(repo) if transport == "path" else f"ssh://localhost{repo}"


def fixed_clock() -> Callable[[], datetime]:
    """Returns a clock that starts on 2026-01-05 and ticks a second a call."""
    ticks = itertools.count()
    return lambda: datetime(2026, 1, 5, tzinfo=UTC) + timedelta(seconds=next(ticks))


def hostile_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """Builds a :class:`World` once per test module (make it a fixture there)."""
    return make_world(tmp_path_factory.mktemp("hostile"), fixed_clock())


def make_world(folder: Path, clock: Callable[[], datetime]) -> World:
    """Builds a :class:`World` under ``folder`` (about a second)."""
    from ctx.engine import Draft, Intent, Store, add_remote, clone, link, push, remember

    who = Intent(agent="seed", intent="observe")
    seed = Store.init(folder / "seed", clock=clock)
    one = remember(seed, Draft(text="The queue is Postgres"), who).ids[0]
    two = remember(seed, Draft(text="The API listens on 8080"), who).ids[0]
    link(seed, one, two, "RELATES_TO", who)
    good_repo = folder / "good.git"
    git(good_repo.parent, "init", "-q", "--bare", "-b", "main", str(good_repo))
    add_remote(seed, "origin", str(good_repo))
    push(seed)
    seed.close()
    (folder / "hostile").mkdir()
    good, remotes = build(folder / "hostile", good_repo)
    clone(folder / "base", str(good_repo), clock=clock)
    ssh = folder / "fake-ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    return World(good=good, remotes=remotes, base=folder / "base", ssh=ssh)


def copy_of_base(world: World, folder: Path) -> Store:
    """Opens a copy, in ``folder``, of the store cloned from the good remote."""
    from ctx.engine import Store

    shutil.copytree(world.base, folder)
    return Store.open(folder, clock=fixed_clock())
