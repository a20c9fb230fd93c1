"""The code index's calls on a workspace: index, watch, symbols, deps, chunk.

``ctx find`` is answered by the store's running hub when one runs
(:func:`ctx.hub.find_code`); these calls read and write the index in the
calling process: indexing holds the index's lock (one writer at a time, and
a running hub sees the new manifest at its next question), and the others
read the manifest, which is cheap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import msgspec

from ctx.engine import InvalidInputError
from ctx.hub.code.index import CodeIndex
from ctx.hub.code.reading import Progress
from ctx.hub.code.results import (
    CodeHit,
    CodeIndexReport,
    Dependencies,
    SymbolList,
)
from ctx.hub.retrieval.embedders import Embedder, make_embedder
from ctx.hub.server.control import wake_hub
from ctx.hub.workspace import Workspace

__all__ = [
    "code_chunk",
    "code_deps",
    "code_index",
    "code_symbols",
    "index_folder",
    "open_code_index",
    "watch_code",
]


def index_folder(ws: Workspace) -> Path:
    """Returns the code index's folder in the workspace's store."""
    return ws.path / "index" / "code"


def open_code_index(
    ws: Workspace, embedder: Callable[[], Embedder] | None = None
) -> CodeIndex:
    """Returns the workspace's code index (its embedder made when first needed)."""

    def make() -> Embedder:
        return make_embedder(ws.config().embedder)

    return CodeIndex(index_folder(ws), embedder or make)


def code_index(
    ws: Workspace,
    path: Path | None = None,
    *,
    vectors: bool = True,
    wait: bool = False,
    progress: Progress | None = None,
    index: CodeIndex | None = None,
) -> CodeIndexReport:
    """Indexes a source tree into the store's code index (incrementally).

    Words, names and paths are indexed at once; the vectors of new chunks
    are left to the store's hub, which embeds them in the background (it is
    woken, or started as a recall starts one), unless ``wait``.

    Args:
        ws: The workspace (its store is created if it is the user store).
        path: The tree (default: the one indexed before, else the current
            folder).
        vectors: The chunks are to have vectors (off: BM25, symbols and
            paths only, and the hub embeds nothing).
        wait: Embed the new chunks in this process before returning.
        progress: Called with (stage, done, total).
        index: The code index to update (default: the store's, opened).

    Raises:
        InvalidInputError: ``path`` is not a folder.
    """
    index = index or open_code_index(ws)
    if path is None:
        path = Path(index.outline.root) if index.exists else Path.cwd()
    if not path.is_dir():
        raise InvalidInputError(
            f"{path} is not a folder.", hint="Give the folder of a source tree."
        )
    if not index.folder.is_dir():  # else the store exists: no need to open it
        ws.store(write=True)
    report = index.update(
        path, vectors=vectors, embed=vectors and wait, progress=progress
    )
    if report.unembedded:
        report = msgspec.structs.replace(report, embedding=wake_hub(ws))
    return report


def code_symbols(
    ws: Workspace, *, kind: str | None = None, path: str | None = None
) -> SymbolList:
    """Returns the indexed definitions (``ctx symbols``).

    Raises:
        InvalidInputError: The kind is unknown.
        NotFoundError: No code is indexed.
    """
    from ctx.hub.code.search import symbols

    return symbols(open_code_index(ws), kind=kind, path=path)


def code_deps(ws: Workspace, file: str, *, cwd: Path | None = None) -> Dependencies:
    """Returns what ``file`` imports and which indexed files import it.

    Raises:
        NotFoundError: No code is indexed, or the file is not.
    """
    from ctx.hub.code.deps import dependencies
    from ctx.hub.code.search import relative_path, require_index

    index = open_code_index(ws)
    manifest = require_index(index)
    path = relative_path(manifest, file, cwd or Path.cwd())
    return dependencies(index, path)


def code_chunk(ws: Workspace, location: str, *, cwd: Path | None = None) -> CodeHit:
    """Returns the chunk that holds ``FILE:LINE``, with its code.

    Raises:
        InvalidInputError: ``location`` is not ``FILE:LINE``.
        NotFoundError: No code is indexed, or no chunk holds the line.
    """
    from ctx.hub.code.search import chunk_at

    return chunk_at(open_code_index(ws), location, cwd or Path.cwd())


def watch_code(
    ws: Workspace,
    path: Path | None = None,
    *,
    vectors: bool = True,
    updated: Callable[[CodeIndexReport], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Indexes the tree, then again each time files change, until stopped.

    Changes are read through ``watchfiles`` (the system's file events),
    gathered for a moment so that a save of many files makes one update;
    once the watcher runs, one more update takes up what changed while it
    started.

    Args:
        ws: The workspace.
        path: The tree (as for :func:`code_index`).
        vectors: The chunks are to have vectors (the hub embeds them).
        updated: Called with each update's report (the first included).
        stop: Set it to stop watching (Ctrl-C stops it too).
    """
    import watchfiles

    index = open_code_index(ws)
    first = code_index(ws, path, vectors=vectors, index=index)
    if updated is not None:
        updated(first)
    root = Path(first.root)
    skip = watchfiles.DefaultFilter(
        ignore_dirs=(*watchfiles.DefaultFilter.ignore_dirs, ".ctx")
    )
    caught_up = False
    for changes in watchfiles.watch(
        root,
        watch_filter=skip,
        stop_event=stop,
        debounce=300,
        step=50,
        rust_timeout=500,
        yield_on_timeout=True,
    ):
        # The first quiet moment catches up what changed between the first
        # index and the watcher's start; after that, only changes count.
        if not changes and caught_up:
            continue
        caught_up = True
        report = code_index(ws, root, vectors=vectors, index=index)
        if updated is not None and (report.parsed or report.removed):
            updated(report)
