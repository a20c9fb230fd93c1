"""Commands that read and rewind history: log, blame, diff, undo."""

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
from ctx.porcelain.render import render_diff, render_log

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


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option(
    "--lines", is_flag=True, help="Attribute each line of the body to a commit."
)
@branch_option
@json_option
@pass_state
def blame(
    state: CtxState, memory_id: str, lines: bool, branch: str | None, as_json: bool
) -> None:
    """Show every commit that touched a memory, newest first

    \b
    Example:
      ctx blame 01JD2X9K7M3Q4R5S6T7V8W9XYZ
      ctx blame 01JD2X9K7M3Q4R5S6T7V8W9XYZ --lines
    """
    store = state.store()
    if lines:
        result = engine.blame_lines(store, memory_id, rev=branch)
        if as_json:
            echo_json(result)
            return
        for line in result:
            c = line.commit
            click.echo(f"{c.id[:10]} {c.author:<12} {c.time:%Y-%m-%d}  {line.line}")
        return
    entries = engine.blame(store, memory_id, rev=branch)
    if as_json:
        echo_json(entries)
    else:
        render_log(entries, show_changes=True)


@click.command()
@click.argument("base", metavar="A")
@click.argument("target", metavar="B", required=False)
@json_option
@pass_state
def diff(state: CtxState, base: str, target: str | None, as_json: bool) -> None:
    """Show memories added, changed and removed from A to B (default: HEAD)

    A and B are branches, commits, or forms like HEAD~2 and main^.

    \b
    Example:
      ctx diff main agent/claude
      ctx diff HEAD~3
    """
    result = engine.diff(state.store(), base, target or "HEAD")
    if as_json:
        echo_json(result)
    else:
        render_diff(result)


@click.command()
@branch_option
@json_option
@pass_state
def undo(state: CtxState, branch: str | None, as_json: bool) -> None:
    """Move a branch back by one operation; undo again to redo

    \b
    Example:
      ctx undo
      ctx undo --branch agent/claude
    """
    result = engine.undo(state.store(write=True), branch)
    if as_json:
        echo_json(result)
    else:
        click.echo(
            f"Moved {result.branch} from {result.old[:10]} back to {result.new[:10]} "
            f"(undid: {result.undone})."
        )


COMMANDS = [log, blame, diff, undo]
