"""Commands that write and read memories: remember, show, ls, edit, forget.

Each makes the typed call of its name (:mod:`ctx.hub.calls`), as the MCP
tool and the HTTP route of that name do, and renders its answer.
"""

from __future__ import annotations

import click

from ctx import engine
from ctx.engine import Intent
from ctx.hub import calls
from ctx.porcelain._options import (
    CtxState,
    abbrev_option,
    branch_option,
    echo_change,
    echo_json,
    id_form,
    intent_options,
    json_option,
    moment_text,
    pass_state,
    read_text,
    signed,
)
from ctx.porcelain.output import echo
from ctx.porcelain.render import NO_MATCH, kind_column, render_memory

__all__ = ["COMMANDS"]


@click.command()
@click.argument("text")
@click.option("--title", "-t", help="A one-line title.")
@click.option(
    "--kind", "-k", default="fact", show_default=True, type=click.Choice(engine.KINDS)
)
@click.option(
    "--context",
    "-c",
    default="general",
    show_default=True,
    help="Folder under memory/.",
)
@click.option(
    "--tag", multiple=True, metavar="NS:VALUE", help="A tag (can be repeated)."
)
@click.option(
    "--when",
    metavar="TIME",
    help="When it happened: 2023-05-08, 2023-05-08T13:56 (local time), with an "
    "offset, or a phrase such as yesterday (default: now).",
)
@click.option(
    "--pin",
    is_flag=True,
    help="Store under pinned/: every recall returns it first, whatever the "
    "question, while pinned memories fit in half the budget; compose puts it "
    "first too.",
)
@click.option(
    "--allow-duplicate",
    is_flag=True,
    help="Write it even if a live memory has the same text (whitespace aside).",
)
@click.option(
    "--upsert",
    is_flag=True,
    help="Update the live memory of this --kind and --title instead, if any.",
)
@intent_options("observe")
@branch_option
@json_option
@pass_state
def remember(
    state: CtxState,
    text: str,
    title: str | None,
    kind: str,
    context: str,
    tag: tuple[str, ...],
    when: str | None,
    pin: bool,
    allow_duplicate: bool,
    upsert: bool,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Write one memory as one commit and print its id

    A text a live memory of the branch already has (whitespace aside) is not
    written again: its id is printed, and a notice on stderr says so.

    TEXT is the memory's text, or - to read it from stdin.

    \b
    Example:
      ctx remember "Use UTC in every log line" --kind decision --tag project:api
      echo "long text" | ctx remember - --title "Notes"
      ctx remember --upsert --kind decision --title "Queue backend" "Postgres"
    """
    request = calls.RememberRequest(
        text=read_text(text),
        title=title,
        kind=kind,
        context=context,
        tags=tag,
        when=moment_text(when),
        pin=pin,
        allow_duplicate=allow_duplicate,
        upsert=upsert,
        branch=branch,
        **signed(who),
    )
    report = state.call(calls.remember, request, who)
    if as_json:
        echo_json(report)
        return
    echo(report.id)  # stdout holds the id alone, for `id=$(ctx remember ...)`
    pinned = f"it is now pinned ({report.path})" if report.pinned_now else ""
    changed = [pinned] if pinned else []
    if report.tags_added:
        changed.append(f"its tags now include {', '.join(report.tags_added)}")
    if report.updated:
        done = "Updated" if report.commit else "Unchanged"
        echo(
            f"Notice: {done} {report.id} (--upsert){'; ' + pinned if pinned else ''}.",
            err=True,
        )
    elif changed:
        echo(
            f"Notice: Already remembered as {report.id}: {'; '.join(changed)} "
            "(--allow-duplicate writes it again).",
            err=True,
        )
    elif report.existing:
        echo(
            f"Notice: Already remembered as {report.id}: nothing written "
            "(--allow-duplicate writes it again).",
            err=True,
        )


@click.command()
@click.argument("memory_id", metavar="ID[@REV]")
@branch_option
@json_option
@pass_state
def show(state: CtxState, memory_id: str, branch: str | None, as_json: bool) -> None:
    """Print one memory, as it is now or at a revision

    \b
    Example:
      ctx show 01JD2X9K7M3Q4R5S6T7V8W9XYZ
      ctx show 01JD2X9K7M3Q4R5S6T7V8W9XYZ@main~3
    """
    memory_id, at, rev = memory_id.partition("@")
    request = calls.GetRequest(
        id=memory_id, revision=rev if at else None, branch=branch
    )
    record = state.call(calls.get, request)
    if as_json:
        echo_json(record)
    else:
        render_memory(record)


@click.command("ls")
@click.argument("prefix", default="", metavar="[PATH-PREFIX]")
@click.option("--where", metavar="QUERY", help="Only memories the query selects.")
@click.option("--all", "show_all", is_flag=True, help="Include superseded memories.")
@click.option(
    "--sort",
    "order",
    type=click.Choice(engine.LISTING_ORDERS),
    default="newest",
    show_default=True,
    help="newest/oldest: by when it happened; kind (newest first within), "
    "title, id (order written), path.",
)
@branch_option
@abbrev_option
@json_option
@pass_state
def ls(
    state: CtxState,
    prefix: str,
    where: str | None,
    show_all: bool,
    order: str,
    branch: str | None,
    abbrev: bool,
    as_json: bool,
) -> None:
    """List memories: id, kind and title (or first line), newest first

    When nothing matches, text output is empty and stderr says
    "No memories match."; --json prints [].

    \b
    Example:
      ctx ls
      ctx ls memory/decisions --sort title
      ctx ls pinned/ --branch agent/claude
      ctx ls --where 'kind:decision AND created:>7d'
    """
    request = calls.LsRequest(
        prefix=prefix, where=where, sort=order, all=show_all, branch=branch
    )
    listing = state.call(calls.listing, request)
    for unreadable in listing.unreadable:
        echo(f"Warning: {unreadable.warning()}", err=True)
    listed = listing.memories
    if as_json:
        echo_json(listed)  # the lines alone, as the ls tool gives them
        return
    short = id_form(state.store() if abbrev else None, [m.id for m in listed], branch)
    if not listed:
        echo(NO_MATCH, err=True)
    for m in listed:
        mark = "  [conflict]" if m.conflict else ""
        echo(f"{short(m.id)}  {kind_column(m.kind)}{m.headline}{mark}")


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option("--body", metavar="TEXT", help="New text, or - for stdin.")
@click.option("--title", "-t", help="New title.")
@click.option("--kind", "-k", type=click.Choice(engine.KINDS), help="New kind.")
@click.option(
    "--tag", multiple=True, metavar="NS:VALUE", help="Add a tag (can be repeated)."
)
@click.option(
    "--untag", multiple=True, metavar="NS:VALUE", help="Remove a tag (can be repeated)."
)
@click.option(
    "--when", metavar="TIME", help="When it happened, in any form remember takes."
)
@intent_options("refine")
@branch_option
@json_option
@pass_state
def edit(
    state: CtxState,
    memory_id: str,
    body: str | None,
    title: str | None,
    kind: str | None,
    tag: tuple[str, ...],
    untag: tuple[str, ...],
    when: str | None,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Write a new version of a memory at the same path

    \b
    Example:
      ctx edit 01JD2X9K7M3Q4R5S6T7V8W9XYZ --body "UTC everywhere" --reason "wider"
    """
    request = calls.EditRequest(
        id=memory_id,
        body=read_text(body) if body is not None else None,
        title=title,
        kind=kind,
        add_tags=tag,
        remove_tags=untag,
        when=moment_text(when),
        branch=branch,
        **signed(who),
    )
    echo_change(state.call(calls.edit, request, who), as_json, "edited")


@click.command()
@click.argument("memory_id", metavar="ID")
@intent_options("forget", reason_required=True)
@branch_option
@json_option
@pass_state
def forget(
    state: CtxState,
    memory_id: str,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Delete a memory in one commit; its history stays (ctx log ID)

    \b
    Example:
      ctx forget 01JD2X9K7M3Q4R5S6T7V8W9XYZ --reason "superseded by the v2 design"
    """
    request = calls.ForgetRequest(id=memory_id, branch=branch, **signed(who))
    result = state.call(calls.forget, request, who)
    if as_json:
        echo_json(result)
    else:
        echo(f"{result.id} forgotten in {result.commit[:10]}.")


COMMANDS = [remember, show, ls, edit, forget]
