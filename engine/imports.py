"""Importing memories: the one way in for a file of lines, and one for text files.

:func:`import_memories` reads JSON Lines in either of two formats, and the
file's first non-blank line decides which (this is the only place that
looks):

- an export header (``{"format": "ctx-export", ...}``, see
  :func:`~ctx.engine.exports.is_graph_export`): a whole graph with its ids,
  paths and links, checked by ``graph_lines.py`` and written by
  ``graph_import.py`` (docs/export-format.md);
- anything else: one new memory per line, ``line_import.py``
  (docs/import-format.md).

:func:`import_files` writes text files as ``source`` memories (``ctx
ingest``). Cutting a file into pieces stays in ``ingest.py``: it is about
text (paragraphs, lines, UTF-8 boundaries), not about a line format, and
``split_text`` is useful on its own; this module only gives it the same
entry point and result as the other imports.

Both return an :class:`ImportResult`, the shape ``ctx import --json`` and
``ctx ingest --json`` print.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ctx.engine.exports import is_graph_export
from ctx.engine.graph_import import import_graph
from ctx.engine.ids import CommitId, MemoryId
from ctx.engine.ingest import DEFAULT_PIECE_BYTES, ingest_files
from ctx.engine.line_import import TimeParser, import_lines
from ctx.engine.memories import WriteResult
from ctx.engine.model import Intent, Outcome
from ctx.engine.store import Store
from ctx.engine.times import parse_time

__all__ = ["ImportResult", "import_files", "import_memories"]


class ImportResult(Outcome, frozen=True, kw_only=True):
    """What an import wrote.

    Attributes:
        commit: The commit's id; ``None`` when everything in the file was
            already on the branch (an export imported a second time).
        ids: The ids of the memories written, in file order.
        existing: How many memory lines (plain format) or pieces of files
            (``ingest``) were not written because the branch already held
            their text, or an earlier one had it. An export's memories
            already there are left out of ``ids`` instead.
    """

    commit: CommitId | None
    ids: tuple[MemoryId, ...]
    existing: int = 0


_BOM = b"\xef\xbb\xbf"
"""UTF-8's byte order mark, which some editors put at a file's start."""


def _imported(result: WriteResult) -> ImportResult:
    commit = None if result.commit is None else result.commit.id
    return ImportResult(commit=commit, ids=result.written, existing=len(result.skipped))


def import_memories(
    store: Store,
    lines: Iterable[bytes],
    intent: Intent,
    *,
    branch: str | None = None,
    merge: bool = False,
    source: str = "import",
    when: TimeParser = parse_time,
) -> ImportResult:
    """Imports a file of JSON Lines as one commit, whichever format it is in.

    A file whose first non-blank line is an export header is a whole graph:
    ids, paths and links are kept, what the branch already holds with the
    same bytes is left alone, and a clash is refused unless ``merge``
    (docs/export-format.md). Any other file holds one new memory per line
    (docs/import-format.md). Either way every line is checked before
    anything is written.

    Args:
        store: The store.
        lines: The file's lines (bytes; a trailing newline is fine).
        intent: Who writes and why (typically ``intent="import"``).
        branch: The branch to write (default: HEAD).
        merge: Exports only: replace the memories and links the branch
            already has, and let links end at memories on the branch.
        source: Memory lines only: the origin the commit message names
            (``Import 3 memories from notes.jsonl``).
        when: Memory lines only: reads each line's ``when`` (the default
            takes ISO 8601 with an offset; the command line passes the hub's
            ``parse_moment``, which takes local times and phrases too).

    Returns:
        The commit (``None`` when an export was all there already) and the
        ids of the memories written, in file order.

    Raises:
        InvalidInputError: a bad line, named ``Line N: …``; nothing written.
        ConflictError: an export clashes with what the branch holds under
            an imported id or path (``Line N: …``); nothing written.
    """
    lines = list(lines)
    if lines and lines[0].startswith(_BOM):
        lines[0] = lines[0][len(_BOM) :]  # written so by Windows tools
    first = next((line for line in lines if line.strip()), b"")
    if is_graph_export(first):
        result = import_graph(store, lines, intent, branch=branch, merge=merge)
    else:
        result = import_lines(
            store, lines, intent, branch=branch, source=source, when=when
        )
    return _imported(result)


def import_files(
    store: Store,
    files: Sequence[tuple[str, bytes]],
    intent: Intent,
    *,
    tags: Sequence[str] = (),
    branch: str | None = None,
    context: str = "sources",
    max_bytes: int = DEFAULT_PIECE_BYTES,
) -> ImportResult:
    """Imports text files as ``source`` memories in one commit (``ctx ingest``).

    A file larger than ``max_bytes`` is cut into several memories at
    paragraph ends; binary, non-UTF-8 or empty files are refused before
    anything is written. The rules are
    :func:`~ctx.engine.ingest.ingest_files`'s.

    Args:
        store: The store.
        files: ``(name, content)`` pairs, in the order to write them.
        intent: Who writes and why.
        tags: ``namespace:value`` tags for every memory.
        branch: The branch (default: HEAD).
        context: The folder under ``memory/``.
        max_bytes: The largest piece, in UTF-8 bytes.

    Returns:
        The commit and the new memories' ids, in file order, and how many
        pieces the branch already held (not written again).

    Raises:
        InvalidInputError: no files, a file that is binary, not UTF-8 or
            empty, or bad tags, context or piece size. Nothing is written.
    """
    return _imported(
        ingest_files(
            store,
            files,
            intent,
            tags=tags,
            branch=branch,
            context=context,
            max_bytes=max_bytes,
        )
    )
