"""What the code index holds and answers: plain structs, cheap to import.

The command line decodes a running hub's answer to ``ctx find`` into these
without loading the indexes, so this module imports only msgspec.
"""

from __future__ import annotations

import msgspec

__all__ = [
    "Chunk",
    "CodeHit",
    "CodeIndexReport",
    "CodeStatus",
    "CodeSymbol",
    "Dependencies",
    "FindResult",
    "SymbolList",
]


class Chunk(msgspec.Struct, frozen=True, kw_only=True):
    """One piece of a source file, cut along the code's structure.

    Attributes:
        path: The file, relative to the indexed root, with ``/`` separators.
        start: The first line (from 1).
        end: The last line (inclusive).
        language: The file's language (``python``, ``markdown``, ...).
        kind: ``function``, ``method``, ``class``, ``imports``, ``code``
            (statements between definitions), ``section`` (Markdown) or
            ``config`` (a block of JSON, YAML or TOML), ``text`` (a file that
            did not parse, in blocks).
        name: The function's, class's, section's or key's name ("" if none).
        parent: The enclosing class (or impl, module, namespace), "" if none.
        summary: One line: the docstring's first line, or the signature.
        imports: The names this chunk uses that the file imports.
        part: For a long function cut in pieces, which piece (from 1); 0 when
            whole.
    """

    path: str
    start: int
    end: int
    language: str
    kind: str
    name: str = ""
    parent: str = ""
    summary: str = ""
    imports: tuple[str, ...] = ()
    part: int = 0

    @property
    def qualified(self) -> str:
        """Returns ``parent.name``, or the name alone."""
        return f"{self.parent}.{self.name}" if self.parent and self.name else self.name


class CodeHit(msgspec.Struct, frozen=True, kw_only=True):
    """One chunk ``ctx find`` returns.

    ``channels``: per channel that found it, its rank there (from 1);
    ``code``: the chunk's text, with ``--full``.
    """

    chunk: Chunk
    score: float
    channels: dict[str, int] = {}
    code: str | None = None


class FindResult(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to ``ctx find``.

    Attributes:
        query: The question.
        hits: The best chunks, best first.
        chunks: Chunks in the index.
        files: Files in the index.
        matched: Chunks some channel found (before the limit).
        seconds: Time taken, as the caller measured it.
        warnings: Channels that failed, in words.
        steered: The sub-queries a steering model asked (``[code.steer]``),
            none when unsteered.
        unembedded: Chunks without a vector yet (the vector channel does not
            see them until the hub has embedded them).
    """

    query: str
    hits: tuple[CodeHit, ...]
    chunks: int
    files: int
    matched: int
    seconds: float = 0.0
    warnings: tuple[str, ...] = ()
    steered: tuple[str, ...] = ()
    unembedded: int = 0


class CodeIndexReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``ctx code index`` did.

    Attributes:
        root: The indexed folder.
        files: Files in the index afterwards.
        chunks: Chunks in the index afterwards.
        read: Files read because they are new or their size or time changed.
        parsed: Files cut into chunks again (their content changed).
        removed: Files dropped because they are gone or now ignored.
        embedded: Chunk texts embedded (the others were already).
        skipped: Files left out, by reason (binary, generated, minified,
            lock file, too large, not UTF-8, unknown language, symlink,
            unreadable).
        as_text: Files indexed as text blocks because they did not parse.
        vectors: Whether chunks were embedded (off with ``--no-vectors``).
        seconds: Time taken.
        warnings: What went wrong without stopping the index (the embedder).
        unembedded: Chunks without a vector yet (the backlog the hub embeds).
        embedding: Who embeds that backlog: ``hub`` (the store's running
            hub, woken), ``started`` (a hub started for it), or "" (none:
            ``ctx hub start`` or ``ctx code index --wait`` will).
    """

    root: str
    files: int
    chunks: int
    read: int
    parsed: int
    removed: int
    embedded: int
    skipped: dict[str, int]
    as_text: int
    vectors: bool
    seconds: float
    warnings: tuple[str, ...] = ()
    unembedded: int = 0
    embedding: str = ""


class CodeSymbol(msgspec.Struct, frozen=True, kw_only=True):
    """One named definition (``ctx symbols``)."""

    name: str
    kind: str
    parent: str
    path: str
    start: int
    end: int
    language: str
    summary: str


class SymbolList(msgspec.Struct, frozen=True, kw_only=True):
    """The definitions ``ctx symbols`` lists, by path and line."""

    symbols: tuple[CodeSymbol, ...]
    total: int


class Dependencies(msgspec.Struct, frozen=True, kw_only=True):
    """What a file imports, and which indexed files import it (``ctx deps``).

    Attributes:
        path: The file.
        imports: Each module or file it names in an import, as written.
        resolved: Those of them that are indexed files, as paths.
        imported_by: The indexed files that import it.
    """

    path: str
    imports: tuple[str, ...]
    resolved: tuple[str, ...]
    imported_by: tuple[str, ...]


class CodeStatus(msgspec.Struct, frozen=True, kw_only=True):
    """The code index's state (``ctx code status``).

    Attributes:
        root: The indexed folder ("" when nothing is indexed).
        files: Files in the index.
        chunks: Chunks in the index.
        vectors: Whether the chunks are to have vectors (off with
            ``--no-vectors``).
        embedder: The embedder of the stored vectors ("" before the first).
        unembedded: Chunks without a vector yet: the backlog.
        hub: Whether the store's hub answered (it embeds the backlog).
        graph: Vectors the hub's search graph covers (0: searched exactly).
    """

    root: str
    files: int
    chunks: int
    vectors: bool
    embedder: str
    unembedded: int
    hub: bool = False
    graph: int = 0
