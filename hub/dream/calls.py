"""Dream's calls on a workspace: run, status, review, accept, reject, merge.

What ``ctx dream ...`` (and any other caller) asks. Each takes a
:class:`~ctx.hub.workspace.Workspace` and the branch Dream reads (default:
the workspace's branch, else the store's HEAD); proposals live on
``dream/<branch>``. Runs are answered in the calling process, with the
store's own indexes (caught up first).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from ctx.engine import (
    DreamMergeResult,
    InvalidInputError,
    Memory,
    MemoryId,
    Proposal,
    ReviewResult,
    dream_branch,
    hidden_by,
    list_proposals,
    merge_accepted,
    review_proposals,
)
from ctx.hub.dream.queue import QueueStatus, queue_status
from ctx.hub.dream.selection import rank
from ctx.hub.workspace import Workspace

if TYPE_CHECKING:  # the cycle (numpy, the indexes) loads when a cycle runs
    from ctx.hub.dream.cycle import CycleReport

MOST_HIDDEN = 3
"""The most memories a merge hides from recall without being confirmed: an
accepted-all review must not quietly take notes out of recall."""

__all__ = [
    "MOST_HIDDEN",
    "DreamReview",
    "DreamStatus",
    "ProposalView",
    "ReviewedMemory",
    "accept",
    "dream_status",
    "loop",
    "merge",
    "reject",
    "require_disk",
    "review",
    "reviewed",
    "run",
]


class ReviewedMemory(msgspec.Struct, frozen=True, kw_only=True):
    """A memory a proposal is about, as the branch holds it now.

    Attributes:
        id: The memory.
        headline: Its title or first line (empty when gone).
        changed: It changed since the proposal was made (re-checked at merge).
        gone: It is no longer on the branch.
    """

    id: MemoryId
    headline: str
    changed: bool = False
    gone: bool = False


class ProposalView(msgspec.Struct, frozen=True, kw_only=True):
    """One proposal with its evidence and what it would change.

    Attributes:
        proposal: The proposal as stored.
        memories: The memories it is about.
        changes: Its memory-level diff, one line each (``+ link ...``,
            ``~ <id> tags +recurs:weekly``).
        hides: The memories merging it would hide from recall (superseded or
            moved off-context).
        undone: It was merged, and an undo took its merge back: accepting
            it again merges it again.
    """

    proposal: Proposal
    memories: tuple[ReviewedMemory, ...]
    changes: tuple[str, ...]
    hides: tuple[MemoryId, ...] = ()
    undone: bool = False


class DreamReview(msgspec.Struct, frozen=True, kw_only=True):
    """A review: the proposals, and what merging them all would hide.

    Attributes:
        proposals: Each proposal with its evidence (:func:`review`).
        hides: The memories merging every one of them would hide from
            recall, each once, in the proposals' order.
        merge_asks_yes: Whether ``dream merge`` of them all asks to be
            confirmed (``--yes``): it would hide more than
            :data:`MOST_HIDDEN`.
    """

    proposals: tuple[ProposalView, ...]
    hides: tuple[MemoryId, ...]
    merge_asks_yes: bool


class DreamStatus(msgspec.Struct, frozen=True, kw_only=True):
    """Where Dream stands on a branch.

    Attributes:
        branch: The branch read.
        dream_branch: Where the proposals are.
        queue: What waits to be examined, and the last cycle.
        proposals: How many proposals there are, by status.
        enabled: Whether the hub runs Dream in the background.
    """

    branch: str
    dream_branch: str
    queue: QueueStatus
    proposals: dict[str, int]
    enabled: bool


def _branch(ws: Workspace, branch: str | None) -> str:
    name = branch or ws.branch or ws.store().head_branch()
    if name.startswith("dream/"):
        raise InvalidInputError(
            f"{name!r} is one of Dream's own branches.",
            hint="Name the branch it was made for, e.g. --branch main.",
        )
    ws.store().branch_tip(name)  # raises RefNotFoundError
    return name


def require_disk(ws: Workspace) -> None:
    """Refuses a user store not made yet: Dream writes proposals beside it.

    Raises:
        InvalidInputError: The store is not on disk.
    """
    if not ws.on_disk:
        raise InvalidInputError(
            "Dream needs a store on disk.",
            hint="Run `ctx init`, or `ctx remember` something first.",
        )


def run(
    ws: Workspace,
    *,
    branch: str | None = None,
    budget: int | None = None,
    now: datetime | None = None,
    examined: Callable[[str], None] | None = None,
) -> CycleReport:
    """Runs one Dream cycle on a branch, in this process.

    Args:
        ws: The workspace.
        branch: The branch to read (default: the workspace's).
        budget: Memories to examine (default: ``[dream] budget``).
        now: The cycle's time (default: the workspace's clock).
        examined: Called with each memory's id once it is examined.
    """
    from ctx.hub.dream.cycle import run_cycle
    from ctx.hub.dream.judge import Judge
    from ctx.hub.retrieval.index.projection import Projection

    require_disk(ws)
    name = _branch(ws, branch)
    config = ws.config()
    settings = config.dream
    store = ws.store(write=True)
    projection = Projection.for_store(store, config)
    judge = Judge(settings) if settings.judge_url else None
    return run_cycle(
        store,
        projection,
        name,
        budget=settings.budget if budget is None else budget,
        now=now or ws.clock(),
        judge=judge,
        examined=examined,
    )


def dream_status(
    ws: Workspace, *, branch: str | None = None, now: datetime | None = None
) -> DreamStatus:
    """Returns the queue, the back-off, the last cycle and the proposals.

    A merged proposal whose merge an undo took back counts as ``undone``,
    as the review shows it.
    """
    from ctx.engine import live_catalog, undone_merges

    require_disk(ws)
    name = _branch(ws, branch)
    store = ws.store()
    catalog = live_catalog(store, store.branch_tip(name))
    live = {mid: entry.blob for mid, entry in catalog.entries.items()}
    proposals = list_proposals(store, name)
    undone = set(undone_merges(store, name, proposals))
    counts: dict[str, int] = {}
    for proposal in proposals:
        status = "undone" if proposal.id in undone else proposal.status
        counts[status] = counts.get(status, 0) + 1
    return DreamStatus(
        branch=name,
        dream_branch=dream_branch(name),
        queue=queue_status(ws.path, name, live, now or ws.clock()),
        proposals=dict(sorted(counts.items())),
        enabled=ws.config().dream.enabled,
    )


def _changes(proposal: Proposal) -> tuple[str, ...]:
    lines = [f"+ link {c.source} {c.type} {c.target}" for c in proposal.links]
    lines += [
        f"~ {c.memory} tags +{c.tag}"
        + ("  (declined)" if c.memory in proposal.declined else "")
        for c in proposal.tags
    ]
    return tuple(lines)


def review(
    ws: Workspace, *, branch: str | None = None, status: str | None = "proposed"
) -> list[ProposalView]:
    """Returns each proposal (waiting ones by default) with its evidence.

    The surest first, as a cycle ranks them (:func:`~.selection.rank`). The
    waiting ones come with those whose merge an undo took back (``undone``):
    they wait to be accepted again. With ``status`` None, every proposal,
    those merged and undone marked so.
    """
    from ctx.engine import live_catalog, undone_merges

    name = _branch(ws, branch)
    store = ws.store()
    catalog = live_catalog(store, store.branch_tip(name))
    shown = list_proposals(store, name, status=status)
    undone: set[str] = set()
    if status in ("proposed", None):  # every proposal (None) holds the merged
        merged = list_proposals(store, name, status="merged")
        undone = set(undone_merges(store, name, merged))
        if status == "proposed":
            shown += [p for p in merged if p.id in undone]
    out = []
    for proposal in sorted(shown, key=rank):
        back = proposal.id in undone
        hides = (
            ()
            if proposal.status == "merged" and not back
            else hidden_by(store, name, [proposal])
        )
        memories = []
        for evidence in proposal.memories:
            entry = catalog.get(evidence.id)
            memories.append(
                ReviewedMemory(
                    id=evidence.id,
                    headline=entry.headline if entry else "",
                    changed=entry is not None and entry.blob != evidence.blob,
                    gone=entry is None,
                )
            )
        out.append(
            ProposalView(
                proposal=proposal,
                memories=tuple(memories),
                changes=_changes(proposal),
                hides=hides,
                undone=back,
            )
        )
    return out


def reviewed(
    ws: Workspace, *, branch: str | None = None, status: str | None = "proposed"
) -> DreamReview:
    """Returns the review of :func:`review`, with what merging it all would hide."""
    views = review(ws, branch=branch, status=status)
    hides = tuple(dict.fromkeys(m for view in views for m in view.hides))
    return DreamReview(
        proposals=tuple(views), hides=hides, merge_asks_yes=len(hides) > MOST_HIDDEN
    )


def accept(
    ws: Workspace,
    ids: Sequence[str],
    *,
    branch: str | None = None,
    memories: Sequence[str] = (),
) -> ReviewResult:
    """Accepts proposals (every waiting one when ``ids`` is empty).

    With ``memories``: one proposal, for those of its memories only.
    """
    name = _branch(ws, branch)
    store, who = ws.store(write=True), ws.intent("review")
    return review_proposals(store, name, ids, "accepted", who, memories=memories)


def reject(
    ws: Workspace,
    ids: Sequence[str],
    *,
    reason: str | None = None,
    branch: str | None = None,
    memories: Sequence[str] = (),
) -> ReviewResult:
    """Rejects proposals; a rejected proposal is never made again.

    With ``memories``: declines those memories' changes inside one
    proposal, which waits on for the others.
    """
    if not ids:
        raise InvalidInputError(
            "Name the proposals to reject.", hint="`ctx dream review` lists them."
        )
    name = _branch(ws, branch)
    store, who = ws.store(write=True), ws.intent("review")
    return review_proposals(
        store, name, ids, "rejected", who, note=reason, memories=memories
    )


def merge(
    ws: Workspace,
    *,
    branch: str | None = None,
    intent: str = "merge",
    agent: str | None = None,
    session: str | None = None,
    yes: bool = False,
) -> DreamMergeResult:
    """Merges the accepted proposals into the branch they were made for.

    A merge that would hide more than :data:`MOST_HIDDEN` memories from
    recall is refused, changing nothing, unless ``yes`` confirms it.

    Proposals whose memories changed since are re-checked by the rules
    first (:func:`ctx.hub.dream.detect.recheck`); those that no longer hold
    are marked stale, not merged. The merge commits carry ``intent`` (the
    lens gives ``review``), signed by ``agent`` in ``session`` (by default
    the workspace's agent, as :meth:`Workspace.intent` picks it).
    """
    from ctx.hub.dream.detect import recheck
    from ctx.hub.retrieval.embedders import make_embedder

    name = _branch(ws, branch)
    config = ws.config()
    embedder = make_embedder(config.embedder)
    now = ws.clock()

    def check(proposal: Proposal, memories: dict[MemoryId, Memory]) -> str | None:
        return recheck(proposal, memories, embedder, now)

    return merge_accepted(
        ws.store(write=True),
        name,
        ws.intent(intent, agent=agent, session=session),
        check,
        merge_intent=intent,
        most_hidden=None if yes else MOST_HIDDEN,
    )


def loop(
    ws: Workspace,
    *,
    branch: str | None = None,
    budget: int | None = None,
    interval: float | None = None,
    report: Callable[[CycleReport], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Runs cycles until ``stop`` says so, resting when nothing was due."""
    rest = ws.config().dream.interval if interval is None else interval
    while not stop():
        result = run(ws, branch=branch, budget=budget)
        if report is not None:
            report(result)
        if result.examined == 0:
            time.sleep(rest)
