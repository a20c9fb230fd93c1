"""The running hub: ctx hub start, stop, status."""

from __future__ import annotations

import contextlib
import signal
import sys
from typing import Any

import click

from ctx.engine import plural
from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.output import echo

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
    from ctx.hub import HubStarted, run_hub

    def ready(started: HubStarted) -> None:
        if as_json:
            echo_json(started)
        else:
            echo(
                f"Hub for {started.store} listening on {started.socket} "
                f"(pid {started.pid})."
            )
        sys.stdout.flush()

    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    with contextlib.suppress(KeyboardInterrupt):
        run_hub(state.workspace(), idle_minutes=idle_minutes, ready=ready)
    if not as_json:
        echo("Hub stopped.")


@hub_group.command(name="stop")
@json_option
@pass_state
def stop(state: CtxState, as_json: bool) -> None:
    """Stop the store's hub, if one runs

    \b
    Example:
      ctx hub stop
    """
    from ctx.hub import stop_hub

    stopped = stop_hub(state.workspace())
    if as_json:
        echo_json(stopped)
    elif stopped.pid is None:
        echo("No hub is running for this store.")
    else:
        echo(f"Stopped the hub (pid {stopped.pid}).")


@hub_group.command(name="status")
@json_option
@pass_state
def status(state: CtxState, as_json: bool) -> None:
    """Show whether a hub serves the store, and every hub you run

    Each hub is listed with its store, its process and its resident memory.

    \b
    Example:
      ctx hub status --json
    """
    from ctx.hub import hub_status

    status = hub_status(state.workspace())
    if as_json:
        echo_json(status)
        return
    if status.pid is None:
        echo("No hub is running for this store; recall loads the indexes itself.")
    else:
        echo(f"A hub (pid {status.pid}) serves this store on {status.socket}.")
    if status.hubs:
        echo(
            f"You run {plural(len(status.hubs), 'hub')} "
            f"({_megabytes(status.rss_bytes)} resident):"
        )
    for hub in status.hubs:
        how = "started by a recall" if hub.autostarted else "started by hand"
        echo(f"  pid {hub.pid:<7} {_megabytes(hub.rss_bytes):>8}  {hub.store} ({how})")


def _megabytes(size: int | None) -> str:
    return "? MB" if size is None else f"{size / 1e6:.0f} MB"


COMMANDS = [hub_group]
