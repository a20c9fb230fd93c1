"""Which of some blobs hold a query's words, and which carry the tags it names.

Not a ranking: recall asks these of the blobs it has ranked already, to
boost the memories of a tag the question names (:meth:`Matches.tagged`)
and to judge how relevant each is (:meth:`Matches.coverage`, a share of
the query's words comparable across queries). Both read the lexical index
(:class:`~ctx.hub.retrieval.index.lexical.LexicalIndex`), with its analysis.

What costs is finding the blobs asked about (a term query per id, a few
µs each, more with more segments), not the words. So one query answers
everything for a blob: the blobs, each clause (the named tags, then each
term) scoring a power of two, so that a blob's score is the set of
clauses it matches. A :class:`Matches` made
for one question keeps each blob's set: recall asks about tags for the
fused hits and then about words for the best of them, and pays once. A
long memory's passages (:func:`passage_index`) are one stored document
more, read only where its relevance asks for them.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Literal

import tantivy

from ctx.hub.retrieval.index.fuzzy import near_word
from ctx.hub.retrieval.index.lexical_errors import reading
from ctx.hub.retrieval.index.passages import is_long, passages
from ctx.hub.retrieval.index.schema import (
    CJK_FIELD,
    LONG_FIELD,
    PASSAGES_FIELD,
    content_analyzer,
)
from ctx.hub.retrieval.index.terms import (
    MAX_QUERY_TERMS,
    cjk_terms,
    has_cjk,
    query_tag_values,
    query_text,
    query_words,
)

if TYPE_CHECKING:
    from ctx.hub.retrieval.index.lexical import LexicalIndex

__all__ = [
    "MASK_BITS",
    "TAGGED_READ_MAX",
    "TYPO_CREDIT",
    "UNHELD_PAIR_WEIGHT",
    "Matches",
    "best_passage",
    "passage_index",
]

TYPO_CREDIT = 0.5
"""The share of a word's weight that a near match of it counts in
:meth:`Matches.coverage`: likely the word meant, but not for sure."""

UNHELD_PAIR_WEIGHT = 0.25
"""What a pair of Chinese, Japanese or Korean characters of a question that
no memory holds weighs in :meth:`Matches.coverage`, as a share of its idf.
A question's pairs are cut without knowing where its words end: in
"数据库用什么" (what does the database use), "用什" and "什么" span words or
only ask, and at full weight (the most, for a term no memory holds) they
left the memory that says "数据库用 Postgres" under the floor."""

TAGGED_READ_MAX = 1_000
"""Most documents :meth:`Matches.tagged` reads to find the named tags; past
that, it asks about the blobs themselves."""

MASK_BITS = 20
"""Clauses one query asks at most: a blob's score sums a power of two per
clause it matches, exact in Tantivy's 32-bit scores while every power is
below 2**24."""


def _terms(text: str) -> list[str]:
    """Returns the distinct terms of ``text`` that coverage weighs.

    Its words as the content analyser cuts them, but the Chinese, Japanese
    and Korean as their pairs of characters (:func:`cjk_terms`), which the
    index holds in :data:`CJK_FIELD`: the analyser makes a sentence of them
    one term, which no memory holds.
    """
    words = [term for term in content_analyzer().analyze(text) if not has_cjk(term)]
    terms = dict.fromkeys([*words, *cjk_terms(text, single=False)])
    return list(terms)[:MAX_QUERY_TERMS]


def _tag_words(text: str) -> dict[str, list[str]]:
    """Returns, per term of ``text``, the tag values it names (as the index holds them).

    A word that is one term alone ("infra", "Media": ``media``), the value
    of a word written as a whole tag ("project:infra": ``infra``), and each
    term of that whole tag, which a memory carrying it holds whole
    ("project" too).
    """
    values: dict[str, list[str]] = {}
    for value in query_tag_values(text):
        analysed = content_analyzer().analyze(value)
        if len(analysed) == 1 or ":" in value:
            for term in analysed:
                if not has_cjk(term):
                    values.setdefault(term, []).append(value)
    return values


def passage_index(text: str) -> str:
    """Returns which passages of ``text`` hold each term coverage weighs.

    The passages are those its vectors are made from
    (:func:`~ctx.hub.retrieval.index.passages.passages`); each term of
    them as ``term:mask`` between spaces (" pelican:5 harbour:2 "), the
    mask's bit ``i`` (in hex) set when passage ``i`` holds it, so that a
    term is found by its spaced form; "" for a text of one passage. Made
    when a memory is indexed (analysing a long one takes 0.1-0.6 ms) and
    stored with it.
    """
    if not is_long(text):
        return ""
    masks: dict[str, int] = {}
    for number, piece in enumerate(passages(text)):
        for term in _held_terms(piece):
            masks[term] = masks.get(term, 0) | 1 << number
    return (
        " " + " ".join(f"{term}:{mask:x}" for term, mask in sorted(masks.items())) + " "
    )


def _held_terms(text: str) -> set[str]:
    """Returns the terms of ``text`` a question's may be (see :func:`_terms`).

    Its Chinese, Japanese and Korean as the index holds them, each
    character alone too (a question of one character asks for it), and
    not as the analyser's whole runs, which no question's terms are.
    """
    words = {term for term in content_analyzer().analyze(text) if not has_cjk(term)}
    return words | set(cjk_terms(text, single=True))


def best_passage(question: str, pieces: Sequence[str]) -> int | None:
    """Returns the number of the passage holding most of the question's words.

    For a long memory the vector channel did not place (its vectors not
    made yet, the channel off or failing): the lexical channels found it,
    and its passage that holds the question's words stands for it. Each
    word weighs ``log(1 + n / holding)`` for ``n`` passages, ``holding`` of
    them holding it: a word every passage holds ("restart" in a runbook of
    restarts) tells them apart least. Ties go to the earlier passage; None
    when no passage holds a word of the question.
    """
    asked = set(_terms(question))
    held = [_held_terms(piece) & asked for piece in pieces]
    holding: dict[str, int] = {}
    for terms in held:
        for term in terms:
            holding[term] = holding.get(term, 0) + 1
    weights = [sum(math.log1p(len(pieces) / holding[t]) for t in ts) for ts in held]
    best = max(range(len(pieces)), key=lambda i: (weights[i], -i), default=None)
    return None if best is None or not weights[best] else best


def _share(mask: int, asked: list[tuple[str, int, float]], whole: float) -> float:
    """Returns the share of ``whole`` that the credited terms a mask matches hold."""
    return sum(c for _, bit, c in asked if mask >> bit & 1) / whole


def _best_passage(credits: dict[str, float], stored: str) -> float:
    """Returns the most credit of ``credits``'s terms that one passage holds.

    ``stored``: which passages hold each term, as :func:`passage_index`
    made it. A term it does not place (the index holds it where the
    passages do not say: in the memory's context, or as the stem of a
    function word) counts in every passage, as a near match does.
    """
    masks: list[tuple[int, float]] = []
    anywhere = 0.0
    for term, credit in credits.items():
        key = f" {term}:"
        at = stored.find(key)
        if at < 0:
            anywhere += credit
            continue
        start = at + len(key)
        masks.append((int(stored[start : stored.find(" ", start)], 16), credit))
    whole = sum(credit for _, credit in masks)
    union = functools.reduce(operator.or_, (mask for mask, _ in masks), 0)
    best = 0.0
    while union and best < whole:
        passage = union & -union  # the lowest passage left
        best = max(best, sum(credit for mask, credit in masks if mask & passage))
        union ^= passage
    return anywhere + best


class Matches:
    """What one question asks of blobs of one index: its tags and its words.

    Args:
        index: The index, read at its current searcher (a pinned index
            keeps that searcher for the whole question).
        query: The question.
    """

    def __init__(self, index: LexicalIndex, query: str) -> None:
        text = query_text(query)
        self._index = index
        self._searcher = index.current_searcher()
        self._clauses: list[tantivy.Query] = []
        self._tag_bit: int | None = None
        self._tagged: set[str] | Literal[False] | None = None  # see _read_tagged
        tags = query_tag_values(text)
        if tags:
            # A union of term queries, not a term set query: that one walks
            # the field's whole term dictionary with an automaton, 0.2 ms of
            # every search the clause is part of (three a question).
            self._tag_bit = self._ask(
                tantivy.Query.boolean_query(
                    [
                        (tantivy.Occur.Should, index.term("tag_values", tag, 1.0))
                        for tag in tags
                    ]
                )
            )
        self._weights: dict[str, float] = {}  # term -> its weight (idf)
        self._held: dict[str, int] = {}  # term -> the documents that hold it
        self._credits: dict[str, tuple[int, float]] = {}  # term -> bit, credit
        self._typos: set[str] = set()  # terms credited for a near match
        self._addresses: dict[str, tantivy.DocAddress] = {}  # blob -> document
        self._pieces: dict[str, str] = {}  # blob -> its passage_index, if long
        self._masks: dict[str, int] = {}  # blob -> the clauses it matches
        self._holders: dict[str, int] = {}  # tag -> the blobs that carry it
        self._own = _terms(text)
        self._add_terms(text)

    def tagged(self, blobs: Collection[str]) -> set[str]:
        """Returns the ``blobs`` whose memories carry a tag the query names.

        A query names a tag by one of its words (or a hyphenated pair of
        them, see :func:`~ctx.hub.retrieval.index.terms.query_tag_values`) equal to
        the tag's value or to the whole tag: "what did Caroline say" names
        ``speaker:caroline``, never through the namespace alone.
        """
        bit = self._tag_bit
        if bit is None or not blobs:
            return set()
        if self._tagged is None:
            self._tagged = self._read_tagged()
        if self._tagged is not False:
            return self._tagged.intersection(blobs)
        masks = self._masks_of(blobs)
        return {blob for blob in blobs if masks.get(blob, 0) >> bit & 1}

    def _read_tagged(self) -> set[str] | Literal[False]:
        """Returns every blob with a named tag, if at most :data:`TAGGED_READ_MAX`.

        Reading them (from the fast fields, well under 1 µs each) costs
        less than looking up the blobs asked about; ``False`` when there
        are more.
        """
        index, searcher = self._index, self._searcher
        with reading(f"search {index.where}"):
            # Tantivy wants a limit of at least one.
            named = self._clauses[self._tag_bit or 0]
            result = searcher.search(named, max(TAGGED_READ_MAX, 1), count=True)
        count = result.count  # type: ignore[attr-defined]  # not in the stubs
        if count is None or count > TAGGED_READ_MAX:
            return False
        return set(index.blobs_of(searcher, result.hits))

    def holders(
        self, tags: Collection[str], among: Collection[str] | None = None
    ) -> dict[str, int]:
        """Returns, per tag of ``tags`` (lowercased), how many blobs carry it.

        Only blobs of ``among`` count (``None``: every blob of the index).
        Each tag is counted once per question, however many hits carry it.
        A tag of more than :data:`TAGGED_READ_MAX` blobs among others is
        not read blob by blob: its count is scaled by the share of the
        index ``among`` is.
        """
        index, searcher = self._index, self._searcher
        total = searcher.num_docs
        for tag in {tag.lower() for tag in tags} - self._holders.keys():
            limit = 1 if among is None else min(TAGGED_READ_MAX, total)
            with reading(f"search {index.where}"):
                # Tantivy wants a limit of at least one.
                result = searcher.search(
                    index.term("tags", tag, 1.0), max(limit, 1), count=True
                )
            count: int = result.count or 0  # type: ignore[attr-defined]  # stubs
            if among is not None and count:
                if count <= limit:
                    found = index.blobs_of(searcher, result.hits)
                    count = sum(1 for blob in found if blob in among)
                else:
                    count = round(count * min(1.0, len(among) / total))
            self._holders[tag] = count
        return {tag.lower(): self._holders[tag.lower()] for tag in tags}

    def holding(self, exact_from: float = 1.0) -> tuple[dict[str, int], int]:
        """Returns how many documents hold each term of the question, and of how many.

        The terms are those :meth:`coverage` weighs, counted in the whole
        index (every branch's memories), as their weights are: by Tantivy's
        document frequency, which still counts a document deleted (a
        memory edited, one indexed again) until its segment is merged. A
        term that count puts at ``exact_from`` of the documents or more is
        counted again over the live documents alone.
        """
        searcher = self._searcher
        total = searcher.num_docs
        held = {term: self._held[term] for term in self._own}
        for term, count in held.items():
            if count and count >= exact_from * total and term in self._credits:
                clause = self._clauses[self._credits[term][0]]
                with reading(f"search {self._index.where}"):
                    result = searcher.search(clause, 1, count=True)
                held[term] = result.count or 0  # type: ignore[attr-defined]  # stubs
        return held, total

    def coverage(
        self,
        blobs: Collection[str],
        part: str | None = None,
        *,
        by_passage: bool = False,
    ) -> dict[str, float]:
        """Returns, per blob of ``blobs``, the share of the query's words it holds.

        The query (or ``part`` of it, such as the question without its time
        phrases) is analysed as :meth:`LexicalIndex.search` analyses it,
        less English function words
        (:func:`~ctx.hub.retrieval.index.schema.content_analyzer`). Each term weighs
        its BM25 inverse document frequency in the index, so that a word no
        memory holds (a name from another project) weighs the most and a
        word every memory holds almost nothing; a blob's share is the
        weight of the terms its title or body holds over the weight of all
        of them, 0..1 and comparable across queries. A query word that no
        memory holds but that a blob's words nearly match (as the fuzzy
        channel matches them: "postgress" for "postgres") counts
        :data:`TYPO_CREDIT` of its weight. Chinese, Japanese and Korean
        count by their pairs of characters, a pair no memory holds weighing
        :data:`UNHELD_PAIR_WEIGHT` of its idf.

        ``by_passage``: a long memory's share is its best passage's
        (:func:`passage_index`, stored when it was indexed), as its cosine
        is: a term counts where the memory holds it and that passage does
        too; a near match, which the index does not place, counts in every
        passage, as does a term the index holds where the stored passages
        do not say (the memory's context, a function word's stem). Only a
        memory that holds two terms or more (near matches aside) is looked
        at: one term is in some passage, and the share is the whole
        memory's.
        """
        if not blobs or not self._searcher.num_docs:
            return {}
        whole, asked = self._weighed(part)
        if not whole:
            return {}
        masks = self._masks_of(blobs)
        shares = {b: _share(masks.get(b, 0), asked, whole) for b in blobs}
        if by_passage:
            shares.update(self._by_passage(blobs, masks, asked, whole))
        return shares

    def held(self, blobs: Collection[str], parts: Sequence[str]) -> list[bool]:
        """Returns, per part, whether some blob's share of that part is above 0.

        What ``coverage(blobs, part)`` says of each part once a negative
        share counts as none (as :meth:`Searcher.coverage` counts it), with
        one look at the clauses the blobs match together: a part no blob
        matches a clause of is held by none, and one whose matched terms
        all weigh above 0, as nearly every term does, by some blob. Only a
        part with a term weighing 0 or less (an idf below 0: a deleted
        document still counted) is weighed blob by blob.
        """
        if not blobs or not self._searcher.num_docs:
            return [False] * len(parts)
        weighed = [self._weighed(part) for part in parts]
        masks = self._masks_of(blobs)
        matched = functools.reduce(
            operator.or_, (masks.get(blob, 0) for blob in blobs), 0
        )
        found = []
        for whole, asked in weighed:
            if not whole or not any(matched >> bit & 1 for _, bit, _ in asked):
                found.append(False)
            elif whole > 0 and all(c > 0 for _, _, c in asked):
                found.append(True)
            else:
                found.append(
                    any(_share(masks.get(b, 0), asked, whole) > 0 for b in blobs)
                )
        return found

    def _weighed(self, part: str | None) -> tuple[float, list[tuple[str, int, float]]]:
        """Returns the weight of the question's terms (or ``part``'s), and the credited.

        Each credited term as (term, its clause's bit, its credit); a part
        with words of its own has them weighed first.
        """
        terms = self._own if part is None else _terms(query_text(part))
        if not self._weights.keys() >= set(terms):
            self._add_terms(query_text(part or ""))
        whole = sum(self._weights[term] for term in terms)
        return whole, [
            (term, *self._credits[term]) for term in terms if term in self._credits
        ]

    def _by_passage(
        self,
        blobs: Collection[str],
        masks: dict[str, int],
        asked: list[tuple[str, int, float]],
        whole: float,
    ) -> dict[str, float]:
        """Returns the best passage's share of each long blob holding two terms.

        ``masks`` and ``asked`` as :meth:`coverage` made them.
        """
        typos = self._typos
        placed = functools.reduce(
            operator.or_, (1 << bit for term, bit, _ in asked if term not in typos), 0
        )
        two = [b for b in blobs if (masks.get(b, 0) & placed).bit_count() > 1]
        shares: dict[str, float] = {}
        for blob, stored in self._passages(two).items():
            mask = masks[blob]
            found = [(term, c) for term, bit, c in asked if mask >> bit & 1]
            exact = {term: c for term, c in found if term not in typos}
            anywhere = sum(c for term, c in found if term in typos)
            shares[blob] = (anywhere + _best_passage(exact, stored)) / whole
        return shares

    def _passages(self, blobs: Collection[str]) -> dict[str, str]:
        """Returns the passages' terms of those of ``blobs`` that are long."""
        new = [b for b in blobs if b not in self._pieces and b in self._addresses]
        if new:
            searcher = self._searcher
            addresses = [self._addresses[blob] for blob in new]
            with reading(f"read {self._index.where}"):
                flags = searcher.fast_field_values(LONG_FIELD, addresses)
                for blob, address, flag in zip(new, addresses, flags, strict=True):
                    stored = (
                        searcher.doc(address).get_first(PASSAGES_FIELD)
                        if flag
                        else None
                    )
                    self._pieces[blob] = bytes(stored).decode() if stored else ""
        return {blob: found for blob in blobs if (found := self._pieces.get(blob))}

    def _add_terms(self, text: str) -> None:
        """Weighs the terms of ``text`` not weighed yet, and asks those held."""
        searcher = self._searcher
        total = searcher.num_docs
        # A word the fuzzy channel looks for, by the term it analyses to: a
        # term no memory holds may be a typo of one a memory holds.
        typos = {
            analysed[0]: word
            for word in query_words(text)
            if len(analysed := content_analyzer().analyze(word)) == 1
        }
        # A word that is the value of a tag a memory carries is a word the
        # memory holds: "infra" of a memory tagged project:infra.
        values = _tag_words(text)
        index = self._index
        for term in _terms(text):
            if term in self._weights:
                continue
            pair = has_cjk(term)
            fields = (CJK_FIELD,) if pair else ("title", "body")
            clauses = [index.term(field, term, 1.0) for field in fields]
            clauses += [index.term("tag_values", v, 1.0) for v in values.get(term, ())]
            with reading(f"search {index.where}"):
                found = max(searcher.doc_freq(f, term) for f in fields)
                for value in values.get(term, ()):
                    found = max(found, searcher.doc_freq("tag_values", value))
            weight = math.log(1 + (total - found + 0.5) / (found + 0.5))
            if pair and not found:
                weight *= UNHELD_PAIR_WEIGHT
            self._weights[term] = weight
            self._held[term] = found
            if found:
                either = tantivy.Query.boolean_query(
                    [(tantivy.Occur.Should, clause) for clause in clauses]
                )
                self._credits[term] = (self._ask(either), weight)
            elif term in typos:
                fuzzy = near_word(index, typos[term])
                self._credits[term] = (self._ask(fuzzy), weight * TYPO_CREDIT)
                self._typos.add(term)
        # Blobs read before were not asked about the new clauses.
        self._masks.clear()

    def _ask(self, query: tantivy.Query) -> int:
        """Adds a clause; returns its bit."""
        self._clauses.append(query)
        return len(self._clauses) - 1

    def _masks_of(self, blobs: Collection[str]) -> dict[str, int]:
        """Returns the clauses each of ``blobs`` matches (absent: none, or unknown)."""
        masks = self._masks
        new = [blob for blob in blobs if blob not in masks]
        if not new or not self._clauses:
            return masks
        index, searcher = self._index, self._searcher
        # One term query per blob: a term set query of the same ids builds
        # an automaton and walks the term dictionary, three times slower.
        any_of = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, index.term("blob", blob, 1.0)) for blob in new]
        )
        among = tantivy.Query.const_score_query(any_of, 0.0)
        masks.update(dict.fromkeys(new, 0))
        for first in range(0, len(self._clauses), MASK_BITS):
            clauses = [(tantivy.Occur.Must, among)]
            clauses += [
                (tantivy.Occur.Should, tantivy.Query.const_score_query(q, 2.0**bit))
                for bit, q in enumerate(self._clauses[first : first + MASK_BITS])
            ]
            query = tantivy.Query.boolean_query(clauses)
            hits = index.run(searcher, query, min(len(new), searcher.num_docs), 0)
            for blob, (score, address) in zip(
                index.blobs_of(searcher, hits), hits, strict=True
            ):
                if blob in masks:
                    masks[blob] |= round(score) << first
                    self._addresses[blob] = address
        return masks
