"""The link graph: a memory's neighbourhood drawn, moved through, widened."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Header, Static

from ctx.engine import (
    LINK_TYPES,
    Neighbourhood,
    link_graph,
    live_catalog,
    neighbourhood,
    plural,
    resolve_revision,
)
from ctx.engine import Store as EngineStore
from ctx.lens.messages import OpenMemory
from ctx.lens.render import LINK_STYLE, LINK_STYLES, stored
from ctx.lens.screens.base import LensScreen
from ctx.lens.widgets.graph_view import GraphView
from ctx.lens.widgets.keys import KeyFooter, mode_keys

__all__ = ["NODE_BUDGET", "GraphScreen", "read_neighbourhood"]

NODE_BUDGET = 60
"""Memories drawn at most: what a screen can show legibly; the engine keeps
the nearest and counts the rest."""


def busiest(store: EngineStore, rev: str | None) -> str | None:
    """Returns the memory with the most links (else any memory, else None)."""
    tip = resolve_revision(store, rev)
    degree: Counter[str] = Counter()
    for source, _, target in link_graph(store, tip).edges():
        degree.update((source, target))
    entries = live_catalog(store, tip).entries
    for memory_id, _ in degree.most_common():
        if memory_id in entries:
            return memory_id
    return min(entries, default=None)


def read_neighbourhood(
    store: EngineStore,
    centre: str | None,
    hops: int,
    types: tuple[str, ...],
    rev: str | None,
) -> Neighbourhood | None:
    """Returns the neighbourhood to draw (around the busiest memory if no centre)."""
    centre = centre or busiest(store, rev)
    if centre is None:
        return None
    return neighbourhood(
        store, centre, hops=hops, limit=NODE_BUDGET, types=types, rev=rev
    )


class GraphScreen(LensScreen):
    """A memory's neighbourhood, 1 to 3 links deep, of chosen link types.

    Up and down move through the memories drawn, left and right to a
    memory's parent or first child (the drawing's own keys); Enter draws
    the graph around the one highlighted, Backspace goes back; + and -
    widen and narrow; t picks the link types; o opens the memory's page.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "centre", "Centre"),
        Binding("backspace,b", "back", "Back"),
        Binding("plus,equals_sign", "hops(1)", "Widen"),
        Binding("minus", "hops(-1)", "Narrow"),
        Binding("t", "types", "Types"),
        Binding("o", "open", "Open"),
        # The screens' keys work but are not in the footer: with this
        # screen's own, they pushed ? Help and q Quit off an 80-column one
        # (? lists them), as on the review screen.
        *mode_keys(on="app.", show=False),
    ]

    DEFAULT_CSS = """
    GraphScreen #status { height: 1; background: $boost; }
    GraphScreen #detail-pane {
        width: 30%; min-width: 24; max-width: 48;
        border-left: solid $primary-darken-2;
        scrollbar-gutter: stable; scrollbar-size-vertical: 1;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self.centre: str | None = None
        self.hops = 1
        self.type_choice = 0  # 0: every type, else LINK_TYPES[i - 1]
        self.trail: list[str] = []
        self.hood: Neighbourhood | None = None
        self.detailed: str | None = None
        """The memory the detail pane shows."""

    def compose(self) -> ComposeResult:
        """Lays out the status line, the drawing and the detail pane."""
        yield Header()
        yield Static(id="status")
        with Horizontal():
            yield GraphView(id="graph")
            with VerticalScroll(id="detail-pane"):
                yield Static(id="detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Gives the drawing the keys."""
        self.query_one(GraphView).focus()

    @property
    def types(self) -> tuple[str, ...]:
        """Returns the link types drawn (empty: every type)."""
        return () if self.type_choice == 0 else (LINK_TYPES[self.type_choice - 1],)

    def centre_on(self, memory_id: str) -> None:
        """Draws the graph around ``memory_id``, remembering the last centre."""
        if self.centre is not None and self.centre != memory_id:
            self.trail.append(self.centre)
        self.centre = memory_id
        self.reload()

    def reload(self) -> None:
        """Reads the neighbourhood again."""
        centre, hops, types = self.centre, self.hops, self.types
        rev = self.source.branch
        self.load(
            lambda: self.source.read(read_neighbourhood, centre, hops, types, rev),
            self._show,
        )

    def _show(self, hood: Neighbourhood | None) -> None:
        self.hood = hood
        status = self.query_one("#status", Static)
        if hood is None:
            status.update("No memories on this branch yet.")
            self.query_one("#detail", Static).update("")
            self.detailed = None
            return
        self.centre = hood.centre
        self.sub_title = f"graph around {hood.centre}"
        kinds = "every type" if not self.types else self.types[0]
        shown = (
            f"{plural(len(hood.nodes), 'memory')}, {plural(len(hood.edges), 'link')}"
        )
        left = f", {hood.left_out} left out" if hood.left_out else ""
        status.update(stored(f" {plural(self.hops, 'hop')} · {kinds} · {shown}{left}"))
        view = self.query_one(GraphView)
        view.show(hood)
        if view.highlighted is not None:
            # In this frame, not after the drawing's message: one redraw.
            self._detail(view.highlighted)

    def on_graph_view_highlighted(self, event: GraphView.Highlighted) -> None:
        """Shows the highlighted memory and its links among those drawn."""
        if event.memory_id != self.detailed:
            self._detail(event.memory_id)

    def _detail(self, memory_id: str) -> None:
        if self.hood is None:
            return
        node = next((n for n in self.hood.nodes if n.id == memory_id), None)
        if node is None:
            return
        self.detailed = memory_id
        out = stored(node.title + "\n", style="bold")
        out.append(f"{node.id}\n{node.kind or 'not on this branch'}", style="dim")
        away = plural(node.distance, "hop")
        out.append(f" · {away} away · {plural(node.degree, 'link')}\n\n", style="dim")
        titles = {n.id: n.title for n in self.hood.nodes}
        for edge in self.hood.edges:
            if node.id not in (edge.source, edge.target):
                continue
            style = LINK_STYLES.get(edge.type, LINK_STYLE)
            outward = edge.source == node.id
            other = edge.target if outward else edge.source
            way = "→" if outward else "←"
            out.append_text(stored(f"{way} {edge.type} ", style=style))
            out.append_text(stored(f"{titles[other]}\n"))
            out.append(f"  {other}\n", style="dim")
        hidden = node.degree - sum(
            node.id in (e.source, e.target) for e in self.hood.edges
        )
        if hidden > 0:
            more = plural(hidden, "more link")
            out.append(f"\n{more} to memories not drawn", style="dim")
        self.query_one("#detail", Static).update(out)

    def action_centre(self) -> None:
        """Draws the graph around the highlighted memory."""
        highlighted = self.query_one(GraphView).highlighted
        if highlighted is not None and highlighted != self.centre:
            self.centre_on(highlighted)

    def action_back(self) -> None:
        """Draws the graph around the previous centre."""
        if self.trail:
            self.centre = self.trail.pop()
            self.reload()

    def action_hops(self, step: int) -> None:
        """Widens (1) or narrows (-1) the neighbourhood by one link."""
        hops = max(1, min(3, self.hops + step))
        if hops != self.hops:
            self.hops = hops
            self.reload()

    def action_types(self) -> None:
        """Cycles through every link type, then each type alone."""
        self.type_choice = (self.type_choice + 1) % (len(LINK_TYPES) + 1)
        self.reload()

    def action_open(self) -> None:
        """Opens the highlighted memory's page."""
        highlighted = self.query_one(GraphView).highlighted
        if highlighted is not None:
            self.post_message(OpenMemory(highlighted))
