"""What a history walk reads of each commit when there is no cache for it.

Three cheap reads, as ``git log -- PATH`` makes them:

- :func:`commit_header`: a commit's tree, parents and time, read from its
  raw bytes, without making a dulwich ``Commit`` of it (the graph of a
  20,000-commit history is read whole to order it).
- :meth:`PathWalk.differs`: whether two trees differ anywhere a query
  looks, comparing tree ids level by level and descending only into
  folders that differ and may hold what is asked for (:func:`memory_paths`,
  :func:`under`). A commit that passes is then diffed in full, by the same
  code that fills the history cache, so a query answers alike with and
  without the cache.
- :func:`tree_changes`: that full diff, every file that differs between
  two trees, found the same way: only the entries that differ are parsed.

Trees are read through :class:`Trees`, as sets of their entries' bytes.
"""

from __future__ import annotations

import binascii
import re
import stat
from binascii import hexlify, unhexlify
from collections.abc import Callable
from typing import cast

from dulwich.object_store import BaseObjectStore
from dulwich.objects import Commit, ObjectID, RawObjectID, Tree, parse_tree

from ctx.engine.errors import CorruptStoreError
from ctx.engine.layout import CONFLICTS, MEMORY, MEMORY_AREAS

__all__ = [
    "FileChange",
    "PathWalk",
    "Trees",
    "Wanted",
    "commit_header",
    "memory_paths",
    "tree_changes",
    "under",
]

Wanted = Callable[[str, bool], bool | None]
"""Says of a path (and whether it is a folder) what a query wants under it:
``False`` nothing, ``True`` any change, ``None`` look inside."""

_SHARD_DEPTHS = 3

_ENTRY = re.compile(rb"[0-7]+ [^\0]+\0.{20}", re.DOTALL)
"""One entry of a tree: octal mode, a space, name, NUL, the 20-byte id."""


def commit_header(
    store: BaseObjectStore, sha: str
) -> tuple[RawObjectID, tuple[str, ...], int]:
    """Returns the tree (its 20-byte id), parents and commit time of ``sha``.

    Raises:
        CorruptStoreError: it is missing or is not a commit.
    """
    try:
        type_num, raw = store.get_raw(ObjectID(sha.encode("ascii")))
    except KeyError:
        raise CorruptStoreError(f"Commit {sha} is missing from the store.") from None
    if type_num != Commit.type_num:
        raise CorruptStoreError(f"Object {sha} is not a commit.")
    if raw.startswith(b"tree ") and raw[45:46] == b"\n":
        parents = []
        at = 46
        while raw.startswith(b"parent ", at) and raw[at + 47 : at + 48] == b"\n":
            parents.append(raw[at + 7 : at + 47].decode("ascii"))
            at += 48
        start = raw.find(b"\ncommitter ", at - 1)
        end = raw.find(b"\n", start + 1)
        fields = raw[start + 1 : end].rsplit(b" ", 2)
        if start >= 0 and len(fields) == 3 and fields[1].isdigit():
            try:
                tree = unhexlify(raw[5:45])
            except binascii.Error:
                pass  # not hex: dulwich's parser says so
            else:
                return RawObjectID(tree), tuple(parents), int(fields[1])
    # Anything unusual: dulwich's parser decides.
    commit = Commit.from_raw_string(type_num, raw)
    assert isinstance(commit, Commit)
    parents_ = tuple(p.decode("ascii") for p in commit.parents)
    return RawObjectID(unhexlify(commit.tree)), parents_, commit.commit_time


class Trees:
    """Reads trees as sets of entries, keeping the last few dozen.

    Trees are named by their 20-byte ids, as their entries name them. An
    entry is kept as its bytes in the tree (mode, name and id): one object
    per entry, where dulwich's parser makes three and a tuple; two trees'
    entries are compared as bytes, and only the few that differ are parsed.

    A walk compares each commit's trees with its parent's, which the next
    step compares again: the trees just read are the ones read next. Few are
    kept, in two generations (the older dropped whole when the newer fills):
    keeping thousands made a walk of 20,000 commits slower, not faster, its
    memory no longer in the processor's caches.

    Args:
        store: Where the trees are read.
        keep: Trees kept per generation.
    """

    def __init__(self, store: BaseObjectStore, keep: int = 32) -> None:
        # Called with the 20-byte ids as they are: a NewType's call costs a
        # Python call per tree.
        self._get_raw = cast(Callable[[bytes], tuple[int, bytes]], store.get_raw)
        self._keep = keep
        self.kept: dict[bytes, frozenset[bytes]] = {}
        """The newer generation, for callers that look before they call."""
        self._older: dict[bytes, frozenset[bytes]] = {}

    def entries(self, tree: bytes | None) -> frozenset[bytes]:
        """Returns the entries of ``tree`` (none for ``None``), each as its bytes."""
        if tree is None:
            return frozenset()
        found = self.kept.get(tree)
        if found is not None:
            return found
        found = self._older.get(tree)
        if found is None:
            found = self._read(tree)
        if len(self.kept) >= self._keep:
            self._older, self.kept = self.kept, {}
        self.kept[tree] = found
        return found

    def _read(self, tree: bytes) -> frozenset[bytes]:
        try:
            type_num, raw = self._get_raw(tree)
        except KeyError:
            raise CorruptStoreError(
                f"Tree {hexlify(tree).decode()} is missing from the store."
            ) from None
        if type_num != Tree.type_num:
            raise CorruptStoreError(f"Object {hexlify(tree).decode()} is not a tree.")
        entries = _ENTRY.findall(raw)
        if sum(map(len, entries)) == len(raw):
            return frozenset(entries)  # they tile the tree: exactly its parse
        # Not a well-formed tree: dulwich's parser decides (and says why).
        return frozenset(
            b"%o %s\0%s" % (mode, name, unhexlify(sha))
            for name, mode, sha in parse_tree(raw, 20)
        )

    def differing(
        self, old: bytes | None, new: bytes | None
    ) -> dict[bytes, list[bytes | None]]:
        """Returns the entries that differ between two trees, by name.

        Found in C (most of a tree is the same), and only those parsed:
        name -> [entry before, entry after], ``None`` for a side without it.
        """
        kept = self.kept  # most trees were read by the step before: no call
        before = kept.get(old) if old is not None else None
        if before is None:
            before = self.entries(old)
        after = kept.get(new) if new is not None else None
        if after is None:
            after = self.entries(new)
        changed: dict[bytes, list[bytes | None]] = {}
        for entry in before ^ after:
            name = entry[entry.index(b" ") + 1 : -21]
            sides = changed.get(name)
            if sides is None:
                sides = changed[name] = [None, None]
            sides[entry in after] = entry
        return changed


class PathWalk:
    """Compares trees where one query looks, for every commit of a walk.

    Keeps what the query wants of each path met: a walk meets the same few
    folders in every commit.

    Args:
        trees: Where the trees are read.
        wanted: What the query looks for.
    """

    def __init__(self, trees: Trees, wanted: Wanted) -> None:
        self.trees = trees
        self._wanted = wanted
        self._verdicts: dict[tuple[str, bytes, bool], tuple[str, bool | None]] = {}

    def differs(self, old: bytes | None, new: bytes | None, base: str = "") -> bool:
        """Returns whether two trees differ at a path the query wants.

        ``base`` is the path the two trees are at ("" for the root, else
        ending in "/"). Two spellings of one mode ("40000", "040000")
        differ as bytes: at worst a commit is then diffed in full, which
        finds nothing there.
        """
        if old == new:
            return False
        verdicts = self._verdicts
        for name, (was, now) in self.trees.differing(old, new).items():
            # How git writes a folder's mode, asked before any call.
            was_dir = was is not None and (was.startswith(b"40000 ") or _is_folder(was))
            now_dir = now is not None and (now.startswith(b"40000 ") or _is_folder(now))
            key = (base, name, was_dir or now_dir)
            found = verdicts.get(key)
            if found is None:
                path = base + name.decode("utf-8", "surrogateescape")
                found = verdicts[key] = (path, self._wanted(path, key[2]))
            path, verdict = found
            if verdict is False:
                continue
            if verdict is True or not (was_dir or was is None):
                return True  # wanted, or a file where a folder was: diff it
            if not (now_dir or now is None):
                return True
            if self.differs(
                was[-20:] if was else None, now[-20:] if now else None, path + "/"
            ):
                return True
        return False


def _is_folder(entry: bytes) -> bool:
    if entry.startswith(b"40000 "):
        return True  # how git writes a folder's mode
    if entry.startswith(b"100644 "):
        return False  # and a file's
    return stat.S_ISDIR(int(entry[: entry.index(b" ")], 8))


FileChange = tuple[str, str | None, str | None]
"""A file that differs: its path, its blob before and after (hex ids)."""


class _LeftToDulwichError(Exception):
    """A change that :func:`tree_changes` leaves to dulwich's rules."""


def tree_changes(
    trees: Trees, old: bytes | None, new: bytes | None
) -> list[FileChange] | None:
    """Returns every file that differs between two trees (20-byte ids).

    What dulwich's ``tree_changes`` finds, without renames: a file added,
    removed, or changed in content or mode; a folder where a file was is
    the file removed and the folder's files added (and the other way
    round). In no particular order. ``None`` where dulwich's own rules must
    decide: a file that changed kind (a file to a link, say), a name twice
    in one tree, a path that is not UTF-8, a tree that cannot be read.
    """
    out: list[FileChange] = []
    try:
        _tree_changes(trees, old, new, b"", out)
    except (_LeftToDulwichError, UnicodeDecodeError, CorruptStoreError):
        return None
    return out


def _tree_changes(
    trees: Trees,
    old: bytes | None,
    new: bytes | None,
    base: bytes,
    out: list[FileChange],
) -> None:
    if old == new:
        return
    changed = trees.differing(old, new)
    for name, (was, now) in changed.items():
        if was is None or now is None:
            _only_one_side(trees, old if now is None else new, name)
        was_mode, was_id = _parsed(was)
        now_mode, now_id = _parsed(now)
        if was_mode == now_mode and was_id == now_id:
            continue  # one mode spelt two ways
        path = base + name
        was_dir = was_mode is not None and stat.S_ISDIR(was_mode)
        now_dir = now_mode is not None and stat.S_ISDIR(now_mode)
        if was_dir or now_dir:
            _tree_changes(
                trees,
                was_id if was_dir else None,
                now_id if now_dir else None,
                path + b"/",
                out,
            )
        if (was_dir or was is None) and (now_dir or now is None):
            continue
        if (
            was_mode is not None
            and now_mode is not None
            and not (was_dir or now_dir)
            and stat.S_IFMT(was_mode) != stat.S_IFMT(now_mode)
        ):
            raise _LeftToDulwichError
        out.append(
            (
                path.decode(),
                None if was_dir or was_id is None else hexlify(was_id).decode(),
                None if now_dir or now_id is None else hexlify(now_id).decode(),
            )
        )


def _parsed(entry: bytes | None) -> tuple[int | None, bytes | None]:
    if entry is None:
        return None, None
    return int(entry[: entry.index(b" ")], 8), entry[-20:]


def _only_one_side(trees: Trees, tree: bytes | None, name: bytes) -> None:
    """Raises :class:`_LeftToDulwichError` if ``name`` is twice in ``tree``.

    A name that differs on one side only and is in that side's tree twice
    (which no git writes) would be read by dulwich as one entry, the last.
    """
    seen = 0
    for entry in trees.entries(tree):
        if entry[entry.index(b" ") + 1 : -21] == name:
            seen += 1
    if seen > 1:
        raise _LeftToDulwichError


def memory_paths(memory_id: str) -> Wanted:
    """Returns what may hold a change to memory ``memory_id``.

    Its file under ``memory/<context>/<shard>/`` in any context, its stored
    conflict, and any file of the areas whose memories carry their id in
    their content only (pinned, primed, sessions). The shard folders are
    the store's layout (``layout.shard``): a file named after the id but
    put in another shard's folder, which no ctx write makes, is not looked
    for.
    """
    name = f"{memory_id}.json"
    shard = [memory_id[-1], memory_id[-2], memory_id[-3]]
    by_content = set(MEMORY_AREAS) - {MEMORY}

    def wanted(path: str, folder: bool) -> bool | None:
        parts = path.split("/")
        if parts[0] in by_content:
            return True
        if parts[0] not in (MEMORY, CONFLICTS):
            return False
        if not folder:
            return parts[-1] == name
        level = len(parts) - 3  # memory/<context>/ is level -1
        if parts[0] == MEMORY and 0 <= level < _SHARD_DEPTHS:
            return None if parts[-1] == shard[level] else False
        return None

    return wanted


def under(prefix: str) -> Wanted:
    """Returns what may hold a change to a path that starts with ``prefix``."""

    def wanted(path: str, folder: bool) -> bool | None:
        if path.startswith(prefix):
            return True
        return None if folder and prefix.startswith(path + "/") else False

    return wanted
