"""The running hub's protocol: where its socket is, and what goes over it.

A user's hub (``ctx hub start``, or started by a recall) keeps the indexes of
the stores it is asked about and their embedder loaded, and answers recall
and search over a Unix socket, so that ``ctx recall`` pays for neither (a
fresh process spends ~0.4 s importing and loading them). Each request names
its store (:attr:`Request.store`, the store folder's resolved path). One
request per connection: the client sends a :class:`Request` as JSON and shuts
its side; the hub answers with lines of JSON, each a :class:`Reply`, and
closes. Every line but the last only reports progress (a reindex says how far
it is); the last holds the result or the failure. Light to import
(msgspec only): the command line uses it before deciding to load the hub.

The socket lives in the user's private folder (:mod:`.private`), one for
every store. The client believes a reply only from a server run
by the same user (``SO_PEERCRED``) and naming the store it asked about
(:attr:`Reply.store`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from ctx.hub.code.results import CodeStatus, FindResult
from ctx.hub.index.reports import IndexStatus, ReindexReport
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.retrieval.tuning import LearnReport
from ctx.hub.server.private import socket_path

__all__ = [
    "Failure",
    "HubReport",
    "HubStarted",
    "HubStatus",
    "HubStopped",
    "OpenStore",
    "Reply",
    "Request",
    "socket_path",
]

Op = Literal[
    "recall",
    "search",
    "index_status",
    "reindex",
    "ping",
    "stop",
    "learn",
    "code_find",
    "code_status",
]


class Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One question to the hub: a recall, a search, index status or reindex.

    The fields are the options of ``ctx recall`` and ``ctx search``,
    ``re_embed`` of ``ctx reindex``, and ``language``, ``path`` and ``full``
    of ``ctx find`` (``code_find``). ``agent`` is the caller whose learned
    weights a recall uses, and whose feedback ``learn`` learns from.
    ``store`` is the store folder asked about (resolved); ``ping`` and
    ``stop`` name none: they are about the hub.
    """

    op: Op
    store: str = ""
    query: str = ""
    branch: str | None = None
    overlay: tuple[str, ...] = ()
    at: str | None = None
    at_time: datetime | None = None
    now: datetime | None = None
    budget: int | None = None
    include_superseded: bool = False
    explain: bool = False
    limit: int = 10
    kind: str | None = None
    tag: str | None = None
    context: str | None = None
    fuzzy: bool = False
    re_embed: bool = False
    agent: str | None = None
    language: str | None = None
    path: str | None = None
    full: bool = False


class Failure(msgspec.Struct, frozen=True, kw_only=True):
    """A ctx error raised in the hub, to be raised again by the client."""

    type: str
    message: str
    hint: str | None
    exit_code: int


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


class Reply(msgspec.Struct, kw_only=True):
    """One line of the hub's answer.

    The last line holds what was asked (``result`` for recall and search,
    ``status``, ``report``, ``found`` for ``ctx find``, or ``code`` for
    ``ctx code status``, or ``hub`` for a ``ping``) or a ``failure``; a line
    with ``progress`` (done, total) before it says how far a reindex is.
    Every line names the ``store`` its request named; a client ignores a
    line that names another.
    """

    result: RecallResult | None = None
    status: IndexStatus | None = None
    report: ReindexReport | None = None
    learned: LearnReport | None = None
    found: FindResult | None = None
    code: CodeStatus | None = None
    failure: Failure | None = None
    progress: tuple[int, int] | None = None
    hub: HubReport | None = None
    store: str = ""
    pid: int = 0


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
    ``autostarted``: started by a recall.
    """

    running: bool
    pid: int | None
    socket: str
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
