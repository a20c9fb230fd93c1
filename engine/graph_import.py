"""Writing a checked export onto a branch, as one commit.

The file is read and checked first (``graph_lines.py``: nothing is written
if a line is bad); then these steps run, in this order:

1. Plan the changes against the branch's tip (:class:`_GraphWrite`): a
   memory or link already there with the same bytes is left alone. Without
   merge any other clash (the same id with other content or at another
   path, a link with other content) is refused; with merge the imported
   version replaces the branch's (a memory moves to the file's path) and
   links may end at memories already on the branch. A path holding a
   different memory is refused either way.
2. Write the plan as one commit. If another writer moved the tip, the store
   plans again on the new tip; the plan that was committed gives the result.

The public way in is :func:`~ctx.engine.imports.import_memories`, which
sends a file here when its first line is an export header.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import msgspec

from ctx.engine import _trees
from ctx.engine.branches import target_branch
from ctx.engine.errors import ConflictError, InvalidInputError, RefNotFoundError
from ctx.engine.exports import MemoryFinder
from ctx.engine.graph_lines import Graph, LinkEntry, MemoryEntry, read_graph
from ctx.engine.ids import MemoryId
from ctx.engine.layout import memory_path
from ctx.engine.memories import WriteResult
from ctx.engine.model import Intent, decode_memory
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store
from ctx.engine.wording import plural

__all__ = ["import_graph"]


# -- step 1: planning the changes against the branch ---------------------------------


class _Plan(msgspec.Struct, frozen=True, kw_only=True):
    """The changes of one import (``None`` deletes) and the ids it writes."""

    changes: dict[str, bytes | None]
    ids: tuple[MemoryId, ...]


class _GraphWrite:
    """Plans one import on whichever tip the store hands to :meth:`build`.

    ``Store.write`` calls :meth:`build` again when another writer moved the
    tip, so each call plans afresh from the snapshot alone; ``plan`` holds
    the last call's plan, the one that was committed.
    """

    def __init__(self, store: Store, graph: Graph, branch: str, merge: bool) -> None:
        self._store = store
        self._graph = graph
        self._branch = branch
        self._merge = merge
        self._file_paths = {m.memory.id: m.path for m in graph.memories}
        self.plan = _Plan(changes={}, ids=())

    def build(self, snap: Snapshot) -> dict[str, bytes | None]:
        """Returns the changes to commit on ``snap``, refusing a clash."""
        finder = self._finder(snap)
        memory_changes, ids = self._memory_changes(snap, finder)
        changes = {**memory_changes, **self._link_changes(finder)}
        self.plan = _Plan(changes=changes, ids=ids)
        return dict(changes)

    def _finder(self, snap: Snapshot) -> MemoryFinder:
        # One bulk lookup of every path this import may touch: the file's
        # paths and, for each id, where it would sit in every context.
        graph = self._graph
        probe = {e.path for e in graph.memories} | {link.path for link in graph.links}
        ends = {end for link in graph.links for end in (link.source, link.target)}
        wanted = self._file_paths.keys() | ends
        probe |= {memory_path(c, mid) for c in snap.contexts() for mid in wanted}
        known = _trees.lookup_many(self._store.repo.object_store, snap.tree, probe)
        return MemoryFinder(snap, known)

    def _memory_changes(
        self, snap: Snapshot, finder: MemoryFinder
    ) -> tuple[dict[str, bytes | None], tuple[MemoryId, ...]]:
        deletes: dict[str, bytes | None] = {}
        writes: dict[str, bytes | None] = {}
        ids: list[MemoryId] = []
        for entry in self._graph.memories:
            occupant = finder.blob_id(entry.path)
            if occupant == entry.blob:
                continue
            old_path = self._old_path(snap, finder, entry, occupant)
            if old_path is not None:
                deletes[old_path] = None
            writes[entry.path] = entry.data
            ids.append(entry.memory.id)
        # Writes last: a memory may move into a path another one leaves.
        return {**deletes, **writes}, tuple(ids)

    def _old_path(
        self,
        snap: Snapshot,
        finder: MemoryFinder,
        entry: MemoryEntry,
        occupant: str | None,
    ) -> str | None:
        """Returns where ``entry``'s memory lives now if it moves, else None."""
        mid = entry.memory.id
        other = (
            None
            if occupant is None
            else decode_memory(snap.read_blob(occupant), entry.path).id
        )
        if other == mid:
            if not self._merge:
                raise ConflictError(
                    f"Line {entry.line}: memory {mid} already exists on "
                    f"branch {self._branch!r} with different content.",
                    hint="Import with merge to replace it.",
                )
            return None
        if other is not None:
            self._check_vacated(entry, other)
        existing = finder.path_of(mid)
        if existing is not None and not self._merge:
            raise ConflictError(
                f"Line {entry.line}: memory {mid} already exists on "
                f"branch {self._branch!r} at {existing}.",
                hint="Import with merge to move and replace it.",
            )
        return existing

    def _check_vacated(self, entry: MemoryEntry, other: MemoryId) -> None:
        # With merge, the memory at entry's path may itself be moving away.
        moving = self._merge and self._file_paths.get(other, entry.path) != entry.path
        if not moving:
            raise ConflictError(
                f"Line {entry.line}: path {entry.path} holds another "
                f"memory ({other}) on branch {self._branch!r}.",
                hint="Move or forget that memory first.",
            )

    def _link_changes(self, finder: MemoryFinder) -> dict[str, bytes | None]:
        writes: dict[str, bytes | None] = {}
        for link in self._graph.links:
            self._check_ends(finder, link)
            current = finder.blob_id(link.path)
            if current == link.blob:
                continue
            if current is not None and not self._merge:
                raise ConflictError(
                    f"Line {link.line}: the {link.link_type} link from "
                    f"{link.source} to {link.target} already exists on branch "
                    f"{self._branch!r} with different content.",
                    hint="Import with merge to replace it.",
                )
            writes[link.path] = link.data
        return writes

    def _check_ends(self, finder: MemoryFinder, link: LinkEntry) -> None:
        for role, end in (("source", link.source), ("target", link.target)):
            if end not in self._file_paths and finder.path_of(end) is None:
                raise InvalidInputError(
                    f"Line {link.line}: link {role} {end} is neither in "
                    f"the file nor on branch {self._branch!r}."
                )


# -- step 2: one commit ---------------------------------------------------------------


def _summary(graph: Graph, plan: _Plan, merge: bool) -> str:
    """Says what the import writes: the memories and links it changes."""
    links = {link.path for link in graph.links} & plan.changes.keys()
    summary = (
        f"Import {plural(len(plan.ids), 'memory')} and {plural(len(links), 'link')}"
    )
    return f"{summary} (merge)" if merge else summary


def import_graph(
    store: Store,
    lines: Iterable[bytes],
    intent: Intent,
    *,
    branch: str | None = None,
    merge: bool = False,
) -> WriteResult:
    """Imports an export (see :func:`~ctx.engine.exports.export_lines`) as one commit.

    Every line is decoded and checked first: the header and its version,
    each memory as a new memory would be (kind, title, body, tags, times,
    names in its path, the path matching the memory), each link (known
    type, no self-link, both ends in the file), and no id or path twice.
    Then, against the branch: a memory or link already there with the same
    bytes is left alone. Without ``merge`` any other clash (the same id with
    other content or at another path, a link with other content) is
    refused. With ``merge`` the imported version of a memory or link
    replaces the branch's (a memory moves to the file's path), links may end
    at memories already on the branch, and everything else on the branch is
    kept. A path holding a different memory is refused either way.

    Args:
        store: The store.
        lines: The file's lines (bytes; a trailing newline is fine).
        intent: Who writes and why (typically ``intent="import"``).
        branch: The branch to write (default: HEAD).
        merge: Replace memories and links the branch already has.

    Returns:
        The commit (``None`` when everything was already there), the ids of
        the memories written, in file order, and every path written, sorted.

    Raises:
        InvalidInputError: a bad line, named ``Line N: …``; nothing written.
        ConflictError: the branch holds something else under an imported
            id or path (``Line N: …``); nothing written.
    """
    graph = read_graph(lines, merge)
    if not graph.memories and not graph.links:
        return WriteResult(commit=None, ids=())
    name = target_branch(store, branch)
    write = _GraphWrite(store, graph, name, merge)
    # Planned on the tip first, for a message that counts what it changes
    # (a merge of an export with one memory edited imports that one); the
    # write plans again on the tip it commits on.
    with contextlib.suppress(RefNotFoundError):
        write.build(store.snapshot(store.branch_tip(name)))
    commit = store.write(name, intent, _summary(graph, write.plan, merge), write.build)
    paths = sorted(p for p, data in write.plan.changes.items() if data is not None)
    return WriteResult(commit=commit, ids=write.plan.ids, paths=tuple(paths))
