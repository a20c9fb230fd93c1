"""Provenance and the link graph: summarize, supersede, trace, related, expand.

Every write here is one commit with the caller's intent, so ``blame`` and
``undo`` cover it. Walks read the adjacency index (``engine/adjacency.py``),
never every link file, and are bounded by depth and by a node limit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import msgspec

from ctx.engine.abbreviation import resolve_memory_id
from ctx.engine.adjacency import adjacency
from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.catalog import catalog
from ctx.engine.errors import InvalidInputError
from ctx.engine.ids import CommitId, MemoryId, new_memory_id
from ctx.engine.layout import link_path, memory_path
from ctx.engine.memories import Draft, build_memory
from ctx.engine.model import LINK_TYPES, Intent, Link, Outcome, check_link_type, encode
from ctx.engine.snapshot import MemoryRecord, Snapshot
from ctx.engine.store import Store
from ctx.engine.tags import OFF_CONTEXT, with_tier
from ctx.engine.wording import plural

__all__ = [
    "DEFAULT_DEPTH",
    "MAX_NODES",
    "RelatedHit",
    "SummarizeResult",
    "SupersedeResult",
    "TraceNode",
    "expand",
    "related",
    "summarize",
    "supersede",
    "trace",
]

MAX_NODES = 2000
"""The most memories one walk visits."""
DEFAULT_DEPTH = 5
"""How deep ``trace`` goes unless told otherwise."""
_TRACE_TYPES = ("DERIVED_FROM", "DEPENDS_ON")


class TraceNode(msgspec.Struct, frozen=True, kw_only=True):
    """One memory in a provenance tree.

    Attributes:
        id: The memory.
        kind: Its kind, or ``None`` if it is not on the branch.
        headline: Its title or first line.
        via: The link type that led here from the parent (``None`` at the root).
        children: What it in turn derives from / depends on.
        cycle: It is already on the path from the root (not expanded again).
        repeated: It appears earlier in the tree (not expanded again).
        missing: The link points at a memory the branch does not have.
    """

    id: MemoryId
    kind: str | None
    headline: str
    via: str | None = None
    children: tuple[TraceNode, ...] = ()
    cycle: bool = False
    repeated: bool = False
    missing: bool = False


class RelatedHit(msgspec.Struct, frozen=True, kw_only=True):
    """A memory near another: how far, and by which link it was first reached."""

    id: MemoryId
    kind: str | None
    headline: str
    distance: int
    via: str
    direction: str
    source: MemoryId


class SummarizeResult(Outcome, frozen=True, kw_only=True):
    """What ``summarize`` wrote: the summary, its sources and the commit.

    Attributes:
        id: The new summary's id.
        sources: The memories it was derived from, without repeats.
        commit: The commit that wrote it.
    """

    id: MemoryId
    sources: tuple[MemoryId, ...]
    commit: CommitId


class SupersedeResult(Outcome, frozen=True, kw_only=True):
    """What ``supersede`` recorded: which memory replaces which.

    Attributes:
        old: The memory replaced.
        new: The memory that replaces it.
        commit: The commit, or None when the link was already there.
    """

    old: MemoryId
    new: MemoryId
    commit: CommitId | None


def _check_depth(depth: int | None) -> int:
    if depth is None:
        return DEFAULT_DEPTH
    if depth < 1:
        raise InvalidInputError("The depth must be at least 1.")
    return depth


def trace(
    store: Store,
    memory_id: str,
    *,
    reverse: bool = False,
    depth: int | None = None,
    rev: str | None = None,
) -> TraceNode:
    """Returns what a memory was derived from or depends on, recursively.

    Args:
        store: The store.
        memory_id: Where to start.
        reverse: Follow the links backwards: what derives from or depends on it.
        depth: How many levels (default :data:`DEFAULT_DEPTH`).
        rev: The revision to read (default HEAD).
    """
    limit = _check_depth(depth)
    mid = resolve_memory_id(store, memory_id, rev)
    snap = store.snapshot(resolve_revision(store, rev))
    lookup = catalog(store, snap)
    root = lookup.require(mid)
    adj = adjacency(store, snap)
    placed: set[str] = {mid}
    budget = [MAX_NODES]

    def walk(node_id: str, path: tuple[str, ...], level: int) -> tuple[TraceNode, ...]:
        if level >= limit:
            return ()
        edges = adj.incoming(node_id) if reverse else adj.outgoing(node_id)
        out = []
        for link_type, other in sorted(edges):
            if link_type not in _TRACE_TYPES or budget[0] <= 0:
                continue
            budget[0] -= 1
            rec = lookup.get(other)
            cycle = other in path
            repeated = not cycle and other in placed
            placed.add(other)
            expand = rec is not None and not cycle and not repeated
            out.append(
                TraceNode(
                    id=MemoryId(other),
                    kind=rec.kind if rec else None,
                    headline=rec.headline if rec else "(not on this branch)",
                    via=link_type,
                    children=walk(other, (*path, other), level + 1) if expand else (),
                    cycle=cycle,
                    repeated=repeated,
                    missing=rec is None,
                )
            )
        return tuple(out)

    return TraceNode(
        id=mid,
        kind=root.kind,
        headline=root.headline,
        children=walk(mid, (mid,), 0),
    )


def related(
    store: Store,
    memory_id: str,
    *,
    depth: int = 2,
    types: Sequence[str] = (),
    rev: str | None = None,
) -> list[RelatedHit]:
    """Returns the memories within ``depth`` links of one, in either direction.

    Nearest first; each is reported once, with the link that first reached it.
    """
    limit = _check_depth(depth)
    wanted = {check_link_type(t) for t in types} or set(LINK_TYPES)
    mid = resolve_memory_id(store, memory_id, rev)
    snap = store.snapshot(resolve_revision(store, rev))
    lookup = catalog(store, snap)
    lookup.require(mid)
    adj = adjacency(store, snap)
    seen: set[str] = {mid}
    queue: deque[tuple[str, int]] = deque([(mid, 0)])
    hits: list[RelatedHit] = []
    while queue and len(hits) < MAX_NODES:
        node, distance = queue.popleft()
        if distance >= limit:
            continue
        neighbours = [(t, o, "out") for t, o in adj.outgoing(node)] + [
            (t, o, "in") for t, o in adj.incoming(node)
        ]
        for link_type, other, direction in sorted(neighbours):
            if link_type not in wanted or other in seen:
                continue
            seen.add(other)
            rec = lookup.get(other)
            hits.append(
                RelatedHit(
                    id=MemoryId(other),
                    kind=rec.kind if rec else None,
                    headline=rec.headline if rec else "(not on this branch)",
                    distance=distance + 1,
                    via=link_type,
                    direction=direction,
                    source=MemoryId(node),
                )
            )
            if rec is not None:
                queue.append((other, distance + 1))
    return hits


def expand(
    store: Store, memory_id: str, *, rev: str | None = None
) -> list[MemoryRecord]:
    """Returns, in full, the memories a summary was derived from.

    Raises:
        InvalidInputError: the memory has no DERIVED_FROM links.
    """
    mid = resolve_memory_id(store, memory_id, rev)
    snap = store.snapshot(resolve_revision(store, rev))
    snap.find(mid)
    sources = sorted(
        o for t, o in adjacency(store, snap).outgoing(mid) if t == "DERIVED_FROM"
    )
    if not sources:
        raise InvalidInputError(
            f"Memory {mid} is derived from nothing.",
            hint="`ctx summarize` records the sources of a summary.",
        )
    lookup = catalog(store, snap)
    found = [entry for entry in (lookup.get(s) for s in sources) if entry is not None]
    return [snap.record(entry.path, entry.blob) for entry in found]


def summarize(
    store: Store,
    memory_ids: Sequence[str],
    body: str,
    intent: Intent,
    *,
    title: str | None = None,
    context: str = "summaries",
    tags: Sequence[str] = (),
    archive_sources: bool = False,
    branch: str | None = None,
) -> SummarizeResult:
    """Writes a summary with a DERIVED_FROM link to each source, in one commit.

    With ``archive_sources`` the sources move to ``tier:off-context``.
    """
    sources = list(
        dict.fromkeys(resolve_memory_id(store, i, branch) for i in memory_ids)
    )
    if not sources:
        raise InvalidInputError("Name at least one memory to summarize.")
    now = store.clock()
    summary = build_memory(
        Draft(
            text=body, title=title, kind="summary", context=context, tags=tuple(tags)
        ),
        new_memory_id(now),
        now,
    )
    link = Link(
        version=1,
        agent=intent.agent,
        created_at=now,
        confidence=intent.confidence,
        reason=intent.reason,
    )

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {
            memory_path(context, summary.id): encode(summary)
        }
        for source in sources:
            rec = snap.find(source)
            out[link_path(summary.id, "DERIVED_FROM", source)] = encode(link)
            if archive_sources:
                archived = msgspec.structs.replace(
                    rec.memory, tags=with_tier(rec.memory.tags, OFF_CONTEXT)
                )
                out[rec.path] = encode(archived)
        return out

    commit = store.write(
        target_branch(store, branch),
        intent,
        f"Summarize {plural(len(sources), 'memory')} as {summary.id}",
        build,
    )
    assert commit is not None  # a new memory always changes the tree
    return SummarizeResult(id=summary.id, sources=tuple(sources), commit=commit.id)


def supersede(
    store: Store,
    old: str,
    new: str,
    intent: Intent,
    *,
    branch: str | None = None,
) -> SupersedeResult:
    """Records that ``new`` replaces ``old`` (a SUPERSEDES link from new to old).

    Listings and recall hide ``old`` from then on, unless asked for everything.
    """
    old_id = resolve_memory_id(store, old, branch)
    new_id = resolve_memory_id(store, new, branch)
    if old_id == new_id:
        raise InvalidInputError("A memory cannot supersede itself.")
    path = link_path(new_id, "SUPERSEDES", old_id)

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        snap.find(old_id)
        snap.find(new_id)
        if snap.blob_id(path) is not None:
            return {}
        if ("SUPERSEDES", new_id) in adjacency(store, snap).outgoing(old_id):
            raise InvalidInputError(f"{old_id} already supersedes {new_id}.")
        value = Link(
            version=1,
            agent=intent.agent,
            created_at=store.clock(),
            confidence=intent.confidence,
            reason=intent.reason,
        )
        return {path: encode(value)}

    commit = store.write(
        target_branch(store, branch), intent, f"Supersede {old_id} with {new_id}", build
    )
    return SupersedeResult(old=old_id, new=new_id, commit=commit.id if commit else None)
