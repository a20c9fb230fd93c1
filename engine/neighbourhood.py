"""A memory's neighbourhood in the link graph, as a subgraph within a limit.

What a drawing of the graph needs (the HTTP API's ``/api/graph/ego`` and the
lens): the memories within a few links of one, nearest first, each with its
title, kind and degree, never its body, and the links between them. When
more memories are in reach than the limit allows, the nearest are kept (by
distance, then id) and the rest are counted, not dropped silently.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import msgspec

from ctx.engine.adjacency import adjacency
from ctx.engine.branches import resolve_revision
from ctx.engine.catalog import catalog
from ctx.engine.errors import InvalidInputError
from ctx.engine.ids import MemoryId, parse_memory_id
from ctx.engine.model import LINK_TYPES, check_link_type
from ctx.engine.store import Store

__all__ = ["GraphEdge", "GraphNode", "Neighbourhood", "neighbourhood"]

MAX_HOPS = 3
MAX_LIMIT = 500


class GraphNode(msgspec.Struct, frozen=True, kw_only=True):
    """One memory of a neighbourhood.

    Attributes:
        id: The memory's id.
        title: Its title, or its text's first line, cut short.
        kind: Its kind (None for a link to a memory not on this branch).
        degree: Its links in and out, of the types asked for, in the whole graph.
        distance: Links away from the centre (0: the centre).
    """

    id: MemoryId
    title: str
    kind: str | None
    degree: int
    distance: int


class GraphEdge(msgspec.Struct, frozen=True, kw_only=True):
    """One link between two memories of a neighbourhood."""

    source: MemoryId
    type: str
    target: MemoryId


class Neighbourhood(msgspec.Struct, frozen=True, kw_only=True):
    """The subgraph around one memory.

    Attributes:
        centre: The memory it is drawn around.
        hops: How many links away it reaches.
        nodes: The memories, nearest first.
        edges: The links whose two ends are both among ``nodes``.
        left_out: Memories in reach that the limit left out.
    """

    centre: MemoryId
    hops: int
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    left_out: int


def neighbourhood(
    store: Store,
    memory_id: str,
    *,
    hops: int = 1,
    limit: int = 50,
    types: Sequence[str] = (),
    rev: str | None = None,
) -> Neighbourhood:
    """Returns the memories within ``hops`` links of one, and their links.

    Args:
        store: The store.
        memory_id: The centre.
        hops: Links away, 1 to 3.
        limit: Nodes at most, the centre included (1 to 500).
        types: Only links of these types (default: every type).
        rev: The revision to read (default: HEAD).

    Raises:
        InvalidInputError: ``hops`` or ``limit`` is out of range, or a type
            is unknown.
        MemoryNotFoundError: The centre is not on that revision.
    """
    if not 1 <= hops <= MAX_HOPS:
        raise InvalidInputError(f"hops must be 1 to {MAX_HOPS}, not {hops}.")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit must be 1 to {MAX_LIMIT}, not {limit}.")
    wanted = {check_link_type(t) for t in types} or set(LINK_TYPES)
    centre = parse_memory_id(memory_id)
    snap = store.snapshot(resolve_revision(store, rev))
    lookup = catalog(store, snap)
    lookup.require(centre)
    adj = adjacency(store, snap)

    def links(node: str) -> list[tuple[str, str, str]]:
        out = [(node, t, o) for t, o in adj.outgoing(node) if t in wanted]
        return out + [(o, t, node) for t, o in adj.incoming(node) if t in wanted]

    distance: dict[str, int] = {centre: 0}
    queue: deque[str] = deque([centre])
    while queue:
        node = queue.popleft()
        if distance[node] >= hops:
            continue
        for source, _, target in sorted(links(node)):
            other = target if source == node else source
            if other not in distance:
                distance[other] = distance[node] + 1
                queue.append(other)
    kept = sorted(distance, key=lambda n: (distance[n], n))[:limit]
    chosen = set(kept)
    nodes = []
    edges: set[tuple[str, str, str]] = set()
    for node in kept:
        found = links(node)
        edges.update(e for e in found if e[0] in chosen and e[2] in chosen)
        entry = lookup.get(node)
        nodes.append(
            GraphNode(
                id=MemoryId(node),
                title=entry.headline if entry else "(not on this branch)",
                kind=entry.kind if entry else None,
                degree=len(found),
                distance=distance[node],
            )
        )
    return Neighbourhood(
        centre=centre,
        hops=hops,
        nodes=tuple(nodes),
        edges=tuple(
            GraphEdge(source=MemoryId(s), type=t, target=MemoryId(o))
            for s, t, o in sorted(edges)
        ),
        left_out=len(distance) - len(kept),
    )
