"""The fuzzy channel's queries: typos and identifiers.

A question's words of four letters or more are looked for within a few
edits of the words memories hold, or as the beginning of one
(:meth:`~ctx.hub.retrieval.index.lexical.LexicalIndex.fuzzy_search` runs
:func:`fuzzy_query`); the word share counts a question's typo as the word
it nearly is (:func:`near_word`, asked by
:mod:`ctx.hub.retrieval.index.coverage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import tantivy

from ctx.hub.retrieval.index.lexical_errors import reading
from ctx.hub.retrieval.index.parts import best_part
from ctx.hub.retrieval.index.terms import query_text, query_words

if TYPE_CHECKING:
    from ctx.hub.retrieval.index.lexical import LexicalIndex

__all__ = ["fuzzy_query", "fuzzy_word", "near_word"]

# Edit distance 1 for words of 4-7 characters, 2 for longer ones that no
# memory holds (shorter words are not looked for, see _lexical_terms). A long
# word the index holds is spelled as someone wrote it: two edits from it are
# mostly other words (as Lucene's spell checker suggests only for words not in
# the index), and walking the term dictionary within two edits cost 2.7x one
# edit at 10k memories. An exact occurrence adds this much on top of the fuzzy
# match's constant score of 1, so it ranks above a near miss.
_FUZZY_TWO_EDITS_CHARS = 8
_FUZZY_EXACT_BONUS = 0.5
# A query word that more than this share of the memories hold, and more than
# _FUZZY_COMMON_MIN of them, is left to BM25 when the query has rarer words
# (Elasticsearch's common terms, Lucene's MoreLikeThis maxDocFreq): the fuzzy
# channel's constant scores cannot skip documents, so such a word made it
# score most of the index (23 ms of 52 per recall at 1M memories), and a word
# that common neither is a typo nor tells memories apart. In a small store a
# word in a fifth of the memories still does, and scoring them costs nothing.
_FUZZY_COMMON_SHARE = 0.1
_FUZZY_COMMON_MIN = 1_000


def fuzzy_query(
    index: LexicalIndex, query: str, parts: Sequence[str] = ()
) -> tantivy.Query | None:
    """Returns the fuzzy channel's query for ``query`` (None: no word to look for).

    Each word within its edits or begun by it, scoring 1, and 0.5 more for
    the word itself. ``parts``: those of a long ``query``, asked instead of
    it, a document scoring as its best (:func:`~.parts.best_part`); the
    common words each leaves out are those of any of them.
    """
    words = {text: query_words(query_text(text)) for text in [query, *parts]}
    searcher = index.current_searcher()
    with reading(f"search {index.where}"):
        every = {word for found in words.values() for word in found}
        held = {word: searcher.doc_freq("words", word) for word in every}
        most = max(_FUZZY_COMMON_MIN, searcher.num_docs * _FUZZY_COMMON_SHARE)
    common = {word for word in every if held[word] > most}
    if common == every:
        common = set()  # common words alone: still looked for
    asked = []
    for text in parts or [query]:
        clauses = [
            (tantivy.Occur.Should, clause)
            for word in words[text]
            if word not in common
            for clause in (
                fuzzy_word(index, word, held=held[word] > 0),
                tantivy.Query.const_score_query(
                    index.term("words", word, 1.0), _FUZZY_EXACT_BONUS
                ),
            )
        ]
        asked.append(tantivy.Query.boolean_query(clauses) if clauses else None)
    return best_part(asked)


def fuzzy_word(
    index: LexicalIndex, word: str, *, held: bool | None = None, prefix: bool = True
) -> tantivy.Query:
    """Returns the fuzzy channel's query for one word of ``index``.

    ``held``: whether a memory holds the word (looked up if ``None``).
    ``prefix``: whether a word that begins within the edits matches too.
    """
    distance = 1
    if len(word) >= _FUZZY_TWO_EDITS_CHARS:
        if held is None:
            searcher = index.current_searcher()
            with reading(f"search {index.where}"):
                held = bool(searcher.doc_freq("words", word))
        distance = 1 if held else 2
    return tantivy.Query.fuzzy_term_query(
        index.schema, "words", word, distance=distance, prefix=prefix
    )


def near_word(index: LexicalIndex, word: str) -> tantivy.Query:
    """Returns the words a memory of ``index`` may hold where a question says ``word``.

    A typo of the whole word, within the fuzzy channel's edits of it
    ("postgress": "postgres"), or a word it begins exactly ("config":
    "configuration"). Not the fuzzy channel's prefix within edits, which
    suits a search but is no typo: "pets" begins "personal" but for one
    letter, and counted as nearly held it made a note about laptops
    relevant to "Do I have any pets?".
    """
    whole = fuzzy_word(index, word, prefix=False)
    begun = tantivy.Query.fuzzy_term_query(
        index.schema, "words", word, distance=0, prefix=True
    )
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, whole), (tantivy.Occur.Should, begun)]
    )
