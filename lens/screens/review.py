"""Review: a branch against the one shown, its merge preview, conflicts, Dream.

The branch shown (main, usually) is the base. For the branch highlighted
on the left the screen shows what it learned since it split off (the
memory-level diff and its commits), what merging it would do (a preview:
nothing is written), and the conflicts stored on the base, each settled
with ours, theirs or both. Merging asks first. The Dream tab reviews
Dream's proposals for the base (``ctx dream review``): accept or reject
the highlighted one, accept all (asked first), and merge the accepted
ones (asked first), through Dream's own functions
(:mod:`ctx.lens.screens.dream`), which sign with the intent ``review``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

import msgspec
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import (
    DataTable,
    Header,
    Label,
    Static,
    TabbedContent,
    TabPane,
)

from ctx.engine import (
    Conflict,
    Intent,
    MergeResult,
    ResolveResult,
    Review,
    dream_branch,
    list_branches,
    list_conflicts,
    merge,
    plural,
    review,
)
from ctx.engine import Store as EngineStore
from ctx.hub import ProposalView, calls, dream
from ctx.lens.messages import StoreChanged
from ctx.lens.render import confidence_text, diff_text, short, stored
from ctx.lens.screens.base import LensScreen, set_columns
from ctx.lens.screens.dream import (
    DreamPane,
    Reason,
    is_waiting,
    merged_text,
    read_proposals,
    reviewed_text,
)
from ctx.lens.source import REVIEW_INTENT
from ctx.lens.widgets.keys import KeyFooter, mode_keys

__all__ = ["Confirm", "ReviewScreen", "ReviewState", "read_review"]

T = TypeVar("T")
_PREVIEW = Intent(agent="lens", intent=REVIEW_INTENT)
"""The intent a merge preview is given: it writes nothing, so it is never seen."""


class ReviewState(msgspec.Struct, frozen=True, kw_only=True):
    """What the review screen shows for one branch against the base."""

    base: str
    branches: tuple[str, ...]
    review: Review | None
    preview: MergeResult | None
    conflicts: tuple[Conflict, ...]
    proposals: tuple[ProposalView, ...] | None = None


def read_review(
    store: EngineStore, base: str | None, branch: str | None
) -> ReviewState:
    """Returns the review of ``branch`` against ``base`` (HEAD's branch)."""
    base = base or store.head_branch()
    others = tuple(b.name for b in list_branches(store) if b.name != base)
    chosen = branch if branch in others else next(iter(others), None)
    learned = preview = None
    if chosen is not None:
        learned = review(store, chosen, base)
        # The intent is not used: a preview writes nothing.
        preview = merge(store, chosen, _PREVIEW, into=base, preview=True)
    return ReviewState(
        base=base,
        branches=others,
        review=learned,
        preview=preview,
        conflicts=tuple(list_conflicts(store, base)),
    )


def _preview_text(state: ReviewState) -> Text:
    preview = state.preview
    if preview is None or state.review is None:
        return Text("No other branch to merge.", style="dim")
    head = stored(f"Merging {preview.source} into {preview.target} would ")
    if preview.up_to_date:
        return head + "change nothing: it is up to date."
    if preview.fast_forward:
        return head + "fast-forward it (no conflicts)."
    both = plural(len(preview.merged), "memory", "memories")
    out = head + f"combine {both} changed on both sides"
    out.append(f" and leave {plural(len(preview.conflicts), 'conflict')}.\n")
    for conflict in preview.conflicts:
        out.append(f"  ✗ {conflict.id} ({', '.join(conflict.fields)})\n", style="red")
    return out


def _learned_text(learned: Review | None) -> Text:
    if learned is None:
        return Text("No other branch to review.", style="dim")
    out = stored(
        f"{learned.branch}: {plural(len(learned.log), 'commit')} since it split from "
        f"{learned.base} ({learned.behind} new on {learned.base} since)\n\n",
        style="bold",
    )
    out.append_text(diff_text(learned.diff))
    out.append("\n\nCommits\n", style="bold")
    for entry in learned.log:
        c = entry.commit
        who = c.intent.agent if c.intent else c.author
        why = c.intent.intent if c.intent else ""
        out.append(f"{short(c.id)} ")
        out.append_text(stored(f"{who} {why} {confidence_text(c)} {c.summary}\n"))
    return out


class Confirm(ModalScreen[bool]):
    """Asks a yes-or-no question: y or Enter is yes, n or Escape is no.

    Args:
        question: The question.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm > Label { width: 60; border: thick $warning; padding: 1 2; }
    """

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        """Lays out the question."""
        yield Label(f"{self.question}\n\n[y] yes   [n] no", markup=False)

    def action_answer(self, yes: bool) -> None:
        """Answers."""
        self.dismiss(yes)


class ReviewScreen(LensScreen):
    """A branch against the base: learned, merge preview, conflicts, Dream."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "merge", "Merge"),
        Binding("o", "resolve('ours')", "Take ours"),
        Binding("t", "resolve('theirs')", "Take theirs"),
        Binding("b", "resolve('both')", "Keep both"),
        Binding("a", "accept", "Accept"),
        Binding("x", "reject", "Reject"),
        Binding("A", "accept_all", "Accept all"),
        # The screens' keys, working but not in the footer here: with this
        # screen's own, they pushed ? Help and q Quit off an 80-column one
        # (? lists them).
        *mode_keys(on="app.", show=False),
    ]

    DEFAULT_CSS = """
    ReviewScreen #review-branches { width: 26; border-right: solid $primary-darken-2; }
    ReviewScreen #review-tabs { width: 1fr; }
    ReviewScreen #conflicts { height: auto; max-height: 10; }
    """

    _PANES = ("learned", "merge", "dream")

    def __init__(self) -> None:
        super().__init__()
        self.chosen: str | None = None
        self.state: ReviewState | None = None

    def compose(self) -> ComposeResult:
        """Lays out the branches and the three tabs."""
        yield Header()
        with Horizontal():
            yield DataTable(id="review-branches", cursor_type="row")
            with TabbedContent(id="review-tabs"):
                with TabPane("Learned", id="learned"), VerticalScroll():
                    yield Static(id="learned-text")
                with TabPane("Merge", id="merge"), VerticalScroll():
                    yield Static(id="preview")
                    yield DataTable(id="conflicts", cursor_type="row")
                    yield Static(id="conflict")
                with TabPane("Dream", id="dream"):
                    yield DreamPane(id="dream-pane")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Sets the tables' columns."""
        set_columns(self.query_one("#review-branches", DataTable), ("branch", 22))
        set_columns(
            self.query_one("#conflicts", DataTable),
            ("conflict on", 26),
            ("fields", 14),
            ("theirs from", 20),
        )
        self.query_one("#review-branches", DataTable).focus()

    def reload(self) -> None:
        """Reads the review again."""
        base, chosen = self.source.branch, self.chosen

        def read() -> ReviewState:
            state = self.source.read(read_review, base, chosen)
            views = self.source.hub(read_proposals, state.base, state.branches)
            return msgspec.structs.replace(state, proposals=views)

        self.load(read, self._show)

    def _show(self, state: ReviewState) -> None:
        self.state = state
        self.chosen = state.review.branch if state.review else None
        self.sub_title = f"review against {state.base}"
        table = self.query_one("#review-branches", DataTable)
        if tuple(str(k.value) for k in table.rows) != state.branches:
            table.clear()
            for name in state.branches:
                table.add_row(stored(name), key=name)
        if self.chosen in state.branches:
            table.move_cursor(row=state.branches.index(self.chosen))
        self.query_one("#learned-text", Static).update(_learned_text(state.review))
        self.query_one("#preview", Static).update(_preview_text(state))
        conflicts = self.query_one("#conflicts", DataTable)
        conflicts.clear()
        for conflict in state.conflicts:
            conflicts.add_row(
                stored(conflict.id),
                stored(", ".join(conflict.fields)),
                stored(conflict.theirs_ref),
                key=conflict.id,
            )
        self._show_conflict(state.conflicts[0] if state.conflicts else None)
        self.query_one(DreamPane).show(state.base, state.proposals)
        self.refresh_bindings()  # the conflicts' keys come and go with them

    def _show_conflict(self, conflict: Conflict | None) -> None:
        pane = self.query_one("#conflict", Static)
        if conflict is None:
            base = self.state.base if self.state else "the base"
            pane.update(stored(f"No conflicts stored on {base}.", style="dim"))
            return
        out = stored(f"\n{conflict.id}: {', '.join(conflict.fields)}\n", style="bold")
        for side, ref, memory in (
            ("ours", conflict.ours_branch, conflict.ours),
            ("theirs", conflict.theirs_ref, conflict.theirs),
        ):
            out.append_text(stored(f"\n{side} ({ref}):\n", style="bold"))
            out.append_text(stored(memory.body) if memory else Text("(deleted)"))
            out.append("\n")
        out.append("\no: take ours   t: take theirs   b: keep both", style="dim")
        pane.update(out)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Reviews the branch highlighted, or shows the conflict highlighted."""
        key = event.row_key.value
        if key is None or self.state is None:
            return
        if event.data_table.id == "review-branches" and key != self.chosen:
            self.chosen = key
            self.reload()
        elif event.data_table.id == "conflicts":
            found = [c for c in self.state.conflicts if c.id == key]
            self._show_conflict(found[0] if found else None)

    def _dream_shown(self) -> bool:
        return self.query_one("#review-tabs", TabbedContent).active == "dream"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool:
        """Offers Dream's keys on the Dream tab only, conflicts' on the Merge tab."""
        if action in ("accept", "reject", "accept_all"):
            return self._dream_shown()
        if action == "resolve":
            # Only where the conflict it settles is shown: o, t and b mean
            # other things on other screens, and a resolve writes.
            shown = self.query_one("#review-tabs", TabbedContent).active == "merge"
            return shown and bool(self.state and self.state.conflicts)
        return True

    def on_tabbed_content_tab_activated(
        self, event: TabbedContent.TabActivated
    ) -> None:
        """Shows the keys of the tab shown; on Dream's, the list takes the keys."""
        self.refresh_bindings()
        if event.pane.id == "dream":
            self.query_one("#proposals", DataTable).focus()

    def action_merge(self) -> None:
        """Merges the branch reviewed into the base, once confirmed.

        On the Dream tab: merges Dream's accepted proposals instead.
        """
        if self._dream_shown():
            self._merge_dream()
            return
        state = self.state
        if state is None or state.review is None:
            self.notify("No branch to merge.")
            return
        source, base = state.review.branch, state.base
        if source == dream_branch(base):
            self.notify(
                f"Error: {source} holds Dream's proposals, not memories.\n"
                "Hint: Merge the accepted ones with m on the Dream tab.",
                severity="error",
                markup=False,
            )
            return

        if state.preview is not None and state.preview.up_to_date:
            self.notify(
                f"Already up to date: {base} has everything in {source}.",
                markup=False,
            )
            return

        def merged(result: MergeResult) -> None:
            found = len(result.conflicts)
            if result.up_to_date:
                said = f"Already up to date: {base} has everything in {source}."
            else:
                said = f"Merged {source} into {base}" + (
                    f": {plural(found, 'conflict')} to resolve." if found else "."
                )
            self.notify(said, markup=False)
            self.query_one("#review-tabs", TabbedContent).active = "merge"
            self.post_message(StoreChanged())

        request = calls.MergeRequest(source=source, into=base, **self.source.signed())

        self._ask(
            f"Merge {source} into {base}?",
            lambda: self.load(
                lambda: self.source.call(calls.merge, request), merged, group="write"
            ),
        )

    def _ask(self, question: str, then: Callable[[], None]) -> None:
        """Asks ``question``, and does ``then`` on yes."""

        def answered(yes: bool | None) -> None:
            if yes:
                then()

        self.app.push_screen(Confirm(question), answered)

    def action_resolve(self, take: str) -> None:
        """Settles the highlighted conflict: ours, theirs or both."""
        state = self.state
        table = self.query_one("#conflicts", DataTable)
        if state is None or not state.conflicts:
            self.notify("No conflict to resolve.")
            return
        conflict = state.conflicts[min(table.cursor_row, len(state.conflicts) - 1)]
        base = state.base

        def resolved(result: ResolveResult) -> None:
            self.notify(f"Resolved {result.id}: took {take}.", markup=False)
            self.post_message(StoreChanged())

        request = calls.ResolveRequest(
            id=conflict.id, take=take, branch=base, **self.source.signed()
        )

        said = {"ours": "take ours", "theirs": "take theirs", "both": "keep both"}
        self._ask(
            f"Resolve {conflict.id} on {base}: {said[take]}?",
            lambda: self.load(
                lambda: self.source.call(calls.resolve, request),
                resolved,
                group="write",
            ),
        )

    def _dream(
        self, call: Callable[..., T], done: Callable[[T], str], **kwargs: object
    ) -> None:
        """Makes one of Dream's calls on the base, then says what it did."""
        base = self.state.base if self.state else self.source.branch

        def finished(result: T) -> None:
            self.notify(done(result), markup=False)
            self.post_message(StoreChanged())

        self.load(
            lambda: self.source.hub(call, branch=base, **kwargs),
            finished,
            group="write",
        )

    def _waiting(self) -> ProposalView | None:
        view = self.query_one(DreamPane).highlighted()
        if view is None:
            self.notify("No proposal to review.")
        return view

    def action_accept(self) -> None:
        """Accepts the highlighted proposal (``ctx dream accept ID``)."""
        view = self._waiting()
        if view is not None:
            ids = (view.proposal.id,)
            self._dream(dream.accept, reviewed_text, ids=ids)

    def action_reject(self) -> None:
        """Rejects the highlighted proposal, with the reason asked for."""
        view = self._waiting()
        if view is None:
            return
        ids = (view.proposal.id,)

        def answered(reason: str | None) -> None:
            if reason is not None:
                self._dream(dream.reject, reviewed_text, ids=ids, reason=reason or None)

        self.app.push_screen(Reason(view.proposal.id), answered)

    def _confirmed(
        self,
        counted: Callable[[ProposalView], bool],
        noun: str,
        question: str,
        call: Callable[..., T],
        done: Callable[[T], str],
        **kwargs: object,
    ) -> None:
        """Asks ``question`` (``{}``: how many are ``counted``), then calls."""
        views = self.state.proposals if self.state else None
        count = sum(counted(v) for v in views or ())
        if not count:
            self.notify(f"No {noun}.")
            return

        self._ask(
            question.format(plural(count, noun)),
            lambda: self._dream(call, done, **kwargs),
        )

    def action_accept_all(self) -> None:
        """Accepts every waiting proposal, once confirmed."""
        self._confirmed(
            is_waiting,
            "waiting proposal",
            "Accept {}?",
            dream.accept,
            reviewed_text,
            ids=(),
        )

    def _merge_dream(self) -> None:
        base = self.state.base if self.state else self.source.branch
        # What the merge hides, counted as `ctx dream review --status
        # accepted` counts it.
        hidden = self.source.hub(dream.reviewed, branch=base, status="accepted").hides
        question = f"Merge {{}} into {base}?"
        if hidden:
            question += f" It hides {plural(len(hidden), 'memory')} from recall."
        self._confirmed(
            lambda v: v.proposal.status == "accepted",
            "accepted proposal",
            question,
            dream.merge,
            merged_text,
            intent=REVIEW_INTENT,
            yes=True,  # the question said what the merge hides
        )
