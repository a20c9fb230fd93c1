"""The command that sends memories out: export (the ctx-export format)."""

from __future__ import annotations

import sys

import click

from ctx import engine
from ctx.porcelain._options import CtxState, branch_option, now, pass_state
from ctx.porcelain.output import echo

__all__ = ["COMMANDS"]


@click.command()
@click.option("--where", metavar="QUERY", help="Only the memories the query selects.")
@branch_option
@pass_state
def export(state: CtxState, where: str | None, branch: str | None) -> None:
    """Write a branch's memories and links as JSON Lines to stdout

    The format (docs/export-format.md) round-trips exactly through
    `ctx import`. With --where, links are kept when both ends are exported.
    The output is JSON already, so there is no --json.

    \b
    Example:
      ctx export > memory.jsonl
      ctx export --where 'tag:project:api' --branch agent/claude
    """
    store = state.store()
    ids = None
    if where is not None:
        ids = [
            s.record.memory.id
            for s in engine.select(store, where, now=now(), rev=branch)
        ]
    lines = engine.export_lines(store, rev=branch, ids=ids)
    for unreadable in lines.unreadable:
        echo(f"Warning: {unreadable.warning()}", err=True)
    out = sys.stdout.buffer
    for line in lines:
        out.write(line)
    out.flush()


COMMANDS = [export]
