"""Recall: a query box, results as you type, and each hit's explanation."""

from __future__ import annotations

import threading
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Static

from ctx.engine import headline, visible
from ctx.hub import Hit, RecallResult, recall
from ctx.lens.messages import OpenMemory
from ctx.lens.render import stored
from ctx.lens.screens.base import LensScreen, set_columns
from ctx.lens.widgets.keys import KeyFooter

__all__ = ["DEBOUNCE_SECONDS", "RecallScreen", "explanation_text"]

DEBOUNCE_SECONDS = 0.3
"""How long typing must pause before a recall runs: shorter than a reader
notices, longer than the gap between two keys of a word."""


def explanation_text(hit: Hit) -> Text:
    """Returns a hit's text and why it ranked: channels, time boost, last commit."""
    out = stored(hit.title or headline(None, hit.body), style="bold")
    out.append(f"\n{hit.id}  {hit.kind}  score {hit.score:.4f}\n", style="dim")
    explain = hit.explain
    if explain is not None:
        for channel in explain.channels:
            out.append(
                f"{channel.channel:<7} #{channel.rank:<4} +{channel.contribution:.4f}\n"
            )
        out.append(f"fused {explain.fused:.4f}  time boost {explain.boost:.2f}")
        out.append(f"  closeness {explain.closeness:.2f}\n")
        if explain.via:
            out.append(f"reached through a link from {explain.via}\n")
        if explain.last_commit:
            out.append(
                f"last commit {explain.last_commit[:8]} by "
                f"{visible(explain.last_agent or '')}: "
                f"{visible(explain.last_summary or '')}\n",
                style="dim",
            )
    if hit.conflict is not None:
        out.append(f"in conflict with {hit.conflict.theirs_ref}\n", style="bold red")
    out.append("\n" + visible(hit.body))
    return out


class RecallScreen(LensScreen):
    """Recall as you type: the hits ranked, and the highlighted one explained."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "ask", "Query"),
        # Shown: while the box has the keys, Escape is the way out of it.
        Binding("escape", "hits", "Hits"),
        Binding("down", "hits", "Hits", show=False),
    ]

    DEFAULT_CSS = """
    RecallScreen #explain-pane { width: 45%; border-left: solid $primary-darken-2; }
    RecallScreen #summary { height: 1; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.result: RecallResult | None = None
        self._pending: Timer | None = None
        # One recall at a time: a superseded one's thread runs on, and a
        # second beside it would find the index being caught up and answer
        # from a partial one, ranked a little differently.
        self._one_at_a_time = threading.Lock()

    def compose(self) -> ComposeResult:
        """Lays out the query box, the hits and the explanation."""
        yield Header()
        yield Input(
            placeholder="recall: what did we decide about the queue?", id="query"
        )
        with Horizontal():
            yield DataTable(id="hits", cursor_type="row")
            with VerticalScroll(id="explain-pane"):
                yield Static(id="explain")
        yield Static(id="summary")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Sets the hits' columns and puts the cursor in the box."""
        set_columns(
            self.query_one("#hits", DataTable),
            ("score", 5),
            ("kind", 13),
            ("memory", 60),
        )
        self.query_one("#query", Input).focus()

    def reload(self) -> None:
        """Asks the query again (the store may have changed)."""
        self.sub_title = f"recall on {self.source.branch}"
        if self.query_one("#query", Input).value.strip():
            self._ask()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Asks again once typing pauses."""
        if self._pending is not None:
            self._pending.stop()
        self._pending = self.set_timer(DEBOUNCE_SECONDS, self._ask)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Asks at once, and moves to the hits."""
        if self._pending is not None:
            self._pending.stop()
        self._ask()
        self.query_one("#hits", DataTable).focus()

    def _ask(self) -> None:
        query = self.query_one("#query", Input).value.strip()
        if not query:
            return
        workspace, branch = self.source.workspace, self.source.branch
        self.query_one("#summary", Static).update("recalling…")

        def read() -> RecallResult:
            with self._one_at_a_time:
                return recall(workspace, query, branch=branch, explain=True)

        self.load(read, self._show, group="recall")

    def _show(self, result: RecallResult) -> None:
        self.result = result
        table = self.query_one("#hits", DataTable)
        table.clear()
        for hit in result.hits:
            table.add_row(
                f"{hit.score:.3f}",
                stored(hit.kind),
                stored(hit.title or headline(None, hit.body, 70)),
                key=hit.id,
            )
        summary = (
            f"{len(result.hits)} hits, {result.tokens} of {result.live_tokens} "
            f"tokens of the branch"
        )
        if result.left_out:
            summary += f", {result.left_out} left out by the budget"
        self.query_one("#summary", Static).update(summary)
        if result.hits:
            self.query_one("#explain", Static).update(explanation_text(result.hits[0]))
        else:
            self.query_one("#explain", Static).update("Nothing recalled.")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Explains the hit highlighted."""
        if self.result is None:
            return
        hit = next((h for h in self.result.hits if h.id == event.row_key.value), None)
        if hit is not None:
            self.query_one("#explain", Static).update(explanation_text(hit))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Opens the memory recalled."""
        if event.row_key.value is not None:
            self.post_message(OpenMemory(event.row_key.value))

    def action_hits(self) -> None:
        """Leaves the box for the hits (the number keys work again)."""
        self.query_one("#hits", DataTable).focus()

    def action_ask(self) -> None:
        """Moves to the query box."""
        self.query_one("#query", Input).focus()
