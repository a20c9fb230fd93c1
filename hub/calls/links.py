"""Calls on the link graph: link, unlink, supersede, trace, related, expand, graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from msgspec import Meta

from ctx import engine
from ctx.engine import LINK_TYPES
from ctx.hub.access import Caller
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
    "ExpandRequest",
    "GraphRequest",
    "LinkRequest",
    "RelatedRequest",
    "SupersedeRequest",
    "TraceRequest",
    "UnlinkRequest",
    "expand",
    "graph",
    "link",
    "related",
    "supersede",
    "trace",
    "unlink",
]

if TYPE_CHECKING:  # type checkers read it as the string it is
    LinkType = str
else:
    LinkType = one_of(LINK_TYPES)


class LinkRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``link``: a typed link from one memory to another."""

    source: Id
    target: Id
    type: Annotated[LinkType, Meta(description="The link's type.")] = "RELATES_TO"


class UnlinkRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``unlink``: remove a typed link."""

    source: Id
    target: Id
    type: Annotated[LinkType, Meta(description="The link's type.")] = "RELATES_TO"


class SupersedeRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``supersede``: mark an old memory as replaced by a new one."""

    old: Id
    new: Id


class TraceRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``trace``: where a memory came from (its DERIVED_FROM tree)."""

    id: Id
    reverse: Annotated[bool, Meta(description="What was derived from it instead.")] = (
        False
    )
    depth: Annotated[int, Meta(ge=1, le=50, description="Levels at most.")] | None = (
        None
    )


class RelatedRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``related``: memories within a few links of one."""

    id: Id
    depth: Annotated[int, Meta(ge=1, le=3, description="Links away, 1 to 3.")] = 2
    types: Annotated[
        tuple[LinkType, ...], Meta(description="Only these link types.")
    ] = ()


class ExpandRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``expand``: the memories a summary was derived from."""

    id: Id


class GraphRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """The neighbourhood of a memory in the link graph, within a limit."""

    id: Id
    hops: Annotated[int, Meta(ge=1, le=3, description="Links away, 1 to 3.")] = 1
    limit: Annotated[
        int, Meta(ge=1, le=500, description="Nodes at most (the rest counted).")
    ] = 50
    types: Annotated[
        tuple[LinkType, ...], Meta(description="Only these link types.")
    ] = ()


def link(ws: Workspace, caller: Caller, req: LinkRequest) -> engine.LinkResult:
    """Links one memory to another."""
    who = write_intent(ws, caller, req, "link")
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.link(
            store,
            req.source,
            req.target,
            req.type,
            who,
            confidence=req.confidence,
            branch=branch,
        )


def unlink(ws: Workspace, caller: Caller, req: UnlinkRequest) -> engine.UnlinkResult:
    """Removes a link."""
    who = write_intent(ws, caller, req, "link")
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.unlink(
            store, req.source, req.target, req.type, who, branch=branch
        )


def supersede(
    ws: Workspace, caller: Caller, req: SupersedeRequest
) -> engine.SupersedeResult:
    """Marks an old memory as replaced by a new one."""
    who = write_intent(ws, caller, req, "refine")
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.supersede(store, req.old, req.new, who, branch=branch)


def trace(ws: Workspace, caller: Caller, req: TraceRequest) -> engine.TraceNode:
    """Follows where a memory came from."""
    with reading(ws, caller, req.branch) as (store, rev):
        return engine.trace(
            store, req.id, reverse=req.reverse, depth=req.depth, rev=rev
        )


def related(
    ws: Workspace, caller: Caller, req: RelatedRequest
) -> list[engine.RelatedHit]:
    """Lists the memories within a few links of one."""
    with reading(ws, caller, req.branch) as (store, rev):
        return engine.related(store, req.id, depth=req.depth, types=req.types, rev=rev)


def expand(
    ws: Workspace, caller: Caller, req: ExpandRequest
) -> list[engine.MemoryRecord]:
    """Lists what a summary was derived from."""
    with reading(ws, caller, req.branch) as (store, rev):
        return engine.expand(store, req.id, rev=rev)


def graph(ws: Workspace, caller: Caller, req: GraphRequest) -> engine.Neighbourhood:
    """Returns a memory's neighbourhood in the link graph."""
    with reading(ws, caller, req.branch) as (store, rev):
        return engine.neighbourhood(
            store, req.id, hops=req.hops, limit=req.limit, types=req.types, rev=rev
        )
