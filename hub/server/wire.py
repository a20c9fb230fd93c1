"""The running hub's protocol: where its socket is, and what goes over it.

A user's hub (``ctx hub start``, or started by a recall) keeps the indexes of
the stores it is asked about and their embedder loaded, and answers recall
and search over a Unix socket, so that ``ctx recall`` pays for neither (a
fresh process spends ~0.4 s importing and loading them). One request per
connection: the client sends one request as JSON and shuts its side; the hub
answers with lines of JSON, each a reply, and closes. Every line but the last
is a :class:`ProgressReply` (a reindex says how far it is); the last holds
what was asked or a :class:`FailureReply`. Light to import (msgspec only):
the command line uses it before deciding to load the hub.

Each operation has one request Struct and one reply Struct; a request names
the reply it is answered with (``Ask[R]``). Requests are a tagged union on
the wire (:data:`AnyAsk`, tagged by ``op``), decoded in one step; so are
replies (:data:`AnyReply`, tagged by ``reply``):

- ``recall``: :class:`RecallAsk` -> :class:`RecallReply`
- ``search``: :class:`SearchAsk` -> :class:`SearchReply`
- ``index_status``: :class:`IndexStatusAsk` -> :class:`IndexStatusReply`
- ``reindex``: :class:`ReindexAsk` -> :class:`ReindexReply`, after
  :class:`ProgressReply` lines
- ``learn``: :class:`LearnAsk` -> :class:`LearnReply`
- ``code_find``: :class:`CodeFindAsk` -> :class:`CodeFindReply`
- ``code_status``: :class:`CodeStatusAsk` -> :class:`CodeStatusReply`
- ``hook``: :class:`HookAsk` -> :class:`HookReply` (``ctx hook``, relayed),
  after one :class:`ProgressReply` (0 of 1) once the hub takes it up
- ``ping``: :class:`PingAsk` -> :class:`PingReply`
- ``stop``: :class:`StopAsk` -> :class:`StopReply`

Any of them may be answered with a :class:`FailureReply` instead.
A request about a store names it (:attr:`StoreAsk.store`, the store folder's
resolved path); ``ping`` and ``stop`` name none: they are about the hub; nor
does ``hook``, whose store the hub finds as the hook's process would.

The socket lives in the user's private folder (:mod:`.private`), one for
every store. The client believes a reply only from a server run by the same
user (``SO_PEERCRED``), naming the store it asked about (:attr:`Reply.store`)
and of the type its request is answered with.
"""

from __future__ import annotations

from datetime import datetime
from typing import Generic, TypeVar

import msgspec

from ctx.hub.code.results import CodeStatus, FindResult
from ctx.hub.retrieval.index.reports import IndexStatus, ReindexReport
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.retrieval.tuning import LearnReport

__all__ = [
    "AnyAsk",
    "AnyReply",
    "AnyStoreAsk",
    "Ask",
    "CodeFindAsk",
    "CodeFindReply",
    "CodeStatusAsk",
    "CodeStatusReply",
    "Failure",
    "FailureReply",
    "HookAsk",
    "HookReply",
    "HubReport",
    "HubStarted",
    "HubStatus",
    "HubStopped",
    "IndexStatusAsk",
    "IndexStatusReply",
    "LearnAsk",
    "LearnReply",
    "OpenStore",
    "PingAsk",
    "PingReply",
    "ProgressReply",
    "RecallAsk",
    "RecallReply",
    "ReindexAsk",
    "ReindexReply",
    "Reply",
    "SearchAsk",
    "SearchReply",
    "StopAsk",
    "StopReply",
    "StoreAsk",
]


class OpenStore(msgspec.Struct, frozen=True, kw_only=True):
    """A store the hub holds open: its indexes loaded, ready to answer.

    ``pinned``: the store of the process that hosts the hub (``ctx serve``,
    ``ctx mcp``), never dropped.
    """

    store: str
    opened: datetime
    last_used: datetime
    pinned: bool = False


class HubReport(msgspec.Struct, frozen=True, kw_only=True):
    """What the hub says of itself when pinged.

    ``rss_bytes``: its resident memory, where the system says;
    ``memory_bound``: the bytes above which it drops idle stores;
    ``embedders``: how many embedders it holds (one per configuration, shared
    by every store that names it).
    """

    pid: int
    autostarted: bool
    started: datetime
    stores: tuple[OpenStore, ...]
    rss_bytes: int | None
    memory_bound: int
    embedders: int


class Failure(msgspec.Struct, frozen=True, kw_only=True):
    """A ctx error raised in the hub, to be raised again by the client."""

    type: str
    message: str
    hint: str | None
    exit_code: int


# The replies.


class Reply(msgspec.Struct, frozen=True, kw_only=True, tag_field="reply"):
    """One line of the hub's answer.

    Every line names the ``store`` its request named (``""``: a request
    about the hub, or one the hub could not read); a client ignores a line
    that names another. ``pid``: the process that answered.
    """

    store: str = ""
    pid: int = 0


class RecallReply(Reply, frozen=True, kw_only=True, tag="recall"):
    """The answer to a :class:`RecallAsk`."""

    result: RecallResult


class SearchReply(Reply, frozen=True, kw_only=True, tag="search"):
    """The answer to a :class:`SearchAsk`."""

    result: RecallResult


class IndexStatusReply(Reply, frozen=True, kw_only=True, tag="index_status"):
    """The answer to an :class:`IndexStatusAsk`."""

    status: IndexStatus


class ReindexReply(Reply, frozen=True, kw_only=True, tag="reindex"):
    """The answer to a :class:`ReindexAsk`."""

    report: ReindexReport


class LearnReply(Reply, frozen=True, kw_only=True, tag="learn"):
    """The answer to a :class:`LearnAsk`."""

    learned: LearnReport


class CodeFindReply(Reply, frozen=True, kw_only=True, tag="code_find"):
    """The answer to a :class:`CodeFindAsk` (``ctx find``)."""

    found: FindResult


class CodeStatusReply(Reply, frozen=True, kw_only=True, tag="code_status"):
    """The answer to a :class:`CodeStatusAsk` (``ctx code status``)."""

    code: CodeStatus


class HookReply(Reply, frozen=True, kw_only=True, tag="hook"):
    """The answer to a :class:`HookAsk`: what ``ctx hook`` prints ("": nothing)."""

    output: str


class PingReply(Reply, frozen=True, kw_only=True, tag="ping"):
    """The answer to a :class:`PingAsk`: what the hub holds."""

    hub: HubReport


class StopReply(Reply, frozen=True, kw_only=True, tag="stop"):
    """The answer to a :class:`StopAsk`: the hub stops once it is sent."""


class FailureReply(Reply, frozen=True, kw_only=True, tag="failure"):
    """The answer to any request that failed, or that the hub could not read."""

    failure: Failure


class ProgressReply(Reply, frozen=True, kw_only=True, tag="progress"):
    """A line before the answer: how far a reindex is (``done`` of ``total``)."""

    done: int
    total: int


AnyReply = (
    RecallReply
    | SearchReply
    | IndexStatusReply
    | ReindexReply
    | LearnReply
    | CodeFindReply
    | CodeStatusReply
    | HookReply
    | PingReply
    | StopReply
    | FailureReply
    | ProgressReply
)
"""Every line the hub writes."""

R = TypeVar("R", bound=Reply)


# The requests.


class Ask(
    msgspec.Struct,
    Generic[R],
    frozen=True,
    kw_only=True,
    forbid_unknown_fields=True,
    tag_field="op",
):
    """One request to the hub, answered with an ``R`` (or a failure).

    Its subclasses inherit ``forbid_unknown_fields`` and the tag field: a
    request with a field or an ``op`` the hub does not know is refused.
    """


class StoreAsk(Ask[R], frozen=True, kw_only=True):
    """A request about one store: ``store`` is its folder, resolved.

    The client fills it in (:func:`~ctx.hub.server.client.ask`); answered
    in-process, a request names no store.
    """

    store: str = ""


class RecallAsk(StoreAsk[RecallReply], frozen=True, kw_only=True, tag="recall"):
    """A recall: the options of ``ctx recall``.

    ``at`` is a revision, ``at_time`` a moment (at most one of them);
    ``agent`` is the caller whose learned weights the recall uses.
    """

    query: str
    branch: str | None = None
    overlay: tuple[str, ...] = ()
    at: str | None = None
    at_time: datetime | None = None
    now: datetime | None = None
    budget: int | None = None
    include_superseded: bool = False
    explain: bool = False
    agent: str | None = None


class SearchAsk(StoreAsk[SearchReply], frozen=True, kw_only=True, tag="search"):
    """A search: the options of ``ctx search``."""

    query: str
    branch: str | None = None
    now: datetime | None = None
    limit: int = 10
    kind: str | None = None
    tag: str | None = None
    context: str | None = None
    fuzzy: bool = False
    explain: bool = False


class IndexStatusAsk(
    StoreAsk[IndexStatusReply], frozen=True, kw_only=True, tag="index_status"
):
    """The index's state (``ctx index status``)."""


class ReindexAsk(StoreAsk[ReindexReply], frozen=True, kw_only=True, tag="reindex"):
    """A rebuild of the indexes (``ctx reindex``); ``re_embed`` every memory."""

    re_embed: bool = False


class LearnAsk(StoreAsk[LearnReply], frozen=True, kw_only=True, tag="learn"):
    """A learning step from ``agent``'s feedback (default: the default caller)."""

    agent: str | None = None


class CodeFindAsk(StoreAsk[CodeFindReply], frozen=True, kw_only=True, tag="code_find"):
    """A search of the code index: the options of ``ctx find``."""

    query: str
    limit: int = 10
    language: str | None = None
    path: str | None = None
    full: bool = False


class CodeStatusAsk(
    StoreAsk[CodeStatusReply], frozen=True, kw_only=True, tag="code_status"
):
    """The code index's state (``ctx code status``); wakes its backfill."""


class HookAsk(Ask[HookReply], frozen=True, kw_only=True, tag="hook"):
    """A hook call relayed by ``ctx hook``'s process, for the hub to answer.

    What the process would have answered with, in the hub: the event, the
    host's bytes (``data``), ``--store`` and ``--agent``, and what the
    process knows that the hub does not: its working folder (``cwd``), the
    environment the hook is given (``environ``: every variable it reads
    there, ``CTX_DIR``, ``CTX_BRANCH``..., paths made absolute against
    ``cwd``), and the variables that the hub's own process must have as the
    hook's has them for the answer to be the same (``process``); ``None``
    for a variable not set.
    """

    event: str
    data: bytes
    store_option: str | None = None
    agent: str | None = None
    cwd: str
    environ: dict[str, str | None] = {}
    process: dict[str, str | None] = {}


class PingAsk(Ask[PingReply], frozen=True, kw_only=True, tag="ping"):
    """What the hub holds (``ctx hub status``); touches no index."""


class StopAsk(Ask[StopReply], frozen=True, kw_only=True, tag="stop"):
    """Stops the hub (``ctx hub stop``); touches no index."""


AnyStoreAsk = (
    RecallAsk
    | SearchAsk
    | IndexStatusAsk
    | ReindexAsk
    | LearnAsk
    | CodeFindAsk
    | CodeStatusAsk
)
"""Every request about a store: what an answerer answers."""

AnyAsk = AnyStoreAsk | HookAsk | PingAsk | StopAsk
"""Every request the hub reads."""


class HubStarted(msgspec.Struct, frozen=True, kw_only=True):
    """A hub that listens: its store, socket and process (``ctx hub start``)."""

    store: str
    socket: str
    pid: int


class HubStatus(msgspec.Struct, frozen=True, kw_only=True):
    """Whether the user's hub runs, and what it holds (``ctx hub status``).

    ``store``: the store asked about; ``open``: whether the hub holds it
    open now (any store is opened on its first request); ``stores``: the
    stores it holds open, least recently used first; ``rss_bytes``: its
    resident memory, ``memory_bound`` the bytes above which it drops idle
    stores; ``embedders``: the embedders it holds (one per configuration);
    ``autostarted``: started by a recall; ``silent``: where no hub answered
    but its socket is there, why (a hub killed, stopped, or hung).
    """

    running: bool
    pid: int | None
    socket: str
    silent: str = ""
    store: str = ""
    open: bool = False
    autostarted: bool = False
    stores: tuple[OpenStore, ...] = ()
    rss_bytes: int = 0
    memory_bound: int = 0
    embedders: int = 0


class HubStopped(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a hub was stopped, and which (``ctx hub stop``)."""

    stopped: bool
    pid: int | None
