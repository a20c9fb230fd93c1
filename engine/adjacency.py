"""The adjacency index: every link of a branch, by source and by target.

Links are files (``links/<shard>/<from>/<TYPE>/<to>``), which makes them
merge and blame well, but finding the links *into* a memory would mean reading
every link file. The index is derived from the ``links/`` tree and keyed by
that tree's id: in memory per store, and on disk in ``cache/links.msgpack``.
When the tree changes, only the difference between the cached tree and the new
one is read (a pruned tree diff) and applied, so a write that adds one link
costs one small diff, not a rebuild.
"""

from __future__ import annotations

import os
import stat
from array import array
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from dulwich.diff_tree import tree_changes
from dulwich.objects import ObjectID

from ctx.engine import _trees
from ctx.engine.layout import LINKS, parse_link_path

if TYPE_CHECKING:
    from ctx.engine.snapshot import Snapshot
    from ctx.engine.store import Store

__all__ = ["SAVE_AFTER", "Adjacency", "adjacency"]

_VERSION = 3  # 3: a SUPERSEDES cycle hides none of it
SAVE_AFTER = 256
"""Changed paths a catch-up must apply before the cache file is rewritten."""


class _File(msgspec.Struct, frozen=True):
    version: int
    tree: str
    ids: list[str]
    types: list[str]
    edges: bytes  # uint32 triples (source, type, target) indexing ids/types
    counts: dict[str, int]
    superseded: list[str]


class Adjacency:
    """Every link of one ``links/`` tree, indexed both ways.

    Loaded from its file, the index keeps the packed edges and builds its
    dictionaries on the first walk: listings only need the counts and the
    superseded set, which the file carries ready-made.
    """

    def __init__(self, tree: str, edges: Iterable[tuple[str, str, str]] = ()) -> None:
        self.tree = tree
        self._out: dict[str, dict[tuple[str, str], None]] = {}
        self._in: dict[str, dict[tuple[str, str], None]] = {}
        self._packed: _File | None = None
        for source, link_type, target in edges:
            self.add(source, link_type, target)

    def _unpack(self) -> None:
        packed, self._packed = self._packed, None
        if packed is None:
            return
        edges = array("I")
        edges.frombytes(packed.edges)
        ids, types = packed.ids, packed.types
        for i in range(0, len(edges) - 2, 3):
            self.add(ids[edges[i]], types[edges[i + 1]], ids[edges[i + 2]])

    def add(self, source: str, link_type: str, target: str) -> None:
        """Records one link."""
        self._unpack()
        self._out.setdefault(source, {})[(link_type, target)] = None
        self._in.setdefault(target, {})[(link_type, source)] = None

    def remove(self, source: str, link_type: str, target: str) -> None:
        """Forgets one link."""
        self._unpack()
        self._out.get(source, {}).pop((link_type, target), None)
        self._in.get(target, {}).pop((link_type, source), None)

    def outgoing(self, memory_id: str) -> list[tuple[str, str]]:
        """Returns ``(type, target)`` for each link leaving ``memory_id``."""
        self._unpack()
        return list(self._out.get(memory_id, ()))

    def incoming(self, memory_id: str) -> list[tuple[str, str]]:
        """Returns ``(type, source)`` for each link pointing at ``memory_id``."""
        self._unpack()
        return list(self._in.get(memory_id, ()))

    def edges(self) -> Iterable[tuple[str, str, str]]:
        """Yields every link as ``(source, type, target)``."""
        self._unpack()
        for source, targets in self._out.items():
            for link_type, target in targets:
                yield source, link_type, target

    def count_by_type(self) -> dict[str, int]:
        """Returns how many links there are of each type."""
        if self._packed is not None:
            return dict(self._packed.counts)
        counts: Counter[str] = Counter(t for _, t, _ in self.edges())
        return dict(sorted(counts.items()))

    def superseded(self) -> set[str]:
        """Returns the ids that some memory SUPERSEDES, left out of recall and ls.

        Not one superseded only from within a cycle of SUPERSEDES links (A
        supersedes B and B supersedes A, which two branches or a Dream
        proposal and a person can each write, and a merge joins): nothing
        says which one stands, and hiding both would hide the fact itself.
        A memory of the cycle that one outside it supersedes is left out.
        """
        if self._packed is not None:
            return set(self._packed.superseded)
        edges = [(a, b) for a, kind, b in self.edges() if kind == "SUPERSEDES"]
        part = _components(edges)
        return {b for a, b in edges if part[a] != part[b]}

    def encode(self) -> bytes:
        """Returns the compact on-disk form."""
        ids: dict[str, int] = {}
        types: dict[str, int] = {}
        packed = array("I")
        for source, link_type, target in self.edges():
            packed.extend(
                (
                    ids.setdefault(source, len(ids)),
                    types.setdefault(link_type, len(types)),
                    ids.setdefault(target, len(ids)),
                )
            )
        value = _File(
            _VERSION,
            self.tree,
            list(ids),
            list(types),
            packed.tobytes(),
            self.count_by_type(),
            sorted(self.superseded()),
        )
        return msgspec.msgpack.encode(value)

    @classmethod
    def decode(cls, data: bytes) -> Adjacency | None:
        """Returns the index stored in ``data``, or ``None`` if unreadable."""
        try:
            value = msgspec.msgpack.decode(data, type=_File)
        except msgspec.DecodeError:
            return None
        if value.version != _VERSION:
            return None
        adj = cls(value.tree)
        adj._packed = value
        return adj


_EMPTY_TREE = "empty"


def _links_tree(snap: Snapshot) -> str:
    if snap.tree is None:
        return _EMPTY_TREE
    found = _trees.lookup(snap.objects, snap.tree, LINKS)
    if found is None or not stat.S_ISDIR(found[0]):
        return _EMPTY_TREE
    return found[1].decode("ascii")


def _tree_arg(tree: str) -> ObjectID | None:
    return None if tree == _EMPTY_TREE else ObjectID(tree.encode())


def _components(edges: list[tuple[str, str]]) -> dict[str, int]:
    """Returns each node's strongly connected component (Tarjan's, iterative).

    Two memories share one when each supersedes the other, directly or
    through others: a cycle. Linear in the links, so a chain of 10,000
    versions costs as much as 10,000 links do.
    """
    out: dict[str, list[str]] = {}
    for a, b in edges:
        out.setdefault(a, []).append(b)
        out.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    part: dict[str, int] = {}
    stack: list[str] = []
    for root in out:
        if root in index:
            continue
        work = [(root, iter(out[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(out[child])))
                elif child not in part:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    part[member] = index[node]
                    if member == node:
                        break
    return part


def adjacency(store: Store, snap: Snapshot) -> Adjacency:
    """Returns the adjacency index of ``snap``'s links, caught up if stale."""
    tree = _links_tree(snap)
    cached = store.caches.get("adjacency")
    if not isinstance(cached, Adjacency):
        cached = None
    if cached is not None and cached.tree == tree:
        return cached
    cache_file = store.path / "cache" / "links.msgpack" if store.path else None
    if cached is None and cache_file is not None:
        try:
            cached = Adjacency.decode(cache_file.read_bytes())
        except OSError:
            cached = None
    if cached is None:
        cached = Adjacency(_EMPTY_TREE)
    if cached.tree != tree:
        cached, changed = _catch_up(store, cached, tree)
        # Writing the file costs more than replaying a few changes: leave a
        # small lag for the next process to diff, save when it grows.
        if cache_file is not None and changed >= SAVE_AFTER:
            _save(cache_file, cached)
    store.caches["adjacency"] = cached
    return cached


def _catch_up(store: Store, adj: Adjacency, tree: str) -> tuple[Adjacency, int]:
    objects = store.repo.object_store
    try:
        changes = list(tree_changes(objects, _tree_arg(adj.tree), _tree_arg(tree)))
    except KeyError:  # the cached tree is gone (gc): rebuild from scratch
        adj = Adjacency(_EMPTY_TREE)
        changes = list(tree_changes(objects, None, _tree_arg(tree)))
    for change in changes:
        for entry, apply in ((change.old, adj.remove), (change.new, adj.add)):
            if entry is None or entry.path is None:
                continue
            parsed = parse_link_path(f"{LINKS}/" + entry.path.decode("utf-8"))
            if parsed is not None:
                apply(parsed[0], parsed[1], parsed[2])
    adj.tree = tree
    return adj, len(changes)


def _save(path: Path, adj: Adjacency) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        temp.write_bytes(adj.encode())
        os.replace(temp, path)
    except OSError:
        return  # read-only store: the index lives in memory only
