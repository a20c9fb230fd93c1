"""The sync command: memory of merged code branches into the target's."""

from __future__ import annotations

import click

from ctx import engine, hub
from ctx.engine import Intent, plural
from ctx.porcelain._options import (
    CtxState,
    echo_json,
    intent_options,
    json_option,
    pass_state,
)
from ctx.porcelain.commands.merge import warn_secrets
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_merge

__all__ = ["COMMANDS"]


@click.command()
@click.option(
    "--into",
    metavar="BRANCH",
    help="The code branch merged into (default: the code's default branch: "
    "origin's HEAD, else main, else master).",
)
@click.option(
    "--dry-run", is_flag=True, help="Say what would be merged; write nothing."
)
@intent_options("merge", secrets=False)
@json_option
@pass_state
def sync(
    state: CtxState, into: str | None, dry_run: bool, who: Intent, as_json: bool
) -> None:
    """Merge the memory of merged code branches into the target's memory

    Run in the code's work tree. A memory branch named as a code branch that
    is merged into the target code branch (its tip in the target's history,
    and moved beyond where it forked; a deleted one judged by the code tip
    its memory recorded) is merged into the memory branch of the target, as
    `ctx merge` merges; one merged already is left alone, so a second run
    does nothing. A merge that leaves conflicts is committed, printed, and
    exits with 5 (docs/branches.md).

    \b
    Example:
      ctx sync
      ctx sync --into release --dry-run
    """
    result = hub.sync_branches(state.workspace(), who, into=into, dry_run=dry_run)
    if as_json:
        echo_json(result)
    else:
        _render(result)
    for merged in result.merges:
        warn_secrets(merged)
    if any(m.conflicts for m in result.merges):
        click.get_current_context().exit(engine.ConflictError.exit_code)


def _render(result: engine.SyncResult) -> None:
    if not result.merges:
        echo(f"Nothing to merge into {result.into}.")
    for merged in result.merges:
        if not result.dry_run:
            render_merge(merged)
            continue
        kept = ""
        if merged.conflicts:
            kept = f", {plural(len(merged.conflicts), 'conflict')}"
        how = "fast-forward" if merged.fast_forward else "merge"
        echo(f"Would merge {merged.source} into {merged.target} ({how}{kept}).")
    if result.waiting:
        names = ", ".join(result.waiting)
        echo(f"Not merged in the code yet: {names}.")
    for name in result.gone:
        echo(
            f"Code branch {name} is gone, and nothing in {result.into}'s history "
            "shows it merged (a squash or rebase merge leaves no trace): `ctx "
            f"merge {name} --into {result.into}` merges its memory, `ctx branch "
            f"-D {name}` drops it."
        )


COMMANDS = [sync]
