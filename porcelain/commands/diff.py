"""The diff command: memories added, changed and removed between revisions."""

from __future__ import annotations

import click

from ctx.hub import calls
from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_diff

__all__ = ["COMMANDS"]


@click.command()
@click.argument("spec", metavar="A")
@click.argument("target", metavar="[B]", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown"]),
    default="text",
    show_default=True,
    help="markdown: a review summary a pull request can carry (tables of the "
    "memories added, changed and removed, with kinds, titles, what changed "
    "and agents; bodies; links by title).",
)
@json_option
@pass_state
def diff(
    state: CtxState, spec: str, target: str | None, fmt: str, as_json: bool
) -> None:
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
      ctx diff origin/main...origin/agent/claude --format markdown
    """
    review = fmt == "markdown"
    request = calls.DiffRequest(spec=spec, target=target, details=review)
    result = state.call(calls.diff, request)
    if as_json:
        echo_json(result)
    elif review:
        from ctx.porcelain.render_review import diff_markdown

        asked = f"{spec} {target}" if target else spec
        echo(diff_markdown(result, asked), nl=False)
    else:
        render_diff(result)


COMMANDS = [diff]
