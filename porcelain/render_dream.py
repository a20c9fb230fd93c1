"""Text for people about Dream: a cycle, the status, proposals, reviews, a merge."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ctx.engine import plural
from ctx.hub import MOST_HIDDEN
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_merge

if TYPE_CHECKING:  # Dream's machinery loads when a dream command runs
    from ctx.engine import DreamMergeResult, ReviewResult
    from ctx.hub import CycleReport, DreamReview, DreamStatus

__all__ = [
    "render_cycle",
    "render_dream_merge",
    "render_dream_status",
    "render_proposals",
    "render_review_result",
]


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else f"{moment:%Y-%m-%d %H:%M}"


def render_cycle(report: CycleReport, *, named: bool = False) -> None:
    """Prints what one cycle did.

    ``named``: the branch was given, and the review's hint gives it too.
    """
    made = sum(report.proposed.values())
    kinds = ", ".join(f"{n} {kind}" for kind, n in report.proposed.items())
    echo(
        f"Examined {plural(report.examined, 'memory')} of {report.branch} in "
        f"{report.seconds:.2f} s; {plural(made, 'proposal')} on "
        f"{report.dream_branch}{f' ({kinds})' if kinds else ''}."
    )
    if report.held_back:
        echo(
            f"  {plural(report.held_back, 'proposal')} held back (a cycle "
            "writes the surest first); the next cycle makes them"
        )
    if report.known:
        echo(f"  {plural(report.known, 'candidate')} proposed before, left alone")
    if report.judge != "off":
        echo(
            f"  judge: {report.judge} ({report.judged} asked, "
            f"{report.judged_out} said no)"
        )
    for notice in report.notices:
        echo(f"  {notice}")
    if made:
        where = f" --branch {report.branch}" if named else ""
        echo(f"Review them with `ctx dream review{where}`.")


def render_dream_status(st: DreamStatus) -> None:
    """Prints the queue, the back-off, the last cycle and the proposals."""
    q = st.queue
    echo(f"branch:     {st.branch} (proposals on {st.dream_branch})")
    echo(f"background: {'on' if st.enabled else 'off'} ([dream] enabled)")
    echo(
        f"queue:      {plural(q.due, 'memory')} due, {q.waiting:,} backing off "
        f"(next {_when(q.next_due)}), {q.claimed:,} claimed by workers, "
        f"of {q.live:,} live"
    )
    last = q.last_cycle
    if last is None:
        echo("last cycle: none yet")
    else:
        echo(
            f"last cycle: {_when(last.finished_at)}, "
            f"{plural(last.examined, 'memory')} examined, "
            f"{plural(last.proposed, 'proposal')}, {last.seconds:.2f} s, "
            f"judge {last.judge}"
        )
    counts = ", ".join(f"{n} {status}" for status, n in st.proposals.items())
    echo(f"proposals:  {counts or 'none'}")


def render_proposals(review: DreamReview, status: str = "proposed") -> None:
    """Prints each proposal with its evidence and its memory-level diff.

    ``status``: the proposals asked for (``review --status``), for saying
    there are none.
    """
    views = review.proposals
    if not views:
        if status == "proposed":
            echo(
                "No proposals waiting. `ctx dream run --once` looks for some; "
                "`ctx dream review --status accepted` shows those accepted, "
                "for `ctx dream merge`."
            )
        else:
            echo(f"No {'' if status == 'all' else status + ' '}proposals.")
        return
    for view in views:
        p = view.proposal
        echo(f"{p.id}  {p.kind}  {p.status}  confidence {p.confidence:g}")
        echo(f"  why: {p.reason}")
        for m in view.memories:
            mark = "  (gone)" if m.gone else "  (changed since)" if m.changed else ""
            echo(f"  {m.id}  {m.headline}{mark}")
        for line in view.changes:
            echo(f"  {line}")
        if view.hides:
            echo(f"  hides from recall: {', '.join(view.hides)}")
        if p.note:
            echo(f"  note: {p.note}")
        if view.undone:
            echo(f"  its merge was undone: `ctx dream accept {p.id}` merges it again")
    echo(
        f"Merging these {plural(len(views), 'proposal')} would hide "
        f"{plural(len(review.hides), 'memory')} from recall"
        + (
            f"; `ctx dream merge` asks for --yes past {MOST_HIDDEN}."
            if review.merge_asks_yes
            else "."
        )
    )


def render_review_result(result: ReviewResult) -> None:
    """Prints what accept or reject did."""
    if not result.ids:
        echo("No proposals waiting.")
        return
    if result.memories:
        echo(result.inside())
    else:
        verb = "Accepted" if result.status == "accepted" else "Rejected"
        echo(f"{verb} {plural(len(result.ids), 'proposal')}: {', '.join(result.ids)}.")
    if result.status == "accepted":
        echo("`ctx dream merge` brings them into the branch.")


def render_dream_merge(result: DreamMergeResult) -> None:
    """Prints what merging the accepted proposals did."""
    if not result.merged and not result.stale:
        echo("Nothing accepted to merge. `ctx dream accept ID` accepts proposals.")
        return
    if result.merge is not None:
        render_merge(result.merge)
    elif result.merged:
        echo(f"{result.branch} already holds what they change.")
    echo(f"{plural(len(result.merged), 'proposal')} merged into {result.branch}.")
    if result.hidden:
        echo(f"  {plural(len(result.hidden), 'memory')} hidden from recall (--all)")
    for pid, why in result.stale:
        echo(f"  {pid} not merged: {why}")
    if result.merge is not None:
        echo("`ctx undo` takes the merge back.")
