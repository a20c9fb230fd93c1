"""Every call an agent can make: its request, its answer, what it is for.

:data:`CALLS` is the one table the MCP server's tools and the HTTP API's
routes are built from: a call's name, its request Struct (the input
schema), the Struct it answers with (the output schema: the same one
``--json`` prints) and a description written for a model: when to call
it, and what comes back. :func:`invoke` decodes a call's arguments into its
request (refusing unknown fields and wrong types with one line) and runs
its handler.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from ctx import engine
from ctx.engine import CtxError, InvalidInputError
from ctx.hub.access import Caller
from ctx.hub.calls import admin, code, history, links, memories, recalls
from ctx.hub.calls import dream_calls as dc
from ctx.hub.calls.base import Write, converted
from ctx.hub.code.results import FindResult, SymbolList
from ctx.hub.dream import CycleReport, DreamReview, DreamStatus
from ctx.hub.keys import ApiKey, CreatedKey, RevokedKey
from ctx.hub.retrieval.feedback import FeedbackResult
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.workspace import Workspace

__all__ = [
    "CALLS",
    "GRAPH",
    "KEYS",
    "TOOL_SETS",
    "Call",
    "decode",
    "invoke",
    "structured",
    "tool_names",
]


@dataclass(frozen=True)
class Call:
    """One call agents can make.

    Attributes:
        name: The MCP tool's name.
        request: The Struct its arguments decode into.
        answer: The type it answers with.
        handler: Makes the call.
        description: For a model: when to call it, and what comes back.
        writes: Whether it commits.
    """

    name: str
    request: type[msgspec.Struct]
    answer: Any
    handler: Callable[[Workspace, Caller, Any], Any]
    description: str
    writes: bool = False


def _call(
    name: str, request: type[msgspec.Struct], answer: Any, description: str
) -> Call:
    # Each call's handler is the function of its name beside its request.
    handler = vars(sys.modules[request.__module__])[name]
    writes = issubclass(request, Write) or name == "branch"
    return Call(name, request, answer, handler, description, writes)


CALLS: dict[str, Call] = {
    c.name: c
    for c in (
        _call(
            "remember",
            memories.RememberRequest,
            engine.RememberResult,
            "Call when you learn something worth keeping beyond this conversation (a "
            "fact, decision, pattern...): stores it as one commit and returns its id."
            " With upsert=true it updates the live memory of the same kind and title "
            "instead of adding another.",
        ),
        _call(
            "forget",
            memories.ForgetRequest,
            engine.ForgetResult,
            "Call when a memory is wrong or no longer useful, with a reason: deletes "
            "it (history keeps it).",
        ),
        _call(
            "edit",
            memories.EditRequest,
            engine.EditResult,
            "Call when a memory's fact changed or was imprecise, rather than adding a"
            " second memory: changes only the fields given (text, title, kind, tags).",
        ),
        _call(
            "get",
            memories.GetRequest,
            engine.ShownMemory,
            "Call to read one memory whole by its id (from recall or search), now or "
            "at a revision; a conflict a merge left on it comes with it.",
        ),
        _call(
            "ls",
            memories.LsRequest,
            list[engine.ListedMemory],
            "Call to list the memories under a path prefix (memory/, pinned/, "
            "primed/) with id, kind and headline; to find by meaning, use recall.",
        ),
        _call(
            "query",
            memories.QueryRequest,
            list[engine.SelectedMemory],
            "Call to select memories by their fields with the query language (kind:, "
            "tag:, tier:, created:>7d, AND/OR/NOT); returns id, kind, title, tier and"
            " size.",
        ),
        _call(
            "prime",
            memories.PrimeRequest,
            engine.PrimeResult,
            "Call to store a markdown document (a README, a design note) as one "
            "memory per section; priming it again updates only the changed sections.",
        ),
        _call(
            "recall",
            recalls.RecallRequest,
            RecallResult,
            "Call before you answer or act, with the question: returns the pinned "
            "memories and the most relevant ones, ranked by meaning, words and "
            "recency, packed into a token budget as text ready for a prompt.",
        ),
        _call(
            "feedback",
            recalls.FeedbackRequest,
            FeedbackResult,
            "Call after a recall, with its recall_id and the ids of the memories you "
            "used: recall learns from it which channels and budget serve you.",
        ),
        _call(
            "search",
            recalls.SearchRequest,
            RecallResult,
            "Call to find the memories that best match some words, best first, "
            "optionally by kind, tag or context (no budget, no pinned); before "
            "answering a question, use recall.",
        ),
        _call(
            "link",
            links.LinkRequest,
            engine.LinkResult,
            "Call when one memory bears on another (depends on it, contradicts it, "
            "derives from it...): records a typed link, which recall follows.",
        ),
        _call(
            "unlink",
            links.UnlinkRequest,
            engine.UnlinkResult,
            "Call when a typed link between two memories is wrong: removes it.",
        ),
        _call(
            "supersede",
            links.SupersedeRequest,
            engine.SupersedeResult,
            "Call when a newer memory replaces an older one (a fact or decision "
            "changed): recall then leaves the old one out.",
        ),
        _call(
            "summarize",
            memories.SummarizeRequest,
            engine.SummarizeResult,
            "Call to replace several memories by one summary linked to each "
            "(DERIVED_FROM); archive=true moves them off-context.",
        ),
        _call(
            "summarize_session",
            memories.SummarizeSessionRequest,
            engine.SessionSummaryResult,
            "Call at the end of a working session: writes what it did (summary), what"
            " it decided (decisions, one line each) and anything else worth keeping "
            "(details) under sessions/<id>/, in one commit. The session is this "
            "connection's unless named; calling it again updates them.",
        ),
        _call(
            "trace",
            links.TraceRequest,
            engine.TraceNode,
            "Call to see where a memory came from: the tree of memories it was "
            "derived from or depends on (reverse=true: what came from it).",
        ),
        _call(
            "related",
            links.RelatedRequest,
            list[engine.RelatedHit],
            "Call to list the memories within 1-3 links of one, nearest first, with "
            "the link that reached each.",
        ),
        _call(
            "expand",
            links.ExpandRequest,
            list[engine.MemoryRecord],
            "Call to read whole the memories a summary was derived from.",
        ),
        _call(
            "compose",
            recalls.ComposeRequest,
            recalls.Composed,
            "Call at the start of a task for the context to work with: pinned, "
            "reference and working memories within a budget, as markdown, text or "
            "JSON.",
        ),
        _call(
            "log",
            history.LogRequest,
            list[engine.LogEntry],
            "Call to see the history of a branch, a memory or a path, newest first: "
            "who wrote what, why and how sure.",
        ),
        _call(
            "blame",
            history.BlameRequest,
            list[engine.LogEntry] | list[engine.BlameLine],
            "Call to see which commits made a memory what it is (lines=true: the "
            "commit of each line of its text).",
        ),
        _call(
            "diff",
            history.DiffRequest,
            engine.DiffReport,
            "Call to compare two revisions memory by memory: added, changed (field by"
            " field) and removed; A...B shows what B did since it split from A.",
        ),
        _call(
            "branches",
            history.BranchesRequest,
            list[engine.BranchInfo],
            "Call to list the branches with their head commits.",
        ),
        _call(
            "branch",
            history.BranchRequest,
            engine.BranchResult,
            "Call to make a branch (agent/<name>, say) to work on without touching "
            "main until a review merges it.",
        ),
        _call(
            "merge",
            history.MergeRequest,
            engine.MergeResult,
            "Call to merge a branch into another; clashes that cannot be settled are "
            "kept as conflicts (see status, resolve), never lost.",
        ),
        _call(
            "resolve",
            history.ResolveRequest,
            engine.ResolveResult,
            "Call to settle a memory a merge left in conflict: take ours, theirs, "
            "both, or a text of your own.",
        ),
        _call(
            "find",
            code.FindRequest,
            FindResult,
            "Call before reading whole files, to find where something is in the "
            "indexed source code (`ctx code index` builds it) by meaning, words, "
            "identifiers or paths. Returns chunks as file and line range with a one-"
            "line summary; full=true adds the code.",
        ),
        _call(
            "symbols",
            code.SymbolsRequest,
            SymbolList,
            "Call to list the indexed code's definitions (classes, functions, "
            "methods, sections) with file and lines, optionally by kind and path "
            "glob.",
        ),
        _call(
            "status",
            history.StatusRequest,
            engine.StoreStatus,
            "Call to see a branch's head, its memory and token counts and its "
            "unresolved conflicts.",
        ),
    )
}
"""The MCP tools, by name (the HTTP API serves these and ``graph``)."""

CALLS.update(
    (c.name, c)
    for c in (
        Call(
            "dream_run",
            dc.DreamRunRequest,
            CycleReport,
            dc.dream_run,
            "Call to have Dream examine a branch's memories (a budget of them, those "
            "due first) and propose fixes (duplicates, updates, links, "
            "contradictions, recurrences, tiers) on dream/<branch>. Nothing reaches "
            "the branch until reviewed and merged.",
            writes=True,
        ),
        Call(
            "dream_status",
            dc.DreamStatusRequest,
            DreamStatus,
            dc.dream_status,
            "Call to see where Dream stands on a branch: memories waiting to be "
            "examined, back-off, the last cycle, and its proposals by status.",
        ),
        Call(
            "dream_review",
            dc.DreamReviewRequest,
            DreamReview,
            dc.dream_review,
            "Call before accepting or rejecting Dream's proposals: lists them "
            "(waiting ones by default) with their evidence and the links, tags and "
            "hidden memories each would bring, and how many merging them all "
            "would hide from recall.",
        ),
        Call(
            "dream_accept",
            dc.DreamAcceptRequest,
            engine.ReviewResult,
            dc.dream_accept,
            "Call to accept Dream's proposals by id (or all waiting ones) after "
            "reading them with dream_review; dream_merge then applies them.",
            writes=True,
        ),
        Call(
            "dream_reject",
            dc.DreamRejectRequest,
            engine.ReviewResult,
            dc.dream_reject,
            "Call to reject Dream's proposals by id, with a reason: a rejected "
            "proposal is never made again.",
            writes=True,
        ),
        Call(
            "dream_merge",
            dc.DreamMergeRequest,
            engine.DreamMergeResult,
            dc.dream_merge,
            "Call to apply the accepted Dream proposals to their branch in one merge "
            "commit (undo takes it back). A proposal whose memories changed since is "
            "checked again and left out if it no longer holds.",
            writes=True,
        ),
    )
)
"""Dream's calls, tools and routes like the others (:mod:`.dream_calls`)."""

GRAPH = Call(
    "graph",
    links.GraphRequest,
    engine.Neighbourhood,
    links.graph,
    "A memory's neighbourhood in the link graph: nodes (id, title, kind, "
    "degree) and links, within a node limit; what the limit left out is "
    "counted.",
)
"""The HTTP API's graph call (not a tool: for drawing, not for a model)."""

KEYS = {
    c.name: c
    for c in (
        Call("keys", admin.KeysRequest, list[ApiKey], admin.keys, "List the keys."),
        Call(
            "key_create",
            admin.KeyCreateRequest,
            CreatedKey,
            admin.key_create,
            "Make a key; its token is in the answer, this once.",
            writes=True,
        ),
        Call(
            "key_revoke",
            admin.KeyRevokeRequest,
            RevokedKey,
            admin.key_revoke,
            "Revoke a key: its token stops working at once.",
            writes=True,
        ),
    )
}
"""The HTTP API's key management (admin keys only; not tools)."""


TOOL_SETS: dict[str, tuple[str, ...]] = {
    "default": (
        "recall",
        "search",
        "get",
        "remember",
        "edit",
        "forget",
        "supersede",
        "link",
        "feedback",
        "summarize_session",
    ),
    "memory": (
        "ls",
        "query",
        "prime",
        "unlink",
        "summarize",
        "trace",
        "related",
        "expand",
        "compose",
    ),
    "history": ("log", "blame", "diff", "status"),
    "branches": ("branches", "branch", "merge", "resolve"),
    "code": ("find", "symbols"),
    "dream": tuple(name for name in CALLS if name.startswith("dream_")),
}
"""The tools an MCP server lists, by set: ``default`` is what an agent
needs in every session (recall before acting, remember, read, correct,
link, summarize the session); the others are listed on demand (``ctx mcp
--tools default,history``, ``--tools all``, or ``[mcp] tools``), since
every listed tool costs each session its tokens. Each call is in one set."""


def tool_names(spec: str) -> tuple[str, ...]:
    """Returns the tools ``spec`` lists, in the table's order.

    ``spec`` is a comma-separated list of sets (:data:`TOOL_SETS`), ``all``
    and tool names, e.g. ``default,history,find``.

    Raises:
        InvalidInputError: A name is neither a set nor a tool, or none is given.
    """
    wanted: set[str] = set()
    for raw in spec.split(","):
        name = raw.strip()
        if name == "all":
            wanted.update(CALLS)
        elif name in TOOL_SETS:
            wanted.update(TOOL_SETS[name])
        elif name in CALLS:
            wanted.add(name)
        else:
            raise InvalidInputError(
                f"Unknown tool or tool set {name!r}.",
                hint="Sets: all, " + ", ".join(TOOL_SETS) + "; or tool names.",
            )
    return tuple(name for name in CALLS if name in wanted)


def decode(call: Call, arguments: Mapping[str, Any]) -> msgspec.Struct:
    """Returns ``arguments`` as the call's request.

    Raises:
        InvalidInputError: A field is unknown, missing, of the wrong type or
            out of range.
    """
    return converted(dict(arguments), call.request, call.name)


def invoke(
    ws: Workspace, caller: Caller, call: Call, arguments: Mapping[str, Any]
) -> Any:
    """Decodes ``arguments`` and makes ``call``; returns its answer.

    Raises:
        CtxError: The arguments are invalid, or the call failed (nothing was
            written then). Said to an agent: the command line's options it
            names are the call's fields (:func:`_in_fields`).
    """
    try:
        return call.handler(ws, caller, decode(call, arguments))
    except CtxError as exc:
        _in_fields(exc, call)
        raise


_OPTION = re.compile(r"`?--([a-z][a-z0-9-]*)`?")


def _in_fields(exc: CtxError, call: Call) -> None:
    """Names ``exc``'s command-line options as ``call``'s fields, in place.

    The engine words its errors for the command line ("Give either --take
    or --body."); an agent calling over MCP or HTTP has fields instead. An
    option that is the call's field (``--take``: ``take``) is named so; a
    part of a hint (parts end at "; ") naming one the call has no field for
    (``--allow-secret``) is left out, as no field does what it says.
    """
    fields = {f.encode_name for f in msgspec.structs.fields(call.request)}

    def named(text: str) -> tuple[str, bool]:
        missing = False

        def field(match: re.Match[str]) -> str:
            nonlocal missing
            name = match.group(1).replace("-", "_")
            if name in fields:
                return f"`{name}`"
            missing = True
            return match.group()

        return _OPTION.sub(field, text), missing

    exc.message = named(exc.message)[0]
    exc.args = (exc.message,)
    if exc.hint is not None:
        # Each part of the hint on its own: "`ctx dream review --status
        # accepted` shows them; confirm with --yes" keeps its second part.
        kept = []
        for part in exc.hint.split("; "):
            said, missing = named(part)
            if not missing:
                kept.append(said)
        hint = "; ".join(kept)
        if hint and hint[0].islower() and not exc.hint[:1].islower():
            hint = hint[0].upper() + hint[1:]
        if hint and exc.hint.endswith(".") and not hint.endswith("."):
            hint += "."
        exc.hint = hint or None


def structured(value: Any) -> Any:
    """Returns ``value`` as a structured result: a list as ``{"result": [...]}``.

    That is the shape the MCP tools' output schemas describe
    (:func:`ctx.porcelain.agents.schemas.output_schema`). A field that holds
    its default is left out, as the schema allows (it is not required, and
    its ``default`` says what it holds): a recall's hit is then its dozen
    fields that say something, not eighteen, which is fewer tokens for a
    host that shows the structured answer, and fewer steps for a client
    that checks it against the schema (the SDK's does).
    """
    builtins = _lean(value)
    return {"result": builtins} if isinstance(builtins, list) else builtins


_PLAIN = (str, int, float, bool, type(None))


def _lean(value: Any) -> Any:
    """Returns ``value`` as ``msgspec.to_builtins`` does, less default fields.

    Walked with a stack of its own, not by recursion: a trace's tree may be
    deeper than Python's stack (``to_builtins`` goes 500 levels down).
    """
    top: list[Any] = [None]
    todo: list[tuple[Any, Any, Any]] = [(value, top, 0)]  # value, into, at
    while todo:
        item, into, at = todo.pop()
        if isinstance(item, _PLAIN):
            into[at] = item
        elif isinstance(item, msgspec.Struct):
            config = type(item).__struct_config__
            if config.array_like:  # a list, each field in its place
                into[at] = msgspec.to_builtins(item)
                continue
            out: dict[Any, Any] = {}
            if config.tag_field is not None:
                out[config.tag_field] = config.tag
            for name, key, default in _fields_of(type(item)):
                field = getattr(item, name)
                if default is _NO_DEFAULT or field != default:
                    out[key] = None  # its place, in the fields' order
                    todo.append((field, out, key))
            into[at] = out
        elif isinstance(item, (list, tuple)):
            into[at] = items = [None] * len(item)
            todo.extend((v, items, n) for n, v in enumerate(item))
        elif isinstance(item, dict):
            entries: dict[Any, Any] = {}
            into[at] = entries
            for key, v in item.items():
                plain = key if isinstance(key, _PLAIN) else msgspec.to_builtins(key)
                entries[plain] = None
                todo.append((v, entries, plain))
        else:
            into[at] = msgspec.to_builtins(item)
    return top[0]


_NO_DEFAULT = object()


@functools.cache
def _fields_of(kind: type[msgspec.Struct]) -> tuple[tuple[str, str, Any], ...]:
    """Per field of a Struct type: its name, its name encoded, its default."""
    out = []
    for field in msgspec.structs.fields(kind):
        if field.default is not msgspec.NODEFAULT:
            default = field.default
        elif field.default_factory is not msgspec.NODEFAULT:
            default = field.default_factory()
        else:
            default = _NO_DEFAULT
        out.append((field.name, field.encode_name, default))
    return tuple(out)
