"""One live view and the indexes to search it: what ranking asks, channel by channel.

The projection (:meth:`ctx.hub.retrieval.index.projection.Projection.searcher`) hands
out a :class:`Searcher` for a view it has caught the indexes up to (or a part
or union of such views, as recall's overlays and search's filters make).
Ranking then asks the searcher alone: each channel's best blobs, which of
some blobs carry a tag the query names, and memories by id.

Every search is filtered by the view's live blobs, unless the shared indexes
hold exactly those (the view is ``complete``). Blobs the shared indexes lack
(:attr:`LiveView.pending`) are searched in the view's in-memory indexes too,
and the hits of both merged by score.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt

from ctx.engine import Memory
from ctx.hub.retrieval.embedders import (
    Embedder,
    EmbedderError,
    embed_queries,
    knows_word,
)
from ctx.hub.retrieval.index.coverage import Matches
from ctx.hub.retrieval.index.errors import IndexCorruptError
from ctx.hub.retrieval.index.lexical import LexicalIndex
from ctx.hub.retrieval.index.passages import MARK, chance_order, owner
from ctx.hub.retrieval.index.spelling import Respelling, names_among, respell
from ctx.hub.retrieval.index.typos import in_haste
from ctx.hub.retrieval.index.vectors import VectorIndex
from ctx.hub.retrieval.index.view import LiveView

__all__ = ["Searcher"]

Hits = list[tuple[str, float]]

PASSAGE_DEPTH = 3
"""Keys asked per memory wanted when some memories have several passages."""

TIE_DEPTH = 2
"""How many times the hits wanted a channel fetches at most to see every hit
tied with the last one kept (:func:`_whole_ties`). Only a tie larger than
that (the time channel asked no words: every memory of the window scores
1; the fuzzy channel, whose scores take few values) is cut where the
index's order puts it. At 16 the fuzzy channel's ties made recall fetch
up to 1,616 hits five times over: p50 72.7 ms at 100k memories against
58.5 ms at 2 (the same 100 queries, in-process)."""


FIRST_PERSON = ("i", "me", "my")
"""The words that say a memory is written in the first person singular."""


class Searcher:
    """Searches one live view's memories, one channel at a time.

    Args:
        view: The live memories to search.
        lexical: The shared lexical index.
        vectors: The shared vector index; ``None`` when the embedder is down.
        embedder: Embeds the queries of the vector channel.
        read: Returns the memory in a blob at a path (cached by the caller).
        vector_error: Why there are no vectors, if there are none.
    """

    def __init__(
        self,
        view: LiveView,
        *,
        lexical: LexicalIndex,
        vectors: VectorIndex | None,
        embedder: Embedder,
        read: Callable[[str, str], Memory],
        vector_error: EmbedderError | None = None,
    ) -> None:
        self.view = view
        self.embedder = embedder
        self._vectors = vectors
        self._read = read
        self._vector_error = vector_error
        pending = view.pending_indexes if view.pending else []
        # One searcher per index for all of a question's reads (see pinned).
        self._lexical_indexes = [
            index.pinned() for index in [lexical, *(p.lexical for p in pending)]
        ]
        self._pending_vectors = [p.vectors for p in pending if p.vectors is not None]
        self._allowed = None if view.complete else view.blobs
        self._asked: dict[str, list[Matches]] = {}
        self.query_vector: npt.NDArray[np.float32] | None = None
        """The vector :meth:`search_vectors` embedded the question into."""
        self.part_vectors: list[npt.NDArray[np.float32]] = []
        """Those it embedded a long question's parts into (``parts``)."""
        self._first_person: float | None = None
        self.passage: dict[str, int] = {}
        """Per blob of several vectors (a long memory) that the vector channel
        found, the number of its passage that matched best (from 0)."""

    def search_bm25(
        self,
        text: str,
        limit: int,
        *,
        within: Sequence[tuple[datetime, datetime]] = (),
        parts: Sequence[str] = (),
    ) -> Hits:
        """Returns the best (blob, BM25 score) for ``text``, best first.

        ``within`` keeps memories created in those spans (the time channel,
        :meth:`search_time`); see :meth:`LexicalIndex.search`. ``parts``:
        those of a long question
        (:func:`~ctx.hub.retrieval.index.parts.question_parts`), searched
        instead of it, a memory scoring as the part it matches best.
        """
        return _whole_ties(
            lambda depth: [
                index.search(
                    text, limit=depth, allowed=self._allowed, within=within, parts=parts
                )
                for index in self._lexical_indexes
            ],
            limit,
        )

    def search_time(
        self, text: str, limit: int, spans: Sequence[tuple[datetime, datetime]]
    ) -> Hits:
        """Returns the best (blob, BM25 score) created in ``spans``.

        With no words in ``text``, every memory created in them matches.
        """
        return self.search_bm25(text, limit, within=spans)

    def search_fuzzy(self, text: str, limit: int, *, parts: Sequence[str] = ()) -> Hits:
        """Returns the best (blob, score) of the typo and identifier channel.

        See :meth:`LexicalIndex.fuzzy_search`; ``parts`` as for
        :meth:`search_bm25`.
        """
        return _whole_ties(
            lambda depth: [
                index.fuzzy_search(
                    text, limit=depth, allowed=self._allowed, parts=parts
                )
                for index in self._lexical_indexes
            ],
            limit,
            # Its scores take few values: the first fetch nearly always ends
            # in a tie, so fetch as deep as a tie may go at once.
            first=(limit + 1) * TIE_DEPTH,
        )

    def search_vectors(
        self,
        query: str,
        limit: int,
        *,
        focus: str | None = None,
        parts: Sequence[str] = (),
    ) -> Hits:
        """Returns the nearest (blob, cosine) to ``query``'s vector.

        A memory's cosine is that of its best passage
        (:mod:`ctx.hub.retrieval.index.passages`), noted in :attr:`passage`. With no
        vector to compare it with, the query is not embedded.

        ``focus``: a part of ``query`` to order the memories by instead (the
        question less words that name a group of memories, see
        :func:`~ctx.hub.retrieval.focus.vector_focus`); both are embedded in
        one batch, and the cosines returned are still ``query``'s (of the
        memory's best passage for it), since they say how much a memory
        bears on the question as asked: the order is ``focus``'s, so a hit
        may have a higher cosine than one above it. The passage noted in
        :attr:`passage` (the one recall packs when the whole memory does
        not fit) is the one ``focus`` found: what is asked, less the names
        every passage bears.

        ``parts``: the parts of a long question
        (:func:`~ctx.hub.retrieval.index.parts.question_parts`), embedded
        too: a memory's cosine is then the best of the
        question's and each part's, and the memories are ordered by it,
        neither by ``focus``'s nor by chance (a long memory's best of many
        passages): what a long prompt asks is in some part, and the whole's
        order is that of its log.

        Raises:
            EmbedderError: The query could not be embedded, or the vectors
                could not be made.
        """
        if self._vectors is None:
            raise self._vector_error or EmbedderError("The embedder is unavailable.")
        if not any(map(len, [self._vectors, *self._pending_vectors])):
            # Nothing embedded yet (a big import's backlog): loading the model
            # to embed the query (0.5-1 s) would find nothing.
            return []
        asked = [query] if focus is None or focus == query else [query, focus]
        vectors = embed_queries(self.embedder, asked)
        self.query_vector = vectors[0]
        self.part_vectors = []
        found = self.search_vector(vectors[-1], limit, by_chance=True)
        if len(asked) > 1:
            found = self._best_cosines(found, self.query_vector)
        return self._with_parts(found, parts, limit) if parts else found

    def _with_parts(self, found: Hits, parts: Sequence[str], limit: int) -> Hits:
        """Returns ``found`` and the parts' hits, each with its best cosine, best first.

        A memory's passage noted in :attr:`passage` is the one of its best
        cosine.
        """
        best = dict(found)
        # A batch of its own: a batch is padded to its longest text, and the
        # question is as long as the embedder reads.
        self.part_vectors = list(embed_queries(self.embedder, list(parts)))
        for vector in self.part_vectors:
            noted = dict(self.passage)  # a part's search notes its passages
            for blob, cosine in self.search_vector(vector, limit):
                if cosine > best.get(blob, -1.0):
                    best[blob] = cosine
                elif blob in noted:
                    self.passage[blob] = noted[blob]
        return sorted(best.items(), key=lambda hit: -hit[1])[:limit]

    def search_vector(
        self, vector: npt.NDArray[np.float32], limit: int, *, by_chance: bool = False
    ) -> Hits:
        """Returns the nearest (blob, cosine) to ``vector`` (none without vectors).

        A long memory's cosine is that of its best passage, whose number is
        kept in :attr:`passage`. ``by_chance``: when some memories have
        several passages, order the memories by how unlikely their best
        passage is by chance among as many (:func:`~ctx.hub.retrieval.index.passages.
        chance_order`), not by cosine alone; the cosines returned are the
        same.
        """
        if self._vectors is None:
            return []
        indexes = [self._vectors, *self._pending_vectors]
        # A long memory's passages may fill the top: ask for more keys.
        depth = (
            limit * PASSAGE_DEPTH if any(i.has_passages() for i in indexes) else limit
        )
        shared = self._vectors.search(vector, depth, self._allowed)
        pending = [index.search(vector, depth) for index in self._pending_vectors]
        long = by_chance and depth > limit
        best: dict[str, float] = {}
        counts: dict[str, int] = {}
        # Hundreds of keys a question: the loop calls as little as it can.
        if len(indexes) == 1:
            is_long = indexes[0].is_long
        else:
            longs = [i.is_long for i in indexes]

            def is_long(blob: str) -> bool:
                return any(f(blob) for f in longs)

        hits = (
            shared
            if not pending
            else [h for found in (shared, *pending) for h in found]
        )
        for key, cosine in sorted(hits, key=_order):
            blob, number = owner(key) if MARK in key else (key, 0)
            if blob in best:
                continue
            best[blob] = cosine
            if number or is_long(blob):
                self.passage[blob] = number
                counts[blob] = max(len(i.family(blob)) for i in indexes)
            if len(best) == limit and not long:
                break
        if not long or not counts:
            return list(best.items())[:limit]
        spread = next(filter(None, (i.spread(vector) for i in indexes)), None)
        if spread is None:
            return list(best.items())[:limit]
        order = chance_order(best, counts, *spread)[:limit]
        return [(blob, best[blob]) for blob in order]

    def _best_cosines(self, found: Hits, vector: npt.NDArray[np.float32]) -> Hits:
        """Returns ``found`` with each cosine that of its best passage to ``vector``.

        A memory of one vector keeps the cosine of that one; the order is
        kept.
        """
        best: dict[str, float] = {}
        for index in self._vector_indexes():
            keys = [
                key
                for blob, _ in found
                if blob not in best
                for key in (index.family(blob) if blob in self.passage else [blob])
                if key in index
            ]
            if not keys:
                continue
            rows = index.vectors_of(keys) @ vector
            for key, cosine in zip(keys, map(float, rows), strict=True):
                blob = owner(key)[0]
                best[blob] = max(cosine, best.get(blob, -1.0))
        return [(blob, best.get(blob, cosine)) for blob, cosine in found]

    def _vector_indexes(self) -> list[VectorIndex]:
        """Returns the shared vector index (if the embedder is up), then the view's."""
        shared = [] if self._vectors is None else [self._vectors]
        return [*shared, *self._pending_vectors]

    def vector_of(self, blob: str) -> npt.NDArray[np.float32] | None:
        """Returns the stored (unit) vector of ``blob``, or ``None`` if it has none."""
        for index in self._vector_indexes():
            if blob in index:
                row: npt.NDArray[np.float32] = index.vectors_of([blob])[0]
                return row
        return None

    def cosine(self, blob: str) -> float | None:
        """Returns the cosine of ``blob``'s vector to the question's.

        ``None`` when either is missing: the vector channel did not run
        (or failed), or the memory is not embedded yet. A long memory is
        compared by the vector of its first passage; a long question by its
        best of itself and its parts (:attr:`part_vectors`), as the vector
        channel compares it.
        """
        if self.query_vector is None:
            return None
        vector = self.vector_of(blob)
        if vector is None:
            return None
        return max(float(vector @ q) for q in (self.query_vector, *self.part_vectors))

    def find_tagged(self, text: str, blobs: Collection[str]) -> set[str]:
        """Returns the ``blobs`` with a tag ``text`` names.

        See :meth:`~ctx.hub.retrieval.index.coverage.Matches.tagged`.
        """
        return set().union(*(m.tagged(blobs) for m in self._matches(text)))

    def blobs_tagged(self, tag: str) -> set[str]:
        """Returns the blobs of the indexes whose memories carry ``tag``.

        In any letter case (the index holds tags lower-cased), of every
        branch: a caller that wants the exact tag in its view checks both.
        """
        return set().union(*(i.blobs_tagged(tag) for i in self._lexical_indexes))

    def tag_holders(self, text: str, tags: Collection[str]) -> dict[str, int]:
        """Returns, per tag (lowercased), how many live memories carry it.

        Counted once per question ``text``; see
        :meth:`~ctx.hub.retrieval.index.coverage.Matches.holders`.
        """
        counts = dict.fromkeys((tag.lower() for tag in tags), 0)
        for matches in self._matches(text):
            for tag, count in matches.holders(tags, self._allowed).items():
                counts[tag] += count
        return counts

    def holding(
        self, text: str, exact_from: float = 1.0
    ) -> tuple[dict[str, float], int]:
        """Returns the share of memories holding each term of ``text``, and how many.

        The terms as :meth:`coverage` weighs them; counted over the indexes
        (every branch's memories), not the view alone, and over the live
        documents alone for a term at ``exact_from`` or more (see
        :meth:`~ctx.hub.retrieval.index.coverage.Matches.holding`).
        """
        held: dict[str, int] = {}
        total = 0
        for matches in self._matches(text):
            counts, documents = matches.holding(exact_from)
            total += documents
            for term, count in counts.items():
                held[term] = held.get(term, 0) + count
        return {term: count / total for term, count in held.items() if total}, total

    def first_person_share(self) -> float:
        """Returns the share of English memories written in the first person singular.

        Those whose words hold "i", "me" or "my", over the English memories
        of the indexes (every branch's, live ones alone: as
        :meth:`holding` counts a term past ``exact_from``), computed once. 0
        with no English memory.
        """
        if self._first_person is None:
            held = total = 0
            for index in self._lexical_indexes:
                holding, english = index.english_holding(FIRST_PERSON)
                held += holding
                total += english
            self._first_person = held / total if total else 0.0
        return self._first_person

    def coverage(
        self,
        text: str,
        blobs: Collection[str],
        *,
        part: str | None = None,
        by_passage: bool = False,
    ) -> dict[str, float]:
        """Returns, per blob, the share of ``text``'s word weight it holds (0..1).

        ``part``: the share of that part of ``text`` instead (the question
        less its time phrases). ``by_passage``: a long memory's share is
        its best passage's. See
        :meth:`~ctx.hub.retrieval.index.coverage.Matches.coverage`; a blob in several
        indexes gets its best share.
        """
        shares: dict[str, float] = {}
        for matches in self._matches(text):
            found = matches.coverage(blobs, part, by_passage=by_passage)
            for blob, share in found.items():
                shares[blob] = max(share, shares.get(blob, 0.0))
        return shares

    def held(
        self, text: str, blobs: Collection[str], parts: Sequence[str]
    ) -> list[bool]:
        """Returns, per part of ``text``, whether any of ``blobs`` holds a word of it.

        A word that weighs (see :meth:`coverage`): whether some blob's share
        of that part is above 0, in any index.
        """
        found = [False] * len(parts)
        for matches in self._matches(text):
            found = [
                a or b for a, b in zip(found, matches.held(blobs, parts), strict=True)
            ]
        return found

    def _matches(self, text: str) -> list[Matches]:
        """Returns each index's :class:`Matches` of ``text``, made once."""
        found = self._asked.get(text)
        if found is None:
            found = self._asked[text] = [i.matches(text) for i in self._lexical_indexes]
        return found

    def respell(
        self, question: str, spans: Sequence[tuple[int, int]] = ()
    ) -> Respelling:
        """Returns how the view's memories spell the question's names and typos.

        Its names spelt otherwise, then its words typed in haste (see
        :func:`~ctx.hub.retrieval.index.spelling.respell` and
        :func:`~ctx.hub.retrieval.index.typos.in_haste`). ``spans``: the
        question's time phrases.
        """
        indexes = self._lexical_indexes

        def knows(word: str) -> bool:
            return knows_word(self.embedder, word)

        names = respell(
            question, spans, indexes=indexes, read=self._read_blob, knows=knows
        )
        taken = {*names.words, *names.names}
        typos = in_haste(question, spans, indexes, knows, taken)
        if not typos:
            return names
        return Respelling(
            {**names.words, **typos}, names.names, names.held, names.near_tags
        )

    def names_among(self, words: Sequence[str]) -> bool:
        """Returns whether the view's memories write one of ``words`` as a name.

        ``words``: lower-case, as :attr:`Respelling.held` has them (see
        :func:`~ctx.hub.retrieval.index.spelling.names_among`). It is asked
        after the ranking, past the repair of an index found damaged while
        ranking: one found damaged here tells no name (the weak floor stays
        the higher), and the next recall's reads find and repair it.
        """
        try:
            return names_among(words, self._lexical_indexes, self._read_blob)
        except IndexCorruptError:
            return False

    def _read_blob(self, blob: str) -> Memory | None:
        """Returns the view's memory of ``blob``, or ``None`` if not in it."""
        by_blob = self.view.by_blob
        return self.read(by_blob[blob]) if blob in by_blob else None

    def read(self, memory_id: str) -> Memory | None:
        """Returns the view's memory ``memory_id``, or ``None`` if not in it."""
        entry = self.view.catalog.entries.get(memory_id)
        if entry is None:
            return None
        return self._read(entry.path, entry.blob)


def _order(hit: tuple[str, float]) -> tuple[float, str]:
    """Sorts hits best first, equal scores by key: an order with no ties.

    An index returns equal scores in the order it stored the documents,
    which depends on how its writer's threads split them, so two builds of
    one store could rank equal memories differently.
    """
    return -hit[1], hit[0]


def _whole_ties(
    search: Callable[[int], list[Hits]], limit: int, *, first: int = 0
) -> Hits:
    """Returns the best ``limit`` hits of several indexes, in :func:`_order`.

    ``search(depth)`` asks each index for its best ``depth``. One hit more
    than wanted is asked, and more while the last one asked still ties the
    last one kept, so which of equal hits make the cut is decided by key
    too, not by which ones an index happened to return. ``first``: the
    depth of the first fetch, if deeper than one more than wanted.
    """
    if limit <= 0:
        return []
    depth = max(limit + 1, first)
    while True:
        found = search(depth)
        merged = sorted((hit for hits in found for hit in hits), key=_order)
        if len(merged) <= limit or depth >= limit * TIE_DEPTH:
            return merged[:limit]
        cut = merged[limit - 1][1]
        if all(len(hits) < depth or hits[-1][1] < cut for hits in found):
            return merged[:limit]
        depth *= 2
