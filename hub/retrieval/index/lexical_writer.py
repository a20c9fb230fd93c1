"""The one writer of a lexical index: adds, deletes and commits its documents.

Tantivy allows one writer per index folder across all processes; it holds
the folder's lock until it is closed. A document is keyed by its blob id, and
adding a blob again replaces its document, so indexing is idempotent. The
fields each document gets are listed in :mod:`ctx.hub.retrieval.index.lexical`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Self

import tantivy

from ctx.hub.retrieval.index.language import LANGUAGES, field_of
from ctx.hub.retrieval.index.lexical_errors import LexicalIndexError, one_line, reading
from ctx.hub.retrieval.index.schema import (
    BLOB_PARTS,
    CJK_FIELD,
    HEX_ID,
    LONG_FIELD,
    PASSAGES_FIELD,
    LexicalDoc,
    index_time,
)
from ctx.hub.retrieval.index.terms import cjk_terms, tag_terms, tag_values, words

if TYPE_CHECKING:
    from ctx.hub.retrieval.index.lexical import LexicalIndex

__all__ = ["LexicalWriter"]


class LexicalWriter:
    """The one writer of a :class:`LexicalIndex`; holds the folder's lock.

    Changes become visible to searches at :meth:`commit`. Closing the writer
    (or leaving its ``with`` block) releases the lock and drops uncommitted
    changes.
    """

    def __init__(
        self, index: LexicalIndex, raw: tantivy.IndexWriter, *, where: str
    ) -> None:
        """Wraps a Tantivy writer; use :meth:`LexicalIndex.writer`."""
        self._index = index
        self._raw: tantivy.IndexWriter | None = raw
        self._where = where

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _writer(self) -> tantivy.IndexWriter:
        if self._raw is None:
            raise LexicalIndexError("The lexical index writer is closed.")
        return self._raw

    def add(self, docs: Sequence[LexicalDoc], *, new: bool = False) -> None:
        """Adds documents, replacing any committed under the same blob id.

        Args:
            docs: The documents.
            new: The caller knows that no document of these blob ids is
                committed or added since (it looked, holding this writer):
                nothing is deleted first. Tantivy applies each delete to
                every document added before it, at commit (a quarter of the
                cost of adding 10,000 new documents).

        Raises:
            LexicalIndexError: Tantivy refused a document.
        """
        writer = self._writer()
        schema = self._index.schema
        for doc in docs:
            # One call per document (from_dict) rather than one per field.
            fields: dict[str, object] = {"blob": doc.blob}
            text = f"{doc.title or ''}\n{doc.body}"
            if HEX_ID.fullmatch(doc.blob):  # other keys are read from the store
                for name, start, end in BLOB_PARTS:
                    fields[name] = int(doc.blob[start:end], 16)
            fields.update(
                memory_id=doc.memory_id,
                kind=doc.kind,
                body=doc.body,
                context=doc.context,
                tags=tag_terms(doc.tags),
                tag_values=tag_values(doc.tags),
                words=words(text),
                created_at=index_time(doc.created_at),
            )
            if doc.title:
                fields["title"] = doc.title
            if doc.text_hash:
                fields["text_hash"] = doc.text_hash
            if doc.language in LANGUAGES:
                fields["language"] = doc.language
                fields[field_of(doc.language)] = f"{text}\n{doc.context}"
            elif doc.language:  # not told yet (UNTOLD): found by untold()
                fields["language"] = doc.language
            if cjk := cjk_terms(f"{text}\n{doc.context}", single=True):
                fields[CJK_FIELD] = " ".join(cjk)
            if doc.passages:
                fields[PASSAGES_FIELD] = doc.passages.encode()
                fields[LONG_FIELD] = 1
            document = tantivy.Document.from_dict(fields, schema)
            try:
                # A delete applies only to documents added before it, so the
                # new version survives and re-adding a blob is idempotent.
                with reading(f"write {self._where}", errors=()):
                    if not new:
                        writer.delete_documents_by_term("blob", doc.blob)
                    writer.add_document(document)
            except ValueError as exc:
                raise LexicalIndexError(
                    f"Cannot index blob {doc.blob} ({one_line(exc)})."
                ) from exc

    def delete(self, blobs: Iterable[str]) -> None:
        """Deletes the documents of these blob ids (unknown ids are ignored)."""
        writer = self._writer()
        for blob in blobs:
            try:
                with reading(f"write {self._where}", errors=()):
                    writer.delete_documents_by_term("blob", blob)
            except ValueError as exc:
                raise LexicalIndexError(
                    f"Cannot delete from {self._where} ({one_line(exc)})."
                ) from exc

    def commit(self) -> None:
        """Makes the changes durable and visible to every search.

        Raises:
            LexicalIndexError: The commit failed; the changes are lost.
            LexicalIndexCorruptError: Tantivy panicked (a segment it merged
                cannot be read).
        """
        try:
            with reading(f"commit to {self._where}", errors=()):
                self._writer().commit()
        except ValueError as exc:
            raise LexicalIndexError(
                f"Cannot commit to {self._where} ({one_line(exc)})."
            ) from exc
        self._index.refresh()

    def rollback(self) -> None:
        """Drops the changes made since the last commit."""
        self._writer().rollback()

    def close(self) -> None:
        """Releases the lock, dropping uncommitted changes; idempotent."""
        raw, self._raw = self._raw, None
        if raw is not None:
            raw.rollback()
            raw.__exit__(None, None, None)

    @property
    def closed(self) -> bool:
        """Whether the writer has been closed."""
        return self._raw is None
