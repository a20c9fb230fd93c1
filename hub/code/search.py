"""Questions to the code index: find, symbols, the chunk at a line.

:func:`find` is hybrid search over the chunks, in the steps of recall's
ranking (:mod:`ctx.hub.retrieval.ranking`):

1. Channels, each the best ``depth`` chunks among those the filters allow
   (``--language``, ``--path``): ``bm25`` (Tantivy over the code, each
   compound identifier also as its words), ``symbol`` (BM25 over the chunk's
   name and class), ``path`` (BM25 over the file's path words),
   ``vector`` (the store's embedder, cosine, exact) and, when the query
   holds an identifier written as code (``resolve_command``,
   ``HTTPClient.send``), ``ident``: the chunks that define it
   (:mod:`ctx.hub.code.identifiers`).
2. The same weighted reciprocal rank fusion as recall
   (:func:`~ctx.hub.retrieval.ranking.fuse_ranks`), with :data:`WEIGHTS`.
3. The best ``limit`` chunks, with each one's rank per channel, and its
   code read from the file with ``full``.

A hit from a Tantivy document whose file has changed since (another content
id) is stale and left out; the next ``ctx code index`` replaces it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pathspec

from ctx.engine import InvalidInputError, NotFoundError
from ctx.hub.code.files import read_file
from ctx.hub.code.identifiers import definitions_of, query_identifiers
from ctx.hub.code.index import CodeIndex
from ctx.hub.code.languages import LANGUAGES, SYMBOL_KINDS
from ctx.hub.code.manifest import Manifest
from ctx.hub.code.results import (
    Chunk,
    CodeHit,
    CodeSymbol,
    FindResult,
    SymbolList,
)
from ctx.hub.retrieval.embedders import EmbedderError, embed_queries
from ctx.hub.retrieval.ranking import fuse_ranks

__all__ = [
    "DEPTH",
    "WEIGHTS",
    "K",
    "chunk_at",
    "find",
    "read_lines",
    "symbols",
]

WEIGHTS: Mapping[str, float] = {
    "bm25": 1.0,
    "vector": 1.0,
    "symbol": 0.5,
    "path": 0.25,
    "ident": 3.0,
}
"""Each channel's weight in the fusion (benchmarks/code_quality.py measures
them on real source). A definition of an identifier the query names comes
first even when another chunk leads every other channel (their weights sum
to 2.75): naming it exactly asks for it."""

K = 10.0
"""The rank offset of the fusion, as recall's."""

DEPTH = 100
"""How many chunks each channel contributes."""


def require_index(index: CodeIndex) -> Manifest:
    """Returns the index's manifest, caught up with the last writer.

    Raises:
        NotFoundError: No tree was ever indexed in this store.
    """
    index.refresh()
    if not index.exists:
        raise NotFoundError(
            "No code is indexed in this store.",
            hint="Run `ctx code index PATH` first.",
        )
    return index.manifest


def _allowed(
    manifest: Manifest, language: str | None, glob: str | None
) -> list[str] | None:
    """Returns the files the filters allow, or None when there is no filter."""
    if language is not None and language not in LANGUAGES:
        raise InvalidInputError(
            f"{language!r} is not a language the code index knows.",
            hint=f"Choose one of: {', '.join(LANGUAGES)}.",
        )
    if glob is None and language is None:
        return None
    spec = None if glob is None else pathspec.GitIgnoreSpec.from_lines([glob])
    return [
        path
        for path, entry in manifest.files.items()
        if entry.chunks
        and (language is None or entry.language == language)
        and (spec is None or spec.match_file(path))
    ]


def find(
    index: CodeIndex,
    query: str,
    *,
    limit: int = 10,
    language: str | None = None,
    path: str | None = None,
    full: bool = False,
    weights: Mapping[str, float] = WEIGHTS,
) -> FindResult:
    """Returns the chunks that best answer ``query`` (module doc for how).

    Args:
        index: The code index.
        query: The question, in words or identifiers.
        limit: How many chunks at most.
        language: Only chunks of this language.
        path: Only files matching this glob (gitignore syntax: ``*.py``,
            ``hub/**``).
        full: Give each hit its code.
        weights: Per channel, its weight (a channel of weight 0 is not
            asked).

    Raises:
        InvalidInputError: The query is empty, the limit below 1, or the
            language unknown.
        NotFoundError: No code is indexed.
    """
    if not query.strip():
        raise InvalidInputError(
            "The query is empty.", hint='Ask in words, e.g. `ctx find "parse config"`.'
        )
    if limit < 1:
        raise InvalidInputError("The limit must be at least 1.")
    manifest = require_index(index)
    allowed = _allowed(manifest, language, path)
    hits: dict[str, list[tuple[str | None, float]]] = {}
    warnings: list[str] = []
    lexical = index.lexical
    for channel, field in (("bm25", "code"), ("symbol", "name"), ("path", "path")):
        if weights.get(channel):
            found = lexical.search(
                field, query, limit=DEPTH, language=language, paths=allowed
            )
            hits[channel] = [(_live(manifest, key), score) for key, score in found]
    identifiers = query_identifiers(query) if weights.get("ident") else []
    if identifiers:
        defined = definitions_of(manifest, index.derived)
        hits["ident"] = [*defined.search(identifiers, DEPTH, allowed)]
    if weights.get("vector"):
        try:
            hits["vector"] = _vector_hits(index, query, allowed)
        except EmbedderError as exc:
            warnings.append(f"Vector search is unavailable ({exc.message}).")
    ranked = fuse_ranks(hits, weights, K)
    best = sorted(ranked.values(), key=lambda r: (-r.score, r.id))[:limit]
    root = Path(manifest.root)
    found_hits = []
    for entry in best:
        chunk = _chunk_of(manifest, entry.id)
        code = read_lines(root, chunk) if full else None
        ranks = {name: rank for name, (rank, _, _) in entry.channels.items()}
        found_hits.append(
            CodeHit(chunk=chunk, score=round(entry.score, 6), channels=ranks, code=code)
        )
    chunks, files = _sizes(index)
    return FindResult(
        query=query,
        hits=tuple(found_hits),
        chunks=chunks,
        files=files,
        matched=len(ranked),
        warnings=tuple(warnings),
        unembedded=_rows(index).missing if manifest.vectors else 0,
    )


def _sizes(index: CodeIndex) -> tuple[int, int]:
    """Returns the index's chunks and the files that have any (once per manifest)."""
    sizes = index.derived.get("sizes")
    if not isinstance(sizes, tuple):
        files = [e for e in index.manifest.files.values() if e.chunks]
        sizes = index.derived["sizes"] = (sum(len(e.chunks) for e in files), len(files))
    return sizes


def _live(manifest: Manifest, key: str) -> str | None:
    """Returns a Tantivy key's chunk id, or None if its file has changed since."""
    path, content, position = key.split("\0")
    entry = manifest.files.get(path)
    if entry is None or entry.id != content or int(position) >= len(entry.chunks):
        return None
    return f"{path}\0{position}"


def _chunk_of(manifest: Manifest, chunk_id: str) -> Chunk:
    path, position = chunk_id.split("\0")
    return manifest.files[path].chunks[int(position)]


class _Rows:
    """Every chunk's id and vector row, in one order (per manifest and vectors)."""

    def __init__(self, index: CodeIndex) -> None:
        manifest = index.manifest
        vectors = index.vectors()
        self.ids: list[str] = []
        self.paths: list[str] = []
        self.missing = 0
        """Chunks without a vector."""
        rows: list[int] = []
        table = {} if vectors is None else vectors.rows
        for path, entry in manifest.files.items():
            for position, key in enumerate(entry.keys):
                row = table.get(key)
                if row is not None:
                    self.ids.append(f"{path}\0{position}")
                    self.paths.append(path)
                    rows.append(row)
                else:
                    self.missing += 1
        self.rows = np.asarray(rows, dtype=np.int64)
        self._by_row: dict[int, list[int]] | None = None

    def by_row(self) -> dict[int, list[int]]:
        """Returns, per vector row, the positions of the chunks that use it."""
        if self._by_row is None:
            self._by_row = {}
            for position, row in enumerate(self.rows.tolist()):
                self._by_row.setdefault(row, []).append(position)
        return self._by_row


def _rows(index: CodeIndex) -> _Rows:
    """Returns the index's :class:`_Rows`, made once per manifest."""
    rows = index.derived.get("rows")
    if not isinstance(rows, _Rows):
        rows = index.derived["rows"] = _Rows(index)
    return rows


def _vector_hits(
    index: CodeIndex, query: str, allowed: list[str] | None
) -> list[tuple[str | None, float]]:
    vectors = index.vectors()
    if vectors is None or not vectors.rows:
        return []
    table = _rows(index)
    if allowed is None:
        positions = np.arange(len(table.ids), dtype=np.int64)
    else:
        keep = set(allowed)
        positions = np.asarray(
            [i for i, p in enumerate(table.paths) if p in keep], dtype=np.int64
        )
    [vector] = embed_queries(index.embedder, [query])
    if allowed is None and vectors.graph is not None:
        # Rows no chunk uses any more come back too: ask for more.
        hits = [
            (table.ids[i], cos)
            for row, cos in vectors.nearest(vector, 2 * DEPTH)
            for i in table.by_row().get(row, ())
        ]
        return [(chunk, cos) for chunk, cos in hits[:DEPTH] if cos > 0]
    found = vectors.search_rows(vector, table.rows[positions], positions, DEPTH)
    # A vector pointing away from the query is no evidence at all.
    return [(table.ids[i], cos) for i, cos in found if cos > 0]


def read_lines(root: Path, chunk: Chunk) -> str | None:
    """Returns a chunk's lines as the file holds them now, None if unreadable.

    None too when the file is no longer a regular file inside ``root``
    (swapped for a link, or under a folder swapped for one): see
    :func:`~ctx.hub.code.files.read_file`.
    """
    try:
        text = read_file(root, chunk.path).decode("utf-8", errors="replace")
    except OSError:
        return None
    return "\n".join(text.split("\n")[chunk.start - 1 : chunk.end])


def symbols(
    index: CodeIndex, *, kind: str | None = None, path: str | None = None
) -> SymbolList:
    """Returns the named definitions of the index, by path and line.

    Raises:
        InvalidInputError: The kind is not one of :data:`SYMBOL_KINDS`.
        NotFoundError: No code is indexed.
    """
    if kind is not None and kind not in SYMBOL_KINDS:
        raise InvalidInputError(
            f"{kind!r} is not a kind of symbol.",
            hint=f"Choose one of: {', '.join(SYMBOL_KINDS)}.",
        )
    manifest = require_index(index)
    allowed = _allowed(manifest, None, path)
    chosen = manifest.files if allowed is None else set(allowed)
    found = []
    for file in sorted(chosen):
        for chunk in manifest.files[file].chunks:
            if not chunk.name or chunk.part > 1:
                continue
            if chunk.kind not in SYMBOL_KINDS or (kind and chunk.kind != kind):
                continue
            found.append(
                CodeSymbol(
                    name=chunk.name,
                    kind=chunk.kind,
                    parent=chunk.parent,
                    path=chunk.path,
                    start=chunk.start,
                    end=_end_of(manifest, chunk),
                    language=chunk.language,
                    summary=chunk.summary,
                )
            )
    return SymbolList(symbols=tuple(found), total=len(found))


def _end_of(manifest: Manifest, chunk: Chunk) -> int:
    """Returns the last line of a definition cut into parts."""
    if not chunk.part:
        return chunk.end
    end = chunk.end
    for other in manifest.files[chunk.path].chunks:
        if other.name == chunk.name and other.parent == chunk.parent and other.part:
            end = max(end, other.end) if other.start >= chunk.start else end
    return end


def relative_path(manifest: Manifest, file: str, cwd: Path) -> str:
    """Returns ``file`` (from ``cwd``, absolute, or from the root) as an indexed path.

    Raises:
        NotFoundError: The file is not in the index.
    """
    root = Path(manifest.root)
    candidates = []
    given = Path(file)
    absolute = given if given.is_absolute() else cwd / given
    with contextlib.suppress(ValueError, OSError):
        candidates.append(absolute.resolve().relative_to(root).as_posix())
    candidates.append(given.as_posix().removeprefix("./"))
    for candidate in candidates:
        if candidate in manifest.files:
            return candidate
    raise NotFoundError(
        f"{file} is not in the code index of {root}.",
        hint="Give a path under the indexed folder, or run `ctx code index`.",
    )


def chunk_at(index: CodeIndex, location: str, cwd: Path) -> CodeHit:
    """Returns the chunk holding a line (``FILE:LINE``), with its code.

    Raises:
        InvalidInputError: ``location`` is not ``FILE:LINE``.
        NotFoundError: The file is not indexed, or no chunk holds the line.
    """
    file, sep, line_text = location.rpartition(":")
    if not sep or not file or not line_text.isdigit() or int(line_text) < 1:
        raise InvalidInputError(
            f"{location!r} is not FILE:LINE.", hint="For example `ctx chunk app.py:42`."
        )
    line = int(line_text)
    manifest = require_index(index)
    path = relative_path(manifest, file, cwd)
    entry = manifest.files[path]
    holding = [c for c in entry.chunks if c.start <= line <= c.end]
    if not holding:
        why = f"was left out ({entry.skipped})" if entry.skipped else "has no chunk"
        raise NotFoundError(f"Line {line} of {path} {why}.")
    chunk = min(holding, key=lambda c: c.end - c.start)
    return CodeHit(chunk=chunk, score=0.0, code=read_lines(Path(manifest.root), chunk))
