"""Calls that put memories in front of an agent: recall, search, compose, feedback.

What recall and compose give is recorded as shown to the caller's session
(:mod:`ctx.hub.shown`); what compose gives is defused (:func:`defused`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypeVar

import msgspec
from msgspec import Meta

from ctx import engine
from ctx.engine import FORMATS
from ctx.hub.access import Caller
from ctx.hub.calls.base import Kind, Request, moment, one_of, own_branch, reading, reads
from ctx.hub.retrieval.feedback import FeedbackResult
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.workspace import Workspace

__all__ = [
    "ComposeRequest",
    "Composed",
    "FeedbackRequest",
    "RecallRequest",
    "SearchRequest",
    "ViewRenderRequest",
    "compose",
    "defused",
    "feedback",
    "recall",
    "search",
    "view_render",
]

if TYPE_CHECKING:  # type checkers read it as the string it is
    Format = str
else:
    Format = one_of(FORMATS)


class RecallRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``recall``: the memories that matter for a question, within a budget."""

    query: Annotated[str, Meta(description="The question, in words.", min_length=1)]
    budget: (
        Annotated[int, Meta(ge=1, description="Tokens to fill (default: the store's).")]
        | None
    ) = None
    with_: Annotated[
        tuple[str, ...],
        Meta(description="Other branches whose memories are added (as --with)."),
    ] = msgspec.field(default=(), name="with")
    at: Annotated[
        str | None,
        Meta(description="As things stood at a revision or a date."),
    ] = None
    now: Annotated[
        str | None,
        Meta(description="The moment the question is asked (ISO 8601)."),
    ] = None
    include_superseded: Annotated[
        bool, Meta(description="Keep memories that another supersedes.")
    ] = False
    explain: Annotated[bool, Meta(description="Say why each memory was chosen.")] = (
        False
    )


class FeedbackRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``feedback``: which memories of a recall were used."""

    recall_id: Annotated[
        str, Meta(description="The recall_id of a recall's result.", min_length=1)
    ]
    used: Annotated[
        tuple[str, ...],
        Meta(
            description="Ids of the memories of that recall that were used.",
            min_length=1,
        ),
    ]


class SearchRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``search``: the memories that best match some words (no budget)."""

    query: Annotated[str, Meta(description="The words to find.", min_length=1)]
    limit: Annotated[int, Meta(ge=1, le=1000, description="Hits at most.")] = 10
    kind: Annotated[Kind | None, Meta(description="Only this kind.")] = None
    tag: Annotated[
        str | None,
        Meta(
            description="Only memories with this tag (ns:value), or a tag of "
            "this namespace or value (any letter case)."
        ),
    ] = None
    context: Annotated[str | None, Meta(description="Only this context.")] = None
    explain: Annotated[bool, Meta(description="Say why each hit matched.")] = False


class ComposeRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``compose``: the context to start work with, within a budget."""

    budget: Annotated[int, Meta(ge=1, description="Tokens at most.")] = 2000
    where: Annotated[
        str | None, Meta(description="Only memories this query selects.")
    ] = None
    format: Annotated[Format, Meta(description="How it is written.")] = "markdown"


class ViewRenderRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``view_render``: a saved view, composed within its own budget."""

    name: Annotated[str, Meta(description="The view's name.")]


def recall(ws: Workspace, caller: Caller, req: RecallRequest) -> RecallResult:
    """Recalls the memories that matter for a question.

    What it returns is recorded as shown to the caller's session
    (:mod:`ctx.hub.shown`).
    """
    from ctx.hub.api import recall as hub_recall
    from ctx.hub.retrieval.temporal.moment import moment_or_revision
    from ctx.hub.shown import note_recall

    asked, overlay = ws.reviewed_view(req.branch, req.with_)
    now = moment(ws, req.now, "now")
    with ws.lock.reading():
        store = ws.store()
        own = own_branch(ws, caller, asked)
        if own is not None and own in store.branches():
            main = caller.read_branch(store, None)
            overlay = (main, *(b for b in req.with_ if b not in (main, own)))
        else:
            own = None
        branch = caller.read_branch(store, own or asked)
        for other in overlay:
            caller.read_branch(store, other)
        at = moment_or_revision(req.at, now or ws.clock(), store.branches)  # as recall
        if isinstance(at, str):
            at = caller.read_revision(store, at)
    agent = caller.signed_by(ws.agent)
    result = hub_recall(
        ws,
        req.query,
        budget=req.budget,
        branch=branch,
        overlay=overlay,
        at=at,
        now=now,
        include_superseded=req.include_superseded,
        explain=req.explain,
        agent=agent,
    )
    if caller.records_shown:
        note_recall(ws, result, session=caller.session or ws.session, agent=agent)
    return result


def feedback(ws: Workspace, caller: Caller, req: FeedbackRequest) -> FeedbackResult:
    """Records which memories of a recall were used."""
    from ctx.hub.api import feedback as hub_feedback

    return hub_feedback(ws, req.recall_id, req.used, readable=caller.visible)


def search(ws: Workspace, caller: Caller, req: SearchRequest) -> RecallResult:
    """Finds the memories that best match some words."""
    from ctx.hub.api import search as hub_search

    with ws.lock.reading():
        store = ws.store()
        branch = caller.read_branch(store, reads(ws, caller, store, req.branch))
    return hub_search(
        ws,
        req.query,
        limit=req.limit,
        kind=req.kind,
        tag=req.tag,
        context=req.context,
        branch=branch,
        explain=req.explain,
    )


class Composed(engine.Composition, frozen=True, kw_only=True):
    """A composition an agent is given, and where it was read.

    Attributes:
        branch: The branch read (None: a commit named by id).
        commit: The commit read.
    """

    branch: str | None = None
    commit: str | None = None


def _composed(
    store: engine.Store, rev: str | None, composition: engine.Composition
) -> Composed:
    """Returns ``composition`` defused, with where it was read (``rev``)."""
    branch = store.head_branch() if rev is None else rev
    fields = {f: getattr(composition, f) for f in composition.__struct_fields__}
    composed = Composed(
        **fields,
        branch=branch if branch in store.branches() else None,
        commit=engine.resolve_revision(store, rev),
    )
    return defused(composed)


C = TypeVar("C", bound=engine.Composition)


def defused(composition: C) -> C:
    r"""Returns a composition whose text holds no live ``<ctx:...>`` tag.

    What an agent is given composed (the MCP ``compose`` tool and
    ``context`` prompt, a view, HTTP ``GET /api/compose``) is defused as a
    recall's block is (:func:`~ctx.hub.calls.markup.defuse`), so an agent
    that repeats it writes no command. Its JSON format gets each ``<`` as
    ``\u003c`` instead: the same data to any JSON reader, where defusing
    could break an escape. Each memory's own fields keep their exact text.
    """
    from ctx.hub.calls.markup import defuse

    text = composition.text
    text = (
        text.replace("<", "\\u003c") if composition.format == "json" else defuse(text)
    )
    return msgspec.structs.replace(composition, text=text)


def compose(ws: Workspace, caller: Caller, req: ComposeRequest) -> Composed:
    """Composes the context to start work with.

    It is an injection, as a recall is: with ``[recall] reviewed_only`` it
    reads the reviewed branch alone, never the agent's own, what it
    includes is recorded as shown to the caller's session
    (:mod:`ctx.hub.shown`), and its text is :func:`defused`.
    """
    from ctx.hub.shown import note_composed

    branch, _ = ws.reviewed_view(req.branch)
    with reading(ws, caller, branch) as (store, rev):
        composition = engine.compose(
            store,
            budget=req.budget,
            now=ws.clock(),
            where=req.where,
            fmt=req.format,
            rev=rev,
        )
        if caller.records_shown:
            note_composed(ws, caller, store, rev, composition)
        return _composed(store, rev, composition)


def view_render(ws: Workspace, caller: Caller, req: ViewRenderRequest) -> Composed:
    """Composes a saved view: an injection, read and recorded as :func:`compose`."""
    from ctx.hub.shown import note_composed

    branch, _ = ws.reviewed_view(req.branch)
    with reading(ws, caller, branch) as (store, rev):
        composition = engine.render_view(store, req.name, now=ws.clock(), rev=rev)
        if caller.records_shown:
            note_composed(ws, caller, store, rev, composition)
        return _composed(store, rev, composition)
