"""Dream's calls for agents: one cycle, its status, review, accept, reject, merge.

The requests agents send (decoded like every call's: unknown fields
refused) and the handlers that answer them through
:mod:`ctx.hub.dream.calls`, with the scope checks of
:mod:`~.base`: Dream reads ``branch`` and writes ``dream/<branch>``,
and only ``dream_merge`` writes ``branch``. The answers are the Structs
``ctx dream ... --json`` prints. :data:`~.calls.CALLS` serves them as MCP
tools and HTTP routes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from ctx.engine import (
    PROPOSAL_STATUSES,
    DreamMergeResult,
    InvalidInputError,
    ReviewResult,
    Store,
    dream_branch,
    review_proposals,
)
from ctx.hub import dream
from ctx.hub.access import Caller
from ctx.hub.calls.base import Id, one_of
from ctx.hub.dream import CycleReport, DreamReview, DreamStatus
from ctx.hub.workspace import Workspace

__all__ = [
    "DreamAcceptRequest",
    "DreamMergeRequest",
    "DreamRejectRequest",
    "DreamReviewRequest",
    "DreamRunRequest",
    "DreamStatusRequest",
    "dream_accept",
    "dream_merge",
    "dream_reject",
    "dream_review",
    "dream_run",
    "dream_status",
]

if TYPE_CHECKING:
    Status = str
else:  # a status, or every proposal
    Status = one_of((*PROPOSAL_STATUSES, "all"))
DreamBranch = Annotated[
    str | None,
    Meta(
        description="The branch Dream reads and its proposals are for (default: "
        "the server's branch, then HEAD); they wait on dream/<branch>."
    ),
]
Ids = Annotated[
    tuple[Id, ...],
    Meta(description="Proposal ids, whole or 6+ characters of their start."),
]
Memories = Annotated[
    tuple[Id, ...],
    Meta(
        description="Only these memories of one proposal that lists many (the "
        "tier proposal); give exactly one id in ids."
    ),
]


class _DreamRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    branch: DreamBranch = None


class DreamRunRequest(_DreamRequest, kw_only=True, forbid_unknown_fields=True):
    """``dream_run``: one cycle, in the server's process."""

    budget: (
        Annotated[
            int,
            Meta(
                ge=1, le=100_000, description="Memories to examine (default: config)."
            ),
        ]
        | None
    ) = None


class DreamStatusRequest(_DreamRequest, kw_only=True, forbid_unknown_fields=True):
    """``dream_status``: queue, back-off, last cycle, proposals by status."""


class DreamReviewRequest(_DreamRequest, kw_only=True, forbid_unknown_fields=True):
    """``dream_review``: proposals with their evidence and changes."""

    status: Annotated[
        Status, Meta(description="Which proposals (default: those waiting).")
    ] = "proposed"


class DreamAcceptRequest(_DreamRequest, kw_only=True, forbid_unknown_fields=True):
    """``dream_accept``: accept proposals for the next merge."""

    ids: Ids = ()
    all: Annotated[bool, Meta(description="Accept every waiting proposal.")] = False
    memories: Memories = ()


class DreamRejectRequest(_DreamRequest, kw_only=True, forbid_unknown_fields=True):
    """``dream_reject``: reject proposals; a rejected one is never made again."""

    ids: Annotated[tuple[Id, ...], Meta(min_length=1)]
    reason: Annotated[str | None, Meta(description="Why, kept with the proposal.")] = (
        None
    )
    memories: Memories = ()


class DreamMergeRequest(_DreamRequest, kw_only=True, forbid_unknown_fields=True):
    """``dream_merge``: merge the accepted proposals into their branch."""

    yes: Annotated[
        bool,
        Meta(
            description="Merge even when it hides more than 3 memories from "
            "recall (the result's hidden lists them; dream_review gives each "
            "proposal's hides)."
        ),
    ] = False


def _read(caller: Caller, store: Store, branch: str | None) -> str:
    """Returns the branch Dream reads, if the caller may read it and its proposals.

    Raises:
        InvalidInputError: It is one of Dream's own branches.
        RefNotFoundError: It does not exist, or the caller may not read it.
    """
    name = caller.read_branch(store, branch)
    if name.startswith("dream/"):
        raise InvalidInputError(
            f"{name!r} is one of Dream's own branches.",
            hint="Name the branch it was made for, e.g. main.",
        )
    caller.read_branch(store, dream_branch(name))
    store.branch_tip(name)
    return name


def _review(ws: Workspace, caller: Caller, branch: str | None) -> tuple[Store, str]:
    """Returns the store and branch whose proposals the caller may write."""
    store = ws.store(write=True)
    name = _read(caller, store, branch)
    caller.write_branch(store, dream_branch(name))
    return store, name


def dream_run(ws: Workspace, caller: Caller, req: DreamRunRequest) -> CycleReport:
    """Runs one cycle; its proposals go to ``dream/<branch>``.

    A user store not made yet is refused (as :func:`ctx.hub.dream.run`
    refuses it) before the branch is checked for writing, which would make it.
    """
    dream.require_disk(ws)
    with ws.lock:
        _, name = _review(ws, caller, req.branch)
        return dream.run(ws, branch=name, budget=req.budget)


def dream_status(ws: Workspace, caller: Caller, req: DreamStatusRequest) -> DreamStatus:
    """Reports Dream's queue and proposals for a branch."""
    with ws.lock:
        name = _read(caller, ws.store(), req.branch)
        return dream.dream_status(ws, branch=name)


def dream_review(ws: Workspace, caller: Caller, req: DreamReviewRequest) -> DreamReview:
    """Lists proposals with their evidence, changes and what they would hide."""
    with ws.lock:
        name = _read(caller, ws.store(), req.branch)
        status = None if req.status == "all" else req.status
        return dream.reviewed(ws, branch=name, status=status)


def _decide(
    ws: Workspace,
    caller: Caller,
    branch: str | None,
    ids: tuple[str, ...],
    status: str,
    note: str | None = None,
    memories: tuple[str, ...] = (),
) -> ReviewResult:
    with ws.lock:
        store, name = _review(ws, caller, branch)
        who = ws.intent(
            "review", agent=caller.signed_by(ws.agent), session=caller.session
        )
        return review_proposals(
            store, name, ids, status, who, note=note, memories=memories
        )


def dream_accept(
    ws: Workspace, caller: Caller, req: DreamAcceptRequest
) -> ReviewResult:
    """Accepts the named proposals (or every waiting one with ``all``)."""
    if bool(req.ids) == req.all:
        raise InvalidInputError(
            "Name the proposals to accept, or ask for all of them.",
            hint='Pass "ids" (dream_review lists them) or "all": true, not both.',
        )
    return _decide(ws, caller, req.branch, req.ids, "accepted", memories=req.memories)


def dream_reject(
    ws: Workspace, caller: Caller, req: DreamRejectRequest
) -> ReviewResult:
    """Rejects the named proposals, with the reason given."""
    return _decide(
        ws, caller, req.branch, req.ids, "rejected", req.reason, req.memories
    )


def dream_merge(
    ws: Workspace, caller: Caller, req: DreamMergeRequest
) -> DreamMergeResult:
    """Merges the accepted proposals into the branch they were made for."""
    with ws.lock:
        store = ws.store(write=True)
        name = caller.write_branch(store, req.branch)
        _read(caller, store, name)
        return dream.merge(
            ws,
            branch=name,
            agent=caller.signed_by(ws.agent),
            session=caller.session,
            yes=req.yes,
        )
