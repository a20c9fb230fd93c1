"""The graph's layout, without a terminal: rows, columns, parents, marks."""

from __future__ import annotations

from ctx.engine import GraphEdge, GraphNode, Neighbourhood
from ctx.lens.widgets.graph_layout import lay_out


def node(i: str, distance: int) -> GraphNode:
    return GraphNode(
        id=i, title=f"memory {i}", kind="fact", degree=1, distance=distance
    )


def edge(a: str, t: str, b: str) -> GraphEdge:
    return GraphEdge(source=a, type=t, target=b)


def test_a_tree_left_to_right_with_cross_links_counted():
    hood = Neighbourhood(
        centre="C",
        hops=2,
        nodes=(node("C", 0), node("A", 1), node("B", 1), node("D", 2), node("E", 2)),
        edges=(
            edge("A", "DEPENDS_ON", "C"),
            edge("C", "SUPERSEDES", "B"),
            edge("D", "CONTRADICTS", "A"),
            edge("E", "RELATES_TO", "A"),
            edge("E", "RELATES_TO", "B"),  # a second way to E: not a line
        ),
        left_out=0,
    )
    layout = lay_out(hood)
    assert layout.order == ("C", "A", "D", "E", "B")
    assert {k: (p.row, p.column) for k, p in layout.placed.items()} == {
        "C": (0, 0),
        "A": (0, 1),
        "D": (0, 2),
        "E": (1, 2),
        "B": (2, 1),
    }
    assert (layout.rows, layout.columns) == (3, 3)
    a, b, e = layout.placed["A"], layout.placed["B"], layout.placed["E"]
    assert (a.parent, a.edge, a.outward) == ("C", "DEPENDS_ON", False)
    assert (b.parent, b.edge, b.outward) == ("C", "SUPERSEDES", True)
    assert a.children == ("D", "E")
    assert e.parent == "A"
    assert e.extra == 1
    assert b.extra == 1
    assert b.superseded
    assert not a.superseded
    assert layout.placed["D"].contradicted
    assert a.contradicted


def test_the_centre_alone():
    layout = lay_out(
        Neighbourhood(centre="C", hops=1, nodes=(node("C", 0),), edges=(), left_out=0)
    )
    assert layout.order == ("C",)
    assert (layout.rows, layout.columns) == (1, 1)
