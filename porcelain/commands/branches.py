"""Commands for branches: branch, branches, switch, undo."""

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

__all__ = ["COMMANDS"]


@click.command()
@click.argument("name")
@click.option("--from", "start", metavar="REV", help="Start point (default: HEAD).")
@click.option("-d", "--delete", is_flag=True, help="Delete the branch instead.")
@json_option
@pass_state
def branch(
    state: CtxState, name: str, start: str | None, delete: bool, as_json: bool
) -> None:
    """Create a branch (or delete one with -d)

    \b
    Example:
      ctx branch agent/claude
      ctx branch experiment --from main~3
      ctx branch -d experiment
    """
    store = state.store(write=True)
    if delete:
        result = engine.delete_branch(store, name)
        message = f"Deleted branch {name} (was {result.tip[:10]})."
    else:
        result = engine.create_branch(store, name, start)
        message = f"Created branch {name} at {result.tip[:10]}."
    if as_json:
        echo_json(result)
    else:
        echo(message)


@click.command()
@json_option
@pass_state
def branches(state: CtxState, as_json: bool) -> None:
    """List branches; * marks the current one

    \b
    Example:
      ctx branches
    """
    result = engine.list_branches(state.store())
    if as_json:
        echo_json(result)
        return
    for b in result:
        echo(f"{'*' if b.current else ' '} {b.name:<24} {b.tip[:10]}")


@click.command()
@click.argument("name")
@json_option
@pass_state
def switch(state: CtxState, name: str, as_json: bool) -> None:
    """Make NAME the branch every command uses by default

    \b
    Example:
      ctx switch agent/claude
    """
    info = engine.switch_branch(state.store(write=True), name)
    if as_json:
        echo_json(info)
    else:
        echo(f"Switched to {name} ({info.tip[:10]}).")


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
        echo(
            f"Moved {result.branch} from {result.old[:10]} back to {result.new[:10]} "
            f"(undid: {result.undone})."
        )


COMMANDS = [branch, branches, switch, undo]
