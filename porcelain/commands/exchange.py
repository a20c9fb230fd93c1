"""Commands that move memories in and out: import, export, ingest."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ctx import engine
from ctx.engine import Intent, InvalidInputError
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_json,
    intent_options,
    json_option,
    now,
    pass_state,
)

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
    lines = _read(file).split(b"\n")
    store = state.store(write=True)
    first = next((line for line in lines if line.strip()), b"")
    if engine.is_graph_export(first):
        result = engine.import_graph(store, lines, who, branch=branch, merge=merge)
    else:
        source = Path(file).name if file != "-" else "stdin"
        result = engine.import_lines(store, lines, who, branch=branch, source=source)
    commit = result.commit.id if result.commit else None
    if as_json:
        echo_json({"ids": result.ids, "commit": commit})
    elif commit is None:
        click.echo("Everything in the file is already there: nothing to commit.")
    else:
        click.echo(f"Imported {len(result.ids)} memories in {commit[:10]}.")


@click.command()
@click.option("--where", metavar="QUERY", help="Only the memories the query selects.")
@branch_option
@pass_state
def export(state: CtxState, where: str | None, branch: str | None) -> None:
    """Write a branch's memories and links as JSON Lines to stdout

    The format (docs/export-format.md) round-trips exactly through
    `ctx import`. With --where, links are kept when both ends are exported.
    The output is JSON already, so there is no --json.

    \b
    Example:
      ctx export > memory.jsonl
      ctx export --where 'tag:project:api' --branch agent/claude
    """
    store = state.store()
    ids = None
    if where is not None:
        ids = [
            s.record.memory.id
            for s in engine.select(store, where, now=now(), rev=branch)
        ]
    out = sys.stdout.buffer
    for line in engine.export_lines(store, rev=branch, ids=ids):
        out.write(line)
    out.flush()


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
    result = engine.ingest_files(
        state.store(write=True), loaded, who, tags=tag, branch=branch, context=context
    )
    assert result.commit is not None
    if as_json:
        echo_json({"ids": result.ids, "commit": result.commit.id})
    else:
        click.echo(
            f"Ingested {len(files)} files as {len(result.ids)} memories "
            f"in {result.commit.id[:10]}."
        )


COMMANDS = [import_, export, ingest]
