"""Dream's proposals on the review screen: the list, one proposal, a reason.

Dream (``ctx dream``) writes its proposals for a branch on
``dream/<branch>``. The review screen's Dream tab lists every proposal
(kind, confidence, status) and shows the highlighted one's evidence and
what it would change at the memory level; its keys accept, reject and
merge them through :mod:`ctx.hub.dream`, the calls ``ctx dream`` makes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, Static

from ctx.engine import DreamMergeResult, ReviewResult, dream_branch, plural
from ctx.hub import dream
from ctx.lens.render import stored
from ctx.lens.screens.base import set_columns

if TYPE_CHECKING:
    from ctx.hub import ProposalView, Workspace

__all__ = [
    "DreamPane",
    "Reason",
    "is_waiting",
    "merged_text",
    "proposal_text",
    "read_proposals",
    "reviewed_text",
]

_STATUS_STYLE = {
    "proposed": "bold",
    "accepted": "green",
    "rejected": "red",
    "merged": "dim green",
    "stale": "yellow",
}


def read_proposals(
    ws: Workspace, base: str, branches: tuple[str, ...]
) -> tuple[ProposalView, ...] | None:
    """Returns every proposal Dream made for ``base``; ``None`` when it made none.

    ``branches`` are the store's other branches: without ``dream/<base>``
    among them Dream has not run on ``base`` (or ``base`` is itself one of
    Dream's branches), and nothing is asked.
    """
    if dream_branch(base) not in branches:
        return None
    return tuple(dream.review(ws, branch=base, status=None))


def is_waiting(view: ProposalView) -> bool:
    """Whether a proposal waits for review: proposed, or its merge was undone."""
    return view.proposal.status == "proposed" or view.undone


def status_of(view: ProposalView) -> str:
    """Returns a proposal's status as shown: a merge an undo took back says so."""
    return "undone" if view.undone else view.proposal.status


def _style(view: ProposalView) -> str:
    return "bold yellow" if view.undone else _STATUS_STYLE.get(view.proposal.status, "")


def proposal_text(view: ProposalView | None) -> Text:
    """Returns one proposal: its evidence, its memories, what it changes."""
    if view is None:
        return Text("No proposal highlighted.", style="dim")
    p = view.proposal
    out = Text()
    out.append_text(stored(f"{p.kind} {p.id}", style="bold"))
    out.append_text(stored(f"  {status_of(view)}", style=_style(view)))
    out.append(f"  confidence {p.confidence:.2f}\n")
    out.append_text(stored(f"evidence: {p.reason}\n", style="italic"))
    if view.undone:
        out.append(
            "its merge was undone: accepting it (a) merges it again\n", style="yellow"
        )
    if p.reviewer:
        out.append_text(stored(f"reviewed by {p.reviewer}", style="dim"))
        out.append_text(stored(f": {p.note}\n" if p.note else "\n", style="dim"))
    elif p.note:
        out.append_text(stored(f"note: {p.note}\n", style="dim"))
    out.append("\nMemories\n", style="bold")
    for memory in view.memories:
        out.append(f"  {memory.id} ", style="cyan")
        if memory.gone:
            out.append("(gone from the branch)\n", style="red")
            continue
        out.append_text(stored(memory.headline))
        out.append(" (changed since)\n" if memory.changed else "\n", style="yellow")
    out.append("\nChanges\n", style="bold")
    for line in view.changes:
        style = "green" if line.startswith("+") else "cyan"
        out.append_text(stored(f"  {line}\n", style=style))
    return out


def reviewed_text(result: ReviewResult) -> str:
    """Returns what accepting or rejecting did, in one line."""
    if not result.ids:
        return f"Nothing {result.status}: no proposal was waiting."
    if result.memories:
        return result.inside()
    return f"{plural(len(result.ids), 'proposal')} {result.status}."


def merged_text(result: DreamMergeResult) -> str:
    """Returns what merging the accepted proposals did, in one line."""
    if result.merge is None and not result.stale:
        return f"Nothing to merge: no accepted proposal for {result.branch}."
    out = f"Merged {plural(len(result.merged), 'proposal')} into {result.branch}"
    if result.stale:
        out += f"; {plural(len(result.stale), 'proposal')} stale"
    conflicts = result.merge.conflicts if result.merge else ()
    if conflicts:
        out += f"; {plural(len(conflicts), 'conflict')} to resolve"
    return out + "."


class Reason(ModalScreen[str | None]):
    """Asks why a proposal is rejected: Enter rejects, Escape cancels.

    Args:
        proposal: The proposal's id.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
    ]

    DEFAULT_CSS = """
    Reason { align: center middle; }
    Reason > Vertical {
        width: 64; height: auto; border: thick $warning; padding: 1 2;
    }
    """

    def __init__(self, proposal: str) -> None:
        super().__init__()
        self.proposal = proposal

    def compose(self) -> ComposeResult:
        """Lays out the question and the reason box."""
        with Vertical():
            yield Label(f"Reject {self.proposal}? Why (optional):", markup=False)
            yield Input(placeholder="different projects", id="reason")
            yield Label("[Enter] reject   [Escape] cancel", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Rejects, with the reason typed (none when left empty)."""
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        """Rejects nothing."""
        self.dismiss(None)


class DreamPane(Vertical):
    """The Dream tab: the proposals, and the highlighted one's details."""

    DEFAULT_CSS = """
    DreamPane #proposals { height: auto; max-height: 12; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.views: tuple[ProposalView, ...] = ()

    def compose(self) -> ComposeResult:
        """Lays out the list and the details."""
        yield Static(id="dream-text")
        yield DataTable(id="proposals", cursor_type="row")
        with VerticalScroll():
            yield Static(id="proposal")

    def on_mount(self) -> None:
        """Sets the list's columns."""
        set_columns(
            self.query_one(DataTable),
            ("proposal", 13),
            ("kind", 13),
            ("conf", 5),
            ("status", 9),
            ("memories", 60),
        )

    def show(self, base: str, views: tuple[ProposalView, ...] | None) -> None:
        """Shows the proposals Dream made for ``base``, the cursor kept."""
        table = self.query_one(DataTable)
        keep = self.highlighted()
        self.views = views or ()
        head = self.query_one("#dream-text", Static)
        if views is None:
            head.update(
                Text(
                    f"No proposals: Dream has not written {dream_branch(base)}.",
                    style="dim",
                )
            )
        else:
            waiting = sum(is_waiting(v) for v in views)
            head.update(
                Text(
                    f"{plural(len(views), 'proposal')} on {dream_branch(base)}, "
                    f"{waiting} waiting",
                    style="bold",
                )
            )
        table.clear()
        for view in self.views:
            p = view.proposal
            table.add_row(
                stored(p.id),
                stored(p.kind),
                f"{p.confidence:.2f}",
                stored(status_of(view), style=_style(view)),
                stored("; ".join(m.headline or m.id for m in view.memories)),
                key=p.id,
            )
        ids = [v.proposal.id for v in self.views]
        if keep is not None and keep.proposal.id in ids:
            table.move_cursor(row=ids.index(keep.proposal.id))
        self._detail()

    def highlighted(self) -> ProposalView | None:
        """Returns the proposal under the cursor, if any."""
        if not self.views:
            return None
        row = self.query_one(DataTable).cursor_row
        return self.views[min(max(row, 0), len(self.views) - 1)]

    def _detail(self) -> None:
        self.query_one("#proposal", Static).update(proposal_text(self.highlighted()))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Shows the proposal highlighted."""
        event.stop()
        self._detail()
