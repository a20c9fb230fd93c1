"""The blame command: who wrote each version (or line) of a memory."""

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
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_log

__all__ = ["COMMANDS"]


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
        width = max((len(line.commit.author) for line in result), default=0)
        for line in result:
            c = line.commit
            echo(f"{c.id[:10]} {c.author:<{width}}  {c.time:%Y-%m-%d}  {line.line}")
        return
    entries = engine.blame(store, memory_id, rev=branch)
    if as_json:
        echo_json(entries)
    else:
        render_log(entries, show_changes=True)


COMMANDS = [blame]
