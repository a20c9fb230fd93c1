"""A neighbourhood laid out as a tree drawn left to right.

The centre stands in the first column, the memories one link away in the
second, two links away in the third, and so on; each memory hangs from the
nearest memory it is linked to (its parent: the one with the smallest id
among those one link nearer the centre), joined by box-drawing lines that
name the link's type and point the way it goes. Links between memories
that are not parent and child are not drawn as lines (they would cross the
picture); each memory counts them (``+2``) and the detail pane lists them.

The layout is plain data, so the drawing is tested without a terminal.
"""

from __future__ import annotations

from collections import defaultdict

import msgspec

from ctx.engine import GraphEdge, GraphNode, Neighbourhood

__all__ = ["TYPE_MARKS", "Layout", "Placed", "lay_out"]

TYPE_MARKS = {
    "DERIVED_FROM": "DER",
    "DEPENDS_ON": "DEP",
    "SUPERSEDES": "SUP",
    "RELATES_TO": "REL",
    "CHILD_OF": "CHI",
    "CONTRADICTS": "CON",
}
"""Three letters per link type, so that a connector fits in eight columns."""


class Placed(msgspec.Struct, frozen=True, kw_only=True):
    """One memory in the drawing.

    Attributes:
        node: The memory.
        row: Its row.
        column: Its column (its distance from the centre).
        parent: The memory it hangs from (None for the centre).
        edge: The link that joins it to its parent.
        outward: Whether that link goes from the parent to it.
        children: The memories that hang from it, in row order.
        extra: Links to shown memories other than its parent and children.
        superseded: Whether a shown memory supersedes it.
        contradicted: Whether a shown memory contradicts it (or it one).
    """

    node: GraphNode
    row: int
    column: int
    parent: str | None
    edge: str | None
    outward: bool
    children: tuple[str, ...]
    extra: int
    superseded: bool
    contradicted: bool


class Layout(msgspec.Struct, frozen=True, kw_only=True):
    """Where each memory of a neighbourhood stands.

    Attributes:
        order: Memory ids in row order (the order a cursor moves in).
        placed: Each memory's place, by id.
        rows: How many rows the drawing takes.
        columns: How many columns of memories it has.
    """

    order: tuple[str, ...]
    placed: dict[str, Placed]
    rows: int
    columns: int


def _parents(
    hood: Neighbourhood, distance: dict[str, int]
) -> dict[str, tuple[str, GraphEdge]]:
    parent: dict[str, tuple[str, GraphEdge]] = {}
    for edge in hood.edges:  # sorted by source, type, target
        for near, far in ((edge.source, edge.target), (edge.target, edge.source)):
            if distance[near] + 1 != distance[far]:
                continue
            known = parent.get(far)
            if known is None or near < known[0]:
                parent[far] = (near, edge)
    return parent


def lay_out(hood: Neighbourhood) -> Layout:
    """Returns the drawing's layout of ``hood``."""
    distance: dict[str, int] = {n.id: n.distance for n in hood.nodes}
    nodes: dict[str, GraphNode] = {n.id: n for n in hood.nodes}
    parent = _parents(hood, distance)
    children: dict[str, list[str]] = defaultdict(list)
    for child, (near, _) in sorted(parent.items()):
        children[near].append(child)
    for kids in children.values():
        kids.sort(key=lambda k: (parent[k][1].type, k))
    row: dict[str, int] = {}
    order: list[str] = []
    stack: list[str] = [hood.centre]
    next_row = 0
    while stack:  # depth first, each memory on the row of its first child
        node = stack.pop()
        order.append(node)
        row[node] = next_row
        kids = children.get(node, [])
        if not kids:
            next_row += 1
        stack.extend(reversed(kids))
    # Memories that no edge reaches from a nearer one (not expected from
    # the engine, but never lost): each on a row of its own.
    for node in nodes:
        if node not in row:
            order.append(node)
            row[node] = next_row
            next_row += 1
    links: dict[str, set[str]] = defaultdict(set)
    superseded: set[str] = set()
    contradicted: set[str] = set()
    for edge in hood.edges:
        links[edge.source].add(edge.target)
        links[edge.target].add(edge.source)
        if edge.type == "SUPERSEDES":
            superseded.add(edge.target)
        elif edge.type == "CONTRADICTS":
            contradicted.update((edge.source, edge.target))
    placed: dict[str, Placed] = {}
    for node_id, graph_node in nodes.items():
        up = parent.get(node_id)
        hanging = tuple(children.get(node_id, ()))
        tree = set(hanging) | ({up[0]} if up else set())
        placed[node_id] = Placed(
            node=graph_node,
            row=row[node_id],
            column=graph_node.distance,
            parent=up[0] if up else None,
            edge=up[1].type if up else None,
            outward=up is not None and up[1].source == up[0],
            children=hanging,
            extra=len(links[node_id] - tree),
            superseded=node_id in superseded,
            contradicted=node_id in contradicted,
        )
    return Layout(
        order=tuple(order),
        placed=placed,
        rows=next_row,
        columns=max((n.distance for n in hood.nodes), default=0) + 1,
    )
