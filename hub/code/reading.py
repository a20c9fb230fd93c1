"""One re-index's reading of a tree: what changed since the manifest, cut again.

:class:`Reading` walks the tree (:func:`~ctx.hub.code.files.walk_tree`) and
compares each file with the manifest's :class:`~ctx.hub.code.manifest.FileHead`:
a file whose size and modification time are the same is not opened (as
git's index does), and its entry's bytes are kept as they were; one whose
stat changed is read and its content id computed, and only a changed id
cuts it into chunks again (a touched file keeps its chunks).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import blake3
import msgspec

from ctx.hub.code.blocks import FileChunks
from ctx.hub.code.chunking import chunk_file
from ctx.hub.code.files import (
    Candidate,
    content_id,
    read_file,
    read_source,
    unread_reason,
    walk_tree,
)
from ctx.hub.code.manifest import FileEntry, FileHead, Outline, raw_entry
from ctx.hub.code.results import Chunk

__all__ = ["Progress", "Reading", "embed_text", "head_of", "vector_key"]

_EMBED_CHARS = 2000  # the embedder reads 256 tokens: more text is wasted work

Progress = Callable[[str, int, int], None]


def embed_text(chunk: Chunk, text: str) -> str:
    """Returns what is embedded for a chunk: its name, kind and path, then its text."""
    head = " ".join(part for part in (chunk.qualified, chunk.kind, chunk.path) if part)
    return f"{head}\n{text}"[:_EMBED_CHARS]


def vector_key(text: str) -> str:
    """Returns a chunk's vector key: 128 bits of the blake3 of the text embedded.

    The same as the memory index's ``text_hash``, written here so that a
    re-index does not import the memory index (and dulwich with it).
    """
    return blake3.blake3(text.encode()).hexdigest(length=16)


def head_of(entry: FileEntry) -> FileHead:
    """Returns the :class:`FileHead` of a whole entry."""
    return FileHead(
        size=entry.size,
        mtime_ns=entry.mtime_ns,
        id=entry.id,
        skipped=entry.skipped,
        keys=entry.keys,
        as_text=entry.as_text,
    )


class Reading:
    """One update's reading of the tree at ``root`` against ``before``.

    After :meth:`scan`: ``files`` and ``heads`` (every file now, as the
    manifest will hold it), ``parsed`` (the files cut again),
    ``documents`` (their chunks for Tantivy), ``texts`` (vector key ->
    text to embed), ``read`` and ``skipped``.
    """

    def __init__(
        self,
        root: Path,
        git: bool,
        before: Outline,
        heads: dict[str, FileHead],
        progress: Progress | None,
    ) -> None:
        self.root = root
        self.git = git
        self.before = before
        self.before_heads = heads
        self.progress = progress
        self.read = 0
        self.parsed: list[str] = []
        self.skipped: Counter[str] = Counter()
        self.documents: dict[str, list[tuple[Chunk, str, str]]] = {}
        self.texts: dict[str, str] = {}
        self.files: dict[str, msgspec.Raw] = {}
        self.heads: dict[str, FileHead] = {}

    def scan(self) -> None:
        """Reads what changed (class doc)."""
        candidates, self.skipped = walk_tree(self.root)
        for number, candidate in enumerate(candidates):
            if self.progress is not None and number % 500 == 0:
                self.progress("reading", number, len(candidates))
            path = candidate.path
            old = self.before_heads.get(path)
            if (
                old is not None
                and old.size == candidate.size
                and old.mtime_ns == candidate.mtime_ns
            ):
                self.files[path], head = self.before.files[path], old
            else:
                entry = self._read(candidate, old)
                self.files[path], head = raw_entry(entry), head_of(entry)
            self.heads[path] = head
            if head.skipped:
                self.skipped[head.skipped] += 1

    def _read(self, candidate: Candidate, old: FileHead | None) -> FileEntry:
        path, size, mtime_ns = candidate.path, candidate.size, candidate.mtime_ns
        self.read += 1
        try:
            data = read_file(self.root, path)
        except OSError as exc:  # swapped since the walk: a link, a FIFO, grown
            why = unread_reason(exc)
            return FileEntry(size=size, mtime_ns=mtime_ns, skipped=why)
        identity = content_id(data, git=self.git)
        if old is not None and old.id == identity:
            entry = self.before.entry(path)
            return msgspec.structs.replace(entry, size=size, mtime_ns=mtime_ns)
        text, reason = read_source(data)
        if text is None:
            return FileEntry(
                size=size,
                mtime_ns=mtime_ns,
                id=identity,
                skipped=reason or "unreadable",
            )
        cut = _cut(path, text, candidate.language)
        self.parsed.append(path)
        keys = []
        documents = []
        for chunk, body in zip(cut.chunks, cut.texts, strict=True):
            embedded = embed_text(chunk, body)
            key = vector_key(embedded)
            keys.append(key)
            self.texts[key] = embedded
            documents.append((chunk, body, chunk.qualified))
        self.documents[path] = documents
        return FileEntry(
            size=size,
            mtime_ns=mtime_ns,
            id=identity,
            language=candidate.language,
            chunks=tuple(cut.chunks),
            keys=tuple(keys),
            modules=tuple(dict.fromkeys(cut.modules)),
            as_text=cut.as_text,
        )


def _cut(path: str, text: str, language: str) -> FileChunks:
    """Returns a file's chunks; a grammar that fails makes text blocks."""
    from ctx.hub.code.blocks import chunk_text

    try:
        return chunk_file(path, text, language)
    except (ImportError, RecursionError, ValueError):
        return chunk_text(path, text, language, as_text=True)
