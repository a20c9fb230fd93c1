"""Commands over the hub's indexes: recall, search, reindex, index status."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from ctx.porcelain._options import (
    CtxState,
    abbrev_option,
    branch_name_option,
    echo_json,
    id_form,
    json_option,
    parse_when,
    pass_state,
)
from ctx.porcelain.commands.feedback import learn, weights
from ctx.porcelain.output import echo
from ctx.porcelain.render_recall import (
    render_index_status,
    render_recall,
    render_reindex,
)

if TYPE_CHECKING:
    from ctx.hub import RecallResult

__all__ = ["COMMANDS"]


def _report(notices: Sequence[str], warnings: Sequence[str] = ()) -> None:
    """Prints a result's notices and warnings on stderr, before the result."""
    for notice in notices:
        echo(f"Notice: {notice}", err=True)
    for warning in warnings:
        echo(f"Warning: {warning}", err=True)


def _id_form(
    state: CtxState, result: RecallResult, abbrev: bool
) -> Callable[[str], str]:
    """Returns how the hits' ids are printed: whole, or with ``--abbrev`` short."""
    store = state.store() if abbrev and result.hits else None
    return id_form(store, [hit.id for hit in result.hits], result.commit)


def _now_option(func: click.decorators.FC) -> click.decorators.FC:
    return click.option(
        "--now",
        "now_",
        metavar="TIME",
        help="The moment the query is asked: 2023-05-08, 2023-05-08T13:56 (local "
        "time), with an offset, or a phrase such as yesterday.",
    )(func)


def _format_option(func: click.decorators.FC) -> click.decorators.FC:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "markdown"]),
        default="text",
        show_default=True,
        help="markdown: a block ready to paste into a prompt.",
    )(func)


_ASK = "_ask"  # the hidden command `ctx recall QUERY` runs


class _AskContext(click.Context):
    @property
    def command_path(self) -> str:
        return super().command_path.rstrip()  # "ctx recall", not "ctx recall _ask"


class _RecallGroup(click.Group):
    """``ctx recall QUERY`` recalls; ``ctx recall learn|weights`` are commands.

    Anything but a subcommand's name runs the hidden ``_ask`` command, under
    the group's own name (a query that is exactly "learn" or "weights" is
    read as the subcommand: reword it).
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            args = [_ASK, *args]
        return super().parse_args(ctx, args)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        return ("" if name == _ASK else name), command, rest


@click.group(name="recall", cls=_RecallGroup, no_args_is_help=False)
def recall_group() -> None:
    """Recall memories for a question; learn from feedback"""


@recall_group.command(name=_ASK, hidden=True, context_settings={})
@click.argument("query")
@click.option(
    "--budget",
    type=int,
    metavar="TOKENS",
    # The hub's RecallConfig.budget; a test keeps the two equal.
    help="Tokens to fill.  [default: budget under [recall] in the store's "
    "config.toml, else 1500]",
)
@branch_name_option
@click.option(
    "--with",
    "overlay",
    multiple=True,
    metavar="BRANCH",
    help="Add the memories of another branch that this one lacks (repeatable).",
)
@click.option(
    "--at",
    metavar="REV|TIME",
    help="Recall as the store stood at a revision or a time (the forms of --now).",
)
@_now_option
@click.option(
    "--all",
    "include_all",
    is_flag=True,
    help="Keep superseded and archived (tier:off-context) memories.",
)
@click.option("--explain", is_flag=True, help="Show each hit's channels and blame.")
@click.option(
    "--reviewed-only",
    is_flag=True,
    help="Read only reviewed memory: the reviewed branch (main), no --with "
    "(as [recall] reviewed_only).",
)
@_format_option
@abbrev_option
@json_option
@pass_state
def recall(
    state: CtxState,
    query: str,
    budget: int | None,
    branch: str | None,
    overlay: tuple[str, ...],
    at: str | None,
    now_: str | None,
    include_all: bool,
    explain: bool,
    reviewed_only: bool,
    fmt: str,
    abbrev: bool,
    as_json: bool,
) -> None:
    """Print the pinned and most relevant memories, packed into a token budget

    Hybrid ranking (BM25, vectors, typo-tolerant words) with temporal gravity
    for questions that name a time ("last week", "in March"). --branch names
    a branch; --at recalls as it stood at a commit (main~3) or a date.
    The JSON's recall_id names the recall to `ctx feedback`; `ctx recall
    learn` and `ctx recall weights` tune the weights from that feedback.

    \b
    Example:
      ctx recall "what did we decide about auth?" --budget 800
      ctx recall "deploys last week" --branch agent/alice --with main --explain
    """
    from ctx.hub import recall as hub_recall

    if reviewed_only and (branch or overlay):
        raise click.UsageError("Give --branch or --with, or --reviewed-only.")
    state.used("recalled from")
    result = hub_recall(
        state.workspace(),
        query,
        budget=budget,
        branch=branch,
        overlay=overlay,
        at=at,
        now=parse_when(now_, "--now"),
        include_superseded=include_all,
        explain=explain,
        reviewed_only=reviewed_only,
    )
    _report(result.notices, result.warnings)
    if as_json:
        echo_json(result)
    else:
        short = _id_form(state, result, abbrev and fmt == "text")
        render_recall(result, fmt=fmt, overlay=bool(overlay), short=short)


@click.command()
@click.argument("query")
@click.option("--kind", metavar="KIND", help="Only memories of this kind.")
@click.option(
    "--tag",
    metavar="TAG",
    help="Only memories with this tag (NS:VALUE), or a tag of this namespace or "
    "value (any letter case).",
)
@click.option("--context", metavar="NAME", help="Only memories in this context.")
@click.option(
    "-n",
    "limit",
    type=int,
    default=10,
    show_default=True,
    metavar="N",
    help="Show at most N memories.",
)
@branch_name_option
@_now_option
@click.option("--explain", is_flag=True, help="Show each hit's channels and blame.")
@abbrev_option
@json_option
@pass_state
def search(
    state: CtxState,
    query: str,
    kind: str | None,
    tag: str | None,
    context: str | None,
    limit: int,
    branch: str | None,
    now_: str | None,
    explain: bool,
    abbrev: bool,
    as_json: bool,
) -> None:
    """List the memories that best match a query, best first (no budget)

    The same ranking as recall, typo-tolerant words included ("postgress"
    finds Postgres), as a plain list: no pinned memories first, no budget.

    \b
    Example:
      ctx search "postgres" --kind decision -n 5
      ctx search "get_usr_by_id"
    """
    from ctx.hub import search as hub_search

    state.used("searched")
    result = hub_search(
        state.workspace(),
        query,
        limit=limit,
        kind=kind,
        tag=tag,
        context=context,
        branch=branch,
        now=parse_when(now_, "--now"),
        explain=explain,
    )
    _report(result.notices, result.warnings)
    if as_json:
        echo_json(result)
    else:
        short = _id_form(state, result, abbrev)
        render_recall(result, fmt="text", overlay=False, short=short)


@click.command(name="reindex")
@click.option(
    "--re-embed",
    is_flag=True,
    help="Embed every memory again instead of keeping the vectors it has.",
)
@json_option
@pass_state
def reindex_command(state: CtxState, re_embed: bool, as_json: bool) -> None:
    """Rebuild the search indexes of every branch from the commits

    Vectors already made by the configured embedder are kept (a memory's
    vector depends only on its text); --re-embed makes them again.

    \b
    Example:
      ctx reindex
      ctx reindex --re-embed
    """

    def progress(done: int, total: int) -> None:
        if total >= 2_000 and sys.stderr.isatty():
            # A carriage return of our own, to redraw the line: not escaped.
            click.echo(f"\rIndexed {done:,} of {total:,}", err=True, nl=done == total)

    from ctx.hub import reindex

    report = reindex(state.workspace(), re_embed=re_embed, progress=progress)
    _report(report.notices, report.warnings)
    if as_json:
        echo_json(report)
    else:
        render_reindex(report)


@click.group(name="index")
def index_group() -> None:
    """Inspect the search indexes

    \b
    Example:
      ctx index status
    """


@index_group.command(name="status")
@json_option
@pass_state
def index_status_command(state: CtxState, as_json: bool) -> None:
    """Show, per branch, the indexed commit, and the index's documents and size

    \b
    Example:
      ctx index status --json
    """
    from ctx.hub import index_status

    status = index_status(state.workspace())
    _report(status.notices)
    if as_json:
        echo_json(status)
    else:
        render_index_status(status)


recall.context_class = _AskContext
recall_group.add_command(learn)
recall_group.add_command(weights)

COMMANDS = [recall_group, search, reindex_command, index_group]
