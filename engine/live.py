"""What a commit holds, for the layers that index it: memories, links, dates.

The hub projects commits into search indexes; it needs, per commit, every
live memory (path, blob id, kind, headline, tokens) and the link graph,
without reading each blob. Both are the engine's derived indexes
(:mod:`ctx.engine.catalog`, :mod:`ctx.engine.adjacency`), caught up by
pruned tree diffs and cached on disk; these functions are their public face.
An index keyed by blob also needs the memory blobs two trees differ by
(:func:`changed_blobs`) and one memory read by its blob (:func:`read_memory`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from dulwich.diff_tree import tree_changes
from dulwich.objects import ObjectID

from ctx.engine._trees import read_blobs
from ctx.engine.adjacency import Adjacency, adjacency
from ctx.engine.catalog import Catalog, catalog
from ctx.engine.errors import CommitNotFoundError
from ctx.engine.layout import is_memory_path
from ctx.engine.model import decode_memory
from ctx.engine.snapshot import Snapshot

if TYPE_CHECKING:
    from ctx.engine.ids import CommitId
    from ctx.engine.model import Memory
    from ctx.engine.store import Store

__all__ = [
    "changed_blobs",
    "commit_at",
    "link_graph",
    "live_catalog",
    "read_memories",
    "read_memory",
]


def live_catalog(store: Store, commit: CommitId) -> Catalog:
    """Returns every memory of ``commit``'s tree by id (see :class:`Catalog`)."""
    return catalog(store, store.snapshot(commit))


def link_graph(store: Store, commit: CommitId) -> Adjacency:
    """Returns the links of ``commit``'s tree, both ways, and what is superseded."""
    return adjacency(store, store.snapshot(commit))


def commit_at(store: Store, branch: str, when: datetime) -> CommitId:
    """Returns the last commit on ``branch``'s first-parent line made by ``when``.

    Raises:
        CommitNotFoundError: The branch's first commit is later than ``when``.
    """
    commit: CommitId | None = store.branch_tip(branch)
    while commit is not None:
        info = store.commit(commit)
        if info.time <= when:
            return commit
        commit = info.parents[0] if info.parents else None
    raise CommitNotFoundError(
        f"Branch {branch} has no commit made by {when.isoformat()}.",
        hint="`ctx log` lists the commits and their times.",
    )


def changed_blobs(
    store: Store, old_tree: str | None, new_tree: str | None
) -> tuple[list[str], list[str]]:
    """Returns the memory blobs added and removed from one tree to another.

    Args:
        store: The store holding both trees.
        old_tree: The tree before (hex id); ``None`` for the empty tree. One
            no longer in the store (collected by ``ctx gc``) counts as empty.
        new_tree: The tree after (hex id); ``None`` for the empty tree.

    Returns:
        The blob ids of memories added (or changed to), then of those removed
        (or changed from); a blob at two paths appears once per path.
    """
    objects = store.repo.object_store
    old = None if old_tree is None else ObjectID(old_tree.encode())
    new = None if new_tree is None else ObjectID(new_tree.encode())
    try:
        changes = list(tree_changes(objects, old, new))
    except KeyError:  # the old tree is gone (gc): everything is new
        changes = list(tree_changes(objects, None, new))
    added: list[str] = []
    removed: list[str] = []
    for change in changes:
        for entry, into in ((change.old, removed), (change.new, added)):
            if entry is None or not entry.path or not entry.sha:
                continue
            if is_memory_path(entry.path.decode("utf-8", "replace")):
                into.append(entry.sha.decode("ascii"))
    return added, removed


def read_memory(store: Store, path: str, blob: str) -> Memory:
    """Returns the memory stored in ``blob`` at ``path``.

    The path is the authority for the memory's context and area; the blob
    alone is read (no tree is walked), so this is for a caller that already
    knows both, from :func:`live_catalog` or :func:`changed_blobs`.
    """
    return Snapshot.empty(store.repo.object_store).record(path, blob).memory


def read_memories(store: Store, where: Iterable[tuple[str, str]]) -> list[Memory]:
    """Returns the memories stored in these ``(path, blob)`` pairs, in order.

    For a caller that reads a whole branch at once (a hook ranking a store
    that was never indexed): the blobs are read pack by pack
    (:func:`~ctx.engine._trees.read_blobs`), several times faster than one
    :func:`read_memory` per memory.

    Raises:
        CorruptStoreError: A blob is not a memory.
    """
    pairs = list(where)
    data = read_blobs(store.repo.object_store, (blob for _, blob in pairs))
    return [decode_memory(data[blob], path) for path, blob in pairs]
