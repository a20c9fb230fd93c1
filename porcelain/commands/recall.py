"""Commands over the hub's indexes: recall, search, reindex, index status."""

from __future__ import annotations

import re
import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING

import click
import msgspec

from ctx.engine import InvalidInputError
from ctx.hub.server.client import ask, start_hub
from ctx.hub.server.wire import Reply, Request
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_json,
    json_option,
    now,
    parse_when,
    pass_state,
)
from ctx.porcelain.render_recall import (
    render_index_status,
    render_recall,
    render_reindex,
)

if TYPE_CHECKING:  # the hub (numpy, Tantivy, onnxruntime) loads only when used
    from ctx.hub.config import HubConfig
    from ctx.hub.index.projection import Projection

__all__ = ["COMMANDS"]

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _open(state: CtxState) -> tuple[Projection, HubConfig]:
    from ctx.hub.config import load_config
    from ctx.hub.index.projection import Projection

    store = state.store()
    config = load_config(store.path)
    # Neither reindex nor index status searches: an HNSW graph stays on disk.
    return Projection.for_store(store, config, exact=True), config


def _notices(projection: Projection) -> None:
    for notice in projection.notices:
        click.echo(f"Notice: {notice}", err=True)
    for warning in projection.warnings:
        click.echo(f"Warning: {warning}", err=True)
    projection.notices.clear()
    projection.warnings.clear()


def _ask(state: CtxState, request: Request) -> Reply:
    """Asks the store's running hub, or answers in this process if none runs.

    Answering in-process, it then starts a hub for the next call when the
    store's config allows (``[hub] autostart``).
    """
    path, default = state.locate()
    on_disk = not default or (path / "git").is_dir()
    if on_disk:
        reply = ask(path, request)
        if reply is not None:
            return reply
    from ctx.hub.server.service import Answerer

    answerer = Answerer(state.store(), now, one_shot=True)
    reply = answerer.answer(request)
    config = answerer.config
    if on_disk and config is not None and config.hub.autostart:
        start_hub(path, config.hub.idle_minutes)
    return reply


def _report(
    reply: Reply,
    started: float,
    as_json: bool,
    *,
    fmt: str,
    overlay: bool,
) -> None:
    """Prints notices and warnings on stderr, then the result (timed from start)."""
    assert reply.result is not None
    result = msgspec.structs.replace(
        reply.result, seconds=time.perf_counter() - started
    )
    for notice in reply.notices:
        click.echo(f"Notice: {notice}", err=True)
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if as_json:
        echo_json(result)
    else:
        render_recall(result, fmt=fmt, overlay=overlay)


def _moment(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_when(value)
    except InvalidInputError:
        raise InvalidInputError(
            f"{option} {value!r} is not a date.",
            hint="Use ISO 8601, e.g. 2023-05-08 or 2023-05-08T13:56.",
        ) from None


def _format_option(func: click.decorators.FC) -> click.decorators.FC:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "markdown"]),
        default="text",
        show_default=True,
        help="markdown: a block ready to paste into a prompt.",
    )(func)


@click.command()
@click.argument("query")
@click.option("--budget", type=int, metavar="TOKENS", help="Tokens to fill.")
@branch_option
@click.option(
    "--with",
    "overlay",
    multiple=True,
    metavar="BRANCH",
    help="Add the memories of another branch that this one lacks (repeatable).",
)
@click.option(
    "--at", metavar="REV|DATE", help="Recall as the store stood at a commit or date."
)
@click.option("--now", "now_", metavar="DATE", help="The moment the query is asked.")
@click.option("--all", "include_all", is_flag=True, help="Keep superseded memories.")
@click.option("--explain", is_flag=True, help="Show each hit's channels and blame.")
@_format_option
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
    fmt: str,
    as_json: bool,
) -> None:
    """Print the pinned and most relevant memories, packed into a token budget

    Hybrid ranking (BM25, vectors, typo-tolerant words) with temporal gravity
    for questions that name a time ("last week", "in March").

    \b
    Example:
      ctx recall "what did we decide about auth?" --budget 800
      ctx recall "deploys last week" --branch agent/alice --with main --explain
    """
    started = time.perf_counter()
    asked = _moment(now_, "--now") or now()
    when = _moment(at, "--at") if at and _DATE_RE.match(at) else None
    if budget is not None and budget < 1:
        raise InvalidInputError(
            f"The budget must be at least 1 token, not {budget}.",
            hint="Try --budget 1500.",
        )
    request = Request(
        op="recall",
        query=query,
        branch=branch,
        overlay=overlay,
        at=None if when else at,
        at_time=when,
        now=asked,
        budget=budget,
        include_superseded=include_all,
        explain=explain,
    )
    _report(_ask(state, request), started, as_json, fmt=fmt, overlay=bool(overlay))


@click.command()
@click.argument("query")
@click.option("--kind", metavar="KIND", help="Only memories of this kind.")
@click.option("--tag", metavar="TAG", help="Only memories with this tag.")
@click.option("--context", metavar="NAME", help="Only memories in this context.")
@click.option("-n", "limit", type=int, default=10, show_default=True, help="Hits.")
@click.option("--fuzzy", is_flag=True, help="Tolerate typos (edit distance 1-2).")
@branch_option
@click.option("--now", "now_", metavar="DATE", help="The moment the query is asked.")
@click.option("--explain", is_flag=True, help="Show each hit's channels and blame.")
@json_option
@pass_state
def search(
    state: CtxState,
    query: str,
    kind: str | None,
    tag: str | None,
    context: str | None,
    limit: int,
    fuzzy: bool,
    branch: str | None,
    now_: str | None,
    explain: bool,
    as_json: bool,
) -> None:
    """List the memories that best match a query, best first (no budget)

    \b
    Example:
      ctx search "postgres" --kind decision -n 5
      ctx search "get_usr_by_id" --fuzzy
    """
    started = time.perf_counter()
    request = Request(
        op="search",
        query=query,
        branch=branch,
        now=_moment(now_, "--now") or now(),
        limit=limit,
        kind=kind,
        tag=tag,
        context=context,
        fuzzy=fuzzy,
        explain=explain,
    )
    _report(_ask(state, request), started, as_json, fmt="text", overlay=False)


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
    from ctx.hub.index.maintenance import reindex

    projection, _ = _open(state)

    def progress(done: int, total: int) -> None:
        if total >= 2_000 and sys.stderr.isatty():
            click.echo(f"\rIndexed {done:,} of {total:,}", err=True, nl=done == total)

    projection.progress = progress
    report = reindex(projection, re_embed=re_embed)
    _notices(projection)
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
    from ctx.hub.index.maintenance import index_status

    projection, _ = _open(state)
    status = index_status(projection)
    _notices(projection)
    if as_json:
        echo_json(status)
    else:
        render_index_status(status)


COMMANDS = [recall, search, reindex_command, index_group]
