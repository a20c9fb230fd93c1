"""Commands that bring memories in: import (JSON Lines) and ingest (text files)."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from ctx import engine
from ctx.engine import Intent, InvalidInputError, plural
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_json,
    intent_options,
    json_option,
    now,
    pass_state,
)
from ctx.porcelain.output import echo

__all__ = ["COMMANDS"]


def _read(file: str) -> bytes:
    if file == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(file).read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {file}: {exc.strerror}.") from None


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--merge", is_flag=True, help="Graph exports: replace memories that exist."
)
@intent_options("import")
@branch_option
@json_option
@pass_state
def import_(
    state: CtxState,
    file: str,
    merge: bool,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Write many memories (or a whole exported graph) in one commit

    Two formats: one memory per line (docs/import-format.md), or a file
    written by `ctx export` (docs/export-format.md), which keeps ids, paths
    and links. Every line is checked first; errors name the line.

    \b
    Example:
      ctx import notes.jsonl
      ctx export --branch main > all.jsonl && ctx --store ../other import all.jsonl
    """
    from ctx.hub import parse_moment

    lines = _read(file).split(b"\n")
    result = engine.import_memories(
        state.store(write=True),
        lines,
        who,
        branch=branch,
        merge=merge,
        source=Path(file).name if file != "-" else "stdin",
        when=functools.partial(parse_moment, now=now()),
    )
    if as_json:
        echo_json(result)
    elif result.commit is None:
        echo("Everything in the file is already there: nothing to commit.")
    else:
        done = f"Imported {plural(len(result.ids), 'memory')}"
        there = result.existing
        note = (
            f"; {plural(there, 'line was', 'lines were')} already there"
            if there
            else ""
        )
        echo(f"{done} in {result.commit[:10]}{note}.")


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--tag", multiple=True, metavar="NS:VALUE", help="A tag (can be repeated)."
)
@click.option("--context", "-c", default="sources", show_default=True, help="Folder.")
@intent_options("ingest")
@branch_option
@json_option
@pass_state
def ingest(
    state: CtxState,
    files: tuple[str, ...],
    tag: tuple[str, ...],
    context: str,
    who: Intent,
    branch: str | None,
    as_json: bool,
) -> None:
    """Store text files as source memories, large ones split at paragraphs

    Binary files are refused; nothing is written unless every file is text.

    \b
    Example:
      ctx ingest docs/*.md --tag project:api
    """
    loaded = [(Path(f).name, _read(f)) for f in files]
    result = engine.import_files(
        state.store(write=True), loaded, who, tags=tag, branch=branch, context=context
    )
    if as_json:
        echo_json(result)
    elif result.commit is None:
        echo("Every piece of the files is already there: nothing to commit.")
    else:
        there = result.existing
        note = f"; {plural(there, 'piece was', 'pieces were')} already there"
        echo(
            f"Ingested {plural(len(files), 'file')} as "
            f"{plural(len(result.ids), 'memory')} "
            f"in {result.commit[:10]}{note if there else ''}."
        )


COMMANDS = [import_, ingest]
