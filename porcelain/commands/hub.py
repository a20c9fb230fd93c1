"""The running hub: ctx hub start, stop, status."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import click

from ctx.engine import NotAStoreError
from ctx.hub.server.client import ask
from ctx.hub.server.wire import Request, socket_path
from ctx.porcelain._options import CtxState, echo_json, json_option, now, pass_state

__all__ = ["COMMANDS"]


def _stop_on_sigterm(*_: Any) -> None:
    sys.exit(0)  # unwinds through serve(), which removes its socket


@click.group(name="hub")
def hub_group() -> None:
    """Keep a store's indexes loaded so that recall and search answer at once

    While a hub runs, `ctx recall` and `ctx search` ask it over a Unix socket
    instead of loading the indexes and the embedder themselves.

    \b
    Example:
      ctx hub start &
      ctx recall "what did we decide about auth?"
      ctx hub stop
    """


@hub_group.command(name="start")
@click.option(
    "--idle",
    "idle_minutes",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="MINUTES",
    help="Exit after this many minutes without a request.",
)
@json_option
@pass_state
def start(state: CtxState, idle_minutes: float | None, as_json: bool) -> None:
    """Serve recall and search for the store until `ctx hub stop` (foreground)

    A recall that finds no hub starts one itself (with --idle from the
    store's config); `ctx hub start` runs one in the foreground.

    \b
    Example:
      ctx hub start &
      ctx hub start --idle 60
    """
    store = state.store()
    if store.path is None:
        raise NotAStoreError(
            "The user store does not exist yet.",
            hint="Remember something first, or `ctx init` a project store.",
        )
    from ctx.hub.server.service import serve

    def ready(path: Path) -> None:
        if as_json:
            echo_json(
                {"store": str(store.path), "socket": str(path), "pid": os.getpid()}
            )
        else:
            click.echo(f"Hub for {store.path} listening on {path} (pid {os.getpid()}).")
        sys.stdout.flush()

    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    with contextlib.suppress(KeyboardInterrupt):
        serve(
            store,
            clock=now,
            ready=ready,
            idle=None if idle_minutes is None else idle_minutes * 60,
        )
    if not as_json:
        click.echo("Hub stopped.")


def _ping(state: CtxState, op: str) -> tuple[Path, int | None]:
    path, _ = state.locate()
    reply = ask(path, Request(op="stop" if op == "stop" else "ping"))
    return socket_path(path), None if reply is None else reply.pid


@hub_group.command(name="stop")
@json_option
@pass_state
def stop(state: CtxState, as_json: bool) -> None:
    """Stop the store's hub, if one runs

    \b
    Example:
      ctx hub stop
    """
    _, pid = _ping(state, "stop")
    if as_json:
        echo_json({"stopped": pid is not None, "pid": pid})
    elif pid is None:
        click.echo("No hub is running for this store.")
    else:
        click.echo(f"Stopped the hub (pid {pid}).")


@hub_group.command(name="status")
@json_option
@pass_state
def status(state: CtxState, as_json: bool) -> None:
    """Show whether a hub serves the store, and where

    \b
    Example:
      ctx hub status --json
    """
    path, pid = _ping(state, "ping")
    if as_json:
        echo_json({"running": pid is not None, "pid": pid, "socket": str(path)})
    elif pid is None:
        click.echo("No hub is running for this store; recall loads the indexes itself.")
    else:
        click.echo(f"A hub (pid {pid}) serves this store on {path}.")


COMMANDS = [hub_group]
