"""Commands that select and compose: query, compose, and the view group."""

from __future__ import annotations

import click

from ctx import engine
from ctx.engine import FORMATS, Intent, plural
from ctx.hub import calls
from ctx.porcelain._options import (
    CtxState,
    abbrev_option,
    branch_option,
    echo_json,
    id_form,
    intent_options,
    json_option,
    now,
    pass_state,
)
from ctx.porcelain.output import echo
from ctx.porcelain.render import NO_MATCH, kind_column

__all__ = ["COMMANDS"]

_FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="How to render (default: markdown; a view's own format).",
)


@click.command()
@click.argument("where", metavar="QUERY")
@click.option("--all", "show_all", is_flag=True, help="Include superseded memories.")
@branch_option
@abbrev_option
@json_option
@pass_state
def query(
    state: CtxState,
    where: str,
    show_all: bool,
    branch: str | None,
    abbrev: bool,
    as_json: bool,
) -> None:
    """List the memories a query selects

    Fields: kind: tag: context: area: id: agent: text: title: from: to: has:
    created: updated: tokens:, combined with AND, OR, NOT and parentheses;
    bare words search the text. docs/query.md has the whole language.
    When nothing matches, stderr says "No memories match." (--json: []).

    \b
    Example:
      ctx query '(kind:decision OR kind:pattern) AND created:>7d'
      ctx query 'tag:tier:working AND NOT has:summary'
    """
    request = calls.QueryRequest(where=where, all=show_all, branch=branch)
    chosen = state.call(calls.query, request)
    if as_json:
        echo_json(chosen)
        return
    short = id_form(state.store() if abbrev else None, [m.id for m in chosen], branch)
    if not chosen:
        echo(NO_MATCH, err=True)
    for m in chosen:
        echo(f"{short(m.id)}  {kind_column(m.kind)}{m.headline}")


def _emit(result: engine.Composition, as_json: bool) -> None:
    if as_json:
        echo_json(result)
        return
    if result.format == "json":  # a data format: JSON escapes what it must
        click.echo(result.text, nl=False)
    else:
        echo(result.text, nl=False)
    for item in result.left_out:
        tokens = plural(item.tokens, "token")
        echo(f"left out: {item.id} ({item.reason}, {tokens})", err=True)


@click.command()
@click.option("--where", metavar="QUERY", help="Which memories (default: all).")
@click.option(
    "--budget", type=int, required=True, metavar="TOKENS", help="Most tokens to return."
)
@_FORMAT
@branch_option
@json_option
@pass_state
def compose(
    state: CtxState,
    where: str | None,
    budget: int,
    fmt: str | None,
    branch: str | None,
    as_json: bool,
) -> None:
    """Render selected memories into a context of at most TOKENS tokens

    Pinned first, then reference, then working; newest first within a tier;
    grouped by kind, with ids and what each depends on. What did not fit is
    listed on stderr. Each memory's text is quoted as data (markdown, text).

    \b
    Example:
      ctx compose --where 'kind:decision AND tag:project:api' --budget 800
    """
    result = engine.compose(
        state.store(),
        budget=budget,
        now=now(),
        where=where,
        fmt=fmt or "markdown",
        rev=branch,
    )
    _emit(result, as_json)


@click.group()
def view() -> None:
    """Store, list and render named selections (views)

    \b
    Example:
      ctx view create decisions --where kind:decision --budget 1000
      ctx view render decisions
    """


@view.command("create")
@click.argument("name")
@click.option("--where", required=True, metavar="QUERY", help="Which memories.")
@click.option(
    "--budget", type=int, required=True, metavar="TOKENS", help="Default budget."
)
@_FORMAT
@click.option("--description", metavar="TEXT", help="What the view is for.")
@click.option("--replace", is_flag=True, help="Replace a view of the same name.")
@intent_options("view")
@branch_option
@json_option
@pass_state
def view_create(
    state: CtxState,
    name: str,
    where: str,
    budget: int,
    fmt: str | None,
    description: str | None,
    replace: bool,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Store a view (a commit, like any memory)

    \b
    Example:
      ctx view create api --where 'tag:project:api' --budget 1500
    """
    result = engine.create_view(
        state.store(write=True),
        name,
        where,
        budget,
        who,
        fmt=fmt or "markdown",
        description=description,
        replace=replace,
        branch=branch,
    )
    commit = result.commit
    if as_json:
        echo_json(result)
    else:
        echo(f"View {name} stored in {commit[:10] if commit else 'no new commit'}.")


@view.command("list")
@branch_option
@json_option
@pass_state
def view_list(state: CtxState, branch: str | None, as_json: bool) -> None:
    """List stored views

    \b
    Example:
      ctx view list
    """
    views = engine.list_views(state.store(), rev=branch)
    if as_json:
        echo_json(views)
        return
    for v in views:
        echo(f"{v.name:<20} {v.budget:>6}  {v.format:<8}  {v.where}")


@view.command("show")
@click.argument("name")
@branch_option
@json_option
@pass_state
def view_show(state: CtxState, name: str, branch: str | None, as_json: bool) -> None:
    """Print a stored view's definition

    \b
    Example:
      ctx view show api
    """
    v = engine.get_view(state.store(), name, rev=branch)
    if as_json:
        echo_json(v)
        return
    echo(
        f"name:     {v.name}\nwhere:    {v.where}\n"
        f"budget:   {v.budget}\nformat:   {v.format}"
    )
    if v.description:
        echo(f"about:    {v.description}")


@view.command("render")
@click.argument("name")
@click.option(
    "--budget", type=int, metavar="TOKENS", help="Override the view's budget."
)
@_FORMAT
@branch_option
@json_option
@pass_state
def view_render(
    state: CtxState,
    name: str,
    budget: int | None,
    fmt: str | None,
    branch: str | None,
    as_json: bool,
) -> None:
    """Compose a stored view

    \b
    Example:
      ctx view render api --budget 500 --format text
    """
    result = engine.render_view(
        state.store(), name, now=now(), budget=budget, fmt=fmt, rev=branch
    )
    _emit(result, as_json)


@view.command("delete")
@click.argument("name")
@intent_options("view")
@branch_option
@json_option
@pass_state
def view_delete(
    state: CtxState,
    name: str,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Delete a stored view

    \b
    Example:
      ctx view delete api
    """
    result = engine.delete_view(state.store(write=True), name, who, branch=branch)
    if as_json:
        echo_json(result)
    else:
        echo(f"View {name} deleted in {result.commit[:10]}.")


COMMANDS = [query, compose, view]
