"""Where a call on a store is answered: by the running hub, or in this process.

Every request of the hub's calls (:mod:`ctx.hub.api`) comes here:

1. A process that is its store's hub (``ctx serve``, ``ctx mcp``: they
   :func:`adopt_answerer`) answers with the hub's own answerer.
2. Else the user's running hub is asked over its socket
   (:mod:`~ctx.hub.server.client`). A hub folder that is not private is
   never used: the answer then comes from this process, with the reason as
   a notice, and no hub is started.
3. Else an :class:`~ctx.hub.server.service.Answerer` answers in this
   process, the same one each time while the workspace lives (the embedder
   and indexes loaded once); after a recall, search or ``ctx find`` it
   starts a hub in the background for the next call, where the store's
   config allows (:func:`~ctx.hub.server.control.may_start_hub`).

The registries of adopted and in-process answerers are process-wide, kept
here only, and let go of a workspace when it is.

Light to import: the answerer (numpy, Tantivy, onnxruntime) loads only when
a call is answered in this process.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import msgspec

from ctx.hub.server.client import ask, start_hub
from ctx.hub.server.control import may_start_hub
from ctx.hub.server.private import HubFolderError
from ctx.hub.server.wire import (
    AnyStoreAsk,
    CodeFindAsk,
    IndexStatusReply,
    RecallAsk,
    RecallReply,
    ReindexReply,
    Reply,
    SearchAsk,
    SearchReply,
    StoreAsk,
)
from ctx.hub.workspace import Workspace

if TYPE_CHECKING:  # the indexes load only when a call is answered here
    from ctx.hub.server.service import Answerer

__all__ = ["adopt_answerer", "answer", "hub_reply", "served_here"]

R = TypeVar("R", bound=Reply)

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


def served_here(ws: Workspace) -> bool:
    """Returns whether this process answers the workspace's calls itself.

    So it does once it adopted an answerer (:func:`adopt_answerer`).
    """
    return ws in _SERVED


def answer(
    ws: Workspace,
    request: StoreAsk[R],
    expected: type[R],
    progress: Callable[[int, int], None] | None = None,
) -> R:
    """Asks the user's running hub, or answers in this process if none runs.

    Args:
        ws: The workspace.
        request: What is asked.
        expected: The reply type ``request`` is answered with.
        progress: Called with (done, total) while a reindex indexes.

    Raises:
        CtxError: Whatever the hub or this process raise for the request.
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
            answerer.defer = refused is None and may_start_hub(ws)
        reply = answerer.answer(_any(request), progress)
    if refused is not None:
        return _expected(_noticed(reply, refused), expected)
    config = _answerer(ws).config or ws.config()  # code_find reads no projection
    searched = isinstance(request, RecallAsk | SearchAsk | CodeFindAsk)
    if searched and ws.on_disk and config.hub.autostart:
        start_hub(ws.path, config.hub.idle_minutes)
    return _expected(reply, expected)


def hub_reply(
    ws: Workspace,
    request: StoreAsk[R],
    expected: type[R],
    *,
    timeout: float | None = None,
) -> R | None:
    """Returns the running hub's reply, or None when no hub answers.

    Nothing is loaded in this process and no hub is started. A store not
    on disk has no hub; a hub folder that is not private counts as none.

    Args:
        ws: The workspace.
        request: What is asked.
        expected: The reply type ``request`` is answered with.
        timeout: Seconds to wait for the reply (default: the client's).

    Raises:
        HubError: The hub answered with an error.
    """
    if not ws.on_disk:
        return None
    # As :func:`answer` asks: the hub's folder is not the caller's, and a
    # hook's recall on a code branch read the hub's own (main) without it.
    request = _followed(ws, request)
    try:
        if timeout is None:
            return ask(ws.path, request, expected)
        return ask(ws.path, request, expected, timeout=timeout)
    except HubFolderError:
        return None


def _answerer(ws: Workspace) -> Answerer:
    from ctx.hub.server.service import Answerer

    store = ws.store()
    answerer = _ANSWERERS.get(ws)
    if answerer is None or answerer.store is not store:
        answerer = _ANSWERERS[ws] = Answerer(store, ws.clock, one_shot=True)
    return answerer


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
