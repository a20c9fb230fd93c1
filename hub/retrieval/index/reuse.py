"""Vectors a rebuild copies instead of embedding: those of the index it replaces.

A vector depends only on the embedder and the text, so a rebuild (``ctx
reindex``, an index that could not be read, a new index format) copies each
blob's vector from the index it replaces rather than embedding it again. The
state file names those folders (:attr:`IndexState.reuse
<ctx.hub.retrieval.index.folder.IndexState.reuse>`) until the rebuild has caught up
every branch, so the folders outlive a rebuild that is killed and resumed by
another process, or taken over by a running hub: any process that indexes
copies from them, and nothing removes them meanwhile.

Each folder is opened when first needed, without its graph, and its rows are
checked (:meth:`~ctx.hub.retrieval.index.rows.FlatVectors.damaged`): a row that fails
its checksum or is not finite is never copied, and its blob is embedded
again. A state file that cannot be read names nothing: :func:`vector_folders`
then finds the folders whose sidecar says this embedder made them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctx.hub.retrieval.index.documents import embed_text
from ctx.hub.retrieval.index.lexical import LexicalIndex
from ctx.hub.retrieval.index.passages import passages
from ctx.hub.retrieval.index.rows import (
    SIDECAR,
    VectorIndex,
    VectorIndexError,
    read_sidecar,
)
from ctx.hub.retrieval.index.schema import LexicalDoc
from ctx.hub.retrieval.index.vectors import read_rows

__all__ = ["PASSAGES_FORMAT", "REPLY_TO_FORMAT", "VectorSources", "vector_folders"]

REPLY_TO_FORMAT = 4
"""The first index format whose vectors embed a memory's ``reply_to``."""

PASSAGES_FORMAT = 7
"""The first index format that embeds a long memory as passages."""


def _pieces(doc: LexicalDoc) -> int:
    """Returns how many vectors (passages) the doc's text is embedded as."""
    return len(passages(embed_text(doc)))


@dataclass(frozen=True)
class _Source:
    index: VectorIndex
    format: int
    damaged: frozenset[str]


class VectorSources:
    """The vector indexes a rebuild may copy rows from, opened when first asked."""

    def __init__(self) -> None:
        self._opened: dict[str, _Source | None] = {}  # None: unreadable
        self._kept: list[_Source] = []

    def keep(self, index: VectorIndex, format: int) -> None:
        """Adds an index that lives in memory (a rebuild of indexes in memory)."""
        self._kept.append(_Source(index, format, frozenset()))

    def __bool__(self) -> bool:
        return bool(self._opened or self._kept)

    def clear(self) -> None:
        """Forgets every source (the rebuild is complete)."""
        self._opened.clear()
        self._kept.clear()

    def copy(
        self,
        docs: Sequence[LexicalDoc],
        vectors: VectorIndex,
        lexical: LexicalIndex,
        folder: Path | None,
        names: Mapping[str, int],
    ) -> set[str]:
        """Gives docs the vector of the same text where one is at hand.

        Sources, in turn: the indexes a rebuild replaces (:meth:`find`),
        then any blob of ``lexical`` with the same text hash that has a
        vector in ``vectors`` (a memory whose tags or kind changed, or one
        text on two branches). Returns the blobs that got a vector.

        Args:
            docs: The blobs wanting a vector.
            vectors: The index to add the vectors to.
            lexical: The lexical index beside it (text hashes).
            folder: The index folder (``None``: the indexes live in memory).
            names: The folders to copy from (:meth:`find`).
        """
        sources = {
            blob: (index, key)
            for blob, (index, key) in self.find(folder, names, docs).items()
            if index.dimensions == vectors.dimensions
        }
        rest = [d for d in docs if d.blob not in sources]
        if rest and len(vectors):  # an empty index has no vector to share
            sharing = lexical.blobs_with_text({d.text_hash for d in rest})
            for doc in rest:
                found = [b for b in sharing.get(doc.text_hash, ()) if b in vectors]
                if found:
                    sources[doc.blob] = (vectors, found[0])
        for index in {id(i): i for i, _ in sources.values()}.values():
            # Every vector of the source blob: its own and its passages'.
            pairs = [
                (blob + copied[len(key) :], copied)
                for blob, (i, key) in sources.items()
                if i is index
                for copied in index.family(key)
            ]
            rows = index.vectors_of([key for _, key in pairs])
            vectors.add([blob for blob, _ in pairs], rows)
        return set(sources)

    def find(
        self, folder: Path | None, names: Mapping[str, int], docs: Sequence[LexicalDoc]
    ) -> dict[str, tuple[VectorIndex, str]]:
        """Returns, per doc that has one, an intact vector of its blob to copy.

        Args:
            folder: The index folder holding the folders ``names`` lists.
            names: Vector folder -> the index format it was built at
                (:attr:`~ctx.hub.retrieval.index.folder.IndexState.reuse`).
            docs: The blobs wanting a vector. A source built before
                :data:`REPLY_TO_FORMAT` gives none to a memory with a
                ``reply_to`` (its vector was made from other text).
        """
        sources = [*self._kept, *self._open(folder, names)]
        found: dict[str, tuple[VectorIndex, str]] = {}
        for doc in docs:
            for source in sources:
                if (
                    doc.blob in source.index
                    and not source.damaged.intersection(source.index.family(doc.blob))
                    and (source.format >= REPLY_TO_FORMAT or not doc.reply_to)
                    and (source.format >= PASSAGES_FORMAT or _pieces(doc) == 1)
                    # Cut where passages are cut now (a format-7 index split
                    # texts of 181-300 words, which now keep one vector).
                    and len(source.index.family(doc.blob)) == _pieces(doc)
                ):
                    found[doc.blob] = (source.index, doc.blob)
                    break
        return found

    def _open(self, folder: Path | None, names: Mapping[str, int]) -> list[_Source]:
        if folder is None:
            return []
        sources = []
        for name, format in names.items():
            if name not in self._opened:
                self._opened[name] = _opened(folder / name, format)
            source = self._opened[name]
            if source is not None:
                sources.append(source)
        return sources


def _opened(path: Path, format: int) -> _Source | None:
    """Returns the vectors in folder ``path``, with its damaged rows; None if none."""
    try:
        index = read_rows(path)  # no graph needed
    except VectorIndexError:
        return None
    return _Source(index, format, frozenset(index.damaged()))


def vector_folders(folder: Path, made_by: str, current: int) -> dict[str, int]:
    """Returns the vector folders in ``folder`` whose sidecar names ``made_by``.

    For a state file that cannot be read: its folders are found by their
    sidecars. Sidecars record who made them since index format 5; a later
    format that embeds other text must tell its folders apart here.

    Args:
        folder: The index folder.
        made_by: The embedder's name.
        current: The format to record for them (the current one).
    """
    found = {}
    for child in sorted(folder.glob("vectors-*")):
        if not (child / SIDECAR).is_file():
            continue
        try:
            sidecar = read_sidecar(child)
        except VectorIndexError:
            continue
        if made_by and sidecar.made_by == made_by:
            found[child.name] = current
    return found
