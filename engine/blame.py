"""Blame: the commits that touched a memory, and who wrote each line of it.

:func:`blame` lists every commit that touched a memory (its log);
:func:`blame_lines` charges each line of its body to a commit, across
branches and merges.

dulwich's ``update_lines`` (the core of its annotate) carries line labels
from one version to the next. Its own ``annotate_lines`` walks history as a
line, which misattributes lines when branches merge; here each version takes
its labels from the version in every parent, as git blame does, and only the
lines found in no parent are charged to the commit itself.
"""

from __future__ import annotations

from typing import Any

import msgspec
from dulwich.annotate import update_lines
from dulwich.objects import Blob

from ctx.engine.abbreviation import resolve_memory_id
from ctx.engine.branches import resolve_revision
from ctx.engine.commits import CommitInfo
from ctx.engine.errors import MemoryNotFoundError
from ctx.engine.ids import CommitId, MemoryId
from ctx.engine.layout import is_conflict_path
from ctx.engine.log import LogEntry, log
from ctx.engine.model import decode_memory
from ctx.engine.store import Store

__all__ = ["BlameLine", "blame", "blame_lines"]


class BlameLine(msgspec.Struct, frozen=True, kw_only=True):
    """A line of a memory's body and the commit that wrote it."""

    line: str
    commit: CommitInfo


def blame_lines(
    store: Store, memory_id: str, *, rev: str | None = None
) -> list[BlameLine]:
    """Attributes each line of a memory's body at ``rev`` to a commit.

    Raises:
        MemoryNotFoundError: the memory is not there at ``rev``.
    """
    mid = resolve_memory_id(store, memory_id, rev)
    tip = resolve_revision(store, rev)
    records = store.history.records(tip)
    parents = {r.commit: r.parents for r in records}
    touching: dict[str, str | None] = {}
    settled: dict[str, str] = {}  # a commit that settled one -> that merge
    unsettled: list[str] = []
    for rec, changes in store.history.touching(tip, memory_id=mid):
        for change in changes:
            if not is_conflict_path(change.path):
                touching[rec.commit] = change.new
            elif change.old is None:
                for settler in unsettled:
                    settled[settler] = rec.commit
                unsettled.clear()
            elif change.new is None:
                unsettled.append(rec.commit)
    walker = _Walker(store, mid, parents, touching)
    # update_lines treats its labels as opaque; ours are commit ids.
    annotated: dict[str, list[tuple[Any, bytes]]] = {}
    for rec in reversed(records):  # parents before children
        commit = rec.commit
        if commit not in touching:
            continue
        blob = touching[commit]
        if blob is None:
            annotated[commit] = []
            continue
        body = decode_memory(store.snapshot(CommitId(commit)).read_blob(blob)).body
        new = Blob.from_string((body + "\n").encode("utf-8"))
        label: Any = commit
        # A commit that settled a conflict took its lines from the sides of
        # the merge that stored it, as much as from its parent: `resolve
        # --take theirs` did not write their lines.
        sides = parents[settled[commit]] if commit in settled else ()
        versions = [
            update_lines(annotated[origin], label, new)
            for origin in dict.fromkeys(
                walker.origin(p) for p in (*rec.parents, *sides)
            )
            if origin is not None
        ] or [update_lines([], label, new)]
        merged = versions[0]
        for other in versions[1:]:
            merged = [
                a if a[0] is not label else b
                for a, b in zip(merged, other, strict=True)
            ]
        annotated[commit] = merged
    origin = walker.origin(tip)
    if origin is None or touching[origin] is None:
        raise MemoryNotFoundError(f"No memory {mid} at {rev or 'HEAD'}.")
    infos: dict[str, CommitInfo] = {}
    out = []
    for commit, line in annotated[origin]:
        if commit not in infos:
            infos[commit] = store.commit(CommitId(commit))
        out.append(
            BlameLine(line=line.decode("utf-8").rstrip("\n"), commit=infos[commit])
        )
    return out


class _Walker:
    """Finds, for any commit, the commit that wrote the version it holds."""

    def __init__(
        self,
        store: Store,
        memory_id: MemoryId,
        parents: dict[str, tuple[str, ...]],
        touching: dict[str, str | None],
    ) -> None:
        self._store = store
        self._id = memory_id
        self._parents = parents
        self._touching = touching
        self._origin: dict[str, str | None] = {}

    def _blob_at(self, commit: str) -> str | None:
        snap = self._store.snapshot(CommitId(commit))
        path = snap.find_path(self._id)
        return None if path is None else snap.blob_id(path)

    def origin(self, commit: str) -> str | None:
        """Returns the nearest commit that wrote the memory as ``commit`` has it."""
        visited: list[str] = []
        current: str | None = commit
        result: str | None = None
        while current is not None:
            if current in self._origin:
                result = self._origin[current]
                break
            visited.append(current)
            if current in self._touching:
                result = current
                break
            parents = self._parents[current]
            if len(parents) <= 1:
                current = parents[0] if parents else None
                continue
            # A merge that left the memory as one of its parents had it.
            mine = self._blob_at(current)
            current = next((p for p in parents if self._blob_at(p) == mine), parents[0])
        for seen in visited:
            self._origin[seen] = result
        return result


def blame(store: Store, memory_id: str, *, rev: str | None = None) -> list[LogEntry]:
    """Returns every commit that touched a memory, newest first.

    Raises:
        MemoryNotFoundError: no commit ever touched it.
    """
    return log(store, memory_id, rev=rev)
