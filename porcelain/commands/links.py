"""Commands for typed links: link, unlink, links.

link and unlink make the typed call of their name (:mod:`ctx.hub.calls`).
"""

from __future__ import annotations

from typing import Literal

import click

from ctx import engine
from ctx.engine import Intent
from ctx.hub import calls
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_json,
    intent_options,
    json_option,
    pass_state,
    signed,
)
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_links

__all__ = ["COMMANDS"]

_TYPE = click.option(
    "--type",
    "link_type",
    required=True,
    metavar="TYPE",
    help="Link type: " + ", ".join(engine.LINK_TYPES) + ".",
)


@click.command()
@click.argument("source", metavar="FROM")
@click.argument("target", metavar="TO")
@_TYPE
@intent_options("link")
@branch_option
@json_option
@pass_state
def link(
    state: CtxState,
    source: str,
    target: str,
    link_type: str,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Add a typed link between two memories (one file under links/)

    \b
    Example:
      ctx link 01JD2X9K7M3Q4R5S6T7V8W9XYZ 01JD2XA0000000000000000000 --type DEPENDS_ON
    """
    request = calls.LinkRequest(
        source=source, target=target, type=link_type, branch=branch, **signed(who)
    )
    result = state.call(calls.link, request, who)
    if as_json:
        echo_json(result)
    elif result.commit is None:
        echo("The link already exists: nothing to commit.")
    else:
        echo(f"Linked in {result.commit[:10]}: {result.path}")


@click.command()
@click.argument("source", metavar="FROM")
@click.argument("target", metavar="TO")
@_TYPE
@intent_options("unlink")
@branch_option
@json_option
@pass_state
def unlink(
    state: CtxState,
    source: str,
    target: str,
    link_type: str,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Remove a typed link between two memories

    \b
    Example:
      ctx unlink 01JD2X9K7M3Q4R5S6T7V8W9XYZ 01JD2XA0000000000000000000 --type DEPENDS_ON
    """
    request = calls.UnlinkRequest(
        source=source, target=target, type=link_type, branch=branch, **signed(who)
    )
    result = state.call(calls.unlink, request, who)
    if as_json:
        echo_json(result)
    else:
        echo(f"Unlinked in {result.commit[:10]}.")


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option("--in", "incoming", is_flag=True, help="Only links pointing at ID.")
@click.option("--out", "outgoing", is_flag=True, help="Only links leaving ID.")
@branch_option
@json_option
@pass_state
def links(
    state: CtxState,
    memory_id: str,
    incoming: bool,
    outgoing: bool,
    branch: str | None,
    as_json: bool,
) -> None:
    """List the links of a memory

    \b
    Example:
      ctx links 01JD2X9K7M3Q4R5S6T7V8W9XYZ --out
    """
    direction: Literal["in", "out", "both"] = "both"
    if incoming != outgoing:
        direction = "in" if incoming else "out"
    records = engine.list_links(
        state.store(), memory_id, direction=direction, rev=branch
    )
    if as_json:
        echo_json(records)
    else:
        render_links(records)


COMMANDS = [link, unlink, links]
