"""What a history walk reads of each commit when there is no cache for it.

Two cheap reads, as ``git log -- PATH`` makes them:

- :func:`commit_header`: a commit's tree, parents and time, read from its
  raw bytes, without making a dulwich ``Commit`` of it (the graph of a
  20,000-commit history is read whole to order it).
- :func:`differs`: whether two trees differ anywhere a query looks, comparing
  tree ids level by level and descending only into folders that differ
  and may hold what is asked for (:func:`memory_paths`, :func:`under`).
  A commit that passes is then diffed in full, by the same code that fills
  the history cache, so a query answers alike with and without the cache.
"""

from __future__ import annotations

import re
import stat
from binascii import hexlify, unhexlify
from collections.abc import Callable

from dulwich.object_store import BaseObjectStore
from dulwich.objects import Commit, ObjectID, Tree, parse_tree

from ctx.engine.errors import CorruptStoreError
from ctx.engine.layout import CONFLICTS, MEMORY, MEMORY_AREAS

__all__ = ["TreeReader", "Wanted", "commit_header", "differs", "memory_paths", "under"]

Wanted = Callable[[str, bool], bool | None]
"""Says of a path (and whether it is a folder) what a query wants under it:
``False`` nothing, ``True`` any change, ``None`` look inside."""

_SHARD_DEPTHS = 3

_ENTRY = re.compile(rb"[0-7]+ [^\0]+\0.{20}", re.DOTALL)
"""One entry of a tree: octal mode, a space, name, NUL, the 20-byte id."""


def commit_header(store: BaseObjectStore, sha: str) -> tuple[str, tuple[str, ...], int]:
    """Returns the tree, parents and commit time of commit ``sha``.

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
            return raw[5:45].decode("ascii"), tuple(parents), int(fields[1])
    # Anything unusual: dulwich's parser decides.
    commit = Commit.from_raw_string(type_num, raw)
    assert isinstance(commit, Commit)
    parents_ = tuple(p.decode("ascii") for p in commit.parents)
    return commit.tree.decode("ascii"), parents_, commit.commit_time


class TreeReader:
    """Reads trees as sets of entries, keeping the last few dozen.

    An entry is kept as its bytes in the tree (mode, name and id): one
    object per entry, where dulwich's parser makes three and a tuple, and
    two trees' entries compared as bytes. A walk parses only the few
    entries that differ (:func:`differs`).

    A walk compares each commit's trees with its parent's, which the next
    step compares again: the trees just read are the ones read next. Few are
    kept, in two generations (the older dropped whole when the newer fills):
    keeping thousands made a walk of 20,000 commits slower, not faster, its
    memory no longer in the processor's caches.

    Also keeps what a query wants of each path it met (:meth:`verdict`): a
    walk meets the same few folders in every commit.
    """

    def __init__(self, store: BaseObjectStore, keep: int = 32) -> None:
        self._store = store
        self._keep = keep
        self._entries: dict[bytes, frozenset[bytes]] = {}
        self._older: dict[bytes, frozenset[bytes]] = {}
        self._verdicts: dict[
            tuple[Wanted, str, bytes, bool], tuple[str, bool | None]
        ] = {}

    def entries(self, tree: bytes | None) -> frozenset[bytes]:
        """Returns the entries of ``tree`` (none for ``None``), each as its bytes."""
        if tree is None:
            return frozenset()
        found = self._entries.get(tree)
        if found is not None:
            return found
        found = self._older.get(tree)
        if found is None:
            found = self._read(tree)
        if len(self._entries) >= self._keep:
            self._older, self._entries = self._entries, {}
        self._entries[tree] = found
        return found

    def _read(self, tree: bytes) -> frozenset[bytes]:
        try:
            type_num, raw = self._store.get_raw(ObjectID(tree))
        except KeyError:
            raise CorruptStoreError(
                f"Tree {tree.decode('ascii')} is missing from the store."
            ) from None
        if type_num != Tree.type_num:
            raise CorruptStoreError(f"Object {tree.decode('ascii')} is not a tree.")
        entries = _ENTRY.findall(raw)
        if sum(map(len, entries)) == len(raw):
            return frozenset(entries)  # they tile the tree: exactly its parse
        # Not a well-formed tree: dulwich's parser decides (and says why).
        return frozenset(
            b"%o %s\0%s" % (mode, name, unhexlify(sha))
            for name, mode, sha in parse_tree(raw, 20)
        )

    def verdict(
        self, wanted: Wanted, base: str, name: bytes, folder: bool
    ) -> tuple[str, bool | None]:
        """Returns the path of ``name`` under ``base`` and what ``wanted`` says."""
        key = (wanted, base, name, folder)
        found = self._verdicts.get(key)
        if found is None:
            path = base + name.decode("utf-8", "surrogateescape")
            found = self._verdicts[key] = (path, wanted(path, folder))
        return found


def differs(
    trees: TreeReader,
    old: bytes | None,
    new: bytes | None,
    wanted: Wanted,
    base: str = "",
) -> bool:
    """Returns whether the two trees differ at a path ``wanted`` accepts."""
    if old == new:
        return False
    before, after = trees.entries(old), trees.entries(new)
    # The entries that differ, found in C (most of a tree is the same), and
    # only those parsed: name -> [mode and id before, mode and id after].
    # Two spellings of one mode ("40000", "040000") differ as bytes: at
    # worst a commit is then diffed in full, which finds nothing there.
    changed: dict[bytes, list[tuple[int, bytes] | None]] = {}
    for entry in before ^ after:
        space = entry.index(b" ")
        sides = changed.setdefault(entry[space + 1 : -21], [None, None])
        sides[entry in after] = (int(entry[:space], 8), hexlify(entry[-20:]))
    for name, (was, now) in changed.items():
        was_dir = was is not None and stat.S_ISDIR(was[0])
        now_dir = now is not None and stat.S_ISDIR(now[0])
        path, verdict = trees.verdict(wanted, base, name, was_dir or now_dir)
        if verdict is None and (was_dir or was is None) and (now_dir or now is None):
            if differs(
                trees,
                was[1] if was else None,
                now[1] if now else None,
                wanted,
                path + "/",
            ):
                return True
        elif verdict is not False:
            return True  # wanted, or a file where a folder was: diff it
    return False


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
