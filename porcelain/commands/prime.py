"""The prime command: a Markdown file as one memory per section."""

from __future__ import annotations

from pathlib import Path

import click

from ctx import engine
from ctx.engine import Intent, InvalidInputError
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

__all__ = ["COMMANDS"]


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--pin",
    is_flag=True,
    help="Store under pinned/ instead of primed/: every recall returns the "
    "sections first, whatever the question, while they fit in half the budget; "
    "compose puts them first too.",
)
@click.option(
    "--source", metavar="NAME", help="Folder name (default: the file's stem)."
)
@intent_options("prime")
@branch_option
@json_option
@pass_state
def prime(
    state: CtxState,
    file: str,
    pin: bool,
    source: str | None,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Store a Markdown file as one memory per section, idempotently

    Unchanged sections write nothing; changed ones become new versions;
    removed ones are deleted; all in one commit.

    \b
    Example:
      ctx prime CLAUDE.md --pin
      ctx prime docs/architecture.md --source arch
    """
    path = Path(file)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{file} is not valid UTF-8 text.") from None
    name = source or _source_name(path)
    request = calls.PrimeRequest(
        text=text,
        source=name,
        file_name=path.name,
        pin=pin,
        branch=branch,
        **signed(who),
    )
    result = state.call(calls.prime, request, who)
    where = f"{result.area}/{result.source}"
    if as_json:
        echo_json(result)
    elif result.commit is None:
        echo(f"{path.name} is already primed as {where}: nothing to commit.")
    else:
        echo(f"Primed {path.name} as {where} in {result.commit[:10]}.")


def _source_name(path: Path) -> str:
    return engine.slugify(path.stem, limit=64)


COMMANDS = [prime]
