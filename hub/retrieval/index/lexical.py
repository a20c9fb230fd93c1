"""The lexical channel: a Tantivy index of memory text, keyed by blob id.

The index is a projection (always rebuildable from commits), so a document is
keyed by the blob id of the memory's content: a memory that lives on fifty
branches is indexed once, and a branch's view is applied at query time through
the ``allowed`` set of its live blob ids.

Fields:

- ``blob`` and ``memory_id``: raw (untokenised), stored; ``kind``: raw.
- ``title``, ``body``, ``context``: Tantivy's ``en_stem`` analyser (simple
  tokeniser, lowercase, tokens over 40 bytes dropped, English Snowball stemmer),
  so "deciding" finds "decide".
- ``tags``: raw terms, each tag lowercased whole (``project:ctx``) and as its
  namespace and value (``project``, ``ctx``).
- ``tag_values``: raw terms, each tag lowercased whole and its value, but not
  its namespace: what :meth:`~ctx.hub.retrieval.index.coverage.Matches.tagged`
  matches a query's words to.
- ``words``: the unstemmed lowercased words of title and body (whitespace
  tokeniser over the text :func:`ctx.hub.retrieval.index.terms.words` makes), for
  the fuzzy channel: whole identifiers (``get_user_by_id``,
  ``parseConfigFile``) and their parts (``user``, ``config``).
- ``created_at``: a date fast field (UTC, clamped to 1678-2261, the years
  Tantivy holds), for range filters.
- ``language`` (raw) and ``text_<code>``: a memory in another language that
  Tantivy stems (:mod:`ctx.hub.retrieval.index.language`) has its code, and its title,
  body and context in the field of its language, analysed with that
  language's stemmer; a query is also analysed with the analyser of each
  language the index holds, for that language's field.
- ``text_cjk``: the Chinese, Japanese and Korean of title, body and context
  as overlapping pairs of characters, and each character
  (:func:`ctx.hub.retrieval.index.terms.cjk_terms`): written without spaces, a
  sentence is otherwise one term. A query's pairs are looked up there.
- ``text_hash``: raw, stored: the digest of the text a memory's vector is
  made from (memories of equal digests share a vector).
- ``passages`` (stored bytes) and ``long`` (a fast number): for a memory of
  several passages, which passages hold each of its terms
  (:func:`~ctx.hub.retrieval.index.coverage.passage_index`), read for its
  relevance; ``long`` is 1 then, and absent for a memory of one.

Queries are user text and are never handed to Tantivy's query parser (which
reads ``project:ctx`` as a field name, ``-x`` as "everything but x" and raises
on ``AND (``): :meth:`LexicalIndex.search` analyses the text with the same
analyser as the fields and builds a boolean "should" query of term queries,
so no input can raise.

One writer at a time: Tantivy allows a single
:class:`~ctx.hub.retrieval.index.lexical_writer.LexicalWriter` per index folder across
all processes. :meth:`LexicalIndex.try_writer` returns ``None`` when another
holds it, and searching never needs it. Every error Tantivy raises becomes a
:class:`~ctx.hub.retrieval.index.lexical_errors.LexicalIndexError`, and one that says
the index cannot be read a ``LexicalIndexCorruptError``, which the projection
repairs (:mod:`ctx.hub.retrieval.index.lexical_errors`).
"""

from __future__ import annotations

import copy
import math
import re
import struct
from collections.abc import Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import Self

import tantivy

from ctx.hub.retrieval.index.coverage import Matches
from ctx.hub.retrieval.index.documents import UNTOLD
from ctx.hub.retrieval.index.fuzzy import fuzzy_query
from ctx.hub.retrieval.index.language import LANGUAGES, analyzer, field_of
from ctx.hub.retrieval.index.lexical_errors import (
    LexicalIndexBusyError,
    LexicalIndexError,
    one_line,
    reading,
)
from ctx.hub.retrieval.index.lexical_writer import LexicalWriter
from ctx.hub.retrieval.index.parts import best_part
from ctx.hub.retrieval.index.schema import (
    BLOB_PARTS,
    CJK_FIELD,
    LexicalDoc,
    build_schema,
    content_analyzer,
    index_time,
    stem_analyzer,
    tokenizer_of,
)
from ctx.hub.retrieval.index.segments import Checked, check_files, unchanged
from ctx.hub.retrieval.index.terms import (
    MAX_QUERY_TERMS,
    cjk_terms,
    query_tags,
    query_text,
)

__all__ = [
    "BODY_BOOST",
    "CONTEXT_BOOST",
    "FUNCTION_WORD_WEIGHT",
    "TAGS_BOOST",
    "TITLE_BOOST",
    "LexicalDoc",
    "LexicalIndex",
]

# Field boosts multiply each field's BM25 score before they are summed. A title
# is a one-line summary its author chose, so a query word there says more than
# the same word somewhere in a long body: twice as much, the usual
# Lucene/Elasticsearch starting point. A tag is a deliberate label, between the
# two. Context (where a memory belongs) counts like the body.
TITLE_BOOST = 2.0
TAGS_BOOST = 1.5
BODY_BOOST = 1.0
CONTEXT_BOOST = 1.0

FUNCTION_WORD_WEIGHT = 0.25
"""What an English function word of a question ("what", "did", "you") weighs
in the BM25 query beside its other words (1 when it has no others). Such a
word is in many memories but not in all: in a store of short memories its
idf is far from zero, so "what did you do with the car?" ranked the memories
that ask something with the one about the car. Left out altogether, the
lexical channel did better alone but the fused ranking worse; at 0.1 to 0.5
both did better (benchmarks/bench_robustness.py's sets, same stores). At
0.25 against 1, the lexical channel alone: LoCoMo turns recall@10 0.593 ->
0.651, sessions of one speaker's turns any@5 0.890 -> 0.912, Cranfield
nDCG@10 0.354 -> 0.365; the defaults: 0.730 -> 0.734, 0.906 -> 0.910,
0.418 -> 0.420. That was measured while a memory holding only such words
still matched; since it does not (:meth:`LexicalIndex._bm25_query`), the
weight only orders the memories that match some other word."""

_WORD = re.compile(r"\w+")
"""A word, as :meth:`LexicalIndex._function_words_apart` tells them."""


# Allowed-set filtering is applied to an over-fetched ranking, not inside
# Tantivy: a term-set filter of 1,000 blob ids cost 5.5 ms on 5,000 documents,
# while reading a hit's blob id costs about 2 µs. Over-fetching starts with the
# number of hits that, at the allowed set's share of the index, should hold
# `limit` allowed ones, times this margin; each further page is three times as
# large as everything fetched so far.
_OVERFETCH_MARGIN = 1.5
_OVERFETCH_GROWTH = 3

# A blob id's BLOB_PARTS (16, 16 and 8 hex digits) as 20 bytes.
_pack_blob = struct.Struct(">QQI").pack


_SHARERS = 16
"""Most documents :meth:`LexicalIndex.blobs_with_text` reads per digest."""


class LexicalIndex:
    """A BM25 index over memory text, keyed by blob id.

    Open one with :meth:`open` (a folder) or :meth:`in_memory` (tests). Any
    number of indexes, in any number of processes, may search the same folder;
    writing goes through the one :class:`LexicalWriter` that
    :meth:`try_writer` or :meth:`writer` hands out. Searches see the latest
    commit of any writer: each one reloads the reader first, which costs about
    15 µs when nothing changed.

    Attributes:
        schema: The Tantivy schema
        (:func:`~ctx.hub.retrieval.index.schema.build_schema`).
        where: What the index is, for messages ("the lexical index in X").
    """

    def __init__(
        self, index: tantivy.Index, *, where: str, folder: Path | None = None
    ) -> None:
        """Wraps an opened Tantivy index; use :meth:`open` or :meth:`in_memory`."""
        self._index = index
        self.schema = index.schema
        self.where = where
        self._folder = folder
        self._checked: Checked = {}  # as of the last check (see refresh)
        self._pinned: tantivy.Searcher | None = None  # see pinned
        self._analyzer = stem_analyzer()
        self._content = content_analyzer()
        for code in LANGUAGES:
            self._index.register_tokenizer(tokenizer_of(code), analyzer(code))
        self._index.config_reader(reload_policy="manual")

    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> Self:
        """Opens the index in a folder, creating it if ``create`` allows.

        Args:
            path: The index folder.
            create: Whether to create a missing folder, and an empty index
                in a folder that holds none.

        Raises:
            LexicalIndexError: The folder is missing (and ``create`` is off)
                or is not a folder.
            LexicalIndexCorruptError: It holds a corrupt or incompatible
                index.
        """
        folder = Path(path)
        where = f"the lexical index in {folder}"
        if create:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LexicalIndexError(
                    f"Cannot create {where}: {one_line(exc)}."
                ) from exc
        elif not (folder.is_dir() and tantivy.Index.exists(str(folder))):
            raise LexicalIndexError(
                f"No lexical index exists in {folder}.",
                hint="Run `ctx reindex` to build it.",
            )
        with reading(f"open {where}"):
            # Tantivy aborts the process on some damaged files (an allocation
            # sized by garbage): no file it has not read whole is opened.
            checked = check_files(folder, every=False)
            index = tantivy.Index(build_schema(), path=str(folder), reuse=True)
            opened = cls(index, where=where, folder=folder)
        opened._checked = checked
        return opened

    @classmethod
    def in_memory(cls) -> Self:
        """Returns a new empty index held in memory (lost when dropped)."""
        return cls(tantivy.Index(build_schema()), where="the in-memory lexical index")

    def __repr__(self) -> str:
        return f"<LexicalIndex {self.where}>"

    def verify(self) -> None:
        """Checks every file of the committed segments against its checksum.

        Tantivy ends each segment file with a footer holding the CRC-32 of
        the bytes before it, which it does not check when it reads. This
        reads every byte, even of files checked before (docs/recall.md,
        "Damage"): for a process that opens the index once and answers many
        questions (the hub). An index in memory has nothing to check.

        Raises:
            LexicalIndexCorruptError: A file is damaged or missing its footer,
                or ``meta.json`` cannot be read.
        """
        if self._folder is not None:
            with reading(f"read {self.where}"):
                self._checked = check_files(self._folder, every=True)
                self._index.reload()  # what was checked is what is read

    # -- writing ----------------------------------------------------------

    def try_writer(self) -> LexicalWriter | None:
        """Returns the index's writer, or ``None`` if another one holds it.

        The writer holds the index folder's lock until it is closed (use it as
        a context manager); meanwhile every other :meth:`try_writer`, in this
        process or another, returns ``None``. A caller that gets ``None`` can
        still search what is committed.

        Raises:
            LexicalIndexError: The writer failed for another reason.
        """
        try:
            return self.writer()
        except LexicalIndexBusyError:
            return None

    def writer(self) -> LexicalWriter:
        """Returns the index's writer, which holds its lock until closed.

        Raises:
            LexicalIndexBusyError: Another writer holds the lock.
            LexicalIndexError: The writer failed for another reason.
        """
        try:
            with reading(f"write {self.where}", errors=()):
                raw = self._index.writer()
        except ValueError as exc:
            if "LockBusy" in str(exc):
                raise LexicalIndexBusyError(
                    f"Another writer holds the lock on {self.where}.",
                    hint="Search what is indexed, or try again shortly.",
                ) from exc
            raise LexicalIndexError(
                f"Cannot write {self.where} ({one_line(exc)})."
            ) from exc
        return LexicalWriter(self, raw, where=self.where)

    # -- reading ----------------------------------------------------------

    def refresh(self) -> None:
        """Makes the latest commit of any writer visible to searches.

        Raises:
            LexicalIndexCorruptError: The committed index cannot be read.
        """
        with reading(f"read {self.where}"):
            # A reload reads every segment's headers again: files changed
            # since they were checked are checked first (about 2 µs a file
            # when none changed), as at opening.
            if self._folder is None:
                self._index.reload()
            elif not unchanged(self._folder, self._checked):
                self._checked = check_files(self._folder, every=False)
                self._index.reload()
            # else: no file changed since the last reload, which stands.

    def current_searcher(self) -> tantivy.Searcher:
        """Returns a searcher over the latest commit (:meth:`refresh` first).

        A :meth:`pinned` index returns its one searcher instead.
        """
        if self._pinned is not None:
            return self._pinned
        self.refresh()
        with reading(f"read {self.where}"):
            return self._index.searcher()

    def pinned(self) -> Self:
        """Returns this index for reading, fixed at its latest commit.

        Each search of one recall asks for a searcher; a refresh checks
        every segment file and reloads (about 0.9 ms at 100,000 memories),
        and a writer committing between two of them would let one recall
        read two states. The copy refreshes once and answers every read
        from that searcher; it shares the Tantivy index, so it is for reads
        only and for as long as one question lasts.
        """
        searcher = self.current_searcher()
        fixed = copy.copy(self)
        fixed._pinned = searcher
        return fixed

    def count(self) -> int:
        """Returns the number of documents committed (and not deleted).

        Raises:
            LexicalIndexCorruptError: The committed index cannot be read (as
                for every method that reads it).
        """
        searcher = self.current_searcher()
        with reading(f"read {self.where}"):
            return int(searcher.num_docs)

    def contains(self, blob: str) -> bool:
        """Returns whether a committed document has this blob id."""
        query = tantivy.Query.term_query(self.schema, "blob", blob)
        return bool(self.run(self.current_searcher(), query, 1, 0))

    def english_holding(self, words: Sequence[str]) -> tuple[int, int]:
        """Returns how many English documents hold any of ``words``, of how many.

        Live documents alone (Tantivy's document frequency still counts an
        edited memory's old version until its segment is merged). A
        document is English when the index holds no other language for it,
        told or to be told (:mod:`~ctx.hub.retrieval.index.language`).
        ``words`` as the fuzzy channel's ``words`` field holds them.
        """
        foreign = tantivy.Query.term_set_query(
            self.schema, "language", [*LANGUAGES, UNTOLD]
        )
        holding = tantivy.Query.boolean_query(
            [
                (
                    tantivy.Occur.Must,
                    tantivy.Query.term_set_query(self.schema, "words", list(words)),
                ),
                (tantivy.Occur.MustNot, foreign),
            ]
        )
        searcher = self.current_searcher()
        with reading(f"search {self.where}"):
            # .count is not in tantivy's stubs
            held = searcher.search(holding, 1, count=True).count  # type: ignore[attr-defined]
            others = searcher.search(foreign, 1, count=True).count  # type: ignore[attr-defined]
            return int(held or 0), int(searcher.num_docs) - int(others or 0)

    def blobs_tagged(self, tag: str) -> set[str]:
        """Returns the blobs of the documents that carry ``tag``, in any letter case."""
        query = self.term("tags", tag.lower(), 1.0)
        with reading(f"search {self.where}"):
            searcher = self.current_searcher()
            if not searcher.num_docs:
                return set()
            hits = searcher.search(query, searcher.num_docs).hits
        return set(self.blobs_of(searcher, hits))

    def blobs_with_text(self, digests: Collection[str]) -> dict[str, list[str]]:
        """Returns, per digest, the committed blobs whose ``text_hash`` it is."""
        if not digests:
            return {}
        searcher = self.current_searcher()
        query = tantivy.Query.term_set_query(self.schema, "text_hash", list(digests))
        limit = min(searcher.num_docs, _SHARERS * len(digests))
        found: dict[str, list[str]] = {}
        for _, address in self.run(searcher, query, max(limit, 1), 0):
            with reading(f"read {self.where}"):
                doc = searcher.doc(address)
                digest = str(doc.get_first("text_hash"))
                blob = str(doc.get_first("blob"))
            found.setdefault(digest, []).append(blob)
        return found

    def matches(self, query: str) -> Matches:
        """Returns what ``query`` asks of blobs: the tags it names, its words held.

        See :class:`ctx.hub.retrieval.index.coverage.Matches`; keep it for the
        question to look each blob up once.
        """
        return Matches(self, query)

    def in_language(
        self, code: str, *, limit: int, allowed: Collection[str] | None = None
    ) -> list[str]:
        """Returns blob ids of documents whose ``language`` field is ``code``.

        Any order; at most ``limit``, of ``allowed`` if given.
        """
        query = tantivy.Query.term_query(self.schema, "language", code)
        return [blob for blob, _ in self._ranked(query, limit, allowed)]

    def known_blobs(self) -> set[str]:
        """Returns the blob ids of every committed document.

        Reads every document's key from the fast fields: for status and
        repair, not for each query.
        """
        searcher = self.current_searcher()
        total = searcher.num_docs
        if total == 0:
            return set()
        hits = self.run(searcher, tantivy.Query.all_query(), total, 0)
        return set(self.blobs_of(searcher, hits))

    def search(
        self,
        query: str,
        *,
        limit: int,
        allowed: Collection[str] | None = None,
        within: Sequence[tuple[datetime, datetime]] = (),
        parts: Sequence[str] = (),
    ) -> list[tuple[str, float]]:
        """Returns the best BM25 matches for a text as (blob id, score).

        The text is analysed like the fields (words, lowercase, English
        stems); each term is looked up in title, body, context and tags,
        with the field boosts :data:`TITLE_BOOST`, :data:`BODY_BOOST`,
        :data:`CONTEXT_BOOST` and :data:`TAGS_BOOST`, an English function
        word ("what", "did") weighing :data:`FUNCTION_WORD_WEIGHT` beside
        other words, and a document's score is the sum. A document matches if
        it holds any term, a function word aside when the text has other
        words. Tags are also matched by the query's
        whitespace-separated words whole (``project:ctx``) and by their
        namespace and value, and its Chinese, Japanese or Korean by pairs of
        characters (:data:`~ctx.hub.retrieval.index.schema.CJK_FIELD`).

        Args:
            query: User text; any string is accepted, and one with no words
                returns nothing. Only its first 10,000 characters and 64
                distinct terms count.
            limit: The most hits to return.
            allowed: If given, only these blob ids may be returned (a branch's
                live set). The ranking is fetched past ``limit`` (as many hits
                as should hold ``limit`` allowed ones at the set's share of the
                index, times 1.5) and filtered; if that is not enough, further
                pages, each three times all fetched so far, until ``limit``
                allowed hits are found or the matches run out. The result is
                exactly the best ``limit`` allowed hits; the cost grows as the
                allowed share of the index shrinks (about 2 µs per hit read).
            within: If given, only documents whose ``created_at`` lies in one
                of these half-open ``[start, end)`` spans match, and a query
                with no words matches all of them (each scoring 1).
            parts: The parts of a long ``query``
                (:func:`~ctx.hub.retrieval.index.parts.question_parts`),
                searched instead of it in one search: a document scores as
                the part it matches best (Tantivy's disjunction max).

        Returns:
            Up to ``limit`` hits, best first.
        """
        built = best_part(
            [self._bm25_query(query_text(text)) for text in parts or [query]]
        )
        if within:
            spans = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, self._span(*span)) for span in within]
            )
            clauses = [(tantivy.Occur.Must, spans)]
            if built is not None:
                clauses.append((tantivy.Occur.Should, built))
            else:
                clauses[0] = (
                    tantivy.Occur.Must,
                    tantivy.Query.const_score_query(spans, 1.0),
                )
            built = tantivy.Query.boolean_query(clauses)
        if built is None:
            return []
        return self._ranked(built, limit, allowed)

    def _span(self, start: datetime, end: datetime) -> tantivy.Query:
        return tantivy.Query.range_query(
            self.schema,
            "created_at",
            tantivy.FieldType.Date,
            index_time(start),
            index_time(end),
            include_lower=True,
            include_upper=False,
        )

    def fuzzy_search(
        self,
        query: str,
        *,
        limit: int,
        allowed: Collection[str] | None = None,
        parts: Sequence[str] = (),
    ) -> list[tuple[str, float]]:
        """Returns the documents whose words nearly match the query's.

        The typo and identifier channel: each query word of four or more
        characters (common function words aside) matches title and body words
        within one edit (4-7 characters, or any the index holds) or two (8 or
        more that no memory holds), or that begin with such a word
        (``postgress`` finds ``postgres`` and ``postgresql``). A word that
        more than a tenth of the documents hold (and over 1,000) is left out
        when another is not. Words are
        matched unstemmed and whole, so ``get_usr_by_id`` finds
        ``get_user_by_id``; a document's words also
        include the parts of its identifiers (``parseConfigFile`` gives
        ``config``). Each matched query word scores 1, plus 0.5 if it occurs
        exactly.

        Args:
            query: User text; any string is accepted. Only its first 32
                distinct words of four or more characters count.
            limit: The most hits to return.
            allowed: As for :meth:`search`.
            parts: As for :meth:`search`. The common words each leaves out
                are those of any of them: a line of them alone has no rarer
                word, and would search most of a large index
                (:func:`~ctx.hub.retrieval.index.fuzzy.fuzzy_query`).

        Returns:
            Up to ``limit`` hits, best first.
        """
        built = fuzzy_query(self, query, parts)
        return [] if built is None else self._ranked(built, limit, allowed)

    # -- internals --------------------------------------------------------

    def _query_terms(self, text: str) -> list[tuple[str, float]]:
        """Returns the distinct terms of ``text`` that :meth:`search` looks up.

        Each with its weight: 1, or :data:`FUNCTION_WORD_WEIGHT` for an
        English function word ("what", "did", "you":
        :func:`~ctx.hub.retrieval.index.schema.content_analyzer`) when the text has
        other words. At most :data:`MAX_QUERY_TERMS`, the other words first,
        and of a text of more other words than that, those a memory holds
        first: a prompt's question after a long pasted log was left out.
        """
        stems = dict.fromkeys(self._analyzer.analyze(text))
        content = dict.fromkeys(self._content.analyze(text))
        weight = FUNCTION_WORD_WEIGHT if content else 1.0
        if len(content) > MAX_QUERY_TERMS:  # a long text: the held words first
            searcher = self.current_searcher()
            with reading(f"search {self.where}"):
                held = {
                    term
                    for term in content
                    if searcher.doc_freq("body", term)
                    or searcher.doc_freq("title", term)
                }
            content = dict.fromkeys(sorted(content, key=lambda term: term not in held))
        terms = [(term, 1.0) for term in content if term in stems]
        terms += [(term, weight) for term in stems if term not in content]
        return terms[:MAX_QUERY_TERMS]

    def _bm25_query(self, text: str) -> tantivy.Query | None:
        """Returns the query :meth:`search` runs, or None for a text of no words.

        A document matches by any term, but one that holds only function
        words of a text that has other words is no match: they add to a
        match's score. "What animal did I get?" asked of a person's notes,
        none saying "animal", had every note that says "I" ranked by it,
        and the fusion took that order as a channel's.
        """
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        adding: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for term, weight in self._query_terms(text):
            into = adding if weight < 1.0 else clauses
            for field, boost in (
                ("title", TITLE_BOOST),
                ("body", BODY_BOOST),
                ("context", CONTEXT_BOOST),
            ):
                query = self.term(field, term, boost * weight)
                into.append((tantivy.Occur.Should, query))
        for tag in query_tags(text):
            clauses.append((tantivy.Occur.Should, self.term("tags", tag, TAGS_BOOST)))
        pairs = dict.fromkeys(cjk_terms(text, single=False))
        for pair in list(pairs)[:MAX_QUERY_TERMS]:
            query = self.term(CJK_FIELD, pair, BODY_BOOST)
            clauses.append((tantivy.Occur.Should, query))
        held = self._held_languages()
        # Another language's analyser reads the English function words as
        # words of its own ("i" is Italian's "the"): they only add there too.
        said, small = (
            self._function_words_apart(text) if held and adding else (text, "")
        )
        for code in held:
            stems = dict.fromkeys(analyzer(code).analyze(said))
            for term in list(stems)[:MAX_QUERY_TERMS]:
                query = self.term(field_of(code), term, BODY_BOOST)
                clauses.append((tantivy.Occur.Should, query))
            for term in dict.fromkeys(analyzer(code).analyze(small)):
                if term not in stems:
                    boost = BODY_BOOST * FUNCTION_WORD_WEIGHT
                    adding.append(
                        (tantivy.Occur.Should, self.term(field_of(code), term, boost))
                    )
        if not clauses:
            return None
        if not adding:
            return tantivy.Query.boolean_query(clauses)
        matching = tantivy.Query.boolean_query(clauses)
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, matching), *adding])

    def _function_words_apart(self, text: str) -> tuple[str, str]:
        """Returns ``text`` less its English function words, and those words."""
        kept: list[str] = []
        small: list[str] = []
        for word in _WORD.findall(text):
            function = not self._content.analyze(word) and self._analyzer.analyze(word)
            (small if function else kept).append(word)
        return " ".join(kept), " ".join(small)

    def _held_languages(self) -> tuple[str, ...]:
        """Returns the codes of the other languages the index holds a memory in.

        A term count per language: a few µs each, for every query.
        """
        searcher = self.current_searcher()
        with reading(f"search {self.where}"):
            return tuple(c for c in LANGUAGES if searcher.doc_freq("language", c))

    def term(self, field: str, term: str, boost: float) -> tantivy.Query:
        """Returns the query for ``term`` in ``field``, its score times ``boost``."""
        query = tantivy.Query.term_query(self.schema, field, term)
        if boost == 1.0:
            return query
        return tantivy.Query.boost_query(query, boost)

    def _ranked(
        self, query: tantivy.Query, limit: int, allowed: Collection[str] | None
    ) -> list[tuple[str, float]]:
        searcher = self.current_searcher()
        # Tantivy sizes its top-k heap by the limit: never ask past the index.
        limit = min(limit, searcher.num_docs)
        if limit <= 0:
            return []
        if allowed is None:
            hits = self.run(searcher, query, limit, 0)
            blobs = self.blobs_of(searcher, hits)
            return [
                (blob, float(score))
                for blob, (score, _) in zip(blobs, hits, strict=True)
            ]
        if not allowed:
            return []
        return self._overfetched(searcher, query, limit, allowed)

    def _overfetched(
        self,
        searcher: tantivy.Searcher,
        query: tantivy.Query,
        limit: int,
        allowed: Collection[str],
    ) -> list[tuple[str, float]]:
        total = searcher.num_docs
        share = min(1.0, len(allowed) / total)
        page = min(total, math.ceil(limit / share * _OVERFETCH_MARGIN))
        fetched = 0
        found: list[tuple[str, float]] = []
        while True:
            hits = self.run(searcher, query, page, fetched)
            fetched += len(hits)
            blobs = self.blobs_of(searcher, hits)
            for blob, (score, _) in zip(blobs, hits, strict=True):
                if blob in allowed:
                    found.append((blob, float(score)))
                    if len(found) == limit:
                        return found
            if len(hits) < page or fetched >= total:
                return found
            page = min(total - fetched, fetched * _OVERFETCH_GROWTH)

    def run(
        self, searcher: tantivy.Searcher, query: tantivy.Query, limit: int, offset: int
    ) -> list[tuple[float, tantivy.DocAddress]]:
        """Returns the (score, address) hits of ``query``, ``offset`` skipped."""
        with reading(f"search {self.where}"):
            result = searcher.search(query, limit, count=False, offset=offset)
            return list(result.hits)

    def blobs_of(
        self,
        searcher: tantivy.Searcher,
        hits: Sequence[tuple[float, tantivy.DocAddress]],
    ) -> list[str]:
        """Returns the blob ids of hits' documents, in order (:data:`BLOB_PARTS`)."""
        addresses = [address for _, address in hits]
        if not addresses:
            return []
        with reading(f"read {self.where}"):
            columns = [
                searcher.fast_field_values(name, addresses) for name, _, _ in BLOB_PARTS
            ]
        try:  # 40 hex digits: packed and hexed, 4x faster than formatting
            return [_pack_blob(*parts).hex() for parts in zip(*columns, strict=True)]
        except struct.error:  # a part missing (None): read the stored field
            return [
                self._blob_of(searcher, address)
                if None in parts
                else _pack_blob(*parts).hex()
                for address, *parts in zip(addresses, *columns, strict=True)
            ]

    def _blob_of(self, searcher: tantivy.Searcher, address: tantivy.DocAddress) -> str:
        with reading(f"read {self.where}"):
            return str(searcher.doc(address).get_first("blob"))
