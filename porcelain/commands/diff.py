"""The diff command: memories added, changed and removed between revisions."""

from __future__ import annotations

import click

from ctx import engine
from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.render import render_diff

__all__ = ["COMMANDS"]


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


COMMANDS = [diff]
