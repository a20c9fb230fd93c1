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
    """Keep indexes loaded so that recall and search answer at once

    A user runs one hub for every store. While it runs, `ctx recall` and
    `ctx search` ask it over a Unix socket instead of loading the indexes
    and the embedder themselves; it opens each store on its first request
    and drops stores left idle.

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
    """Serve recall and search for every store until `ctx hub stop` (foreground)

    The store is opened first; any other store is opened on its first
    request. A recall that finds no hub starts one itself (with --idle from
    the store's config); `ctx hub start` runs one in the foreground.

    \b
    Example:
      ctx hub start &
      ctx hub start --idle 60
    """
    from ctx.hub import HubStarted, run_hub
    from ctx.porcelain.hooks import relayed_answer

    def ready(started: HubStarted) -> None:
        if as_json:
            echo_json(started)
        else:
            echo(
                f"Hub listening on {started.socket} (pid {started.pid}), "
                f"{started.store} open."
            )
        sys.stdout.flush()

    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    with contextlib.suppress(KeyboardInterrupt):
        run_hub(
            state.workspace(),
            idle_minutes=idle_minutes,
            ready=ready,
            hooks=relayed_answer,
        )
    if not as_json:
        echo("Hub stopped.")


@hub_group.command(name="stop")
@json_option
@pass_state
def stop(state: CtxState, as_json: bool) -> None:
    """Stop your hub, if one runs: it serves every store

    \b
    Example:
      ctx hub stop
    """
    from ctx.hub import stop_hub

    stopped = stop_hub(state.workspace())
    if as_json:
        echo_json(stopped)
    elif stopped.pid is None:
        from ctx.hub import hub_silence

        # A hub stopped or hung holds the socket, and `ctx hub start` says
        # one runs: say why this stop reached none.
        why = hub_silence()
        echo(
            f"No hub answers: {why}; nothing was stopped."
            if why
            else "No hub is running."
        )
    else:
        echo(f"Stopped the hub (pid {stopped.pid}), which served every store.")


@hub_group.command(name="status")
@json_option
@pass_state
def status(state: CtxState, as_json: bool) -> None:
    """Show whether your hub runs, the stores it holds open and its memory

    Stores are listed least recently used first, with their last use; the
    hub drops a store left idle, and idle stores when over its memory bound.

    \b
    Example:
      ctx hub status --json
    """
    from ctx.hub import hub_status

    status = hub_status(state.workspace())
    if as_json:
        echo_json(status)
        return
    if status.pid is None and status.silent:
        echo(f"No hub answers: {status.silent}; recall loads the indexes itself.")
        return
    if status.pid is None:
        echo("No hub is running; recall loads the indexes itself.")
        return
    how = "started by a recall" if status.autostarted else "started by hand"
    echo(
        f"The hub (pid {status.pid}, {how}) listens on {status.socket}: "
        f"{_megabytes(status.rss_bytes)} resident, "
        f"bound {_megabytes(status.memory_bound)}."
    )
    if status.stores:
        echo(f"It holds {plural(len(status.stores), 'store')} open:")
    for entry in status.stores:
        used = entry.last_used.strftime("%Y-%m-%d %H:%M:%S")
        pinned = " (its host's, kept)" if entry.pinned else ""
        echo(f"  {entry.store}  last used {used}{pinned}")
    if not status.open:
        echo("This store is not open; its next request opens it.")


def _megabytes(size: int | None) -> str:
    return "? MB" if size is None else f"{size / 1e6:.0f} MB"


COMMANDS = [hub_group]
