"""Calls on memories: remember, forget, edit, get, ls, query, prime, summarize.

Each request is a call's input schema; each handler checks the caller's
reach, holds the workspace's lock, writes the intent and makes one engine
call, and returns the Struct ``ctx ... --json`` prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from ctx import engine
from ctx.engine import LISTING_ORDERS
from ctx.hub.access import Caller
from ctx.hub.calls.base import (
    Id,
    Kind,
    Request,
    Tags,
    Write,
    moment,
    one_of,
    reading,
    reads,
    write_intent,
    writing,
)
from ctx.hub.workspace import Workspace

__all__ = [
    "EditRequest",
    "ForgetRequest",
    "GetRequest",
    "LsRequest",
    "PrimeRequest",
    "QueryRequest",
    "RememberRequest",
    "SummarizeRequest",
    "SummarizeSessionRequest",
    "edit",
    "forget",
    "get",
    "listing",
    "ls",
    "prime",
    "query",
    "remember",
    "summarize",
    "summarize_session",
]

if TYPE_CHECKING:  # type checkers read it as the string it is
    Order = str
else:
    Order = one_of(LISTING_ORDERS)


class RememberRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``remember``: store one memory as one commit."""

    text: Annotated[str, Meta(description="The memory's text.", min_length=1)]
    kind: Annotated[Kind, Meta(description="What the memory is.")] = "fact"
    title: Annotated[str | None, Meta(description="A one-line title.")] = None
    tags: Tags = ()
    context: Annotated[
        str, Meta(description="The folder it is filed under, e.g. 'api'.")
    ] = "general"
    when: Annotated[
        str | None,
        Meta(description="When it happened (ISO 8601; default: now)."),
    ] = None
    pin: Annotated[
        bool, Meta(description="Pin it: recalled first, whatever the question.")
    ] = False
    upsert: Annotated[
        bool,
        Meta(
            description="Update the live memory of the same kind and title "
            "instead of adding another."
        ),
    ] = False
    allow_duplicate: Annotated[
        bool,
        Meta(description="Write it even if a live memory has the same text."),
    ] = False


class ForgetRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``forget``: delete a memory (history keeps it)."""

    id: Id
    reason: Annotated[str, Meta(description="Why it is forgotten.", min_length=1)]


class EditRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``edit``: change a memory's text, title, kind or tags."""

    id: Id
    body: Annotated[str | None, Meta(description="The new text.")] = None
    title: Annotated[str | None, Meta(description="The new title.")] = None
    kind: Annotated[Kind | None, Meta(description="The new kind.")] = None
    add_tags: Tags = ()
    remove_tags: Tags = ()
    when: Annotated[
        str | None,
        Meta(description="When it happened (ISO 8601; default: unchanged)."),
    ] = None


class GetRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``get``: one memory, as it is now or at a revision."""

    id: Id
    revision: Annotated[
        str | None,
        Meta(description="A revision (commit id, branch~N) to read it at."),
    ] = None


class LsRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``ls``: the memories under a path prefix, newest first."""

    prefix: Annotated[
        str, Meta(description="Only paths that start with this, e.g. 'pinned/'.")
    ] = ""
    where: Annotated[
        str | None,
        Meta(description="Only memories this query selects, e.g. 'kind:decision'."),
    ] = None
    sort: Annotated[
        Order, Meta(description="newest/oldest (when it happened), kind, title, id.")
    ] = "newest"
    all: Annotated[bool, Meta(description="Include superseded memories.")] = False


class QueryRequest(Request, kw_only=True, forbid_unknown_fields=True):
    """``query``: the memories the query language selects."""

    where: Annotated[
        str,
        Meta(
            description="A query, e.g. 'kind:decision AND tag:project:api AND "
            "created:>7d'.",
            min_length=1,
        ),
    ]
    all: Annotated[bool, Meta(description="Include superseded memories.")] = False


class PrimeRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``prime``: store a markdown document as one memory per section."""

    text: Annotated[str, Meta(description="The document's markdown.", min_length=1)]
    source: Annotated[
        str, Meta(description="A short name for the document, e.g. 'readme'.")
    ]
    file_name: Annotated[
        str, Meta(description="The document's file name, e.g. 'README.md'.")
    ] = "document.md"
    pin: Annotated[bool, Meta(description="Pin every section.")] = False


class SummarizeRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``summarize``: one summary memory DERIVED_FROM several."""

    ids: Annotated[
        tuple[str, ...], Meta(min_length=1, description="The memories summarized.")
    ]
    body: Annotated[str, Meta(description="The summary's text.", min_length=1)]
    title: Annotated[str | None, Meta(description="Its title.")] = None
    context: Annotated[str, Meta(description="Its folder.")] = "summaries"
    tags: Tags = ()
    archive: Annotated[
        bool, Meta(description="Move the summarized memories off-context.")
    ] = False


class SummarizeSessionRequest(Write, kw_only=True, forbid_unknown_fields=True):
    """``summarize_session``: what a session concluded, under sessions/<id>/."""

    summary: Annotated[
        str, Meta(description="What the session did and found.", min_length=1)
    ]
    decisions: Annotated[
        tuple[str, ...], Meta(description="What it decided, one line each.")
    ] = ()
    details: Annotated[
        str | None, Meta(description="Anything else worth keeping (notes, numbers).")
    ] = None
    session: Annotated[
        str | None,
        Meta(description="The session (default: this connection's session)."),
    ] = None


def remember(
    ws: Workspace, caller: Caller, req: RememberRequest
) -> engine.RememberResult:
    """Writes one memory."""
    draft = engine.Draft(
        text=req.text,
        title=req.title,
        kind=req.kind,
        context=req.context,
        tags=req.tags,
        when=moment(ws, req.when, "when"),
        pinned=req.pin,
    )
    who = write_intent(ws, caller, req, "observe")
    with writing(ws, caller, req.branch, who) as (store, branch), store.locked():
        # The store's lock, not only the workspace's: another process must
        # not forget or retag the memory between its look and its tags.
        result = engine.remember(
            store,
            draft,
            who,
            branch=branch,
            allow_duplicate=req.allow_duplicate,
            upsert=req.upsert,
        )
        remembered = engine.RememberResult.of(result)
        if (
            draft.pinned
            and (remembered.existing or remembered.updated)
            and not engine.is_pinned(remembered.path)
            and (remembered.existing or remembered.path.startswith("memory/"))
        ):
            # Held (or updated in place), but not pinned: `--pin` still
            # counts, as for new text. A held text in primed/ or sessions/ is
            # refused, nothing written; an upsert there keeps its place.
            moved = engine.pin(store, remembered.id, who, branch=branch)
            path = engine.show(store, remembered.id, branch).path
            remembered = msgspec.structs.replace(
                remembered, commit=moved.commit, path=path, pinned_now=True
            )
        if remembered.existing and draft.tags:
            # The text was held already: the tags given still count, as
            # `ctx tag` adds them (a tier tag replaces the memory's tier).
            held = engine.show(store, remembered.id, branch).memory.tags
            added = tuple(dict.fromkeys(t for t in draft.tags if t not in held))
            if added:
                tagged = engine.tag(store, remembered.id, added, who, branch=branch)
                remembered = msgspec.structs.replace(
                    remembered, commit=tagged.commit, tags_added=added
                )
    return remembered


def forget(ws: Workspace, caller: Caller, req: ForgetRequest) -> engine.ForgetResult:
    """Deletes one memory."""
    who = write_intent(ws, caller, req, "forget")
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.forget(store, req.id, who, branch=branch)


def edit(ws: Workspace, caller: Caller, req: EditRequest) -> engine.EditResult:
    """Changes one memory."""
    who = write_intent(ws, caller, req, "refine")
    when = moment(ws, req.when, "when")
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.edit(
            store,
            req.id,
            who,
            body=req.body,
            title=req.title,
            kind=req.kind,
            add_tags=req.add_tags,
            remove_tags=req.remove_tags,
            when=when,
            branch=branch,
        )


def get(ws: Workspace, caller: Caller, req: GetRequest) -> engine.ShownMemory:
    """Reads one memory, now or at a revision."""
    with ws.lock.reading():
        store = ws.store()
        wanted = req.revision or reads(ws, caller, store, req.branch)
        rev = caller.read_revision(store, wanted)
        return engine.show_memory(store, req.id, rev)


def listing(ws: Workspace, caller: Caller, req: LsRequest) -> engine.MemoryListing:
    """Lists the memories under a path prefix, and the files left out of it.

    ``ctx ls`` prints both (a file it cannot read, as a warning); the ``ls``
    tool and route give the lines (:func:`ls`).
    """
    with reading(ws, caller, req.branch) as (store, rev):
        listed = engine.list_sorted(
            store,
            rev,
            req.prefix,
            all=req.all,
            order=req.sort,
            where=req.where,
            now=ws.clock(),
        )
        conflicted = engine.conflicted_ids(store, rev)
    return engine.MemoryListing(
        memories=tuple(engine.ListedMemory.of(r, conflicted) for r in listed.memories),
        unreadable=listed.unreadable,
    )


def ls(ws: Workspace, caller: Caller, req: LsRequest) -> list[engine.ListedMemory]:
    """Lists the memories under a path prefix (:func:`listing`'s lines)."""
    return list(listing(ws, caller, req).memories)


def query(
    ws: Workspace, caller: Caller, req: QueryRequest
) -> list[engine.SelectedMemory]:
    """Lists the memories a query selects."""
    with reading(ws, caller, req.branch) as (store, rev):
        chosen = engine.select(store, req.where, now=ws.clock(), rev=rev, all=req.all)
    return [engine.SelectedMemory.of(s) for s in chosen]


def prime(ws: Workspace, caller: Caller, req: PrimeRequest) -> engine.PrimeResult:
    """Stores a markdown document, one memory per section."""
    who = write_intent(ws, caller, req, "import")
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.prime(
            store,
            req.text,
            req.source,
            who,
            file_name=req.file_name,
            pin=req.pin,
            branch=branch,
        )


def summarize(
    ws: Workspace, caller: Caller, req: SummarizeRequest
) -> engine.SummarizeResult:
    """Writes a summary derived from several memories."""
    who = write_intent(ws, caller, req, "refine")
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.summarize(
            store,
            req.ids,
            req.body,
            who,
            title=req.title,
            context=req.context,
            tags=req.tags,
            archive_sources=req.archive,
            branch=branch,
        )


def summarize_session(
    ws: Workspace, caller: Caller, req: SummarizeSessionRequest
) -> engine.SessionSummaryResult:
    """Writes a session's summary, decisions and details in one commit."""
    who = write_intent(ws, caller, req, "summarize")
    session = req.session or who.session
    if session is None:
        raise engine.InvalidInputError(
            "This connection has no session to summarize.",
            hint="Name one with session (`ctx session ls` lists them).",
        )
    with writing(ws, caller, req.branch, who) as (store, branch):
        return engine.summarize_session(
            store,
            session,
            who,
            summary=req.summary,
            decisions=req.decisions,
            details=req.details,
            branch=branch,
        )
