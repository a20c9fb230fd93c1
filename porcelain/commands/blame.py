"""The blame command: who wrote each version (or line) of a memory."""

from __future__ import annotations

from typing import cast

import click

from ctx import engine
from ctx.hub import calls
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_json,
    json_option,
    pass_state,
)
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_log, render_shown

__all__ = ["COMMANDS"]


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option(
    "--lines", is_flag=True, help="Attribute each line of the body to a commit."
)
@click.option(
    "--shown",
    is_flag=True,
    help="List the sessions the memory was shown to (hooks, MCP and HTTP recalls).",
)
@branch_option
@json_option
@pass_state
def blame(
    state: CtxState,
    memory_id: str,
    lines: bool,
    shown: bool,
    branch: str | None,
    as_json: bool,
) -> None:
    """Show every commit that touched a memory, newest first

    With --shown, the sessions it was shown to instead, oldest first: with
    the commits, which agent acted on a memory, and who wrote it.

    \b
    Example:
      ctx blame 01JD2X9K7M3Q4R5S6T7V8W9XYZ
      ctx blame 01JD2X9K7M3Q4R5S6T7V8W9XYZ --lines
      ctx blame 01JD2X9K7M3Q4R5S6T7V8W9XYZ --shown
    """
    if shown and lines:
        raise click.UsageError("Give --lines or --shown, not both.")
    if shown:
        from ctx.hub import memory_shown

        shown_to = memory_shown(state.workspace(), memory_id)
        if as_json:
            echo_json(shown_to)
        elif shown_to:
            times = engine.plural(len(shown_to), "time")
            echo(f"Shown {times}; when, how, at, agent, session:")
            render_shown(shown_to, sessions=True)
        else:
            echo("Never shown to a session.")
        return
    request = calls.BlameRequest(id=memory_id, lines=lines, branch=branch)
    if lines:
        result = cast(list[engine.BlameLine], state.call(calls.blame, request))
        if as_json:
            echo_json(result)
            return
        width = max((len(line.commit.author) for line in result), default=0)
        for line in result:
            c = line.commit
            echo(f"{c.id[:10]} {c.author:<{width}}  {c.time:%Y-%m-%d}  {line.line}")
        return
    entries = cast(list[engine.LogEntry], state.call(calls.blame, request))
    if as_json:
        echo_json(entries)
    else:
        render_log(entries, show_changes=True)


COMMANDS = [blame]
