"""Memories: browse by place, kind, tag and tier; filter with the query language."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

import msgspec
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import DataTable, Header, Input, Static, Tree

from ctx.engine import (
    TIERS,
    CtxError,
    TagCount,
    context_of,
    count_tags,
    headline,
    link_graph,
    live_catalog,
    plural,
    resolve_revision,
    select,
)
from ctx.engine import Store as EngineStore
from ctx.lens.messages import OpenMemory
from ctx.lens.render import stored
from ctx.lens.screens.base import LensScreen, set_columns
from ctx.lens.widgets.keys import KeyFooter

__all__ = ["ROW_LIMIT", "Listing", "MemoriesScreen", "Row"]

ROW_LIMIT = 1000
"""Memories put in the table at once; the rest are counted, and a filter
narrows them (a table of 100,000 rows would take seconds to fill)."""


class Row(msgspec.Struct, frozen=True, array_like=True):
    """One memory of the list."""

    id: str
    kind: str
    place: str
    headline: str


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    """What the list shows: the first rows, how many there are, by place and kind."""

    rows: tuple[Row, ...]
    total: int
    places: dict[str, int] = {}
    kinds: dict[str, int] = {}


def _catalog_listing(store: EngineStore, rev: str | None) -> Listing:
    # The catalog names every memory without reading one: fast at 100k.
    # Superseded memories are left out, as `ctx ls` does.
    tip = resolve_revision(store, rev)
    hidden = link_graph(store, tip).superseded()
    entries = live_catalog(store, tip).entries
    rows = sorted(
        (
            Row(mid, e.kind, context_of(e.path), e.headline)
            for mid, e in entries.items()
            if mid not in hidden
        ),
        key=lambda r: (r.place, r.id),
    )
    return Listing(
        rows=tuple(rows[:ROW_LIMIT]),
        total=len(rows),
        places=dict(sorted(Counter(r.place for r in rows).items())),
        kinds=dict(sorted(Counter(r.kind for r in rows).items())),
    )


class MemoriesScreen(LensScreen):
    """The memories of the branch shown, browsed and filtered.

    The tree on the left picks a place, a kind, a tier or a tag; the box on
    top takes any query (``kind:decision AND tag:project:ctx``). Enter opens
    a memory's page.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear", "Clear filter", show=False),
    ]

    DEFAULT_CSS = """
    MemoriesScreen #browse { width: 24; border-right: solid $primary-darken-2; }
    MemoriesScreen #filter { margin: 0 0; }
    MemoriesScreen #count { height: 1; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.where: str | None = None
        self.tier: str | None = None
        self.listing: Listing | None = None

    def compose(self) -> ComposeResult:
        """Lays out the filter box, the browse tree and the list."""
        yield Header()
        yield Input(
            placeholder="filter: kind:decision tag:tier:reference text:postgres",
            id="filter",
        )
        with Horizontal():
            yield Tree("browse", id="browse")
            yield DataTable(id="memories", cursor_type="row")
        yield Static(id="count")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Sets the list's columns and the browse tree's sections."""
        table = self.query_one("#memories", DataTable)
        set_columns(table, ("id", 10), ("kind", 13), ("place", 10), ("memory", 70))
        table.focus()
        tree = self.query_one("#browse", Tree)
        tree.show_root = False
        tree.root.expand()

    def reload(self) -> None:
        """Reads the list again, with the filter in force."""
        self.sub_title = f"memories on {self.source.branch}"
        self._run()

    def _run(self) -> None:
        where, tier, rev = self.where, self.tier, self.source.branch
        if where is None and tier is None:
            self.load(
                lambda: self.source.read(_catalog_listing, rev),
                self._show,
                group="list",
            )
            return
        now = self.source.now()

        def read() -> Listing:
            chosen = self.source.read(select, where, now=now, rev=rev)
            rows = [
                Row(
                    s.record.memory.id,
                    s.record.memory.kind,
                    s.record.context,
                    headline(s.record.memory.title, s.record.memory.body, 70),
                )
                for s in chosen
                if tier is None or s.tier == tier
            ]
            return Listing(rows=tuple(rows[:ROW_LIMIT]), total=len(rows))

        self.load(read, self._show, group="list")

    def _show(self, listing: Listing) -> None:
        table = self.query_one("#memories", DataTable)
        keep = table.cursor_row  # back from a memory's page: the same place
        table.clear()
        for row in listing.rows:
            table.add_row(
                row.id[-10:],
                stored(row.kind),
                stored(row.place),
                stored(row.headline),
                key=row.id,
            )
        if listing.rows:
            table.move_cursor(row=min(keep, len(listing.rows) - 1))
        shown = len(listing.rows)
        what = self.where or (f"tier {self.tier}" if self.tier else "all")
        count = f"{plural(listing.total, 'memory')} ({what})"
        if shown < listing.total:
            count += f"; the first {shown} are listed: filter to narrow"
        self.query_one("#count", Static).update(stored(count))
        if listing.places or listing.kinds or self.listing is None:
            self._fill_tree(listing)
        self.listing = listing

    def _fill_tree(self, listing: Listing) -> None:
        tree = self.query_one("#browse", Tree)
        tree.clear()
        for title, field, counts in (
            ("places", "context", listing.places),
            ("kinds", "kind", listing.kinds),
        ):
            section = tree.root.add(title, expand=True)
            for value, n in counts.items():
                section.add_leaf(stored(f"{value} ({n})"), data=f"{field}:{value}")
        tiers = tree.root.add("tiers", expand=False)
        for tier in TIERS:
            tiers.add_leaf(tier, data=f"tier={tier}")
        tree.root.add("tags", data="tags", expand=False, allow_expand=True)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        """Counts the tags when their section is opened (it reads every memory)."""
        node = event.node
        if node.data != "tags" or node.children:
            return
        rev = self.source.branch

        def show(tags: list[TagCount]) -> None:
            for item in tags[:50]:
                label = stored(f"{item.tag} ({item.count})")
                node.add_leaf(label, data=f"tag:{item.tag}")
            if not tags:
                node.add_leaf("(no tags)")

        self.load(lambda: self.source.read(count_tags, rev=rev), show, group="tags")

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        """Filters the list by the place, kind, tier or tag picked."""
        data = event.node.data
        if not data or data == "tags":
            return
        box = self.query_one("#filter", Input)
        if data.startswith("tier="):
            self.where, self.tier = None, data[len("tier=") :]
            box.value = ""
        else:
            self.where, self.tier = data, None
            box.value = data
        self._run()

    def report(self, exc: CtxError) -> None:
        """Shows an error, and that the list is still the one before it."""
        super().report(exc)
        self.query_one("#count", Static).update(
            stored(f"Not filtered: {exc.message} The list is the one before.")
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Filters the list with the query typed."""
        self.where = event.value.strip() or None
        self.tier = None
        self._run()
        self.query_one("#memories", DataTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Opens the memory chosen."""
        if event.row_key.value is not None:
            self.post_message(OpenMemory(event.row_key.value))

    def action_filter(self) -> None:
        """Moves to the filter box."""
        self.query_one("#filter", Input).focus()

    def action_clear(self) -> None:
        """Shows every memory again."""
        self.where, self.tier = None, None
        self.query_one("#filter", Input).value = ""
        self.query_one("#memories", DataTable).focus()
        self._run()
