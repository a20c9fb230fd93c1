"""The diff command: memories added, changed and removed between revisions."""

from __future__ import annotations

import click

from ctx import engine
from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.render import render_diff

__all__ = ["COMMANDS"]


@click.command()
@click.argument("spec", metavar="A")
@click.argument("target", metavar="[B]", required=False)
@json_option
@pass_state
def diff(state: CtxState, spec: str, target: str | None, as_json: bool) -> None:
    """Show memories added, changed and removed from A to B (default: HEAD)

    A and B are branches, commits, or forms like HEAD~2 and main^. As in
    git, `A..B` is `A B`, and `A...B` shows what B changed since it split
    from A (from their merge base to B); an empty side is HEAD.

    To review an agent's branch after main moved on, use `main...agent`:
    `main agent` compares the two tips, so main's own later edits show up as
    if the agent had reversed them.

    \b
    Example:
      ctx diff main...agent/claude
      ctx diff main agent/claude
      ctx diff HEAD~3
    """
    result = engine.diff_range(state.store(), spec, target)
    if as_json:
        echo_json(result)
    else:
        render_diff(result)


COMMANDS = [diff]
