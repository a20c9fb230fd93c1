"""The hub as a whole: run it, start it in the background, wake, ask after, stop.

One hub serves every store of its user (docs/recall.md, "One hub per user").
These calls act on that process, not on one store's question: ``ctx hub``
runs, stops and reports on it; a recall answered in its caller's process
and ``ctx code index`` start one for the calls to come (:func:`may_start_hub`
says where the config and the environment allow it).

Light to import: the server loads only when this process becomes the hub.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ctx.engine import CtxError, NotAStoreError
from ctx.hub.server.client import ask, ask_hub, hub_silence, start_hub
from ctx.hub.server.private import socket_path
from ctx.hub.server.wire import (
    CodeStatusAsk,
    CodeStatusReply,
    HookAsk,
    HookReply,
    HubStarted,
    HubStatus,
    HubStopped,
    PingAsk,
    PingReply,
    StopAsk,
    StopReply,
)
from ctx.hub.workspace import Workspace

__all__ = [
    "hub_status",
    "may_start_hub",
    "run_hub",
    "start_hub_later",
    "stop_hub",
    "wake_hub",
]


def may_start_hub(ws: Workspace) -> bool:
    """Returns whether a hub may be started for the store in the background.

    Only for a store on disk whose config allows it (``[hub] autostart``),
    and neither ``CTX_NO_HUB`` nor ``CTX_HUB_AUTOSTART=0`` forbids it. A
    recall answered in its caller's process leaves vectors to the backlog
    only then: the hub it starts embeds them.
    """
    if not ws.on_disk or os.environ.get("CTX_NO_HUB"):
        return False
    if os.environ.get("CTX_HUB_AUTOSTART") == "0":
        return False
    from ctx.hub.config import load_config

    return load_config(ws.path).hub.autostart


def start_hub_later(ws: Workspace) -> bool:
    """Starts the store's hub in the background, as a recall answered here does.

    Only where the store's config and the environment allow one
    (:func:`may_start_hub`) and none answers or is starting. Returns
    whether one was started.
    """
    if not may_start_hub(ws):
        return False
    return start_hub(ws.path, ws.config().hub.idle_minutes)


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
    if may_start_hub(ws) and start_hub(ws.path, ws.config().hub.idle_minutes):
        return "started"
    return ""


def hub_status(ws: Workspace) -> HubStatus:
    """Returns whether the user's hub runs, the stores it holds open, its memory.

    ``open`` says whether the workspace's store is among them.

    Raises:
        HubFolderError: The folder for hub sockets is not private.
    """
    reply = ask_hub(PingAsk(), PingReply)
    report = None if reply is None else reply.hub
    if report is None:
        path = socket_path()
        silent = ""
        if path.exists():
            silent = hub_silence() or "the hub listening there does not answer"
        return HubStatus(
            running=False,
            pid=None,
            socket=str(path),
            silent=silent,
            store=str(ws.path),
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
    hooks: Callable[[HookAsk], HookReply] | None = None,
) -> None:
    """Runs the user's hub in this process until stopped.

    The hub opens the workspace's store first, then serves every store it is
    asked about (docs/recall.md, "One hub per user").

    Args:
        ws: The workspace (its store must exist on disk).
        idle_minutes: Return after this long without a request.
        ready: Called once requests are accepted.
        autostarted: Started by a recall (``ctx hub status`` says so).
        hooks: Answers relayed hooks (see
            :func:`~ctx.hub.server.listener.serve`); the entry points give
            :func:`~ctx.porcelain.hooks.relayed_answer`.

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
        hooks=hooks,
    )
