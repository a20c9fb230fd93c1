"""The log command: commits with their agent, intent, confidence and reason."""

from __future__ import annotations

import re

import click
import msgspec

from ctx import engine
from ctx.porcelain._options import (
    CtxState,
    abbrev_option,
    branch_option,
    echo_json,
    id_form,
    json_option,
    pass_state,
)
from ctx.porcelain.output import echo
from ctx.porcelain.render import NOT_MADE, render_log

__all__ = ["COMMANDS"]


@click.command()
@click.argument("target", required=False, metavar="[ID|PATH]")
@branch_option
@click.option("-n", "limit", type=int, metavar="N", help="Show at most N commits.")
@click.option(
    "--stat", "show_changes", is_flag=True, help="List the paths each commit changed."
)
@abbrev_option
@json_option
@pass_state
def log(
    state: CtxState,
    target: str | None,
    branch: str | None,
    limit: int | None,
    show_changes: bool,
    abbrev: bool,
    as_json: bool,
) -> None:
    """Show commits with their agent, intent, confidence and reason

    With an ID, only commits that touched that memory; with a PATH prefix
    (e.g. memory/decisions), only commits under it.

    \b
    Example:
      ctx log -n 5
      ctx log 01JD2X9K7M3Q4R5S6T7V8W9XYZ
      ctx log memory/decisions --branch agent/claude
    """
    store = state.store()
    if store.path is None:  # the user store's in-memory stand-in: no history
        if as_json:
            echo_json([])
        else:
            echo(f"No commits yet: {NOT_MADE}.")
        return
    entries = engine.log(store, target, rev=branch, limit=limit)
    if as_json:
        echo_json(entries)
        return
    if abbrev:
        entries = _abbreviated(store, entries, branch)
    render_log(entries, show_changes=show_changes)


_ID_RE = re.compile(r"\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b")


def _abbreviated(
    store: engine.Store, entries: list[engine.LogEntry], rev: str | None
) -> list[engine.LogEntry]:
    """Returns ``entries`` with the memory ids in summaries and paths shortened."""
    texts = [e.commit.summary for e in entries]
    texts += [c.path for e in entries for c in e.changes]
    short = id_form(store, {m for t in texts for m in _ID_RE.findall(t)}, rev)

    def shorten(text: str) -> str:
        return _ID_RE.sub(lambda m: short(m.group()), text)

    return [
        msgspec.structs.replace(
            e,
            commit=msgspec.structs.replace(e.commit, summary=shorten(e.commit.summary)),
            changes=tuple(
                msgspec.structs.replace(c, path=shorten(c.path)) for c in e.changes
            ),
        )
        for e in entries
    ]


COMMANDS = [log]
