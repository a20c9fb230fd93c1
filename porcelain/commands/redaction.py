"""The redact command: a memory or a text removed from every version of history."""

from __future__ import annotations

import click

from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.render import render_redaction

__all__ = ["COMMANDS"]


@click.command()
@click.argument("target", metavar="ID|TEXT")
@click.option(
    "--text",
    "as_text",
    is_flag=True,
    help="Remove the text TEXT (taken literally) wherever it is, not memory ID.",
)
@click.option("--reason", help="Why, recorded with the redaction.")
@json_option
@pass_state
def redact(
    state: CtxState, target: str, as_text: bool, reason: str | None, as_json: bool
) -> None:
    """Remove a memory's text, or any text, from every version of history

    Every commit on every branch that holds it is rewritten (its trailers
    kept, a Ctx-Redacted trailer added), the branch logs too, and the old
    objects are deleted: `git log -p --all` finds it nowhere. The redaction
    is recorded, never the text, so a pull or fetch does not bring it back
    and another clone's pull applies it; `ctx push --force-with-lease`
    replaces the old history on a remote. Rotate a secret anyway.

    \b
    Example:
      ctx redact 01JD2X9K7M3Q4R5S6T7V8W9XYZ --reason "pasted API key"
      ctx redact --text "sk-live-..." --reason "leaked key"
    """
    from ctx.hub import redact as hub_redact

    result = hub_redact(state.store(write=True), target, text=as_text, reason=reason)
    if as_json:
        echo_json(result)
    else:
        render_redaction(result)


COMMANDS = [redact]
