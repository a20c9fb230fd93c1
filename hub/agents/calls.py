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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from ctx import engine
from ctx.engine import InvalidInputError
from ctx.hub.agents import dream_calls as dc
from ctx.hub.agents import handlers as h
from ctx.hub.agents import requests as rq
from ctx.hub.agents.access import Caller
from ctx.hub.code.results import FindResult, SymbolList
from ctx.hub.dream import CycleReport, DreamStatus, ProposalView
from ctx.hub.keys import ApiKey, CreatedKey, RevokedKey
from ctx.hub.retrieval.feedback import FeedbackResult
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.workspace import Workspace

__all__ = [
    "CALLS",
    "GRAPH",
    "KEYS",
    "Call",
    "decode",
    "invoke",
    "schema_of",
    "structured",
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
    handler = h.HANDLERS[name]
    writes = issubclass(request, rq._Write) or name == "branch"
    return Call(name, request, answer, handler, description, writes)


CALLS: dict[str, Call] = {
    c.name: c
    for c in (
        _call(
            "remember",
            rq.RememberRequest,
            engine.RememberResult,
            "Store one memory (a fact, decision, pattern, observation...) as one "
            "commit. Call it when you learn something worth keeping beyond this "
            "conversation. With upsert=true, the live memory of the same kind "
            "and title is updated instead. Returns its id; an identical live "
            "memory is not written twice (existing=true).",
        ),
        _call(
            "forget",
            rq.ForgetRequest,
            engine.ForgetResult,
            "Delete a memory that is wrong or no longer useful; history keeps "
            "it. A reason is required. Returns the commit.",
        ),
        _call(
            "edit",
            rq.EditRequest,
            engine.EditResult,
            "Change a memory's text, title, kind or tags (only the fields "
            "given). Prefer it to a new memory when a fact changed. Returns "
            "the commit.",
        ),
        _call(
            "get",
            rq.GetRequest,
            engine.ShownMemory,
            "Read one memory whole, by id, now or at a revision. Returns the "
            "memory with its path, and its conflict if a merge left one.",
        ),
        _call(
            "ls",
            rq.LsRequest,
            list[engine.ListedMemory],
            "List memories under a path prefix (memory/, pinned/, primed/): "
            "id, kind and headline of each. For finding by meaning, use recall.",
        ),
        _call(
            "query",
            rq.QueryRequest,
            list[engine.SelectedMemory],
            "Select memories with the query language (kind:, tag:, tier:, "
            "created:>7d, AND/OR/NOT). Returns id, kind, title, tier and size.",
        ),
        _call(
            "prime",
            rq.PrimeRequest,
            engine.PrimeResult,
            "Store a markdown document (a README, a design note) as one memory "
            "per section; priming it again updates only changed sections.",
        ),
        _call(
            "recall",
            rq.RecallRequest,
            RecallResult,
            "Recall what matters for a question before you answer or act: the "
            "pinned memories and the most relevant ones, ranked by meaning, "
            "words and recency, packed into a token budget. The text is ready "
            "to put in a prompt; the structured result has each hit and the "
            "token figures.",
        ),
        _call(
            "feedback",
            rq.FeedbackRequest,
            FeedbackResult,
            "After a recall, say which of its memories you used (its recall_id "
            "and their ids): recall learns from it which channels and how "
            "large a budget serve you.",
        ),
        _call(
            "search",
            rq.SearchRequest,
            RecallResult,
            "Find the memories that best match some words, best first, with "
            "optional kind, tag and context filters (no budget, no pinned).",
        ),
        _call(
            "link",
            rq.LinkRequest,
            engine.LinkResult,
            "Link one memory to another with a typed link (RELATES_TO, "
            "DEPENDS_ON, CONTRADICTS, ...). Returns the commit.",
        ),
        _call(
            "unlink",
            rq.UnlinkRequest,
            engine.UnlinkResult,
            "Remove a typed link between two memories.",
        ),
        _call(
            "supersede",
            rq.SupersedeRequest,
            engine.SupersedeResult,
            "Mark an old memory as replaced by a newer one: recall then leaves "
            "the old one out. Use it when a fact or decision changed.",
        ),
        _call(
            "summarize",
            rq.SummarizeRequest,
            engine.SummarizeResult,
            "Write one summary of several memories, linked to each "
            "(DERIVED_FROM); archive=true moves them off-context.",
        ),
        _call(
            "summarize_session",
            rq.SummarizeSessionRequest,
            engine.SessionSummaryResult,
            "At the end of a working session, write what it did (summary), what "
            "it decided (decisions, one line each) and anything else worth "
            "keeping (details) as memories under sessions/<id>/, in one commit. "
            "The session is this connection's unless named; calling it again "
            "updates them. Returns their paths and ids.",
        ),
        _call(
            "trace",
            rq.TraceRequest,
            engine.TraceNode,
            "Show where a memory came from: the tree of memories it was "
            "derived from or depends on (reverse=true: what came from it).",
        ),
        _call(
            "related",
            rq.RelatedRequest,
            list[engine.RelatedHit],
            "List the memories within 1-3 links of one, nearest first, with "
            "the link that reached each.",
        ),
        _call(
            "expand",
            rq.ExpandRequest,
            list[engine.MemoryRecord],
            "Read the memories a summary was derived from, whole.",
        ),
        _call(
            "compose",
            rq.ComposeRequest,
            engine.Composition,
            "Compose the context to start work with: pinned, reference and "
            "working memories within a budget, as markdown (or xml, json, "
            "text). Call it at the start of a task.",
        ),
        _call(
            "log",
            rq.LogRequest,
            list[engine.LogEntry],
            "List commits newest first, of a branch, a memory or a path: who "
            "wrote what, why and how sure.",
        ),
        _call(
            "blame",
            rq.BlameRequest,
            list[engine.LogEntry] | list[engine.BlameLine],
            "Name the commits that made a memory what it is (lines=true: the "
            "commit of each line of its text).",
        ),
        _call(
            "diff",
            rq.DiffRequest,
            engine.Diff,
            "Compare two revisions memory by memory: added, changed (field by "
            "field) and removed. A...B shows what B did since it split from A.",
        ),
        _call(
            "branches",
            rq.BranchesRequest,
            list[engine.BranchInfo],
            "List the branches with their head commits.",
        ),
        _call(
            "branch",
            rq.BranchRequest,
            engine.BranchResult,
            "Make a branch (e.g. agent/<name>) to work on without touching "
            "main until a review merges it.",
        ),
        _call(
            "merge",
            rq.MergeRequest,
            engine.MergeResult,
            "Merge a branch into another. Clashes that cannot be settled are "
            "kept as conflicts (see status, resolve), never lost.",
        ),
        _call(
            "resolve",
            rq.ResolveRequest,
            engine.ResolveResult,
            "Settle a memory a merge left in conflict: take ours, theirs, "
            "both, or a text of your own.",
        ),
        _call(
            "find",
            rq.FindRequest,
            FindResult,
            "Find where something is in the indexed source code (`ctx code "
            "index` builds the index): by meaning, words, identifiers, symbol "
            "names and paths. Returns chunks (a function, a class, a config "
            "block) as file and line range with a one-line summary; full=true "
            "adds the code. Call it before reading whole files.",
        ),
        _call(
            "symbols",
            rq.SymbolsRequest,
            SymbolList,
            "List the indexed code's definitions (classes, functions, "
            "methods, sections) with file and lines, optionally by kind and "
            "path glob.",
        ),
        _call(
            "status",
            rq.StatusRequest,
            engine.StoreStatus,
            "Report a branch's head, its memory and token counts and its "
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
            "Run one Dream cycle: examine memories of a branch (a budget of "
            "them, those due first) and propose fixes (duplicates, updates, "
            "links, contradictions, recurrences, tiers) on dream/<branch>; "
            "nothing reaches the branch until reviewed and merged. Returns "
            "what it examined and proposed.",
            writes=True,
        ),
        Call(
            "dream_status",
            dc.DreamStatusRequest,
            DreamStatus,
            dc.dream_status,
            "Report where Dream stands on a branch: memories waiting to be "
            "examined, back-off, the last cycle, and its proposals by status.",
        ),
        Call(
            "dream_review",
            dc.DreamReviewRequest,
            list[ProposalView],
            dc.dream_review,
            "List Dream's proposals (waiting ones by default) with the evidence "
            "(reason, confidence, the memories and whether they changed since) "
            "and the links and tags each would add. Accept or reject them next.",
        ),
        Call(
            "dream_accept",
            dc.DreamAcceptRequest,
            engine.ReviewResult,
            dc.dream_accept,
            "Accept Dream's proposals by id (or all waiting ones) after reading "
            "them with dream_review; dream_merge then applies them.",
            writes=True,
        ),
        Call(
            "dream_reject",
            dc.DreamRejectRequest,
            engine.ReviewResult,
            dc.dream_reject,
            "Reject Dream's proposals by id, with a reason: a rejected proposal "
            "is never made again.",
            writes=True,
        ),
        Call(
            "dream_merge",
            dc.DreamMergeRequest,
            engine.DreamMergeResult,
            dc.dream_merge,
            "Merge the accepted Dream proposals into the branch they were made "
            "for, in one merge commit (undo takes it back). A proposal whose "
            "memories changed since is checked again and left out if it no "
            "longer holds.",
            writes=True,
        ),
    )
)
"""Dream's calls, tools and routes like the others (:mod:`.dream_calls`)."""

GRAPH = Call(
    "graph",
    rq.GraphRequest,
    engine.Neighbourhood,
    h.graph,
    "A memory's neighbourhood in the link graph: nodes (id, title, kind, "
    "degree) and links, within a node limit; what the limit left out is "
    "counted.",
)
"""The HTTP API's graph call (not a tool: for drawing, not for a model)."""

KEYS = {
    c.name: c
    for c in (
        Call("keys", rq.KeysRequest, list[ApiKey], h.keys, "List the keys."),
        Call(
            "key_create",
            rq.KeyCreateRequest,
            CreatedKey,
            h.key_create,
            "Make a key; its token is in the answer, this once.",
            writes=True,
        ),
        Call(
            "key_revoke",
            rq.KeyRevokeRequest,
            RevokedKey,
            h.key_revoke,
            "Revoke a key: its token stops working at once.",
            writes=True,
        ),
    )
}
"""The HTTP API's key management (admin keys only; not tools)."""


def decode(call: Call, arguments: Mapping[str, Any]) -> msgspec.Struct:
    """Returns ``arguments`` as the call's request.

    Raises:
        InvalidInputError: A field is unknown, missing, of the wrong type or
            out of range.
    """
    try:
        return msgspec.convert(dict(arguments), call.request, strict=False)
    except msgspec.ValidationError as exc:
        raise InvalidInputError(
            f"Invalid arguments for {call.name}: {exc}.",
            hint="The call's input schema lists its arguments.",
        ) from None


def invoke(
    ws: Workspace, caller: Caller, call: Call, arguments: Mapping[str, Any]
) -> Any:
    """Decodes ``arguments`` and makes ``call``; returns its answer.

    Raises:
        CtxError: The arguments are invalid, or the call failed (nothing was
            written then).
    """
    return call.handler(ws, caller, decode(call, arguments))


def schema_of(answer: Any) -> dict[str, Any]:
    """Returns the JSON schema of ``answer`` as an object at its root.

    A list is wrapped as ``{"result": [...]}`` (an MCP tool's structured
    result is an object), and the root's definition is inlined.
    """
    if is_union_of_lists(answer):  # msgspec has no such union: one per list
        parts, defs = [], {}
        for part in answer.__args__:
            one = msgspec.json.schema(part)
            defs.update(one.pop("$defs", {}))
            parts.append(one)
        root: dict[str, Any] = {
            "type": "object",
            "properties": {"result": {"anyOf": parts}},
            "required": ["result"],
        }
    elif getattr(answer, "__origin__", None) is list:
        inner = msgspec.json.schema(answer)
        defs = inner.pop("$defs", {})
        root = {
            "type": "object",
            "properties": {"result": inner},
            "required": ["result"],
        }
    else:
        full = msgspec.json.schema(answer)
        defs = full.pop("$defs", {})
        name = full["$ref"].rsplit("/", 1)[1]
        root = dict(defs[name])  # kept in $defs too: a Struct may hold itself
    if defs:
        root["$defs"] = defs
    return root


def is_union_of_lists(answer: Any) -> bool:
    """Returns whether ``answer`` is a union of list types (msgspec has none)."""
    args = getattr(answer, "__args__", ())
    return bool(args) and all(getattr(a, "__origin__", None) is list for a in args)


def structured(value: Any) -> Any:
    """Returns ``value`` as a structured result (a list wrapped as above)."""
    builtins = msgspec.to_builtins(value)
    return {"result": builtins} if isinstance(builtins, list) else builtins
