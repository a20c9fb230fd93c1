"""Branches and history: the branches, a branch's log, a commit's diff."""

from __future__ import annotations

from itertools import islice
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, Static

from ctx.engine import BranchInfo, CommitInfo, Diff, diff, resolve_revision, visible
from ctx.engine import Store as EngineStore
from ctx.lens.render import confidence_text, diff_text, short, stored, when
from ctx.lens.screens.base import LensScreen, set_columns
from ctx.lens.widgets.keys import KeyFooter

__all__ = ["DIFF_SETTLE", "LOG_LIMIT", "HistoryScreen", "newest_commits"]

LOG_LIMIT = 500
"""Commits listed per branch: the log's newest end, where review happens."""
DIFF_SETTLE = 0.05
"""Seconds the cursor rests on a commit before its diff is read: a commit's
diff costs 5-10 ms at 100k memories, on a worker that competes with the
screen for the interpreter; a key held down reads none on its way."""


def _intent_cells(commit: CommitInfo) -> tuple[str, str, str]:
    intent = commit.intent
    return (
        intent.agent if intent else commit.author,
        intent.intent if intent else "",
        confidence_text(commit),
    )


def _log_cells(commit: CommitInfo) -> tuple[str | Text, ...]:
    """Returns a log row, in the order of :data:`LOG_COLUMNS`."""
    agent, kind, confidence = _intent_cells(commit)
    return (
        short(commit.id),
        stored(agent),
        stored(kind),
        stored(_reason(commit)),
        confidence,
        when(commit),
        stored(commit.summary),
    )


LOG_COLUMNS = (
    ("commit", 8),
    ("agent", 10),
    ("intent", 8),
    ("reason", 30),
    ("conf", 4),
    ("when", 16),
    ("summary", 60),
)
"""The log's columns, the intent first: at 80 columns the log pane shows 54,
and with the time second the reason was out of sight (the diff below names
the commit's time in full)."""


def newest_commits(store: EngineStore, branch: str) -> list[CommitInfo]:
    """Returns a branch's newest commits, at most :data:`LOG_LIMIT`.

    The commits alone: ``log`` also gives each commit's changed paths,
    which for a bulk import are a hundred thousand Structs the log pane
    never shows (0.35 s against 0.08 s at 100k memories, and a heap that
    slowed every key press after it).
    """
    return list(islice(store.iter_commits(resolve_revision(store, branch)), LOG_LIMIT))


def _reason(commit: CommitInfo) -> str:
    reason = visible(commit.intent.reason or "") if commit.intent else ""
    return reason if len(reason) <= 30 else reason[:29] + "…"


def _commit_head(commit: CommitInfo) -> Text:
    lines = [f"commit {commit.id}", f"time   {commit.time.isoformat()}"]
    intent = commit.intent
    agent, kind, confidence = _intent_cells(commit)
    lines.append(f"agent  {agent}   intent {kind or '-'}   conf {confidence or '-'}")
    if intent is not None and intent.reason:
        lines.append(f"reason {intent.reason}")
    if intent is not None and intent.session:
        lines.append(f"session {intent.session}")
    lines.append(commit.summary)
    return stored("\n".join(lines) + "\n\n")


class HistoryScreen(LensScreen):
    """The branches with their heads, a branch's log, a commit's memory diff.

    Moving through the branches shows each one's log; moving through the log
    shows each commit's intent and its memory-level diff.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "app.focus_next", "Next pane", show=False),
    ]

    DEFAULT_CSS = """
    HistoryScreen #branches { width: 26; border-right: solid $primary-darken-2; }
    HistoryScreen #log { height: 1fr; }
    HistoryScreen #diff-pane { height: 1fr; border-top: solid $primary-darken-2; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.branch: str | None = None
        self.entries: list[CommitInfo] = []
        self.commit: str | None = None
        """The commit whose diff is shown, or being read."""

    def compose(self) -> ComposeResult:
        """Lays out the branches, the log and the diff."""
        yield Header()
        with Horizontal():
            yield DataTable(id="branches", cursor_type="row")
            with Vertical():
                yield DataTable(id="log", cursor_type="row")
                with VerticalScroll(id="diff-pane"):
                    yield Static(id="diff")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Sets the tables' columns."""
        set_columns(self.query_one("#branches", DataTable), ("branch", 14), ("tip", 8))
        set_columns(self.query_one("#log", DataTable), *LOG_COLUMNS)
        self.query_one("#log", DataTable).focus()

    def reload(self) -> None:
        """Reads the branches again, and the log of the branch shown, at once."""
        wanted = self.branch or self.source.branch

        def read() -> tuple[list[BranchInfo], str | None, list[CommitInfo]]:
            branches = self.source.branches()
            names = [b.name for b in branches]
            branch = wanted if wanted in names else next(iter(names), None)
            log = self.source.read(newest_commits, branch) if branch else []
            return branches, branch, log

        self.load(read, self._show_branches, group="log")

    def _show_branches(
        self, shown: tuple[list[BranchInfo], str | None, list[CommitInfo]]
    ) -> None:
        branches, branch, log = shown
        table = self.query_one("#branches", DataTable)
        table.clear()
        for info in branches:
            mark = "* " if info.current else "  "
            table.add_row(stored(mark + info.name), short(info.tip), key=info.name)
        if branch is None:
            self._show_log([])
            return
        table.move_cursor(row=[b.name for b in branches].index(branch))
        self.branch = branch
        self.sub_title = f"history of {branch}"
        self._show_log(log)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Follows the cursor: a branch's log, or a commit's diff.

        A highlight the cursor has left already (filling a table highlights
        its first row before the cursor is put back) reads nothing.
        """
        key = event.row_key.value
        if key is None or event.cursor_row != event.data_table.cursor_row:
            return
        if event.data_table.id == "branches":
            if key != self.branch:
                self._show_log_of(key)
        elif event.data_table.id == "log" and key != self.commit:
            self._show_diff_of(key, settle=DIFF_SETTLE)

    def _show_log_of(self, branch: str) -> None:
        self.branch = branch
        self.sub_title = f"history of {branch}"
        self.load(
            lambda: self.source.read(newest_commits, branch),
            self._show_log,
            group="log",
        )

    def _show_log(self, entries: list[CommitInfo]) -> None:
        self.entries = entries
        table = self.query_one("#log", DataTable)
        keep = table.cursor_row
        table.clear()
        for commit in entries:
            table.add_row(*_log_cells(commit), key=commit.id)
        if not entries:
            self.commit = None
            self.query_one("#diff", Static).update("No commits on this branch yet.")
        else:
            table.move_cursor(row=min(keep, len(entries) - 1))
            self._show_diff_of(entries[table.cursor_row].id)

    def _show_diff_of(self, commit_id: str, settle: float = 0.0) -> None:
        commit = next((c for c in self.entries if c.id == commit_id), None)
        if commit is None:
            return
        self.commit = commit_id
        head = _commit_head(commit)
        pane = self.query_one("#diff", Static)
        if not commit.parents:
            pane.update(head + "The first commit of the store.")
            return

        def read() -> tuple[Text, Diff]:
            return head, self.source.read(diff, commit.parents[0], commit.id)

        self.load(read, self._show_diff, group="diff", settle=settle)

    def _show_diff(self, shown: tuple[Text, Diff]) -> None:
        head, change = shown
        out = head.copy()
        out.append_text(diff_text(change))
        self.query_one("#diff", Static).update(out)
