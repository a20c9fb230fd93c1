"""A task's end: what it decided kept at hand, the rest archived, a summary.

An agent names a task (``<ctx:task name="auth" action="start"/>``) and what
it remembers from then on is tagged ``task:NAME``. When the task ends, its
decisions are what later work needs: they are promoted to
``tier:reference``; its other memories (the steps, the dead ends) go to
``tier:off-context``, out of recall but in history. A pinned memory, one in
the tier it would get, and a summary (the record of a task ended before) are
left as they are. With ``summarize``, one summary DERIVED_FROM them all is
written (its text given, else their headlines).
"""

from __future__ import annotations

from typing import Annotated, TypeVar

import msgspec
from msgspec import Meta

from ctx import engine
from ctx.hub.access import Caller
from ctx.hub.calls.base import Write
from ctx.hub.calls.memories import (
    EditRequest,
    QueryRequest,
    SummarizeRequest,
    edit,
    query,
    summarize,
)
from ctx.hub.workspace import Workspace

__all__ = ["EndTaskRequest", "TaskEnded", "end_task"]


class EndTaskRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``end_task``: the memories tagged ``task:NAME`` promoted or archived."""

    name: Annotated[
        str,
        Meta(
            description="The task, one word (its memories carry task:NAME).",
            pattern=r"^[^\s]+$",
        ),
    ]
    summarize: Annotated[
        bool, Meta(description="Also write one summary derived from them.")
    ] = False
    body: Annotated[
        str | None,
        Meta(description="The summary's text (default: their headlines)."),
    ] = None


class TaskEnded(msgspec.Struct, frozen=True, kw_only=True):
    """What ending a task did.

    Attributes:
        name: The task.
        ids: Its memories (those tagged ``task:NAME``).
        promoted: How many decisions went to ``tier:reference``.
        archived: How many other memories went to ``tier:off-context``.
        summary: The summary written, if one was asked for (and there was
            something to summarize).
    """

    name: str
    ids: tuple[str, ...]
    promoted: int
    archived: int
    summary: str | None = None


def end_task(ws: Workspace, caller: Caller, req: EndTaskRequest) -> TaskEnded:
    """Ends a task: its decisions to reference, the rest off context.

    One commit for each memory whose tier changes, and one for the summary,
    each signed as the request is.
    """
    # Written by the query language itself: fix(auth) is one value, not a query.
    term = engine.Term(field="tag", op="=", value=f"task:{req.name}")
    where = engine.format_query(term)
    chosen = query(ws, caller, QueryRequest(where=where, branch=req.branch))
    promoted = archived = 0
    for memory in chosen:
        tier = "reference" if memory.kind == "decision" else "off-context"
        if memory.tier in (tier, "pinned") or memory.kind == "summary":
            continue
        request = EditRequest(
            id=memory.id,
            add_tags=(f"tier:{tier}",),
            remove_tags=(f"tier:{memory.tier}",) if memory.tier else (),
        )
        edit(ws, caller, _signed(request, req))
        promoted += tier == "reference"
        archived += tier == "off-context"
    ids = tuple(m.id for m in chosen)
    summary = None
    if ids and req.summarize:
        body = req.body or "\n".join(f"- {m.headline}" for m in chosen)
        asked = SummarizeRequest(
            ids=ids, body=body, title=f"Task {req.name}", tags=(f"task:{req.name}",)
        )
        summary = summarize(ws, caller, _signed(asked, req)).id
    return TaskEnded(
        name=req.name,
        ids=ids,
        promoted=promoted,
        archived=archived,
        summary=summary,
    )


W = TypeVar("W", bound=Write)


def _signed(request: W, by: EndTaskRequest) -> W:
    """Returns ``request`` on ``by``'s branch, signed as ``by`` is."""
    return msgspec.structs.replace(
        request,
        branch=by.branch,
        agent=by.agent,
        confidence=by.confidence,
        reason=by.reason,
        intent=by.intent,
    )
