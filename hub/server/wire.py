"""The running hub's protocol: where its socket is, and what goes over it.

A hub (``ctx hub start``) keeps a store's indexes and embedder loaded and
answers recall and search over a Unix socket, so that ``ctx recall`` pays for
neither (a fresh process spends ~0.4 s importing and loading them). One
request per connection: the client sends a :class:`Request` as JSON and shuts
its side; the hub answers with lines of JSON, each a :class:`Reply`, and
closes. Every line but the last only reports progress (a reindex says how far
it is); the last holds the result or the failure. Light to import
(msgspec only): the command line uses it before deciding to load the hub.

The socket lives in ``<tmp>/ctx-<uid>/`` (mode 0700), named by a hash of the
store's path: Unix socket paths are limited to about 100 bytes, and a store's
own folder can be deeper than that.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Literal

import msgspec

from ctx.hub.index.reports import IndexStatus, ReindexReport
from ctx.hub.retrieval.results import RecallResult

__all__ = [
    "Failure",
    "HubStarted",
    "HubStatus",
    "HubStopped",
    "Reply",
    "Request",
    "socket_path",
]

Op = Literal["recall", "search", "index_status", "reindex", "ping", "stop"]


class Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One question to the hub: a recall, a search, index status or reindex.

    The fields are the options of ``ctx recall`` and ``ctx search``, and
    ``re_embed`` of ``ctx reindex``.
    """

    op: Op
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


class Failure(msgspec.Struct, frozen=True, kw_only=True):
    """A ctx error raised in the hub, to be raised again by the client."""

    type: str
    message: str
    hint: str | None
    exit_code: int


class Reply(msgspec.Struct, kw_only=True):
    """One line of the hub's answer.

    The last line holds what was asked (``result`` for recall and search,
    ``status`` or ``report``) or a ``failure``; a line with ``progress``
    (done, total) before it says how far a reindex is.
    """

    result: RecallResult | None = None
    status: IndexStatus | None = None
    report: ReindexReport | None = None
    failure: Failure | None = None
    progress: tuple[int, int] | None = None
    store: str = ""
    pid: int = 0


class HubStarted(msgspec.Struct, frozen=True, kw_only=True):
    """A hub that listens: its store, socket and process (``ctx hub start``)."""

    store: str
    socket: str
    pid: int


class HubStatus(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a hub serves a store, and where (``ctx hub status``)."""

    running: bool
    pid: int | None
    socket: str


class HubStopped(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a hub was stopped, and which (``ctx hub stop``)."""

    stopped: bool
    pid: int | None


def socket_path(store: Path) -> Path:
    """Returns where the hub of the store at ``store`` listens."""
    digest = hashlib.blake2b(
        str(store.resolve()).encode("utf-8"), digest_size=10
    ).hexdigest()
    return Path(tempfile.gettempdir()) / f"ctx-{os.getuid()}" / f"hub-{digest}.sock"
