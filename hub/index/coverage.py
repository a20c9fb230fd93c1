"""Which of some blobs hold a query's words, and which carry the tags it names.

Not a ranking: recall asks these of the blobs it has ranked already, to
judge how relevant each is (:func:`coverage`, a share of the query's words
comparable across queries) and to boost the memories of a tag the question
names (:func:`tagged`). Both read the lexical index
(:class:`~ctx.hub.index.lexical.LexicalIndex`), with its analysis.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection
from typing import TYPE_CHECKING

import tantivy

from ctx.hub.index.lexical_errors import reading
from ctx.hub.index.schema import content_analyzer
from ctx.hub.index.terms import (
    MAX_QUERY_TERMS,
    query_tag_values,
    query_text,
    query_words,
)

if TYPE_CHECKING:
    from ctx.hub.index.lexical import LexicalIndex

__all__ = ["MASK_BITS", "TAGGED_READ_MAX", "TYPO_CREDIT", "coverage", "tagged"]

TYPO_CREDIT = 0.5
"""The share of a word's weight that a near match of it counts in
:func:`coverage`: likely the word meant, but not for sure."""

TAGGED_READ_MAX = 1_000
"""Most documents :func:`tagged` reads to find the named tags."""

MASK_BITS = 20
"""Terms one query of :func:`coverage` asks at most: a blob's score sums a
power of two per term it holds, exact in Tantivy's 32-bit scores while
every power is below 2**24."""


@functools.cache
def _content() -> tantivy.TextAnalyzer:
    return content_analyzer()


def tagged(index: LexicalIndex, query: str, blobs: Collection[str]) -> set[str]:
    """Returns the ``blobs`` whose memories carry a tag the query names.

    A query names a tag by one of its words (or a hyphenated pair of them,
    see :func:`~ctx.hub.index.terms.query_tag_values`) equal to the tag's
    value or to the whole tag: "what did Caroline say" names ``speaker:caroline``,
    never through the namespace alone.

    The blob ids of the documents that carry a named tag are read when
    they are at most :data:`TAGGED_READ_MAX` (from the fast fields,
    well under 1 µs each) and intersected with ``blobs``; beyond that,
    one query intersects them in Tantivy (about 9 µs per blob of
    ``blobs``). A query that names no tag costs one lookup of its words.
    """
    terms = query_tag_values(query_text(query))
    if not terms or not blobs:
        return set()
    searcher = index.current_searcher()
    named = tantivy.Query.term_set_query(index.schema, "tag_values", terms)
    with reading(f"search {index.where}"):
        result = searcher.search(named, TAGGED_READ_MAX, count=True)
    count = result.count  # type: ignore[attr-defined]  # not in the stubs
    if count is not None and count <= TAGGED_READ_MAX:
        return set(index.blobs_of(searcher, result.hits)).intersection(blobs)
    among = tantivy.Query.term_set_query(index.schema, "blob", list(blobs))
    both = tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, among), (tantivy.Occur.Must, named)]
    )
    hits = index.run(searcher, both, min(len(blobs), searcher.num_docs), 0)
    return set(index.blobs_of(searcher, hits))


def coverage(
    index: LexicalIndex, query: str, blobs: Collection[str]
) -> dict[str, float]:
    """Returns, per blob of ``blobs``, the share of the query's words it holds.

    The query is analysed as :meth:`search` analyses it, less English
    function words (:func:`~ctx.hub.index.schema.content_analyzer`). Each
    term weighs its BM25 inverse document frequency in the index, so that a
    word no memory holds (a name from another project) weighs the most and
    a word every memory holds almost nothing; a blob's share is the weight
    of the terms its title or body holds over the weight of all of them,
    0..1 and comparable across queries. A query word that no memory holds
    but that a blob's words nearly match (as the fuzzy channel matches
    them: "postgress" for "postgres") counts :data:`TYPO_CREDIT` of its
    weight.

    One query answers for every term (:data:`MASK_BITS` at a time): the
    blobs asked about, each term scoring a power of two, so that a blob's
    score is the set of terms it holds. Finding the blobs is what costs
    (about 11 µs a blob at 100,000 memories); a query per term paid it
    once per term.
    """
    text = query_text(query)
    terms = list(dict.fromkeys(_content().analyze(text)))[:MAX_QUERY_TERMS]
    if not terms or not blobs:
        return {}
    # A word the fuzzy channel looks for, by the term it analyses to: a
    # term no memory holds may be a typo of one a memory holds.
    typos = {
        analysed[0]: word
        for word in query_words(text)
        if len(analysed := _content().analyze(word)) == 1
    }
    searcher = index.current_searcher()
    total = searcher.num_docs
    if not total:
        return {}
    whole = 0.0
    asked: list[tuple[tantivy.Query, float]] = []  # a term's query, its credit
    for term in terms:
        with reading(f"search {index.where}"):
            found = max(searcher.doc_freq(field, term) for field in ("title", "body"))
        weight = math.log(1 + (total - found + 0.5) / (found + 0.5))
        whole += weight
        if found:
            either = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Should, index.term(field, term, 1.0))
                    for field in ("title", "body")
                ]
            )
            asked.append((either, weight))
        elif term in typos:
            asked.append((index.fuzzy_word(typos[term]), weight * TYPO_CREDIT))
    held = dict.fromkeys(blobs, 0.0)
    among = tantivy.Query.term_set_query(index.schema, "blob", list(blobs))
    for start in range(0, len(asked), MASK_BITS):
        _credit(index, searcher, among, asked[start : start + MASK_BITS], held)
    return {blob: share / whole for blob, share in held.items()} if whole else {}


def _credit(
    index: LexicalIndex,
    searcher: tantivy.Searcher,
    among: tantivy.Query,
    asked: list[tuple[tantivy.Query, float]],
    held: dict[str, float],
) -> None:
    """Adds to each blob of ``held`` the credits of the ``asked`` it matches."""
    clauses = [(tantivy.Occur.Must, tantivy.Query.const_score_query(among, 0.0))]
    clauses += [
        (tantivy.Occur.Should, tantivy.Query.const_score_query(query, float(1 << bit)))
        for bit, (query, _) in enumerate(asked)
    ]
    both = tantivy.Query.boolean_query(clauses)
    hits = index.run(searcher, both, min(len(held), searcher.num_docs), 0)
    for blob, (score, _) in zip(index.blobs_of(searcher, hits), hits, strict=True):
        if blob in held:
            mask = round(score)
            held[blob] += sum(
                credit for bit, (_, credit) in enumerate(asked) if mask >> bit & 1
            )
