"""The log command: commits with their agent, intent, confidence and reason."""

from __future__ import annotations

import click

from ctx import engine
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_json,
    json_option,
    pass_state,
)
from ctx.porcelain.render import render_log

__all__ = ["COMMANDS"]


@click.command()
@click.argument("target", required=False, metavar="[ID|PATH]")
@branch_option
@click.option("-n", "limit", type=int, metavar="N", help="Show at most N commits.")
@click.option(
    "--stat", "show_changes", is_flag=True, help="List the paths each commit changed."
)
@json_option
@pass_state
def log(
    state: CtxState,
    target: str | None,
    branch: str | None,
    limit: int | None,
    show_changes: bool,
    as_json: bool,
) -> None:
    """Show commits with their agent, intent, confidence and reason

    With an ID, only commits that touched that memory; with a PATH prefix
    (e.g. memory/decisions), only commits under it.

    \b
    Example:
      ctx log -n 5
      ctx log 01JD2X9K7M3Q4R5S6T7V8W9XYZ
      ctx log memory/decisions --branch agent/claude
    """
    entries = engine.log(state.store(), target, rev=branch, limit=limit)
    if as_json:
        echo_json(entries)
    else:
        render_log(entries, show_changes=show_changes)


COMMANDS = [log]
