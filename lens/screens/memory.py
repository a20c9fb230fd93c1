"""A memory's page: its text, its versions, its blame by line, its links."""

from __future__ import annotations

from typing import ClassVar

import msgspec
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import (
    DataTable,
    Header,
    Input,
    Label,
    Static,
    TabbedContent,
    TabPane,
)

from ctx.engine import (
    BlameLine,
    CtxError,
    EditResult,
    LinkRecord,
    LogEntry,
    MemoryNotFoundError,
    MemoryRecord,
    ShownMemory,
    blame,
    blame_lines,
    list_links,
    live_catalog,
    resolve_revision,
    show,
    show_memory,
    tag,
)
from ctx.engine import Store as EngineStore
from ctx.lens.messages import OpenMemory, ShowGraph, StoreChanged
from ctx.lens.render import LINK_STYLES, memory_text, short, stored, when
from ctx.lens.screens.base import LensScreen, set_columns
from ctx.lens.widgets.keys import KeyFooter, mode_keys

__all__ = ["MemoryPage", "MemoryScreen", "TagPrompt"]


class MemoryPage(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a memory's page shows, read in one go."""

    shown: ShownMemory
    versions: tuple[LogEntry, ...]
    blame: tuple[BlameLine, ...]
    links: tuple[LinkRecord, ...]
    names: dict[str, str] = {}
    """The headline of each memory at a link's other end (a gone one: none)."""


def read_page(store: EngineStore, memory_id: str, rev: str | None) -> MemoryPage:
    """Returns a memory's page at ``rev``: the memory, versions, blame, links."""
    shown = show_memory(store, memory_id, rev)
    mid = shown.memory.id
    links = tuple(list_links(store, mid, rev=rev))
    known = live_catalog(store, resolve_revision(store, rev))
    ends = {end for r in links for end in (r.source, r.target)} - {mid}
    return MemoryPage(
        shown=shown,
        versions=tuple(blame(store, mid, rev=rev)),
        blame=tuple(blame_lines(store, mid, rev=rev)),
        links=links,
        names={m: e.headline for m in ends if (e := known.get(m)) is not None},
    )


class TagPrompt(ModalScreen[str | None]):
    """Asks for a tag to add (``namespace:value``); Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#tag"

    DEFAULT_CSS = """
    TagPrompt { align: center middle; }
    TagPrompt > Vertical { width: 60; height: 7; border: thick $primary; }
    """

    def compose(self) -> ComposeResult:
        """Lays out the question and the box."""
        with Vertical():
            yield Label("Tag to add (namespace:value, tier:reference, ...)")
            yield Input(placeholder="project:ctx", id="tag")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Answers with the tag typed."""
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        """Answers with nothing."""
        self.dismiss(None)


class MemoryScreen(LensScreen):
    """One memory: its text (and conflict), versions, blame by line, links.

    Args:
        memory_id: The memory shown (an id, a short id, or ``ID@REV``).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("g", "graph", "Graph"),
        Binding("t", "tag", "Tag"),
        # The screens' keys work but are not in the footer: with this
        # screen's own, they pushed ? Help and q Quit off an 80-column one
        # (? lists them), as on the review screen.
        *mode_keys(on="app.", show=False),
    ]

    DEFAULT_CSS = """
    MemoryScreen #version-body { border-top: solid $primary-darken-2; }
    """

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.page: MemoryPage | None = None

    def compose(self) -> ComposeResult:
        """Lays out the four tabs."""
        yield Header()
        with TabbedContent(id="tabs"):
            with TabPane("Memory", id="memory"), VerticalScroll():
                yield Static(id="text")
            with TabPane("Versions", id="versions"):
                yield DataTable(id="version-table", cursor_type="row")
                with VerticalScroll():
                    yield Static(id="version-body")
            with TabPane("Blame", id="blame"):
                yield DataTable(id="blame-table", cursor_type="row")
            with TabPane("Links", id="links"):
                yield DataTable(id="link-table", cursor_type="row")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Sets the tables' columns."""
        set_columns(
            self.query_one("#version-table", DataTable),
            ("commit", 8),
            ("when", 16),
            ("agent", 10),
            ("intent", 8),
            ("summary", 60),
        )
        set_columns(
            self.query_one("#blame-table", DataTable),
            ("commit", 8),
            ("agent", 10),
            ("line", 100),
        )
        set_columns(
            self.query_one("#link-table", DataTable),
            ("way", 5),
            ("type", 12),
            ("memory", 40),
            ("conf", 4),
            ("reason", 40),
        )

    def reload(self) -> None:
        """Reads the page again."""
        rev, mid = self.source.branch, self.memory_id
        self.load(lambda: self.source.read(read_page, mid, rev), self._show)

    def report(self, exc: CtxError) -> None:
        """Shows an error; a memory gone from the branch leaves the page too.

        Forgotten by another process (or on a branch switched to without
        it), its old text stayed as if it were live, with a passing notice.
        """
        if isinstance(exc, MemoryNotFoundError):
            self.page = None
            gone = Text(f"{exc.message} ", style="bold yellow")
            gone.append(
                "It was here when this page was read: forgotten since, or not "
                f"on {self.source.branch}. `ctx log` says by whom.",
                style="yellow",
            )
            self.query_one("#text", Static).update(gone)
            self.query_one("#version-body", Static).update("")
            for table in ("#version-table", "#blame-table", "#link-table"):
                self.query_one(table, DataTable).clear()
        super().report(exc)

    def _show(self, page: MemoryPage) -> None:
        self.page = page
        memory = page.shown.memory
        self.sub_title = f"memory {memory.id}"
        text = memory_text(memory, page.shown.path)
        conflict = page.shown.conflict
        if conflict is not None:
            text.append(
                f"\n\nIn conflict ({', '.join(conflict.fields)}) with "
                f"{conflict.theirs_ref}:\n",
                style="bold red",
            )
            text.append_text(
                stored(conflict.theirs.body)
                if conflict.theirs
                else Text("(deleted there)")
            )
        self.query_one("#text", Static).update(text)
        versions = self.query_one("#version-table", DataTable)
        versions.clear()
        for entry in page.versions:
            c = entry.commit
            versions.add_row(
                short(c.id),
                when(c),
                stored(c.intent.agent if c.intent else c.author),
                stored(c.intent.intent if c.intent else ""),
                stored(c.summary),
                key=c.id,
            )
        lines = self.query_one("#blame-table", DataTable)
        lines.clear()
        for line in page.blame:
            c = line.commit
            lines.add_row(
                short(c.id),
                stored(c.intent.agent if c.intent else c.author),
                stored(line.line),
            )
        links = self.query_one("#link-table", DataTable)
        links.clear()
        for i, record in enumerate(page.links):
            out = record.source == memory.id
            other = record.target if out else record.source
            style = LINK_STYLES.get(record.type, "")
            links.add_row(
                "out →" if out else "← in",
                Text(record.type, style=style),
                stored(page.names.get(other, other)),
                f"{record.link.confidence:.2f}" if record.link.confidence else "",
                stored(record.link.reason or ""),
                key=f"{i}:{other}",
            )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Shows the version highlighted in the versions tab."""
        if event.data_table.id != "version-table" or event.row_key.value is None:
            return
        at = event.row_key.value

        def shown(record: MemoryRecord | None) -> None:
            body = self.query_one("#version-body", Static)
            if record is None:
                body.update("Removed in this commit.")
            else:
                body.update(memory_text(record.memory, record.path))

        self.load(
            lambda: self.source.read(_version, self.memory_id, at),
            shown,
            group="version",
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Opens the memory at the other end of the link chosen."""
        key = event.row_key.value
        if event.data_table.id == "link-table" and key is not None:
            self.post_message(OpenMemory(key.split(":", 1)[1]))

    def action_graph(self) -> None:
        """Shows the link graph around this memory."""
        memory_id = self.page.shown.memory.id if self.page else self.memory_id
        self.post_message(ShowGraph(memory_id))

    def action_tag(self) -> None:
        """Asks for a tag and adds it (a commit with intent ``review``)."""
        if self.page is None:
            return
        mid = self.page.shown.memory.id
        branch = self.source.branch

        def asked(value: str | None) -> None:
            if not value:
                return

            def added(result: EditResult) -> None:
                said = f"Tagged {value} on {branch}." if result.changed else None
                self.notify(said or "It has that tag already.", markup=False)
                self.post_message(StoreChanged())

            self.load(
                lambda: self.source.write(tag, mid, [value], branch=branch),
                added,
                group="write",
            )

        self.app.push_screen(TagPrompt(), asked)


def _version(store: EngineStore, memory_id: str, at: str) -> MemoryRecord | None:
    try:
        return show(store, memory_id, at)
    except MemoryNotFoundError:  # the version that removed it
        return None
