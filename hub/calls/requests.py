"""What an agent may ask, one Struct per call.

The MCP server's input schemas, the HTTP API's request bodies and its
OpenAPI document are generated from these, and every call's arguments are
decoded into one (unknown fields refused), so the three always agree.

A field that takes one of a closed set of values (a kind, a link type, a
format...) is typed with the set the engine or the hub checks it against
(:func:`one_of`), so its schema's ``enum`` is that set: a schema cannot
offer a value the call refuses, nor leave one out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import msgspec
from msgspec import Meta

from ctx.engine import FORMATS, KINDS, LINK_TYPES, LISTING_ORDERS, PREFERENCES, TAKES
from ctx.hub.code.languages import LANGUAGES, SYMBOL_KINDS

__all__ = [
    "BlameRequest",
    "BranchRequest",
    "BranchesRequest",
    "ComposeRequest",
    "DiffRequest",
    "EditRequest",
    "ExpandRequest",
    "FeedbackRequest",
    "FindRequest",
    "ForgetRequest",
    "GetRequest",
    "GraphRequest",
    "KeyCreateRequest",
    "KeyRevokeRequest",
    "KeysRequest",
    "LinkRequest",
    "LogRequest",
    "LsRequest",
    "MergeRequest",
    "PrimeRequest",
    "QueryRequest",
    "RecallRequest",
    "RelatedRequest",
    "RememberRequest",
    "ResolveRequest",
    "SearchRequest",
    "StatusRequest",
    "SummarizeRequest",
    "SummarizeSessionRequest",
    "SupersedeRequest",
    "SymbolsRequest",
    "TraceRequest",
    "UnlinkRequest",
    "one_of",
]


def one_of(choices: tuple[str, ...]) -> Any:
    """Returns the type whose values are ``choices``: a Literal, an ``enum``.

    Its JSON schema lists them, and msgspec refuses any other value.
    """
    return cast(Any, Literal)[choices]


if TYPE_CHECKING:  # type checkers read each as the string it is
    Kind = str
    LinkType = str
    Format = str
    Preference = str
    Take = str
    Language = str
    SymbolKind = str
    Order = str
else:
    Kind = one_of(KINDS)
    LinkType = one_of(LINK_TYPES)
    Format = one_of(FORMATS)
    Preference = one_of(PREFERENCES)
    Take = one_of(TAKES)
    Language = one_of(LANGUAGES)
    SymbolKind = one_of(SYMBOL_KINDS)
    Order = one_of(LISTING_ORDERS)

Id = Annotated[
    str,
    Meta(
        description="A memory's id, whole or 6+ characters of its start or end.",
        # An id and nothing else: never ID@REV, whose revision would pass
        # round the scope check of the branch and revision fields.
        pattern="^[0-9A-Za-z]{6,26}$",
    ),
]
Branch = Annotated[
    str | None,
    Meta(
        description=(
            "The branch (default: the server's branch, then HEAD; in a store "
            "that follows the code, the code branch of the server's folder)."
        )
    ),
]
Tags = Annotated[
    tuple[str, ...],
    Meta(description='Tags as "namespace:value", e.g. "project:api".'),
]


class _Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The fields every call shares."""

    branch: Branch = None


class _Write(_Request, kw_only=True, forbid_unknown_fields=True):
    """The intent every write carries (the commit's trailers)."""

    agent: Annotated[
        str | None,
        Meta(description="Who writes (default: CTX_AGENT, then the client's name)."),
    ] = None
    confidence: (
        Annotated[float, Meta(ge=0.0, le=1.0, description="How sure, 0 to 1.")] | None
    ) = None
    reason: Annotated[
        str | None, Meta(description="Why this write is made, in a sentence.")
    ] = None


class RememberRequest(_Write, kw_only=True, forbid_unknown_fields=True):
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


class ForgetRequest(_Write, kw_only=True, forbid_unknown_fields=True):
    """``forget``: delete a memory (history keeps it)."""

    id: Id
    reason: Annotated[str, Meta(description="Why it is forgotten.", min_length=1)]


class EditRequest(_Write, kw_only=True, forbid_unknown_fields=True):
    """``edit``: change a memory's text, title, kind or tags."""

    id: Id
    body: Annotated[str | None, Meta(description="The new text.")] = None
    title: Annotated[str | None, Meta(description="The new title.")] = None
    kind: Annotated[Kind | None, Meta(description="The new kind.")] = None
    add_tags: Tags = ()
    remove_tags: Tags = ()


class GetRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """``get``: one memory, as it is now or at a revision."""

    id: Id
    revision: Annotated[
        str | None,
        Meta(description="A revision (commit id, branch~N) to read it at."),
    ] = None


class LsRequest(_Request, kw_only=True, forbid_unknown_fields=True):
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


class QueryRequest(_Request, kw_only=True, forbid_unknown_fields=True):
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


class PrimeRequest(_Write, kw_only=True, forbid_unknown_fields=True):
    """``prime``: store a markdown document as one memory per section."""

    text: Annotated[str, Meta(description="The document's markdown.", min_length=1)]
    source: Annotated[
        str, Meta(description="A short name for the document, e.g. 'readme'.")
    ]
    file_name: Annotated[
        str, Meta(description="The document's file name, e.g. 'README.md'.")
    ] = "document.md"
    pin: Annotated[bool, Meta(description="Pin every section.")] = False


class RecallRequest(_Request, kw_only=True, forbid_unknown_fields=True):
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
        Meta(description="Ids of the memories of that recall that were used."),
    ]


class SearchRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """``search``: the memories that best match some words (no budget)."""

    query: Annotated[str, Meta(description="The words to find.", min_length=1)]
    limit: Annotated[int, Meta(ge=1, le=1000, description="Hits at most.")] = 10
    kind: Annotated[Kind | None, Meta(description="Only this kind.")] = None
    tag: Annotated[str | None, Meta(description="Only memories with this tag.")] = None
    context: Annotated[str | None, Meta(description="Only this context.")] = None
    explain: Annotated[bool, Meta(description="Say why each hit matched.")] = False


class LinkRequest(_Write, kw_only=True, forbid_unknown_fields=True):
    """``link``: a typed link from one memory to another."""

    source: Id
    target: Id
    type: Annotated[LinkType, Meta(description="The link's type.")] = "RELATES_TO"


class UnlinkRequest(_Write, kw_only=True, forbid_unknown_fields=True):
    """``unlink``: remove a typed link."""

    source: Id
    target: Id
    type: Annotated[LinkType, Meta(description="The link's type.")] = "RELATES_TO"


class SupersedeRequest(_Write, kw_only=True, forbid_unknown_fields=True):
    """``supersede``: mark an old memory as replaced by a new one."""

    old: Id
    new: Id


class SummarizeRequest(_Write, kw_only=True, forbid_unknown_fields=True):
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


class SummarizeSessionRequest(_Write, kw_only=True, forbid_unknown_fields=True):
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


class TraceRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """``trace``: where a memory came from (its DERIVED_FROM tree)."""

    id: Id
    reverse: Annotated[bool, Meta(description="What was derived from it instead.")] = (
        False
    )
    depth: Annotated[int, Meta(ge=1, le=50, description="Levels at most.")] | None = (
        None
    )


class RelatedRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """``related``: memories within a few links of one."""

    id: Id
    depth: Annotated[int, Meta(ge=1, le=3, description="Links away, 1 to 3.")] = 2
    types: Annotated[
        tuple[LinkType, ...], Meta(description="Only these link types.")
    ] = ()


class ExpandRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """``expand``: the memories a summary was derived from."""

    id: Id


class ComposeRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """``compose``: the context to start work with, within a budget."""

    budget: Annotated[int, Meta(ge=1, description="Tokens at most.")] = 2000
    where: Annotated[
        str | None, Meta(description="Only memories this query selects.")
    ] = None
    format: Annotated[Format, Meta(description="How it is written.")] = "markdown"


class LogRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """``log``: the commits of a branch, of a memory or of a path."""

    target: Annotated[str | None, Meta(description="A memory id or a path prefix.")] = (
        None
    )
    limit: Annotated[int, Meta(ge=1, le=10_000, description="Commits at most.")] = 20


class BlameRequest(_Request, kw_only=True, forbid_unknown_fields=True):
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


class BranchesRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``branches``: every branch with its head."""


class BranchRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``branch``: make a branch."""

    name: Annotated[str, Meta(description="The new branch, e.g. 'agent/claude'.")]
    start: Annotated[
        str | None, Meta(description="Where it starts (default: HEAD).")
    ] = None


class MergeRequest(_Write, kw_only=True, forbid_unknown_fields=True):
    """``merge``: merge a branch into another (conflicts kept as data)."""

    source: Annotated[str, Meta(description="The branch merged in.")]
    into: Annotated[
        str | None, Meta(description="The branch merged into (default: HEAD).")
    ] = None
    prefer: Annotated[Preference | None, Meta(description="How to settle clashes.")] = (
        None
    )
    no_ff: Annotated[bool, Meta(description="Always make a merge commit.")] = False


class ResolveRequest(_Write, kw_only=True, forbid_unknown_fields=True):
    """``resolve``: settle a memory left in conflict by a merge."""

    id: Id
    take: Annotated[Take | None, Meta(description="Which side to keep.")] = None
    body: Annotated[str | None, Meta(description="A text of your own.")] = None


class StatusRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """``status``: the branch, its counts and its conflicts."""


class GraphRequest(_Request, kw_only=True, forbid_unknown_fields=True):
    """The neighbourhood of a memory in the link graph, within a limit."""

    id: Id
    hops: Annotated[int, Meta(ge=1, le=3, description="Links away, 1 to 3.")] = 1
    limit: Annotated[
        int, Meta(ge=1, le=500, description="Nodes at most (the rest counted).")
    ] = 50
    types: Annotated[
        tuple[LinkType, ...], Meta(description="Only these link types.")
    ] = ()


class KeysRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """List the keys (admin keys only)."""


class KeyCreateRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Make a key (admin keys only); its token is in the answer, once."""

    label: Annotated[str, Meta(description="Who the key is for.")]
    read: Annotated[
        tuple[str, ...], Meta(description="Branch patterns it may read, e.g. 'main'.")
    ] = ()
    write: Annotated[
        tuple[str, ...],
        Meta(description="Branch patterns it may write (and read), e.g. 'agent/*'."),
    ] = ()
    admin: Annotated[bool, Meta(description="It may manage keys.")] = False


class KeyRevokeRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Revoke a key (admin keys only)."""

    id: Annotated[str, Meta(description="The key's id or label.", min_length=1)]


class FindRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``find``: where something is in the indexed code (``ctx find``)."""

    query: Annotated[
        str,
        Meta(
            description="What to find, in words or identifiers, e.g. "
            "'where are retries handled'.",
            min_length=1,
        ),
    ]
    limit: Annotated[int, Meta(ge=1, le=100, description="Hits at most.")] = 10
    language: Annotated[Language | None, Meta(description="Only this language.")] = None
    path: Annotated[
        str | None,
        Meta(description="Only files matching this glob, e.g. 'src/**' or '*.go'."),
    ] = None
    full: Annotated[bool, Meta(description="Give each hit its code.")] = False


class SymbolsRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``symbols``: the indexed definitions (``ctx symbols``)."""

    kind: Annotated[SymbolKind | None, Meta(description="Only this kind.")] = None
    path: Annotated[
        str | None, Meta(description="Only files matching this glob, e.g. '*.py'.")
    ] = None
