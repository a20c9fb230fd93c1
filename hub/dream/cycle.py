"""One Dream cycle: claim due memories, find candidates, write proposals.

:func:`run_cycle` runs these steps, in this order:

1. Bring the branch's new commits into ``dream/<branch>``
   (:func:`~ctx.engine.sync_dream_branch`).
2. Catch the indexes up to the branch's tip and take its live view and link
   graph.
3. Claim up to ``budget`` due memories (:mod:`ctx.hub.dream.queue`: new and
   changed ones first, then those whose back-off is over; never another
   worker's).
4. For each, find its candidates (:class:`~ctx.hub.dream.detect.Detector`),
   skipping those already proposed (any status: a rejected one is never
   made again). A memory that gives none has its outcome recorded every
   :data:`CHUNK` memories.
5. Choose what to write (:func:`~ctx.hub.dream.selection.select`): tier
   changes as one proposal, the surest first, at most ``most``; ask the
   judge, if one is configured and answering, about each in turn; write
   each as its own commit (:func:`~ctx.engine.propose`).
6. Record the outcome of the memories that gave candidates, and release the
   claims. The memories of candidates held back are left due, for the next
   cycle.

A cycle killed at any point leaves every proposal it wrote as a whole
commit (the store's writes are atomic); the memories whose outcome was not
recorded are examined again by the next cycle, and their proposals, already
written, are not written twice.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import msgspec

from ctx.engine import (
    InvalidInputError,
    Proposal,
    Store,
    last_commits,
    link_graph,
    list_proposals,
    propose,
    sync_dream_branch,
)
from ctx.hub.dream.cited import cited_counts
from ctx.hub.dream.detect import Detector
from ctx.hub.dream.judge import Judge
from ctx.hub.dream.queue import CycleSummary, Worker
from ctx.hub.dream.rules import Thresholds
from ctx.hub.dream.selection import MAX_PROPOSALS, select
from ctx.hub.retrieval.feedback import read_log
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.session_state import HOOKS_FOLDER, SessionState
from ctx.hub.state import PRIVATE_FOLDER

__all__ = ["CHUNK", "CycleReport", "recall_counts", "run_cycle", "use_counts"]

CHUNK = 25
"""Memories examined between two saves of the back-off state."""


class CycleReport(msgspec.Struct, frozen=True, kw_only=True):
    """What one cycle did.

    Attributes:
        branch: The branch read.
        dream_branch: The branch written.
        examined: Memories examined.
        proposed: Proposals written, by kind.
        held_back: Proposals not written, past the cycle's most (their
            memories stay due).
        known: Candidates already proposed before (in any status).
        judged: Candidates the judge was asked about.
        judged_out: Candidates the judge said no to.
        judge: ``off``, ``used``, or why the judge was left out.
        seconds: How long the cycle took.
        notices: What else happened (the embedder down, ...).
    """

    branch: str
    dream_branch: str
    examined: int
    proposed: dict[str, int]
    held_back: int = 0
    known: int
    judged: int = 0
    judged_out: int = 0
    judge: str = "off"
    seconds: float
    notices: tuple[str, ...] = ()


def recall_counts(store_path: Path) -> Counter[str]:
    """Returns how many hook sessions were given each memory (private state)."""
    folder = store_path / PRIVATE_FOLDER / HOOKS_FOLDER
    counts: Counter[str] = Counter()
    if not folder.is_dir():
        return counts
    decoder = msgspec.json.Decoder(SessionState)
    for path in folder.glob("*.json"):
        try:
            counts.update(set(decoder.decode(path.read_bytes()).shown))
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            continue
    return counts


def use_counts(store_path: Path) -> Counter[str]:
    """Returns how often agents said they used each memory.

    The recalls whose feedback names it (``ctx feedback``, the MCP tool
    ``feedback``), plus the sessions whose answer cited it after the hooks
    showed it (:mod:`ctx.hub.dream.cited`): what agents used, not what they
    were shown.
    """
    log = read_log(store_path)
    used: dict[str, set[str]] = {}
    for line in log.feedback:
        for mid in line.used:
            used.setdefault(mid, set()).add(line.recall)
    counts = Counter({mid: len(recalls) for mid, recalls in used.items()})
    counts.update(cited_counts(store_path))
    return counts


def run_cycle(
    store: Store,
    projection: Projection,
    branch: str,
    *,
    budget: int,
    now: datetime,
    judge: Judge | None = None,
    limits: Thresholds | None = None,
    examined: Callable[[str], None] | None = None,
    most: int = MAX_PROPOSALS,
) -> CycleReport:
    """Runs one cycle on ``branch`` (see the module docstring).

    Args:
        store: The store (on disk: the back-off is private state beside it).
        projection: The store's indexes.
        branch: The branch to read.
        budget: The most memories to examine.
        now: The cycle's time.
        judge: The judge, if one is configured.
        limits: The rules' thresholds.
        examined: Called with each memory's id once it is examined.
        most: The most proposals written.

    Raises:
        InvalidInputError: The store is not on disk, or ``budget`` < 1.
    """
    if store.path is None:
        raise InvalidInputError(
            "Dream needs a store on disk.", hint="Run `ctx init` to make one."
        )
    if budget < 1:
        raise InvalidInputError("The budget must be at least 1 memory.")
    started = time.perf_counter()
    tip = store.branch_tip(branch)
    name = sync_dream_branch(store, branch)
    known_proposals = list_proposals(store, branch)
    known_ids = {p.id for p in known_proposals}
    proposed_before = frozenset(known_ids)
    view = projection.view(tip, branch=branch)
    searcher = projection.searcher(view)
    detector = Detector(
        searcher,
        link_graph(store, tip),
        branch,
        now,
        limits,
        recall_counts(store.path),
        use_counts(store.path),
        lambda: {
            mid: info.time
            for mid, info in last_commits(store, view.catalog.entries, rev=tip).items()
        },
    )
    live = {mid: entry.blob for mid, entry in view.catalog.entries.items()}
    worker = Worker(store.path, branch)
    worker.forget_gone(live)
    claimed = worker.claim(live, budget, now)
    made: Counter[str] = Counter()
    known = judged = judged_out = 0
    results: dict[str, tuple[str, bool]] = {}
    candidates: list[Proposal] = []
    gave: set[str] = set()
    for mid, _fresh in claimed:
        every = detector.examine(mid)
        found = [c for c in every if c.id not in known_ids]
        # Proposed before this cycle; a pair met again from its other side
        # in this one is not.
        known += sum(c.id in proposed_before for c in every)
        for candidate in found:
            known_ids.add(candidate.id)
        candidates.extend(found)
        if found:
            gave.add(mid)
        else:
            results[mid] = (live[mid], False)
        if examined is not None:
            examined(mid)
        if len(results) >= CHUNK:
            worker.finish(results, now)
            results = {}
    chosen, held = select(
        candidates, known=known_proposals, branch=branch, now=now, most=most
    )
    wrote: set[str] = set()
    for candidate in chosen:
        if sum(made.values()) >= most:
            held.append(candidate)
            continue
        if judge is not None:
            memories = [searcher.read(e.id) for e in candidate.memories]
            verdict = judge.confirm(
                candidate.kind,
                candidate.reason,
                [m for m in memories if m is not None],
            )
            judged += verdict is not None
            if verdict is False:
                judged_out += 1
                continue
        if propose(store, candidate).commit is not None:
            made[candidate.kind] += 1
            wrote.update(e.id for e in candidate.memories)
    waiting = {e.id for p in held for e in p.memories}
    for mid in gave - waiting:
        results[mid] = (live[mid], mid in wrote)
    seconds = time.perf_counter() - started
    judge_state = "off"
    if judge is not None:
        judge_state = f"left out: {judge.trouble}" if judge.trouble else "used"
    summary = CycleSummary(
        finished_at=now,
        examined=len(claimed),
        proposed=sum(made.values()),
        seconds=round(seconds, 3),
        judge=judge_state,
    )
    worker.finish(results, now, summary)
    notices = [*projection.notices, *projection.warnings]
    return CycleReport(
        branch=branch,
        dream_branch=name,
        examined=len(claimed),
        proposed=dict(sorted(made.items())),
        held_back=len(held),
        known=known,
        judged=judged,
        judged_out=judged_out,
        judge=judge_state,
        seconds=round(seconds, 3),
        notices=tuple(notices),
    )
