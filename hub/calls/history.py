"""Calls on history and branches.

log, blame, diff and status read; branches lists, branch makes one, merge
and resolve write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from ctx import engine
from ctx.engine import PREFERENCES, TAKES
from ctx.hub.access import Caller, ForbiddenError
from ctx.hub.calls.base import (
    Id,
    Request,
    Write,
    one_of,
    reading,
    write_intent,
    writing,
)
from ctx.hub.workspace import Workspace

__all__ = [
    "BlameRequest",
    "BranchRequest",
    "BranchesRequest",
    "DiffRequest",
    "LogRequest",
    "MergeRequest",
    "ResolveRequest",
    "StatusRequest",
    "blame",
    "branch",
    "branches",
    "diff",
    "log",
    "merge",
    "resolve",
    "status",
]

if TYPE_CHECKING:  # type checkers read it as the string it is
    Preference = str
else:
    Preference = one_of(PREFERENCES)

if TYPE_CHECKING:  # type checkers read it as the string it is
    Take = str
else:
    Take = one_of(TAKES)


class LogRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``log``: the commits of a branch, of a memory or of a path."""

    target: Annotated[str | None, Meta(description="A memory id or a path prefix.")] = (
        None
    )
    limit: Annotated[int, Meta(ge=1, le=10_000, description="Commits at most.")] = 20


class BlameRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``blame``: the commits that made a memory, or each line's."""

    id: Id
    lines: Annotated[
        bool, Meta(description="Name the commit of each line of the text.")
    ] = False


class DiffRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``diff``: what changed, memory by memory."""

    spec: Annotated[
        str,
        Meta(
            description="A..B (B against A), A...B (B since it split from A), "
            "or A (A against the working branch).",
            min_length=1,
        ),
    ]
    target: Annotated[
        str | None, Meta(description="With spec A: the other side B.")
    ] = None
    details: Annotated[
        bool,
        Meta(
            description="Also who changed each memory and the titles of the "
            "memories changed links join (a review's summary)."
        ),
    ] = False


class StatusRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``status``: the branch, its counts and its conflicts."""


class BranchesRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``branches``: every branch with its head."""


class BranchRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``branch``: make a branch."""

    name: Annotated[str, Meta(description="The new branch, e.g. 'agent/claude'.")]
    start: Annotated[
        str | None, Meta(description="Where it starts (default: HEAD).")
    ] = None


class MergeRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``merge``: merge a branch into another (conflicts kept as data)."""

    source: Annotated[str, Meta(description="The branch merged in.")]
    into: Annotated[
        str | None, Meta(description="The branch merged into (default: HEAD).")
    ] = None
    prefer: Annotated[Preference | None, Meta(description="How to settle clashes.")] = (
        None
    )
    no_ff: Annotated[bool, Meta(description="Always make a merge commit.")] = False


class ResolveRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``resolve``: settle a memory left in conflict by a merge."""

    id: Id
    take: Annotated[Take | None, Meta(description="Which side to keep.")] = None
    body: Annotated[str | None, Meta(description="A text of your own.")] = None


def log(ws: Workspace, caller: Caller, req: LogRequest) -> list[engine.LogEntry]:
    """Lists commits, newest first."""
    with reading(ws, caller, req.branch) as (store, rev):
        return engine.log(store, req.target, rev=rev, limit=req.limit)


def blame(
    ws: Workspace, caller: Caller, req: BlameRequest
) -> list[engine.LogEntry] | list[engine.BlameLine]:
    """Names the commits that made a memory (or each of its lines)."""
    with reading(ws, caller, req.branch) as (store, rev):
        if req.lines:
            return engine.blame_lines(store, req.id, rev=rev)
        return engine.blame(store, req.id, rev=rev)


def diff(ws: Workspace, caller: Caller, req: DiffRequest) -> engine.DiffReport:
    """Compares two revisions, memory by memory (with ``details``, for a review)."""
    dots = "..." if "..." in req.spec else ".." if ".." in req.spec else None
    target: str | None = req.target  # with a range, refused by the engine
    with ws.lock.reading():
        store = ws.store()
        if dots is None:  # A, or A B: a missing B is HEAD
            spec = caller.read_revision(store, req.spec)
            target = caller.read_revision(store, req.target)
        else:  # an empty side is HEAD; each side is read as checked
            sides = req.spec.split(dots, 1)
            spec = dots.join(caller.read_revision(store, s or None) for s in sides)
        found = engine.diff_range(store, spec, target)
        return engine.diff_report(store, found, details=req.details)


def status(ws: Workspace, caller: Caller, req: StatusRequest) -> engine.StoreStatus:
    """Reports the branch's counts and conflicts.

    The user store not made yet has no head: its stand-in's commit is made
    up anew at every call.
    """
    with reading(ws, caller, req.branch) as (store, rev):
        found = engine.status(store, rev)
    if store.path is None:
        return msgspec.structs.replace(found, head=None)
    return found


def branches(
    ws: Workspace, caller: Caller, req: BranchesRequest
) -> list[engine.BranchInfo]:
    """Lists the branches the caller may see (none before the store is made)."""
    with ws.lock.reading():
        store = ws.store()
        if store.path is None:  # the user store's stand-in: its tip is made up
            return []
        found = engine.list_branches(store)
    return [b for b in found if caller.visible(b.name)]


def branch(ws: Workspace, caller: Caller, req: BranchRequest) -> engine.BranchResult:
    """Makes a branch."""
    with ws.lock:
        store = ws.store(write=True)
        if caller.scope is not None and not caller.scope.can_write(req.name):
            raise ForbiddenError(
                f"This key may not make branch {req.name!r}.",
                hint="Name a branch the key's write patterns allow.",
            )
        start = caller.read_revision(store, req.start)
        return engine.create_branch(store, req.name, start)


def merge(ws: Workspace, caller: Caller, req: MergeRequest) -> engine.MergeResult:
    """Merges one branch into another."""
    if req.into is not None and req.branch is not None and req.into != req.branch:
        raise engine.InvalidInputError(
            f"Merge into {req.into!r} or {req.branch!r}, not both.",
            hint="Give `into` alone: the branch merged into.",
        )
    with ws.lock:
        store = ws.store(write=True)
        source = caller.read_revision(store, req.source)
        into = caller.write_branch(store, req.into or req.branch)
        return engine.merge(
            store,
            source,
            write_intent(ws, caller, req, "merge"),
            into=into,
            prefer=req.prefer,
            no_ff=req.no_ff,
        )


def resolve(ws: Workspace, caller: Caller, req: ResolveRequest) -> engine.ResolveResult:
    """Settles a memory left in conflict."""
    who = write_intent(ws, caller, req, "merge")
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.resolve(
            store,
            req.id,
            who,
            take=req.take,
            body=req.body,
            branch=branch,
        )
