"""Commands for merging branches: merge, resolve."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ctx import engine
from ctx.engine import TAKES, Intent
from ctx.hub import calls
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_json,
    intent_options,
    json_option,
    pass_state,
    read_text,
    signed,
)
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_merge

__all__ = ["COMMANDS", "merge_options", "warn_secrets"]

F = TypeVar("F", bound=Callable[..., Any])


def merge_options(func: F) -> F:
    """Adds ``--into`` and ``--prefer``, shared by ``merge`` and ``pull``."""
    func = click.option(
        "--prefer",
        type=click.Choice(engine.PREFERENCES),
        help="Settle clashes automatically instead of storing conflicts.",
    )(func)
    return click.option(
        "--into", metavar="BRANCH", help="Branch to merge into (default: current)."
    )(func)


def warn_secrets(result: engine.MergeResult) -> None:
    """Says on stderr which memories brought which secrets into the branch."""
    for found in result.secrets:
        echo(
            f"Warning: a secret ({found.kind}) came in, in {found.place()}: "
            "rotate it, and redact it from the history.",
            err=True,
        )


@click.command()
@click.argument("source", metavar="SOURCE")
@merge_options
@click.option(
    "--no-ff",
    is_flag=True,
    help="Make a merge commit even when a fast-forward would do.",
)
@intent_options("merge", secrets=False)
@json_option
@pass_state
def merge(
    state: CtxState,
    source: str,
    into: str | None,
    prefer: str | None,
    no_ff: bool,
    who: Intent,
    as_json: bool,
) -> None:
    """Three-way merge SOURCE into a branch, memory by memory

    Tags and links union; edits to different fields or lines combine; a real
    clash is stored as a conflict (both versions kept) for `ctx resolve`.
    A merge that leaves conflicts is committed, printed, and exits with 5.
    Secrets in the text it brings are named in a warning (the merge is
    made all the same).

    \b
    Example:
      ctx merge agent/claude
      ctx merge agent/codex --into main --prefer confident
    """
    request = calls.MergeRequest(
        source=source, into=into, prefer=prefer, no_ff=no_ff, **signed(who)
    )
    result = state.call(calls.merge, request, who)
    if as_json:
        echo_json(result)
    else:
        render_merge(result)
    warn_secrets(result)
    if result.conflicts:
        click.get_current_context().exit(engine.ConflictError.exit_code)


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option(
    "--take",
    type=click.Choice(TAKES),
    help="Which version to keep.",
)
@click.option(
    "--body", metavar="TEXT", help="The settled text instead (or - for stdin)."
)
@intent_options("resolve")
@branch_option
@json_option
@pass_state
def resolve(
    state: CtxState,
    memory_id: str,
    take: str | None,
    body: str | None,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Settle a merge conflict on one memory

    \b
    Example:
      ctx resolve 01JD2X9K7M3Q4R5S6T7V8W9XYZ --take theirs
      ctx resolve 01JD2X9K7M3Q4R5S6T7V8W9XYZ --body "Both: UTC in logs, local in UI"
    """
    request = calls.ResolveRequest(
        id=memory_id,
        take=take,
        body=read_text(body) if body is not None else None,
        branch=branch,
        **signed(who),
    )
    result = state.call(calls.resolve, request, who)
    if as_json:
        echo_json(result)
    else:
        echo(f"Resolved {result.id} in {result.commit[:10]}.")


COMMANDS = [merge, resolve]
