r"""The code index's Tantivy index: one document per chunk.

Fields:

- ``key`` (raw, stored): the chunk's key, ``<path>\\0<content id>\\0<n>``; a
  hit whose content id is no longer the file's is stale and dropped.
- ``file`` (raw): the chunk's path, to delete a file's chunks at once.
- ``language`` (raw): for ``--language``.
- ``code``: the chunk's text with each compound identifier followed by its
  words (``parseConfigFile`` adds ``parse config file``), lowercased and
  stemmed like recall's fields: BM25 over code and identifiers.
- ``name``: the chunk's name and enclosing class, split the same way.
- ``path``: the file's path, split into words.

Queries are cut into terms by the same analyser as the fields, so a query's
``config_file`` and ``ConfigFile`` both find ``config`` and ``file``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from pathlib import Path

import tantivy

from ctx.hub.retrieval.index.schema import stem_analyzer
from ctx.hub.retrieval.index.terms import MAX_QUERY_TERMS, query_text

__all__ = ["FIELDS", "CodeLexical", "split_identifiers"]

FIELDS = ("code", "name", "path")

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_WRITER_HEAP = 64_000_000  # bytes: Tantivy's minimum per thread is 15 MB


def split_identifiers(text: str) -> str:
    """Returns ``text`` with the words of each compound identifier after it."""
    pieces: list[str] = []
    last = 0
    for match in _IDENTIFIER.finditer(text):
        word = match.group()
        if "_" not in word.strip("_") and (word.islower() or word.isupper()):
            continue
        if word[1:].islower():
            continue
        parts = _PARTS.findall(word)
        if len(parts) > 1:
            pieces.append(text[last : match.end()])
            pieces.append(" " + " ".join(parts) + " ")
            last = match.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("key", stored=True, tokenizer_name="raw")
    builder.add_text_field("file", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("language", tokenizer_name="raw", index_option="basic")
    for field in FIELDS:
        builder.add_text_field(field, tokenizer_name="en_stem")
    return builder.build()


class CodeLexical:
    """The chunks' Tantivy index in one folder (created when missing).

    Raises:
        ValueError: Tantivy cannot open the folder (a damaged index; the
            caller rebuilds it).
    """

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._schema = _schema()
        self._index = tantivy.Index(self._schema, path=str(folder), reuse=True)
        self._analyzer = stem_analyzer()

    def replace(
        self,
        removed: Iterable[str],
        added: Iterable[tuple[str, str, str, str, str]],
    ) -> None:
        """Deletes the chunks of ``removed`` files, adds chunks, and commits.

        Args:
            removed: Paths whose chunks go.
            added: Per chunk (key, path, language, text, name).
        """
        writer = self._index.writer(heap_size=_WRITER_HEAP, num_threads=1)
        try:
            for path in removed:
                writer.delete_documents_by_term("file", path)
            for key, path, language, text, name in added:
                writer.add_document(
                    tantivy.Document(
                        key=key,
                        file=path,
                        language=language,
                        code=split_identifiers(text),
                        name=split_identifiers(name),
                        path=_path_words(path),
                    )
                )
            writer.commit()
            writer.wait_merging_threads()
        except BaseException:
            writer.rollback()
            raise
        self._index.reload()

    def reload(self) -> None:
        """Makes the latest commit visible."""
        self._index.reload()

    def count(self) -> int:
        """Returns the number of chunks indexed."""
        return int(self._index.searcher().num_docs)

    def search(
        self,
        field: str,
        query: str,
        *,
        limit: int,
        language: str | None = None,
        paths: Collection[str] | None = None,
    ) -> list[tuple[str, float]]:
        """Returns the best BM25 matches in one field, as (key, score).

        Args:
            field: ``code``, ``name`` or ``path``.
            query: Any text; one with no words finds nothing.
            limit: The most hits.
            language: Only chunks of this language.
            paths: Only chunks of these files.
        """
        text = split_identifiers(query_text(query))
        terms = list(dict.fromkeys(self._analyzer.analyze(text)))[:MAX_QUERY_TERMS]
        if not terms or limit < 1 or (paths is not None and not paths):
            return []
        words = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, field, t))
                for t in terms
            ]
        )
        clauses = [(tantivy.Occur.Must, words)]
        if language is not None:
            term = tantivy.Query.term_query(self._schema, "language", language)
            clauses.append((tantivy.Occur.Must, _filter(term)))
        if paths is not None:
            among = tantivy.Query.term_set_query(self._schema, "file", list(paths))
            clauses.append((tantivy.Occur.Must, _filter(among)))
        searcher = self._index.searcher()
        limit = min(limit, searcher.num_docs)
        if limit < 1:
            return []
        result = searcher.search(tantivy.Query.boolean_query(clauses), limit)
        return [
            (str(searcher.doc(address).get_first("key")), float(score))
            for score, address in result.hits
        ]


def _filter(query: tantivy.Query) -> tantivy.Query:
    """Returns a query that only filters: it adds nothing to the score."""
    return tantivy.Query.const_score_query(query, 0.0)


def _path_words(path: str) -> str:
    return split_identifiers(re.sub(r"[/._\-]+", " ", path))
