"""The catalog: where each memory of a tree lives, with its kind and headline.

Finding a memory by id means probing every context's fan-out folders and
reading its blob; a walk over hundreds of memories (``trace``, ``related``,
``compose``) would spend most of its time there. The catalog maps every id
to its path, blob id, kind and headline. Like the adjacency index it is
derived from the tree, keyed by the root tree id, kept in memory and in
``cache/catalog.msgpack``, and caught up with a pruned tree diff.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from dulwich.diff_tree import tree_changes
from dulwich.objects import Blob, ObjectID, Tree

from ctx.engine.adjacency import SAVE_AFTER
from ctx.engine.errors import CorruptStoreError, MemoryNotFoundError
from ctx.engine.layout import is_memory_path
from ctx.engine.model import Memory, decode_memory, encode, headline
from ctx.engine.tokens import memory_tokens

if TYPE_CHECKING:
    from ctx.engine.snapshot import Snapshot
    from ctx.engine.store import Store

__all__ = ["Catalog", "CatalogEntry", "Entry", "catalog", "record_added"]

_VERSION = 2
_EMPTY = "empty"
_EMPTY_TREE = Tree().id.decode("ascii")  # a new store's first commit has it


class Entry(msgspec.Struct, frozen=True, array_like=True):
    """Where one memory is, and enough to name and count it without reading it.

    ``tokens`` is :func:`~ctx.engine.memory_tokens` of the memory.
    """

    path: str
    blob: str
    kind: str
    headline: str
    tokens: int


CatalogEntry = Entry
"""The public name of :class:`Entry` (``ctx.engine.CatalogEntry``)."""


class Catalog(msgspec.Struct):
    """Every memory of one tree, by id."""

    version: int
    tree: str
    entries: dict[str, Entry]

    def get(self, memory_id: str) -> Entry | None:
        """Returns where ``memory_id`` is, or ``None``."""
        return self.entries.get(memory_id)

    def require(self, memory_id: str) -> Entry:
        """Returns where ``memory_id`` is.

        Raises:
            MemoryNotFoundError: it is not in this tree.
        """
        entry = self.entries.get(memory_id)
        if entry is None:
            raise MemoryNotFoundError(
                f"No memory {memory_id} here.",
                hint="`ctx ls` lists memories; `ctx log` shows removed ones.",
            )
        return entry


def _is_memory(path: bytes) -> bool:
    return is_memory_path(path.decode("utf-8", "replace"))


def catalog(store: Store, snap: Snapshot) -> Catalog:
    """Returns the catalog of ``snap``'s tree, caught up if stale."""
    tree = snap.tree.decode("ascii") if snap.tree is not None else _EMPTY
    cached = store.caches.get("catalog")
    if isinstance(cached, Catalog) and cached.tree == tree:
        return cached
    path = store.path / "cache" / "catalog.msgpack" if store.path else None
    if not isinstance(cached, Catalog) and path is not None:
        cached = _load(path)
    if not isinstance(cached, Catalog):
        cached = Catalog(version=_VERSION, tree=_EMPTY, entries={})
    if cached.tree != tree:
        cached, changed = _catch_up(store, snap, cached, tree)
        if path is not None and changed >= SAVE_AFTER:
            _save(path, cached)  # as for the adjacency index: a small lag is cheaper
    store.caches["catalog"] = cached
    return cached


def record_added(
    store: Store, before: Snapshot, after: Snapshot, added: Sequence[tuple[str, Memory]]
) -> None:
    """Moves the catalog from ``before`` to ``after``, a write that added ``added``.

    A writer knows what it wrote: the catalog of ``after`` is that of
    ``before`` plus these memories, with no tree diff and no blob read (a
    10,000-memory import left both, about a second, to its first reader).
    Only for a write of at least :data:`~ctx.engine.adjacency.SAVE_AFTER`
    memories (a few are cheaper caught up when asked for), and only when the
    catalog kept (in memory or on disk) stands at ``before``; the result is
    saved as a catch-up of that size would save it.
    """
    if len(added) < SAVE_AFTER or after.tree is None:
        return
    old = before.tree.decode("ascii") if before.tree is not None else _EMPTY
    old = _EMPTY if old == _EMPTY_TREE else old
    path = store.path / "cache" / "catalog.msgpack" if store.path else None
    cached = store.caches.get("catalog")
    if not isinstance(cached, Catalog) and path is not None:
        cached = _load(path)
    if not isinstance(cached, Catalog):
        cached = Catalog(version=_VERSION, tree=_EMPTY, entries={})
    if (_EMPTY if cached.tree == _EMPTY_TREE else cached.tree) != old:
        return  # another write came between: a reader catches up by a diff
    entries = dict(cached.entries)
    for where, memory in added:
        blob = Blob.from_string(encode(memory)).id.decode("ascii")
        entries[memory.id] = Entry(
            where,
            blob,
            memory.kind,
            headline(memory.title, memory.body),
            memory_tokens(memory),
        )
    caught = Catalog(version=_VERSION, tree=after.tree.decode("ascii"), entries=entries)
    store.caches["catalog"] = caught
    if path is not None:
        _save(path, caught)


def _load(path: Path) -> Catalog | None:
    try:
        # One decode: another version's layout fails it or shows its number.
        cached = msgspec.msgpack.decode(path.read_bytes(), type=Catalog)
    except (OSError, msgspec.DecodeError):
        return None
    return cached if cached.version == _VERSION else None


def _save(path: Path, value: Catalog) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        temp.write_bytes(msgspec.msgpack.encode(value))
        os.replace(temp, path)
    except OSError:
        return  # read-only store: the catalog lives in memory only


def _catch_up(
    store: Store, snap: Snapshot, old: Catalog, tree: str
) -> tuple[Catalog, int]:
    objects = store.repo.object_store
    entries = dict(old.entries)
    by_path = {e.path: mid for mid, e in entries.items()}
    before = None if old.tree == _EMPTY else ObjectID(old.tree.encode())
    try:
        changes = list(tree_changes(objects, before, snap.tree))
    except KeyError:  # the cached tree is gone (gc): start again
        entries, by_path = {}, {}
        changes = list(tree_changes(objects, None, snap.tree))
    for change in changes:
        if change.old is not None and change.old.path and _is_memory(change.old.path):
            old_path = change.old.path.decode("utf-8")
            mid = by_path.pop(old_path, None)
            # A memory that moved (primed -> pinned) may already be at its
            # new path: only forget the entry if it still names this one.
            if mid is not None and mid in entries and entries[mid].path == old_path:
                del entries[mid]
        new = change.new
        if new is not None and new.path and new.sha and _is_memory(new.path):
            path = new.path.decode("utf-8")
            try:
                memory = decode_memory(objects[new.sha].as_raw_string(), path)
            except CorruptStoreError:
                continue  # fsck reports it; the catalog just skips it
            entries[memory.id] = Entry(
                path,
                new.sha.decode("ascii"),
                memory.kind,
                headline(memory.title, memory.body),
                memory_tokens(memory),
            )
            by_path[path] = memory.id
    return Catalog(version=_VERSION, tree=tree, entries=entries), len(changes)
