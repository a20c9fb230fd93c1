"""Commands for tags and tiers: tag, untag, tags."""

from __future__ import annotations

import click

from ctx import engine
from ctx.engine import Intent
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_change,
    echo_json,
    intent_options,
    json_option,
    pass_state,
)
from ctx.porcelain.output import echo

__all__ = ["COMMANDS"]


@click.command("tag")
@click.argument("memory_id", metavar="ID")
@click.argument("tags", nargs=-1, required=True, metavar="TAG...")
@intent_options("refine")
@branch_option
@json_option
@pass_state
def tag_(
    state: CtxState,
    memory_id: str,
    tags: tuple[str, ...],
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Add tags to a memory; a tier:… tag replaces its tier

    Tiers: tier:pinned, tier:reference, tier:working, tier:off-context.
    Tagging twice changes nothing.

    \b
    Example:
      ctx tag 01JD2X9K7M3Q4R5S6T7V8W9XYZ project:api tier:reference
    """
    result = engine.tag(state.store(write=True), memory_id, tags, who, branch=branch)
    echo_change(result, as_json, "tagged")


@click.command()
@click.argument("memory_id", metavar="ID")
@click.argument("tags", nargs=-1, required=True, metavar="TAG...")
@intent_options("refine")
@branch_option
@json_option
@pass_state
def untag(
    state: CtxState,
    memory_id: str,
    tags: tuple[str, ...],
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Remove tags from a memory

    \b
    Example:
      ctx untag 01JD2X9K7M3Q4R5S6T7V8W9XYZ tier:reference
    """
    result = engine.untag(state.store(write=True), memory_id, tags, who, branch=branch)
    echo_change(result, as_json, "untagged")


@click.command()
@click.option(
    "--prefix", default="", metavar="TEXT", help="Only tags starting with TEXT."
)
@branch_option
@json_option
@pass_state
def tags(state: CtxState, prefix: str, branch: str | None, as_json: bool) -> None:
    """List tags with how many memories carry each, most used first

    \b
    Example:
      ctx tags
      ctx tags --prefix task:
    """
    counts = engine.count_tags(state.store(), prefix=prefix, rev=branch)
    if as_json:
        echo_json(counts)
        return
    for item in counts:
        echo(f"{item.count:>6}  {item.tag}")


COMMANDS = [tag_, untag, tags]
