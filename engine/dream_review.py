"""Reviewing Dream's proposals: accepted or rejected, whole or memory by memory.

A review rewrites a proposal's file on ``dream/<branch>`` with its new
status, in a commit made by the reviewer (:mod:`ctx.engine.dream` says how
proposals are written and merged). A proposal that changes many memories
(the tier proposal) is reviewed memory by memory: the memories declined are
kept in its file and never changed by a merge.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ctx.engine.abbreviation import MIN_SHORT
from ctx.engine.dream import (
    Proposal,
    decode_proposal,
    dream_branch,
    list_proposals,
    proposal_effects,
)
from ctx.engine.errors import ConflictError, InvalidInputError, NotFoundError
from ctx.engine.ids import CommitId, MemoryId
from ctx.engine.layout import proposal_path
from ctx.engine.model import Intent, Outcome, encode_struct
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store
from ctx.engine.wording import plural

__all__ = ["ReviewResult", "review_proposals"]


class ReviewResult(Outcome, frozen=True, kw_only=True):
    """What accept or reject did.

    Attributes:
        status: The status given (accepted or rejected).
        ids: The proposals that took it.
        commit: The commit on the dream branch, if anything changed.
        memories: The memories reviewed inside one proposal (``--memory``),
            else empty.
        others: With ``memories``: how many of the proposal's other
            memories accepting declined, or how many are left after
            rejecting (0: none is left, the proposal is rejected).
        left: With ``memories`` rejected: the status the proposal keeps
            for the others (proposed: they wait for review; accepted:
            they are accepted).
    """

    status: str
    ids: tuple[str, ...]
    commit: CommitId | None
    memories: tuple[MemoryId, ...] = ()
    others: int = 0
    left: str = ""

    def inside(self) -> str:
        """Says, in one line, what a review of memories inside one proposal did."""
        pid = ", ".join(self.ids)
        what = plural(len(self.memories), "memory")
        if self.status == "accepted":
            out = f"Accepted proposal {pid} for {what}"
            if self.others:
                out += f"; its other {plural(self.others, 'memory')} declined"
            return out + "."
        if self.others:
            keeps = "stays accepted" if self.left == "accepted" else "waits on"
            return (
                f"Declined {what} of proposal {pid}; it {keeps} for its other "
                f"{plural(self.others, 'memory')}."
            )
        return f"Declined {what} of proposal {pid}: none is left, it is rejected."


def _pick(proposals: Sequence[Proposal], ids: Sequence[str]) -> list[Proposal]:
    by_id = {p.id: p for p in proposals}
    out: dict[str, Proposal] = {}
    for given in ids:
        if len(given) < MIN_SHORT and given.lower() not in by_id:
            # As a memory's: a character or two would pick an update that
            # hides a memory by chance ("a" accepted a5dddc3b59c1).
            raise InvalidInputError(
                f"{given!r} is not a proposal id: give at least {MIN_SHORT} "
                "of its characters.",
                hint="`ctx dream review` lists them.",
            )
        matches = [p for pid, p in by_id.items() if pid.startswith(given.lower())]
        if not given or not matches:
            raise NotFoundError(
                f"No proposal {given!r}.", hint="`ctx dream review` lists them."
            )
        if len(matches) > 1:
            raise InvalidInputError(
                f"Proposal id {given!r} is ambiguous.", hint="Give more characters."
            )
        out[matches[0].id] = matches[0]
    return list(out.values())


def _pick_memories(proposal: Proposal, given: Sequence[str]) -> tuple[MemoryId, ...]:
    inside = proposal.changed_memories()
    out: dict[MemoryId, None] = {}
    for name in given:
        wanted = name.strip().upper()
        matches = [
            m for m in inside if wanted and (m.startswith(wanted) or m.endswith(wanted))
        ]
        if len(matches) != 1:
            raise InvalidInputError(
                f"Proposal {proposal.id} changes no memory {name!r}."
                if not matches
                else f"Memory id {name!r} is ambiguous in proposal {proposal.id}.",
                hint=f"It changes {plural(len(inside), 'memory')}; "
                "`ctx dream review` lists them.",
            )
        out[matches[0]] = None
    return tuple(out)


def _decided(
    proposal: Proposal, status: str, memories: Sequence[str]
) -> tuple[str, tuple[MemoryId, ...]]:
    """Returns the status and declined memories a review gives ``proposal``."""
    if not memories:
        return status, proposal.declined
    inside = proposal.changed_memories()
    picked = _pick_memories(proposal, memories)
    if status == "accepted":
        if proposal.status == "accepted":  # more of its memories accepted
            return status, tuple(m for m in proposal.declined if m not in picked)
        return status, tuple(m for m in inside if m not in picked)
    declined = tuple(dict.fromkeys((*proposal.declined, *picked)))
    if set(declined) >= set(inside):
        return "rejected", declined
    return proposal.status, declined


def review_proposals(
    store: Store,
    branch: str,
    ids: Sequence[str],
    status: str,
    intent: Intent,
    *,
    note: str | None = None,
    memories: Sequence[str] = (),
) -> ReviewResult:
    """Accepts or rejects proposals (every waiting one when ``ids`` is empty).

    Waiting: proposed, or merged and taken back by an undo (accepted again,
    it merges again). A rejected proposal keeps its file, so it is never
    made again. A proposal already merged cannot be reviewed again, unless
    the branch no longer holds its effects (an undo took the merge back).
    With ``memories``, one proposal that changes many memories (tiers) is
    reviewed memory by memory: accepting accepts it for those memories only;
    rejecting declines those memories and leaves it waiting for the others
    (rejected once none is left).

    Raises:
        NotFoundError: an id names no proposal.
        InvalidInputError: ``status`` is not accepted or rejected, a
            proposal was merged already, or ``memories`` are given for other
            than one proposal, or name a memory it does not change.
    """
    if status not in ("accepted", "rejected"):
        raise InvalidInputError(f"A review accepts or rejects, not {status!r}.")
    if note is not None:
        Intent(agent=intent.agent, intent="review", reason=note)  # checks the text
    name = dream_branch(branch)
    current = list_proposals(store, branch)
    if ids:
        chosen = _pick(current, ids)
    else:  # every waiting one: those proposed, and merges an undo took back
        chosen = [p for p in current if p.status == "proposed"]
        merged = [p for p in current if p.status == "merged"]
        if merged and status == "accepted":
            on_branch = store.snapshot(store.branch_tip(branch))
            chosen += [p for p in merged if proposal_effects(on_branch, [p])]
    if memories and (len(ids) != 1 or not chosen[0].tags):
        raise InvalidInputError(
            "Memories are reviewed inside one proposal that changes tags.",
            hint="Give one proposal id with --memory (a tier proposal lists many).",
        )
    # A merged proposal whose effects the branch no longer holds (`ctx undo`
    # took the merge back) may be reviewed again, and merged again.
    merged = [p for p in chosen if p.status == "merged"]
    undone: set[str] = set()
    if merged:  # the branch read only where it matters
        on_branch = store.snapshot(store.branch_tip(branch))
        undone = {p.id for p in merged if proposal_effects(on_branch, [p])}
    done = [p for p in merged if p.id not in undone]
    if done:
        raise InvalidInputError(
            f"Proposal {done[0].id} was merged already.",
            hint="`ctx undo` on the branch takes a merge back.",
        )
    decided = {p.id: _decided(p, status, memories) for p in chosen}
    changed = [
        p for p in chosen if (p.status, p.declined) != decided[p.id] or p.note != note
    ]
    reviewed: tuple[MemoryId, ...] = ()
    others = 0
    left = ""
    if memories:
        reviewed = _pick_memories(chosen[0], memories)
        after, declined = decided[chosen[0].id]
        rest = set(chosen[0].changed_memories()) - set(reviewed)
        if status == "rejected":
            rest -= set(declined)
            left = after if rest else ""
        else:
            rest &= set(declined)  # those left declined
        others = len(rest)
    if not changed:
        return ReviewResult(
            status=status,
            ids=tuple(p.id for p in chosen),
            commit=None,
            memories=reviewed,
            others=others,
            left=left,
        )
    verb = "Accept" if status == "accepted" else "Reject"

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {}
        for proposal in changed:
            path = proposal_path(proposal.id)
            data = snap.read(path)
            if data is None:
                continue
            now = decode_proposal(data, path)
            if now.status == "merged" and now.id not in undone:
                raise ConflictError(f"Proposal {now.id} was merged meanwhile.")
            given, declined = _decided(now, status, memories)
            out[path] = encode_struct(
                msgspec.structs.replace(
                    now,
                    status=given,
                    reviewer=intent.agent,
                    note=note,
                    declined=declined,
                )
            )
        return out

    what = plural(len(changed), "proposal")
    if memories:
        what += f" for {plural(len(memories), 'memory')}"
    commit = store.write(
        name,
        msgspec.structs.replace(intent, reason=note) if note else intent,
        f"{verb} {what}",
        build,
    )
    return ReviewResult(
        status=status,
        ids=tuple(p.id for p in chosen),
        commit=commit.id if commit else None,
        memories=reviewed,
        others=others,
        left=left,
    )
