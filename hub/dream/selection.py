"""Which of a cycle's candidates a reviewer is shown: few, the surest first.

A store of routine notes must not flood the review. :func:`select` makes a
cycle's candidates into the proposals it writes, in this order:

1. Duplicates become one proposal per copy to hide (:func:`one_per_copy`);
   a copy one hides gets no other proposal.
   Tier changes become *one* proposal listing every memory
   (:func:`group_tiers`), which a reviewer accepts or rejects memory by
   memory (``ctx dream accept ID --memory M``); a memory whose tier change
   any tier proposal already holds, whatever its status, is left out, so a
   declined change is never made again. A memory another proposal (of the
   cycle, or one waiting) is about does not go off-context.
2. The candidates are ranked by confidence (ties: duplicates, updates,
   contradictions, recurrences, links, tiers; then by id).
3. At most :data:`MAX_PROPOSALS` are kept; the rest are held back, and
   their memories stay due for the next cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from ctx.engine import (
    LinkChange,
    MemoryId,
    Proposal,
    TagChange,
    make_proposal,
    plural,
)

__all__ = [
    "MAX_PROPOSALS",
    "group_tiers",
    "one_per_copy",
    "rank",
    "select",
    "tier_changes",
]

MAX_PROPOSALS = 20
"""The most proposals one cycle writes: a review a person reads through."""
_ARCHIVE = "tier:off-context"
_LEAVES = {_ARCHIVE: " (recall leaves them out)"}
_ORDER = ("duplicate", "update", "contradiction", "recurrence", "link", "tier")


def rank(proposal: Proposal) -> tuple[float, int, str]:
    """Returns the key that orders proposals the surest first (see above)."""
    return (-proposal.confidence, _ORDER.index(proposal.kind), proposal.id)


def tier_changes(proposals: Iterable[Proposal]) -> set[tuple[MemoryId, str]]:
    """Returns every (memory, tier tag) that tier proposals already hold."""
    return {
        (change.memory, change.tag)
        for proposal in proposals
        if proposal.kind == "tier"
        for change in proposal.tags
    }


def group_tiers(
    candidates: Sequence[Proposal], branch: str, now: datetime
) -> Proposal | None:
    """Returns one proposal holding the tier change of each candidate, or None.

    Its confidence is the lowest of theirs; its reason counts each tier.
    """
    if not candidates:
        return None
    memories: dict[MemoryId, str] = {}
    tags: list[TagChange] = []
    counts: dict[str, int] = {}
    for candidate in sorted(candidates, key=lambda p: p.tags[0].memory):
        for evidence in candidate.memories:
            memories[evidence.id] = evidence.blob
        tags.extend(candidate.tags)
        for change in candidate.tags:
            counts[change.tag] = counts.get(change.tag, 0) + 1
    if len(candidates) == 1:
        return candidates[0]
    said = "; ".join(
        f"{plural(n, 'memory')} to {tag}" + _LEAVES.get(tag, "")
        for tag, n in sorted(counts.items())
    )
    return make_proposal(
        kind="tier",
        branch=branch,
        memories=memories,
        tags=tags,
        confidence=min(c.confidence for c in candidates),
        reason=f"{said} (each accepted or rejected on its own)",
        now=now,
    )


_OPEN = ("proposed", "accepted")
"""The statuses of a proposal that may still be merged."""


def _duplicate_links(proposals: Iterable[Proposal]) -> list[LinkChange]:
    """Returns the links of the duplicate proposals that may still be merged."""
    return [
        link
        for p in proposals
        if p.kind == "duplicate" and p.status in _OPEN
        for link in p.links
    ]


def one_per_copy(
    duplicates: Sequence[Proposal], known: Iterable[Proposal]
) -> list[Proposal]:
    """Returns one duplicate proposal per copy to hide, not one per pair.

    Eight copies of one note are seven proposals, each superseding a copy
    by the one kept (the copy no other pair hides), not the 28 pairs; a copy
    a waiting proposal already hides gets none.
    """
    pending = _duplicate_links(known)
    waiting = {link.target for link in pending}
    paired = {frozenset((link.source, link.target)) for link in pending}
    hidden = {c.links[0].target for c in duplicates} | waiting
    chosen: dict[MemoryId, Proposal] = {}
    for candidate in sorted(duplicates, key=rank):
        [link] = candidate.links
        if link.target in waiting or frozenset((link.source, link.target)) in paired:
            continue  # hidden already, or the pair waits the other way round
        best = chosen.get(link.target)
        if best is None or (
            best.links[0].source in hidden and link.source not in hidden
        ):
            chosen[link.target] = candidate
    return list(chosen.values())


def select(
    candidates: Sequence[Proposal],
    *,
    known: Iterable[Proposal],
    branch: str,
    now: datetime,
    most: int = MAX_PROPOSALS,
) -> tuple[list[Proposal], list[Proposal]]:
    """Returns (the proposals to write, best first; those held back).

    Args:
        candidates: The cycle's new candidates (none already proposed).
        known: Every proposal already made for the branch.
        branch: The branch they are for.
        now: The cycle's time.
        most: The most proposals to write.
    """
    known = list(known)
    held = tier_changes(known)
    # A memory another proposal is about (a link to it, the copy a
    # duplicate keeps) is in use: it does not leave recall meanwhile.
    named = {
        e.id
        for p in (*candidates, *known)
        if p.kind != "tier" and p.status in _OPEN
        for e in p.memories
    }
    tiers = [
        c
        for c in candidates
        if c.kind == "tier"
        and (c.tags[0].memory, c.tags[0].tag) not in held
        and not (c.tags[0].tag == _ARCHIVE and c.tags[0].memory in named)
    ]
    copies = one_per_copy([c for c in candidates if c.kind == "duplicate"], known)
    # A copy a duplicate proposal hides gets no other proposal: a note kept
    # four times was contradicted four times.
    hidden = {link.target for link in _duplicate_links([*copies, *known])}
    ranked = [
        c
        for c in candidates
        if c.kind not in ("tier", "duplicate")
        and not hidden.intersection(e.id for e in c.memories)
    ]
    ranked += copies
    grouped = group_tiers(tiers, branch, now)
    if grouped is not None:
        ranked.append(grouped)
    ranked.sort(key=rank)
    return ranked[:most], ranked[most:]
