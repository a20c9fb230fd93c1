"""The hub's calls that the doors make: recall, search, find, index, feedback.

Each call (recall, search, ``ctx find``'s :func:`find_code`, index status,
reindex, learning) takes a :class:`~ctx.hub.workspace.Workspace`, builds
the hub's request (:mod:`~ctx.hub.server.wire`) and has it answered through
the user's hub (one for every store) when one runs, and in the calling
process otherwise, with the same result either way
(:mod:`~ctx.hub.server.routing` decides which). A recall or search answered
in-process then starts a hub in the background for the next call when the
store's config allows (``[hub] autostart``; never with ``CTX_NO_HUB=1`` or
``CTX_HUB_AUTOSTART=0``).

Nothing is left for a caller to clear: what happened to the index on the way
(rebuilt, or kept in memory) comes back as ``notices`` in the result, failed
channels as ``warnings``, progress goes to the callback given, and errors
are raised as :class:`~ctx.engine.CtxError`.

Running, stopping and asking after the hub itself are
:mod:`~ctx.hub.server.control`'s; the time options' forms are
:mod:`~ctx.hub.retrieval.temporal.moment`'s.

Light to import: the indexes (numpy, Tantivy, onnxruntime) load only when a
call is answered in this process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import msgspec

from ctx.engine import InvalidInputError, NotAStoreError, check_context, check_kind
from ctx.hub.code.results import CodeStatus, FindResult
from ctx.hub.retrieval.feedback import FeedbackResult
from ctx.hub.retrieval.index.reports import IndexStatus, ReindexReport
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.retrieval.temporal.moment import moment_or_revision
from ctx.hub.retrieval.tuning import LearnReport, WeightsReport
from ctx.hub.server.routing import answer, hub_reply, served_here
from ctx.hub.server.wire import (
    CodeFindAsk,
    CodeFindReply,
    CodeStatusAsk,
    CodeStatusReply,
    IndexStatusAsk,
    IndexStatusReply,
    LearnAsk,
    LearnReply,
    RecallAsk,
    RecallReply,
    ReindexAsk,
    ReindexReply,
    SearchAsk,
    SearchReply,
)
from ctx.hub.workspace import Workspace

__all__ = [
    "code_status",
    "feedback",
    "find_code",
    "hub_recall",
    "index_status",
    "learn",
    "recall",
    "recall_weights",
    "reindex",
    "search",
]

Progress = Callable[[int, int], None]


def _timed(reply: RecallReply | SearchReply, started: float) -> RecallResult:
    return msgspec.structs.replace(reply.result, seconds=time.perf_counter() - started)


def recall(
    ws: Workspace,
    query: str,
    *,
    budget: int | None = None,
    branch: str | None = None,
    overlay: Sequence[str] = (),
    at: str | datetime | None = None,
    now: datetime | None = None,
    include_superseded: bool = False,
    explain: bool = False,
    agent: str | None = None,
    reviewed_only: bool = False,
) -> RecallResult:
    """Returns the pinned and most relevant memories, packed into a budget.

    The result's ``recall_id`` names it to :func:`feedback`; the caller's
    learned weights and budget (:func:`learn`) are used.

    Args:
        ws: The workspace.
        query: The question; its time phrases are read against ``now``.
        budget: Tokens to fill (default: the store's ``[recall] budget``).
        branch: The branch to read (default: the workspace's, then HEAD).
        overlay: Branches whose memories the branch lacks are added.
        at: Recall as things stood at a revision (``main~3``, a commit id)
            or a moment (a datetime, text that starts with a date, or a time
            phrase such as ``yesterday``:
            :func:`~ctx.hub.retrieval.temporal.moment.parse_moment`).
        now: The moment the question is asked (default: the clock).
        include_superseded: Keep memories another one supersedes.
        explain: Give each hit its channels, boosts and last commit.
        agent: The caller (default: the workspace's agent).
        reviewed_only: Read only reviewed memory, as ``[recall]
            reviewed_only`` does for every recall: the reviewed branch
            (``main``), with no overlay (:meth:`Workspace.reviewed_view`).

    Raises:
        InvalidInputError: The query is empty or too long, the budget is
            below 1, or ``at`` starts like a date but is not one.
        NotFoundError: A branch or revision does not exist.
    """
    started = time.perf_counter()
    request = _recall_request(
        ws,
        query,
        budget=budget,
        branch=branch,
        overlay=overlay,
        at=at,
        now=now,
        include_superseded=include_superseded,
        explain=explain,
        agent=agent,
        reviewed_only=reviewed_only,
    )
    return _timed(answer(ws, request, RecallReply), started)


def _recall_request(
    ws: Workspace,
    query: str,
    *,
    budget: int | None,
    branch: str | None,
    overlay: Sequence[str],
    agent: str | None,
    at: str | datetime | None = None,
    now: datetime | None = None,
    include_superseded: bool = False,
    explain: bool = False,
    reviewed_only: bool = False,
) -> RecallAsk:
    """Returns the hub's request for a recall (see :func:`recall`)."""
    asked = now or ws.clock()
    when = moment_or_revision(at, asked, lambda: ws.store().branches())
    read, overlay = ws.reviewed_view(branch or ws.branch, overlay, only=reviewed_only)
    return RecallAsk(
        query=query,
        branch=read,
        overlay=overlay,
        at=when if isinstance(when, str) else None,
        at_time=when if isinstance(when, datetime) else None,
        now=asked,
        budget=budget,
        include_superseded=include_superseded,
        explain=explain,
        agent=agent or ws.agent,
    )


def hub_recall(
    ws: Workspace,
    query: str,
    *,
    timeout: float,
    budget: int | None = None,
    branch: str | None = None,
    overlay: Sequence[str] = (),
    agent: str | None = None,
) -> RecallResult | None:
    """Returns the running hub's recall, or None when no hub answers in time.

    Nothing is loaded in this process and no hub is started: for a caller
    that cannot wait for the indexes (a hook, docs/hooks.md), which answers
    otherwise when this returns None. In ``ctx serve`` (the store's hub) its
    own answerer answers.

    Args:
        ws: The workspace.
        query: The question.
        timeout: Seconds to wait for the hub's reply.
        budget: Tokens to fill (default: the store's ``[recall] budget``).
        branch: The branch to read (default: the workspace's, then HEAD).
        overlay: Branches whose memories the branch lacks are added.
        agent: The caller (default: the workspace's agent).

    Raises:
        CtxError: The hub answered with an error.
    """
    started = time.perf_counter()
    request = _recall_request(
        ws, query, budget=budget, branch=branch, overlay=overlay, agent=agent
    )
    if served_here(ws):
        return _timed(answer(ws, request, RecallReply), started)
    reply = hub_reply(ws, request, RecallReply, timeout=timeout)
    return None if reply is None else _timed(reply, started)


def search(
    ws: Workspace,
    query: str,
    *,
    limit: int = 10,
    kind: str | None = None,
    tag: str | None = None,
    context: str | None = None,
    fuzzy: bool = False,
    branch: str | None = None,
    now: datetime | None = None,
    explain: bool = False,
) -> RecallResult:
    """Returns the memories that best match ``query``, best first (no budget).

    Args:
        ws: The workspace.
        query: The words to find.
        limit: How many hits at most.
        kind: Only memories of this kind.
        tag: Only memories with this tag.
        context: Only memories in this context.
        fuzzy: Tolerate typos (edit distance 1-2).
        branch: The branch to read (default: the workspace's, then HEAD).
        now: The moment the query is asked (default: the clock).
        explain: Give each hit its channels and last commit.

    Raises:
        InvalidInputError: The query is empty or too long, or the kind or the
            context is not one a memory could have.
        NotFoundError: The branch does not exist.
    """
    started = time.perf_counter()
    # A filter that names no kind, or no context a memory could be in, would
    # answer "Nothing matches." as if the store held nothing.
    if kind is not None:
        check_kind(kind)
    if context is not None:
        check_context(context)
    request = SearchAsk(
        query=query,
        branch=branch or ws.branch,
        now=now or ws.clock(),
        limit=limit,
        kind=kind,
        tag=tag,
        context=context,
        fuzzy=fuzzy,
        explain=explain,
    )
    return _timed(answer(ws, request, SearchReply), started)


def find_code(
    ws: Workspace,
    query: str,
    *,
    limit: int = 10,
    language: str | None = None,
    path: str | None = None,
    full: bool = False,
) -> FindResult:
    """Returns the chunks of indexed code that best answer ``query``.

    Answered by the store's running hub when one runs (its code index and
    embedder stay loaded), else in this process (``ctx code index`` builds
    the index; see :func:`ctx.hub.code.search.find` for the ranking).

    Args:
        ws: The workspace.
        query: The question, in words or identifiers.
        limit: How many chunks at most.
        language: Only chunks of this language.
        path: Only files matching this glob (gitignore syntax).
        full: Give each hit its code.

    Raises:
        InvalidInputError: The query is empty, the limit below 1, or the
            language unknown.
        NotFoundError: No code is indexed in the store.
    """
    started = time.perf_counter()
    request = CodeFindAsk(
        query=query, limit=limit, language=language, path=path, full=full
    )
    reply = answer(ws, request, CodeFindReply)
    return msgspec.structs.replace(reply.found, seconds=time.perf_counter() - started)


def code_status(ws: Workspace) -> CodeStatus:
    """Returns the code index's state: its size and its embedding backlog.

    The running hub answers (and, asked, goes on embedding the backlog);
    with no hub, this process reads the index.
    """
    reply = hub_reply(ws, CodeStatusAsk(), CodeStatusReply)
    if reply is not None:
        return reply.code
    from ctx.hub.code_api import open_code_index

    return open_code_index(ws).status()


def index_status(ws: Workspace) -> IndexStatus:
    """Returns, per branch, the indexed commit, and the index's size."""
    return answer(ws, IndexStatusAsk(), IndexStatusReply).status


def reindex(
    ws: Workspace, *, re_embed: bool = False, progress: Progress | None = None
) -> ReindexReport:
    """Rebuilds the search indexes of every branch from the commits.

    Vectors already made by the configured embedder are kept (a memory's
    vector depends only on its text) unless ``re_embed``. A running hub
    rebuilds its own, and keeps them loaded.

    Args:
        ws: The workspace.
        re_embed: Embed every memory again.
        progress: Called with (done, total) as blobs are indexed.
    """
    request = ReindexAsk(re_embed=re_embed)
    return answer(ws, request, ReindexReply, progress).report


def feedback(
    ws: Workspace,
    recall_id: str,
    used: Sequence[str],
    *,
    readable: Callable[[str], bool] | None = None,
) -> FeedbackResult:
    """Records which hits of a recall were used, for :func:`learn`.

    ``readable`` (an API key's scope) tells which branches' recalls the
    caller may rate; any other recall is refused as unknown.

    Raises:
        InvalidInputError: Not a recall id, a recall older than a week, no
            memory named, or one the recall did not return.
        NotFoundError: The store gave no such recall.
    """
    from ctx.hub.retrieval.feedback import record_feedback

    return record_feedback(_private(ws), recall_id, used, ws.clock(), readable=readable)


def _private(ws: Workspace) -> Path:
    """Returns the store folder, whose private state feedback is kept in."""
    if not ws.on_disk:
        raise NotAStoreError(
            "The user store does not exist yet.",
            hint="Remember something first, or `ctx init` a project store.",
        )
    return ws.path


def learn(ws: Workspace, *, agent: str | None = None) -> LearnReport:
    """Moves a caller's weights and budget one step by its new feedback.

    Raises:
        NotFoundError: The caller has no feedback newer than its last step.
    """
    _private(ws)
    return answer(ws, LearnAsk(agent=agent or ws.agent), LearnReply).learned


def recall_weights(
    ws: Workspace,
    *,
    agent: str | None = None,
    reset: bool = False,
    undo: bool = False,
) -> WeightsReport:
    """Returns a caller's learned weights and history; resets or undoes first.

    Args:
        ws: The workspace.
        agent: The caller (default: the workspace's agent).
        reset: Put the caller back on the configured values (undoable).
        undo: Drop the caller's last step or reset.

    Raises:
        InvalidInputError: Both ``reset`` and ``undo``, or nothing to undo.
    """
    from ctx.hub.config import load_config
    from ctx.hub.retrieval import tuning
    from ctx.hub.retrieval.feedback import read_log

    path = _private(ws)
    who = agent or ws.agent or tuning.DEFAULT_CALLER
    config = load_config(path).recall
    if reset and undo:
        raise InvalidInputError(
            "--reset and --undo cannot be used together.", hint="Choose one."
        )
    if reset:
        tuning.reset_tuning(path, who, config, read_log(path), ws.clock())
    elif undo:
        tuning.undo_tuning(path, who)
    return tuning.weights_report(path, who, config, ws.clock())
