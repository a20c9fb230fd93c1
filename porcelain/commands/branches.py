"""Commands for branches: branch, branches, switch, op log, undo."""

from __future__ import annotations

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
from ctx.porcelain.render import NOT_MADE, render_ops, undo_line

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
    if (delete or force_delete) and (start_arg or start):
        raise engine.InvalidInputError(
            "-d and -D delete one branch: START and --from are for making one."
        )
    if delete or force_delete:
        result = engine.delete_branch(state.store(write=True), name, force=force_delete)
        tip = result.tip[:10]
        message = (
            f"Deleted branch {name} (was {tip}); "
            f"`ctx branch {name} {tip}` brings it back."
        )
    else:
        request = calls.BranchRequest(name=name, start=start_arg or start)
        result = state.call(calls.branch, request)
        state.used("wrote to")
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
    result = state.call(calls.branches, calls.BranchesRequest())
    if as_json:
        echo_json(result)
        return
    if not result:
        echo(f"No branches yet: {NOT_MADE}.")
        return
    width = max((len(b.name) for b in result), default=0)
    for b in result:
        # A branch file holding no commit id (damaged): listed, and said.
        tip = b.tip[:10] or "(damaged: its file holds no commit; `ctx fsck`)"
        echo(f"{'*' if b.current else ' '} {b.name:<{width}}  {tip}")


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
    store = state.store(write=True)
    info = engine.switch_branch(store, name)
    if as_json:
        echo_json(info)
    else:
        echo(f"Switched to {name} ({info.tip[:10]}).")
    from ctx.hub import FollowingStore

    if isinstance(store, FollowingStore) and store.code is not None:
        code = engine.code_branch(store.code)
        # What a read would use, made nothing: the switched-to branch where
        # the code's branch cannot name a memory branch (`dream/...`).
        used = engine.followed_branch(store, store.code, name, write=False)
        # The branch a write would use, made or not: the code's, unless no
        # memory branch can be named so.
        writes = engine.code_memory_branch(store.code, name)
        if code is not None and writes == code != name:
            # A code branch with no memory yet reads its nearest ancestor's,
            # the store's default on a tie: the switch chose that one too.
            unmade = (
                f" {code} has no memory branch yet: it reads {used}'s, and its "
                "first write starts from there."
                if used != code
                else ""
            )
            echo(
                f"Notice: commands here still follow the code's branch {code}: "
                "this store follows the code's branches (switch the code's "
                f"branch instead); {name} is used at a detached HEAD or "
                f"outside the work tree.{unmade}",
                err=True,
            )


@click.group()
def op() -> None:
    """Show the operations that moved each branch

    \b
    Example:
      ctx op log
    """


@op.command("log")
@click.option("--branch", "-b", metavar="NAME", help="Only this branch's operations.")
@click.option("-n", "--limit", type=click.IntRange(min=1), help="Show at most N.")
@json_option
@pass_state
def op_log(
    state: CtxState, branch: str | None, limit: int | None, as_json: bool
) -> None:
    """List the operations that moved each branch, newest first

    One line each: the operation's id (BRANCH@N, the N-th move of BRANCH),
    time, old -> new tip, what moved it, and the agent whose commit it added
    ("-" when it added none: a new branch, a delete, an undo). Deleted
    branches are listed too. `ctx undo --to ID` goes back to an operation.

    \b
    Example:
      ctx op log
      ctx op log --branch agent/claude -n 10
    """
    ops = engine.op_log(state.store(), branch)[:limit]
    if as_json:
        echo_json(ops)
    else:
        render_ops(ops)


@click.command()
@click.argument("steps", metavar="[N]", type=click.IntRange(min=1), default=1)
@click.option("--to", metavar="OP", help="Go back to where operation OP left it.")
@branch_option
@json_option
@pass_state
def undo(
    state: CtxState, steps: int, to: str | None, branch: str | None, as_json: bool
) -> None:
    """Move a branch back by N operations (default 1); undo again to redo

    N counts the branch's own operations (`ctx op log --branch B`), undos
    included, as git's BRANCH@{N}: `ctx undo 2` puts the branch where it was
    two operations ago. `--to OP` puts it where operation OP (an id from
    `ctx op log`, e.g. main@7) left it. An undo is itself an operation: a
    second `ctx undo` right after one redoes what it undid.

    \b
    Example:
      ctx undo
      ctx undo 3
      ctx undo --to main@7
      ctx undo --branch agent/claude
    """
    if to is not None and steps != 1:
        raise click.UsageError("Give either N or --to, not both.")
    result = engine.undo(state.store(write=True), branch, steps=steps, to=to)
    if as_json:
        echo_json(result)
    else:
        echo(undo_line(result))


COMMANDS = [branch, branches, switch, op, undo]
