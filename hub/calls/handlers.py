"""The calls agents make, each one engine or hub call with its checks.

Each handler takes the workspace, the :class:`~.access.Caller` and the
call's request Struct, checks every branch it names against the caller's
scope, makes the call under the workspace's lock, and returns the same
Struct the command line prints with ``--json``. Nothing here renders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from typing import Any

import msgspec

from ctx import engine
from ctx.engine import Intent, Store
from ctx.hub.access import Caller, ForbiddenError
from ctx.hub.calls import requests as rq
from ctx.hub.code.results import FindResult, SymbolList
from ctx.hub.keys import (
    ApiKey,
    CreatedKey,
    RevokedKey,
    create_key,
    list_keys,
    revoke_key,
)
from ctx.hub.retrieval.feedback import FeedbackResult
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.upkeep import pack_in_background
from ctx.hub.workspace import Workspace

__all__ = ["HANDLERS", "defused"]


def _intent(ws: Workspace, caller: Caller, req: rq._Write, intent: str) -> Intent:
    return ws.intent(
        intent,
        agent=req.agent or ws.agent or caller.agent,
        confidence=req.confidence,
        reason=req.reason,
        session=caller.session,
    )


def _own_branch(ws: Workspace, caller: Caller, branch: str | None) -> str | None:
    """Returns ``agent/<name>`` where the agent works on a branch of its own.

    That is where ``[agents] branch_per_agent`` is set, the call names no
    branch and the server was given none.
    """
    if branch is not None or caller.branch is not None:
        return None
    return ws.own_branch(caller.agent)


def _ensure_branch(store: Store, name: str) -> None:
    """Creates ``name`` from HEAD's branch unless it exists (race-safe)."""
    if name in store.branches():
        return
    # Another writer may make it first: the same branch from the same start.
    with suppress(engine.ConflictError):
        engine.create_branch(store, name, store.head_branch())


@contextmanager
def _writing(
    ws: Workspace, caller: Caller, branch: str | None
) -> Iterator[tuple[Store, str]]:
    """Holds the lock; yields the store and the branch to write, if allowed."""
    with ws.lock:
        store = ws.store(write=True)
        own = _own_branch(ws, caller, branch)
        name = caller.write_branch(store, own or branch)
        if own is not None:
            _ensure_branch(store, own)
        yield store, name
        # A server writes for days without closing its workspace.
        pack_in_background(store)


def _reads(
    ws: Workspace, caller: Caller, store: Store, branch: str | None
) -> str | None:
    """Returns the branch a read reads, when it names none: the agent's own.

    That is its branch once its first write made it (``branch_per_agent``),
    else the caller's default.
    """
    if branch is None:
        own = _own_branch(ws, caller, None)
        if own is not None and own in store.branches():
            return own
    return branch or caller.branch


@contextmanager
def _reading(
    ws: Workspace, caller: Caller, branch: str | None
) -> Iterator[tuple[Store, str | None]]:
    """Holds the lock to read; yields the store and the revision, if allowed."""
    with ws.lock.reading():
        store = ws.store()
        yield store, caller.read_revision(store, _reads(ws, caller, store, branch))


def _moment(value: str | None, what: str) -> datetime | None:
    from ctx.hub.retrieval.temporal.moment import parse_moment

    return None if value is None else parse_moment(value, what)


def remember(
    ws: Workspace, caller: Caller, req: rq.RememberRequest
) -> engine.RememberResult:
    """Writes one memory."""
    draft = engine.Draft(
        text=req.text,
        title=req.title,
        kind=req.kind,
        context=req.context,
        tags=req.tags,
        when=_moment(req.when, "when"),
        pinned=req.pin,
    )
    with _writing(ws, caller, req.branch) as (store, branch):
        result = engine.remember(
            store,
            draft,
            _intent(ws, caller, req, "observe"),
            branch=branch,
            allow_duplicate=req.allow_duplicate,
            upsert=req.upsert,
        )
    return engine.RememberResult.of(result)


def forget(ws: Workspace, caller: Caller, req: rq.ForgetRequest) -> engine.ForgetResult:
    """Deletes one memory."""
    with _writing(ws, caller, req.branch) as (store, branch):
        who = _intent(ws, caller, req, "forget")
        return engine.forget(store, req.id, who, branch=branch)


def edit(ws: Workspace, caller: Caller, req: rq.EditRequest) -> engine.EditResult:
    """Changes one memory."""
    with _writing(ws, caller, req.branch) as (store, branch):
        return engine.edit(
            store,
            req.id,
            _intent(ws, caller, req, "refine"),
            body=req.body,
            title=req.title,
            kind=req.kind,
            add_tags=req.add_tags,
            remove_tags=req.remove_tags,
            branch=branch,
        )


def get(ws: Workspace, caller: Caller, req: rq.GetRequest) -> engine.ShownMemory:
    """Reads one memory, now or at a revision."""
    with ws.lock.reading():
        store = ws.store()
        wanted = req.revision or _reads(ws, caller, store, req.branch)
        rev = caller.read_revision(store, wanted)
        return engine.show_memory(store, req.id, rev)


def ls(ws: Workspace, caller: Caller, req: rq.LsRequest) -> list[engine.ListedMemory]:
    """Lists the memories under a path prefix (``ctx ls`` lists the same)."""
    with _reading(ws, caller, req.branch) as (store, rev):
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
    return [engine.ListedMemory.of(r, conflicted) for r in listed.memories]


def query(
    ws: Workspace, caller: Caller, req: rq.QueryRequest
) -> list[engine.SelectedMemory]:
    """Lists the memories a query selects."""
    with _reading(ws, caller, req.branch) as (store, rev):
        chosen = engine.select(store, req.where, now=ws.clock(), rev=rev, all=req.all)
    return [engine.SelectedMemory.of(s) for s in chosen]


def prime(ws: Workspace, caller: Caller, req: rq.PrimeRequest) -> engine.PrimeResult:
    """Stores a markdown document, one memory per section."""
    with _writing(ws, caller, req.branch) as (store, branch):
        return engine.prime(
            store,
            req.text,
            req.source,
            _intent(ws, caller, req, "import"),
            file_name=req.file_name,
            pin=req.pin,
            branch=branch,
        )


def recall(ws: Workspace, caller: Caller, req: rq.RecallRequest) -> RecallResult:
    """Recalls the memories that matter for a question.

    What it returns is recorded as shown to the caller's session
    (:mod:`ctx.hub.shown`).
    """
    from ctx.hub.api import recall as hub_recall
    from ctx.hub.retrieval.temporal.moment import moment_or_revision
    from ctx.hub.shown import note_recall

    asked, overlay = ws.reviewed_view(req.branch, req.with_)
    now = _moment(req.now, "now")
    with ws.lock.reading():
        store = ws.store()
        own = _own_branch(ws, caller, asked)
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
        agent=ws.agent or caller.agent,
    )
    note_recall(
        ws, result, session=caller.session or ws.session, agent=ws.agent or caller.agent
    )
    return result


def feedback(ws: Workspace, caller: Caller, req: rq.FeedbackRequest) -> FeedbackResult:
    """Records which memories of a recall were used."""
    from ctx.hub.api import feedback as hub_feedback

    return hub_feedback(ws, req.recall_id, req.used, readable=caller.visible)


def search(ws: Workspace, caller: Caller, req: rq.SearchRequest) -> RecallResult:
    """Finds the memories that best match some words."""
    from ctx.hub.api import search as hub_search

    with ws.lock.reading():
        store = ws.store()
        branch = caller.read_branch(store, _reads(ws, caller, store, req.branch))
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


def link(ws: Workspace, caller: Caller, req: rq.LinkRequest) -> engine.LinkResult:
    """Links one memory to another."""
    with _writing(ws, caller, req.branch) as (store, branch):
        who = _intent(ws, caller, req, "link")
        return engine.link(
            store,
            req.source,
            req.target,
            req.type,
            who,
            confidence=req.confidence,
            branch=branch,
        )


def unlink(ws: Workspace, caller: Caller, req: rq.UnlinkRequest) -> engine.UnlinkResult:
    """Removes a link."""
    with _writing(ws, caller, req.branch) as (store, branch):
        who = _intent(ws, caller, req, "link")
        return engine.unlink(
            store, req.source, req.target, req.type, who, branch=branch
        )


def supersede(
    ws: Workspace, caller: Caller, req: rq.SupersedeRequest
) -> engine.SupersedeResult:
    """Marks an old memory as replaced by a new one."""
    with _writing(ws, caller, req.branch) as (store, branch):
        who = _intent(ws, caller, req, "refine")
        return engine.supersede(store, req.old, req.new, who, branch=branch)


def summarize(
    ws: Workspace, caller: Caller, req: rq.SummarizeRequest
) -> engine.SummarizeResult:
    """Writes a summary derived from several memories."""
    with _writing(ws, caller, req.branch) as (store, branch):
        return engine.summarize(
            store,
            req.ids,
            req.body,
            _intent(ws, caller, req, "refine"),
            title=req.title,
            context=req.context,
            tags=req.tags,
            archive_sources=req.archive,
            branch=branch,
        )


def summarize_session(
    ws: Workspace, caller: Caller, req: rq.SummarizeSessionRequest
) -> engine.SessionSummaryResult:
    """Writes a session's summary, decisions and details in one commit."""
    who = _intent(ws, caller, req, "summarize")
    session = req.session or who.session
    if session is None:
        raise engine.InvalidInputError(
            "This connection has no session to summarize.",
            hint="Name one with session (`ctx session ls` lists them).",
        )
    with _writing(ws, caller, req.branch) as (store, branch):
        return engine.summarize_session(
            store,
            session,
            who,
            summary=req.summary,
            decisions=req.decisions,
            details=req.details,
            branch=branch,
        )


def trace(ws: Workspace, caller: Caller, req: rq.TraceRequest) -> engine.TraceNode:
    """Follows where a memory came from."""
    with _reading(ws, caller, req.branch) as (store, rev):
        return engine.trace(
            store, req.id, reverse=req.reverse, depth=req.depth, rev=rev
        )


def related(
    ws: Workspace, caller: Caller, req: rq.RelatedRequest
) -> list[engine.RelatedHit]:
    """Lists the memories within a few links of one."""
    with _reading(ws, caller, req.branch) as (store, rev):
        return engine.related(store, req.id, depth=req.depth, types=req.types, rev=rev)


def expand(
    ws: Workspace, caller: Caller, req: rq.ExpandRequest
) -> list[engine.MemoryRecord]:
    """Lists what a summary was derived from."""
    with _reading(ws, caller, req.branch) as (store, rev):
        return engine.expand(store, req.id, rev=rev)


def defused(composition: engine.Composition) -> engine.Composition:
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


def compose(
    ws: Workspace, caller: Caller, req: rq.ComposeRequest
) -> engine.Composition:
    """Composes the context to start work with.

    It is an injection, as a recall is: with ``[recall] reviewed_only`` it
    reads the reviewed branch alone, never the agent's own, what it
    includes is recorded as shown to the caller's session
    (:mod:`ctx.hub.shown`), and its text is :func:`defused`.
    """
    from ctx.hub.shown import note_composed

    branch, _ = ws.reviewed_view(req.branch)
    with _reading(ws, caller, branch) as (store, rev):
        composition = engine.compose(
            store,
            budget=req.budget,
            now=ws.clock(),
            where=req.where,
            fmt=req.format,
            rev=rev,
        )
        note_composed(ws, caller, store, rev, composition)
    return defused(composition)


def log(ws: Workspace, caller: Caller, req: rq.LogRequest) -> list[engine.LogEntry]:
    """Lists commits, newest first."""
    with _reading(ws, caller, req.branch) as (store, rev):
        return engine.log(store, req.target, rev=rev, limit=req.limit)


def blame(
    ws: Workspace, caller: Caller, req: rq.BlameRequest
) -> list[engine.LogEntry] | list[engine.BlameLine]:
    """Names the commits that made a memory (or each of its lines)."""
    with _reading(ws, caller, req.branch) as (store, rev):
        if req.lines:
            return engine.blame_lines(store, req.id, rev=rev)
        return engine.blame(store, req.id, rev=rev)


def diff(ws: Workspace, caller: Caller, req: rq.DiffRequest) -> engine.Diff:
    """Compares two revisions, memory by memory."""
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
        return engine.diff_range(store, spec, target)


def branches(
    ws: Workspace, caller: Caller, req: rq.BranchesRequest
) -> list[engine.BranchInfo]:
    """Lists the branches the caller may see."""
    with ws.lock.reading():
        found = engine.list_branches(ws.store())
    return [b for b in found if caller.visible(b.name)]


def branch(ws: Workspace, caller: Caller, req: rq.BranchRequest) -> engine.BranchResult:
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


def merge(ws: Workspace, caller: Caller, req: rq.MergeRequest) -> engine.MergeResult:
    """Merges one branch into another."""
    with ws.lock:
        store = ws.store(write=True)
        source = caller.read_revision(store, req.source)
        into = caller.write_branch(store, req.into or req.branch)
        return engine.merge(
            store,
            source,
            _intent(ws, caller, req, "merge"),
            into=into,
            prefer=req.prefer,
            no_ff=req.no_ff,
        )


def resolve(
    ws: Workspace, caller: Caller, req: rq.ResolveRequest
) -> engine.ResolveResult:
    """Settles a memory left in conflict."""
    with _writing(ws, caller, req.branch) as (store, branch):
        return engine.resolve(
            store,
            req.id,
            _intent(ws, caller, req, "merge"),
            take=req.take,
            body=req.body,
            branch=branch,
        )


def status(ws: Workspace, caller: Caller, req: rq.StatusRequest) -> engine.StoreStatus:
    """Reports the branch's counts and conflicts."""
    with _reading(ws, caller, req.branch) as (store, rev):
        return engine.status(store, rev)


def graph(ws: Workspace, caller: Caller, req: rq.GraphRequest) -> engine.Neighbourhood:
    """Returns a memory's neighbourhood in the link graph."""
    with _reading(ws, caller, req.branch) as (store, rev):
        return engine.neighbourhood(
            store, req.id, hops=req.hops, limit=req.limit, types=req.types, rev=rev
        )


def _admin(caller: Caller) -> None:
    # No key is no admin: a loopback server that answers without keys
    # answers every local user, who must not mint keys that outlive that.
    if caller.scope is None or not getattr(caller.scope, "admin", False):
        raise ForbiddenError(
            "Only an admin key may manage keys.",
            hint="`ctx keys create LABEL --admin` makes one.",
        )


def keys(ws: Workspace, caller: Caller, req: rq.KeysRequest) -> list[ApiKey]:
    """Lists the keys."""
    _admin(caller)
    return list_keys(ws)


def key_create(ws: Workspace, caller: Caller, req: rq.KeyCreateRequest) -> CreatedKey:
    """Makes a key."""
    _admin(caller)
    return create_key(ws, req.label, read=req.read, write=req.write, admin=req.admin)


def key_revoke(ws: Workspace, caller: Caller, req: rq.KeyRevokeRequest) -> RevokedKey:
    """Revokes a key."""
    _admin(caller)
    return revoke_key(ws, req.id)


def find(ws: Workspace, caller: Caller, req: rq.FindRequest) -> FindResult:
    """Finds where something is in the indexed code (any caller: no memories)."""
    from ctx.hub.api import find_code

    return find_code(
        ws,
        req.query,
        limit=req.limit,
        language=req.language,
        path=req.path,
        full=req.full,
    )


def symbols(ws: Workspace, caller: Caller, req: rq.SymbolsRequest) -> SymbolList:
    """Lists the indexed definitions (any caller: no memories)."""
    from ctx.hub.code_api import code_symbols

    with ws.lock:
        return code_symbols(ws, kind=req.kind, path=req.path)


HANDLERS: dict[str, Callable[[Workspace, Caller, Any], Any]] = {
    "remember": remember,
    "forget": forget,
    "edit": edit,
    "get": get,
    "ls": ls,
    "query": query,
    "prime": prime,
    "recall": recall,
    "feedback": feedback,
    "search": search,
    "link": link,
    "unlink": unlink,
    "supersede": supersede,
    "summarize": summarize,
    "summarize_session": summarize_session,
    "trace": trace,
    "related": related,
    "expand": expand,
    "compose": compose,
    "log": log,
    "blame": blame,
    "diff": diff,
    "branches": branches,
    "branch": branch,
    "merge": merge,
    "resolve": resolve,
    "status": status,
    "graph": graph,
    "keys": keys,
    "key_create": key_create,
    "key_revoke": key_revoke,
    "find": find,
    "symbols": symbols,
}
"""Each call's handler, by the call's name."""
