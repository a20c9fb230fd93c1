"""Commands for provenance: summarize, supersede, trace, related, expand.

Each makes the typed call of its name (:mod:`ctx.hub.calls`).
"""

from __future__ import annotations

import click

from ctx.engine import Intent
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
from ctx.porcelain.render import kind_column, render_memory, render_trace

__all__ = ["COMMANDS"]


@click.command()
@click.argument("memory_ids", nargs=-1, required=True, metavar="ID...")
@click.option(
    "--body", required=True, metavar="TEXT", help="The summary (or - for stdin)."
)
@click.option("--title", "-t", help="A one-line title.")
@click.option("--context", "-c", default="summaries", show_default=True, help="Folder.")
@click.option(
    "--tag", multiple=True, metavar="NS:VALUE", help="A tag (can be repeated)."
)
@click.option(
    "--archive-sources", is_flag=True, help="Move the sources to tier:off-context."
)
@intent_options("refine")
@branch_option
@json_option
@pass_state
def summarize(
    state: CtxState,
    memory_ids: tuple[str, ...],
    body: str,
    title: str | None,
    context: str,
    tag: tuple[str, ...],
    archive_sources: bool,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Write a summary derived from memories, in one commit

    Each source gets a DERIVED_FROM link from the summary; with
    --archive-sources the sources leave the context (tier:off-context).

    \b
    Example:
      ctx summarize 01JD2X9K7M3Q4R5S6T7V8W9XYZ 01JD2XA0000000000000000000 \\
          --body "Queue: Postgres, polled every 2 s" --archive-sources
    """
    request = calls.SummarizeRequest(
        ids=memory_ids,
        body=read_text(body),
        title=title,
        context=context,
        tags=tag,
        archive=archive_sources,
        branch=branch,
        **signed(who),
    )
    result = state.call(calls.summarize, request, who)
    if as_json:
        echo_json(result)
    else:
        echo(result.id)


@click.command()
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@intent_options("refine")
@branch_option
@json_option
@pass_state
def supersede(
    state: CtxState,
    old: str,
    new: str,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Record that NEW replaces OLD; listings then hide OLD

    \b
    Example:
      ctx supersede 01JD2X9K7M3Q4R5S6T7V8W9XYZ 01JD2XA0000000000000000000 \\
          --reason "moved to Postgres 16"
    """
    request = calls.SupersedeRequest(old=old, new=new, branch=branch, **signed(who))
    result = state.call(calls.supersede, request, who)
    if as_json:
        echo_json(result)
    elif result.commit is None:
        echo(f"{result.new} already supersedes {result.old}.")
    else:
        echo(f"{result.new} supersedes {result.old} ({result.commit[:10]}).")


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option(
    "--reverse", is_flag=True, help="What derives from or depends on ID instead."
)
@click.option(
    "--depth", type=int, default=5, show_default=True, help="Levels to follow."
)
@branch_option
@json_option
@pass_state
def trace(
    state: CtxState,
    memory_id: str,
    reverse: bool,
    depth: int,
    branch: str | None,
    as_json: bool,
) -> None:
    """Show what a memory was derived from or depends on, as a tree

    \b
    Example:
      ctx trace 01JD2X9K7M3Q4R5S6T7V8W9XYZ
      ctx trace 01JD2X9K7M3Q4R5S6T7V8W9XYZ --reverse --depth 2
    """
    request = calls.TraceRequest(
        id=memory_id, reverse=reverse, depth=depth, branch=branch
    )
    root = state.call(calls.trace, request)
    if as_json:
        echo_json(root)
    else:
        render_trace(root)


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option("--depth", type=int, default=2, show_default=True, help="Links to walk.")
@click.option(
    "--type",
    "types",
    multiple=True,
    metavar="TYPE",
    help="Only links of TYPE (can be repeated).",
)
@branch_option
@json_option
@pass_state
def related(
    state: CtxState,
    memory_id: str,
    depth: int,
    types: tuple[str, ...],
    branch: str | None,
    as_json: bool,
) -> None:
    """List the memories within a few links of one, nearest first

    \b
    Example:
      ctx related 01JD2X9K7M3Q4R5S6T7V8W9XYZ --depth 2 --type DEPENDS_ON
    """
    request = calls.RelatedRequest(
        id=memory_id, depth=depth, types=types, branch=branch
    )
    hits = state.call(calls.related, request)
    if as_json:
        echo_json(hits)
        return
    for hit in hits:
        arrow = "->" if hit.direction == "out" else "<-"
        echo(
            f"{hit.distance}  {hit.id}  {kind_column(hit.kind)}{hit.headline}"
            f"  ({hit.source} {arrow} {hit.via})"
        )


@click.command()
@click.argument("memory_id", metavar="ID")
@branch_option
@json_option
@pass_state
def expand(state: CtxState, memory_id: str, branch: str | None, as_json: bool) -> None:
    """Print in full the sources a summary was derived from

    \b
    Example:
      ctx expand 01JD2X9K7M3Q4R5S6T7V8W9XYZ
    """
    records = state.call(calls.expand, calls.ExpandRequest(id=memory_id, branch=branch))
    if as_json:
        echo_json(records)
        return
    for n, record in enumerate(records):
        if n:
            echo("\n" + "-" * 40)
        render_memory(record)


COMMANDS = [summarize, supersede, trace, related, expand]
