"""Code context: ctx code index, ctx code watch, ctx find, symbols, deps, chunk."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ctx.engine import plural
from ctx.hub import SYMBOL_KINDS
from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.output import echo

if TYPE_CHECKING:
    from ctx.hub import CodeHit, CodeIndexReport, CodeStatus, FindResult

__all__ = ["COMMANDS"]


@click.group(name="code")
def code_group() -> None:
    """Index a source tree so that `ctx find` answers where things are

    The code index is a projection, like the memory indexes: it lives in
    the store's index folder, is never committed, and can be deleted.

    \b
    Example:
      ctx code index .
      ctx find "where are retries handled?"
    """


def _progress(stage: str, done: int, total: int) -> None:
    if not total:  # a stage with nothing to count: waiting for another process
        click.echo(f"{stage.capitalize()}...", err=True)
        return
    if total >= 1_000 and sys.stderr.isatty():
        # A carriage return of our own, to redraw the line: not escaped.
        click.echo(f"\r{stage.capitalize()} {done:,} of {total:,}", err=True, nl=False)
        if done == total:
            click.echo(err=True)


def _render_index(report: CodeIndexReport) -> None:
    echo(
        f"Indexed {report.root}: {plural(report.files, 'file')}, "
        f"{plural(report.chunks, 'chunk')} ({report.read:,} read, "
        f"{report.parsed:,} parsed, {report.removed:,} removed, "
        f"{report.embedded:,} embedded) in {report.seconds:.1f} s."
    )
    left_out = sum(report.skipped.values())
    if left_out:
        reasons = ", ".join(f"{n:,} {why}" for why, n in report.skipped.items())
        echo(f"{plural(left_out, 'file')} left out: {reasons}.")
    if report.as_text:
        echo(f"{plural(report.as_text, 'file')} did not parse: indexed as text.")
    if not report.vectors:
        echo("No vectors (--no-vectors): find uses words, names and paths.")
    elif report.unembedded:
        echo(_backlog(report.unembedded, report.embedding))
    for warning in report.warnings:
        echo(f"Warning: {warning}", err=True)


_EMBEDDING = {
    "hub": "the store's hub embeds them in the background",
    "started": "a hub was started to embed them in the background",
    "": "no hub runs to embed them: `ctx hub start`, or `ctx code index --wait`",
}


def _backlog(unembedded: int, embedding: str) -> str:
    return (
        f"{plural(unembedded, 'chunk')} without vectors yet "
        f"(find answers by words, names and paths meanwhile): {_EMBEDDING[embedding]}."
    )


_PATH = click.argument(
    "path", required=False, type=click.Path(file_okay=False, path_type=Path)
)
_NO_VECTORS = click.option(
    "--no-vectors",
    is_flag=True,
    help="Skip embedding (fast; find then matches words, names and paths only).",
)


@code_group.command(name="index")
@_PATH
@_NO_VECTORS
@click.option(
    "--wait",
    is_flag=True,
    help="Embed the new chunks before returning (slow), not in the hub.",
)
@json_option
@pass_state
def index_command(
    state: CtxState, path: Path | None, no_vectors: bool, wait: bool, as_json: bool
) -> None:
    """Index a source tree (again: only changed files are read)

    Files are chosen as git would (.gitignore, and .ctxignore); binary,
    generated, lock and huge files are left out and counted. PATH defaults
    to the tree indexed before, else the current folder. Words, names and
    paths are indexed at once; the store's hub embeds the new chunks in
    the background (started if none runs), unless --wait.

    \b
    Example:
      ctx code index .
      ctx code index src --no-vectors
    """
    from ctx.hub import code_index

    report = code_index(
        state.workspace(),
        path,
        vectors=not no_vectors,
        wait=wait,
        progress=_progress,
    )
    if as_json:
        echo_json(report)
    else:
        _render_index(report)


@code_group.command(name="watch")
@_PATH
@_NO_VECTORS
@json_option
@pass_state
def watch_command(
    state: CtxState, path: Path | None, no_vectors: bool, as_json: bool
) -> None:
    """Keep the code index current as files change (until Ctrl-C)

    Each update is reported as it happens (--json: one report a line).

    \b
    Example:
      ctx code watch . &
    """
    from ctx.hub import watch_code

    def updated(report: CodeIndexReport) -> None:
        if as_json:
            echo_json(report)
        else:
            _render_index(report)
        sys.stdout.flush()

    try:
        watch_code(state.workspace(), path, vectors=not no_vectors, updated=updated)
    except KeyboardInterrupt:
        if not as_json:
            echo("Stopped watching.")


def _span(hit: CodeHit) -> str:
    chunk = hit.chunk
    return f"{chunk.path}  L{chunk.start}-L{chunk.end}"


def _render_find(result: FindResult, full: bool) -> None:
    for hit in result.hits:
        echo(f"{_span(hit)}  {hit.chunk.summary}")
        if full and hit.code is not None:
            for line in hit.code.split("\n"):
                echo(f"    {line}")
            echo()
    echo(
        f"{len(result.hits)} of {plural(result.matched, 'matching chunk')}; "
        f"{plural(result.chunks, 'chunk')} in {plural(result.files, 'file')}; "
        f"{result.seconds * 1000:.0f} ms"
    )
    if result.unembedded:
        echo(
            f"{plural(result.unembedded, 'chunk')} not embedded yet "
            "(found by words, names and paths only)."
        )
    for warning in result.warnings:
        echo(f"Warning: {warning}", err=True)


@code_group.command(name="status")
@json_option
@pass_state
def status_command(state: CtxState, as_json: bool) -> None:
    """Show the code index: its tree, size and chunks waiting for vectors

    \b
    Example:
      ctx code status
    """
    from ctx.hub import code_status

    status = code_status(state.workspace())
    if as_json:
        echo_json(status)
    else:
        _render_status(status)


def _render_status(status: CodeStatus) -> None:
    if not status.root:
        echo("No code is indexed in this store (`ctx code index PATH`).")
        return
    echo(
        f"Code index of {status.root}: {plural(status.files, 'file')}, "
        f"{plural(status.chunks, 'chunk')}."
    )
    if not status.vectors:
        echo("No vectors (indexed with --no-vectors).")
        return
    done = status.chunks - status.unembedded
    made_by = status.embedder or "none yet"
    echo(f"Vectors: {done:,} of {status.chunks:,} chunks ({made_by}).")
    if status.unembedded:
        echo(_backlog(status.unembedded, "hub" if status.hub else ""))
    if status.graph:
        echo(f"The hub searches a graph over {status.graph:,} of them.")


@click.command(name="find")
@click.argument("query")
@click.option(
    "-n", "--limit", type=click.IntRange(min=1), default=10, help="Hits at most."
)
@click.option("--language", metavar="LANG", help="Only this language (e.g. python).")
@click.option(
    "--path", "glob", metavar="GLOB", help="Only files matching (e.g. 'src/**')."
)
@click.option("--full", is_flag=True, help="Show each chunk's code.")
@json_option
@pass_state
def find_command(
    state: CtxState,
    query: str,
    limit: int,
    language: str | None,
    glob: str | None,
    full: bool,
    as_json: bool,
) -> None:
    """Find where something is in the indexed code

    Hybrid search over the chunks (words and identifiers, meaning, symbol
    names, paths), fused as recall fuses memories. Each hit is a file and
    a line range with one line: the docstring's first line or the signature.

    \b
    Example:
      ctx find "where is the config file read?"
      ctx find parseConfig --language typescript --full
    """
    from ctx.hub import find_code

    result = find_code(
        state.workspace(), query, limit=limit, language=language, path=glob, full=full
    )
    if as_json:
        echo_json(result)
    else:
        _render_find(result, full)


@click.command(name="symbols")
@click.option(
    "--kind",
    type=click.Choice(SYMBOL_KINDS),
    help="Only definitions of this kind.",
)
@click.option(
    "--path", "glob", metavar="GLOB", help="Only files matching (e.g. '*.py')."
)
@json_option
@pass_state
def symbols_command(
    state: CtxState, kind: str | None, glob: str | None, as_json: bool
) -> None:
    """List the indexed definitions: functions, classes, sections

    \b
    Example:
      ctx symbols --kind class --path 'src/**'
    """
    from ctx.hub import code_symbols

    listed = code_symbols(state.workspace(), kind=kind, path=glob)
    if as_json:
        echo_json(listed)
        return
    for symbol in listed.symbols:
        name = f"{symbol.parent}.{symbol.name}" if symbol.parent else symbol.name
        echo(f"{symbol.path}:{symbol.start}  {symbol.kind}  {name}")
    echo(plural(listed.total, "symbol"))


@click.command(name="deps")
@click.argument("file")
@json_option
@pass_state
def deps_command(state: CtxState, file: str, as_json: bool) -> None:
    """Show what an indexed file imports, and which files import it

    \b
    Example:
      ctx deps src/app.py
    """
    from ctx.hub import code_deps

    found = code_deps(state.workspace(), file)
    if as_json:
        echo_json(found)
        return
    echo(found.path)
    echo(f"imports ({len(found.imports)}):")
    for module in found.imports:
        echo(f"  {module}")
    echo(f"files it imports ({len(found.resolved)}):")
    for path in found.resolved:
        echo(f"  {path}")
    echo(f"imported by ({len(found.imported_by)}):")
    for path in found.imported_by:
        echo(f"  {path}")


@click.command(name="chunk")
@click.argument("location", metavar="FILE:LINE")
@json_option
@pass_state
def chunk_command(state: CtxState, location: str, as_json: bool) -> None:
    """Show the indexed chunk that holds a line

    \b
    Example:
      ctx chunk src/app.py:42
    """
    from ctx.hub import code_chunk

    hit = code_chunk(state.workspace(), location)
    if as_json:
        echo_json(hit)
        return
    chunk = hit.chunk
    # A chunk of statements in a class has a class but no name of its own.
    name = chunk.qualified or (f"(in {chunk.parent})" if chunk.parent else "")
    echo(f"{_span(hit)}  {chunk.language} {chunk.kind} {name}".rstrip())
    if chunk.imports:
        echo(f"uses: {', '.join(chunk.imports)}")
    echo(hit.code if hit.code is not None else "(the file cannot be read now)")


COMMANDS = [code_group, find_command, symbols_command, deps_command, chunk_command]
