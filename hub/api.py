"""The hub's calls: recall, search, index status, reindex and the hub itself.

Each call (recall, search, ``ctx find``'s :func:`find_code`, index status,
reindex) takes a :class:`~ctx.hub.workspace.Workspace` and answers through
the user's hub (one for every store) when one runs, and in the calling process
otherwise, with the same result either way. A recall or search answered
in-process then starts a hub in the background for the next call when the
store's config allows (``[hub] autostart``; never with ``CTX_NO_HUB=1`` or
``CTX_HUB_AUTOSTART=0``).

Nothing is left for a caller to clear: what happened to the index on the way
(rebuilt, or kept in memory) comes back as ``notices`` in the result, failed
channels as ``warnings``, progress goes to the callback given, and errors
are raised as :class:`~ctx.engine.CtxError`.

Light to import: the indexes (numpy, Tantivy, onnxruntime) load only when a
call is answered in this process.
"""

from __future__ import annotations

import os
import re
import time
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec

from ctx.engine import CtxError, InvalidInputError, NotAStoreError, parse_time
from ctx.hub.code.results import CodeStatus, FindResult
from ctx.hub.index.reports import IndexStatus, ReindexReport
from ctx.hub.retrieval.feedback import FeedbackResult
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.retrieval.tuning import LearnReport, WeightsReport
from ctx.hub.server.client import ask, ask_hub, start_hub
from ctx.hub.server.private import HubFolderError, socket_path
from ctx.hub.server.wire import (
    AnyStoreAsk,
    CodeFindAsk,
    CodeFindReply,
    CodeStatusAsk,
    CodeStatusReply,
    HubStarted,
    HubStatus,
    HubStopped,
    IndexStatusAsk,
    IndexStatusReply,
    LearnAsk,
    LearnReply,
    PingAsk,
    PingReply,
    RecallAsk,
    RecallReply,
    ReindexAsk,
    ReindexReply,
    Reply,
    SearchAsk,
    SearchReply,
    StopAsk,
    StopReply,
    StoreAsk,
)
from ctx.hub.workspace import Workspace, local_now

if TYPE_CHECKING:  # the indexes load only when a call is answered here
    from ctx.hub.server.service import Answerer

__all__ = [
    "code_status",
    "feedback",
    "find_code",
    "hub_recall",
    "hub_status",
    "index_status",
    "learn",
    "moment_or_revision",
    "parse_moment",
    "recall",
    "recall_weights",
    "reindex",
    "run_hub",
    "search",
    "start_hub_later",
    "stop_hub",
    "wake_hub",
]

Progress = Callable[[int, int], None]
R = TypeVar("R", bound=Reply)

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def parse_moment(
    value: str, what: str = "The time", *, now: datetime | None = None
) -> datetime:
    """Returns the moment ``value`` names: what every time option accepts.

    The forms are the engine's (:func:`~ctx.engine.parse_time`: ISO 8601
    dates and times, local time when without an offset), plus the phrases
    recall understands, read as the start of the span they name against
    ``now`` (:func:`~ctx.hub.temporal.parse.moment_of`): ``yesterday`` is
    yesterday at 00:00, ``last Tuesday`` that day at 00:00, ``2 weeks ago``
    the Monday of that week; ``now`` is ``now``.

    Args:
        value: The text, e.g. ``2023-05-08``, ``2023-05-08T13:56+02:00`` or
            ``yesterday``.
        what: How the error names it (an option, e.g. ``--now``).
        now: What phrases count from (default: the local clock).

    Raises:
        InvalidInputError: It is none of those forms (the hint lists them),
            or lies outside the times ctx accepts
            (:func:`~ctx.engine.check_time`).
    """
    from ctx.hub.temporal.parse import moment_of

    def phrase(text: str) -> datetime | None:
        return moment_of(text, now or local_now())

    return parse_time(value, what, local=_local, phrase=phrase)


def _local(moment: datetime) -> datetime:
    return moment.astimezone()


def moment_or_revision(
    ws: Workspace, at: str | datetime | None, now: datetime
) -> str | datetime | None:
    """Returns ``--at`` as a moment when it names one, else as a revision.

    A text that starts with a date is a moment (or an error); so is one that
    is wholly a time phrase (``yesterday``, ``2 weeks ago``), unless a branch
    has that name (only one-word phrases can be one).
    """
    if not isinstance(at, str):
        return at
    if _DATE_RE.match(at):
        return parse_moment(at, "--at", now=now)
    from ctx.hub.temporal.parse import moment_of

    moment = moment_of(at, now)
    if moment is None or at in ws.store().branches():
        return at
    return moment


_ANSWERERS: weakref.WeakKeyDictionary[Workspace, Answerer] = weakref.WeakKeyDictionary()
"""The in-process answerer of each workspace, kept while the workspace lives:
a caller asking again without a hub reuses the loaded embedder and indexes."""


_SERVED: weakref.WeakSet[Workspace] = weakref.WeakSet()
"""The workspaces this process is the hub of (``ctx serve``): their calls
are answered here, by the hub's own answerer, without asking the socket."""


def adopt_answerer(ws: Workspace, answerer: Answerer) -> None:
    """Makes ``answerer`` answer the workspace's calls made in this process.

    ``ctx serve`` and ``ctx mcp`` are their store's hub: their calls use the
    answerer the hub's socket serves with, indexes loaded once. A
    long-running process that may not use a hub (``CTX_NO_HUB``) adopts one
    for its own calls, without a socket.
    """
    _ANSWERERS[ws] = answerer
    _SERVED.add(ws)


def _answerer(ws: Workspace) -> Answerer:
    from ctx.hub.server.service import Answerer

    store = ws.store()
    answerer = _ANSWERERS.get(ws)
    if answerer is None or answerer.store is not store:
        answerer = _ANSWERERS[ws] = Answerer(store, ws.clock, one_shot=True)
    return answerer


def _starts_hub(ws: Workspace) -> bool:
    """Returns whether a recall answered here will start a hub after it.

    Only then may it leave vectors to the backlog: the hub embeds them.
    """
    if not ws.on_disk or os.environ.get("CTX_NO_HUB"):
        return False
    if os.environ.get("CTX_HUB_AUTOSTART") == "0":
        return False
    from ctx.hub.config import load_config

    return load_config(ws.path).hub.autostart


def _answer(
    ws: Workspace,
    request: StoreAsk[R],
    expected: type[R],
    progress: Progress | None = None,
) -> R:
    """Asks the user's running hub, or answers in this process if none runs.

    ``expected``: the reply type ``request`` is answered with. A hub folder
    that is not private is never used: the answer then comes from this
    process, with the reason as a notice, and no hub is started.
    """
    if ws in _SERVED:  # its answerer holds the workspace's lock as it needs
        return _expected(_ANSWERERS[ws].answer(_any(request), progress), expected)
    refused = None
    if ws.on_disk:
        try:
            asked = ask(ws.path, _followed(ws, request), expected, progress)
        except HubFolderError as exc:
            refused = f"{exc.message} Answered without a hub."
        else:
            if asked is not None:
                return asked
    with ws.lock:
        answerer = _answerer(ws)
        if ws not in _SERVED and answerer.one_shot:
            answerer.defer = refused is None and _starts_hub(ws)
        reply = answerer.answer(_any(request), progress)
    if refused is not None:
        return _expected(_noticed(reply, refused), expected)
    config = _answerer(ws).config or ws.config()  # code_find reads no projection
    searched = isinstance(request, RecallAsk | SearchAsk | CodeFindAsk)
    if searched and ws.on_disk and config.hub.autostart:
        start_hub(ws.path, config.hub.idle_minutes)
    return _expected(reply, expected)


def _any(request: StoreAsk[R]) -> AnyStoreAsk:
    """Returns ``request`` as one of the requests an answerer answers."""
    assert isinstance(request, AnyStoreAsk)
    return request


def _expected(reply: Reply, expected: type[R]) -> R:
    """Returns ``reply``, the type its request is answered with."""
    assert isinstance(reply, expected), reply
    return reply


def _followed(ws: Workspace, request: StoreAsk[R]) -> StoreAsk[R]:
    """Returns ``request`` naming the branch it reads here, for the hub.

    A recall or search that names no branch reads the code's memory branch
    where the store follows the code: the hub's folder is not ours.
    """
    reads = request if isinstance(request, RecallAsk | SearchAsk) else None
    if reads is not None and reads.branch is None:
        return msgspec.structs.replace(request, branch=ws.followed_branch())
    return request


def _noticed(reply: Reply, notice: str) -> Reply:
    """Returns ``reply`` with ``notice`` added to what it answers."""
    match reply:
        case RecallReply() | SearchReply():
            notices = (*reply.result.notices, notice)
            result = msgspec.structs.replace(reply.result, notices=notices)
            return msgspec.structs.replace(reply, result=result)
        case IndexStatusReply():
            notices = (*reply.status.notices, notice)
            status = msgspec.structs.replace(reply.status, notices=notices)
            return msgspec.structs.replace(reply, status=status)
        case ReindexReply():
            notices = (*reply.report.notices, notice)
            report = msgspec.structs.replace(reply.report, notices=notices)
            return msgspec.structs.replace(reply, report=report)
    return reply


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
            phrase such as ``yesterday``: :func:`parse_moment`).
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
    return _timed(_answer(ws, request, RecallReply), started)


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
    when = moment_or_revision(ws, at, asked)
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
    if ws in _SERVED:
        return _timed(_answer(ws, request, RecallReply), started)
    if not ws.on_disk:
        return None
    try:
        reply = ask(ws.path, request, RecallReply, timeout=timeout)
    except HubFolderError:
        return None
    return None if reply is None else _timed(reply, started)


def start_hub_later(ws: Workspace) -> bool:
    """Starts the store's hub in the background, as a recall answered here does.

    Only where the store's config and the environment allow one
    (``[hub] autostart``, ``CTX_HUB_AUTOSTART``, ``CTX_NO_HUB``) and none
    answers or is starting. Returns whether one was started.
    """
    if not _starts_hub(ws):
        return False
    return start_hub(ws.path, ws.config().hub.idle_minutes)


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
        InvalidInputError: The query is empty or too long.
        NotFoundError: The branch does not exist.
    """
    started = time.perf_counter()
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
    return _timed(_answer(ws, request, SearchReply), started)


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
    reply = _answer(ws, request, CodeFindReply)
    return msgspec.structs.replace(reply.found, seconds=time.perf_counter() - started)


def code_status(ws: Workspace) -> CodeStatus:
    """Returns the code index's state: its size and its embedding backlog.

    The running hub answers (and, asked, goes on embedding the backlog);
    with no hub, this process reads the index.
    """
    if ws.on_disk:
        try:
            reply = ask(ws.path, CodeStatusAsk(), CodeStatusReply)
        except HubFolderError:
            reply = None
        if reply is not None:
            return reply.code
    from ctx.hub.code.api import open_code_index

    return open_code_index(ws).status()


def wake_hub(ws: Workspace) -> str:
    """Has the store's hub embed the code index's backlog; returns who does.

    A running hub is asked (any request wakes its backfill): ``"hub"``.
    Else one is started as a recall starts one (``[hub] autostart``):
    ``"started"``. Else ``""``: the backlog waits for a hub.
    """
    if not ws.on_disk:
        return ""
    try:
        if ask(ws.path, CodeStatusAsk(), CodeStatusReply) is not None:
            return "hub"
    except CtxError:
        return ""
    if _starts_hub(ws) and start_hub(ws.path, ws.config().hub.idle_minutes):
        return "started"
    return ""


def index_status(ws: Workspace) -> IndexStatus:
    """Returns, per branch, the indexed commit, and the index's size."""
    return _answer(ws, IndexStatusAsk(), IndexStatusReply).status


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
    return _answer(ws, request, ReindexReply, progress).report


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
    return _answer(ws, LearnAsk(agent=agent or ws.agent), LearnReply).learned


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


def hub_status(ws: Workspace) -> HubStatus:
    """Returns whether the user's hub runs, the stores it holds open, its memory.

    ``open`` says whether the workspace's store is among them.

    Raises:
        HubFolderError: The folder for hub sockets is not private.
    """
    reply = ask_hub(PingAsk(), PingReply)
    report = None if reply is None else reply.hub
    if report is None:
        return HubStatus(
            running=False, pid=None, socket=str(socket_path()), store=str(ws.path)
        )
    mine = str(ws.path.resolve())
    return HubStatus(
        running=True,
        pid=report.pid,
        socket=str(socket_path()),
        store=str(ws.path),
        open=any(entry.store == mine for entry in report.stores),
        autostarted=report.autostarted,
        stores=report.stores,
        rss_bytes=report.rss_bytes or 0,
        memory_bound=report.memory_bound,
        embedders=report.embedders,
    )


def stop_hub(ws: Workspace) -> HubStopped:
    """Stops the user's hub, if one runs: every store's, not only this one's.

    Raises:
        HubFolderError: The folder for hub sockets is not private.
    """
    del ws  # one hub serves every store
    reply = ask_hub(StopAsk(), StopReply)
    pid = None if reply is None else reply.pid
    return HubStopped(stopped=pid is not None, pid=pid)


def run_hub(
    ws: Workspace,
    *,
    idle_minutes: float | None = None,
    ready: Callable[[HubStarted], None] | None = None,
    autostarted: bool = False,
) -> None:
    """Runs the user's hub in this process until stopped.

    The hub opens the workspace's store first, then serves every store it is
    asked about (docs/recall.md, "One hub per user").

    Args:
        ws: The workspace (its store must exist on disk).
        idle_minutes: Return after this long without a request.
        ready: Called once requests are accepted.
        autostarted: Started by a recall (``ctx hub status`` says so).

    Raises:
        NotAStoreError: The user store does not exist yet.
        StoreBusyError: A hub already runs for this user.
        HubFolderError: The folder for hub sockets is not private.
    """
    if not ws.on_disk:
        raise NotAStoreError(
            "The user store does not exist yet.",
            hint="Remember something first, or `ctx init` a project store.",
        )
    from ctx.hub.server.listener import serve

    store = ws.store()
    assert store.path is not None

    def started(path: os.PathLike[str]) -> None:
        if ready is not None:
            ready(HubStarted(store=str(store.path), socket=str(path), pid=os.getpid()))

    serve(
        store,
        clock=ws.clock,
        ready=started,
        idle=None if idle_minutes is None else idle_minutes * 60,
        autostarted=autostarted,
    )
