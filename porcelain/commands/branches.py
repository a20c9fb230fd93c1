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
@click.argument("start_arg", metavar="[START]", required=False)
@click.option("--from", "start", metavar="REV", help="Start point (default: HEAD).")
@click.option(
    "-d", "--delete", is_flag=True, help="Delete the branch if its work is merged."
)
@click.option(
    "-D", "force_delete", is_flag=True, help="Delete the branch, merged or not."
)
@json_option
@pass_state
def branch(
    state: CtxState,
    name: str,
    start_arg: str | None,
    start: str | None,
    delete: bool,
    force_delete: bool,
    as_json: bool,
) -> None:
    """Create a branch at START (default: HEAD), or delete one with -d/-D

    As in git, -d refuses a branch whose tip no other branch contains (its
    work would be left behind); -D deletes it anyway. Either says the tip,
    and the command that brings the branch back.

    \b
    Example:
      ctx branch agent/claude
      ctx branch experiment main~3
      ctx branch -d experiment
    """
    if start_arg and start:
        raise click.UsageError("Give the start point once: START or --from.")
    store = state.store(write=True)
    if delete or force_delete:
        result = engine.delete_branch(store, name, force=force_delete)
        tip = result.tip[:10]
        message = (
            f"Deleted branch {name} (was {tip}); "
            f"`ctx branch {name} {tip}` brings it back."
        )
    else:
        result = engine.create_branch(store, name, start_arg or start)
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
