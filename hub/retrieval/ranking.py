"""Ranking: channels, weighted reciprocal rank fusion, gravity, link expansion.

:func:`rank` turns a query into memory ids, best first, for one live view,
asking only that view's :class:`~ctx.hub.retrieval.index.searcher.Searcher`:

1. The query is parsed for time
(:func:`ctx.hub.retrieval.temporal.parse.parse_temporal`).
   Its time phrases still count as words: the channels search the whole
   query ("every Tuesday" finds the memory that says "every Tuesday"), and
   only the time channel's restricted search uses the rest. Its names are
   looked up (:mod:`ctx.hub.retrieval.index.spelling`): a name the store spells
   otherwise ("Mohammed" for "Muhhamed", "Mel" for "Melanie") is respelt
   for the vector channel, the tags and the relevance (steps 2, 4 and 8);
   the lexical channels search the words as written.
2. Channels, each the best ``depth`` blobs of the view: ``bm25`` (Tantivy,
   stemmed), ``vector`` (the embedder, cosine, of the respelt query,
   ordered by it less the words that tell least, :mod:`ctx.hub.retrieval.
   focus`; not for a query the embedder was not trained to read, as MiniLM
   a Chinese one: :func:`~ctx.hub.retrieval.embedders.reads`),
   ``fuzzy`` (typos and identifiers), and, when the query names windows of
   time, ``time`` (BM25 of the query without its time phrases, restricted
   to memories created in those windows; every one of them if the query
   has no other words).
3. Weighted reciprocal rank fusion: a memory at rank ``r`` (from 1) of channel
   ``c`` gets ``weight_c / (k + r)``, summed over channels.
4. Tags: one of the best fused hits that carries a tag the query names (by
   its value, the whole tag, or a word of a value of several: "Caroline"
   names ``speaker:caroline``, "job queue" ``component:job-queue``, "Fahim"
   ``speaker:fahim-khan``) has its fused score multiplied by up to ``1 +
   tags``, but is never lifted above a hit it was below that matches the
   query's other words clearly better (:mod:`ctx.hub.retrieval.boost`): a
   named tag reorders near ties, and never buries a better match under
   memories that match only the name.
5. Temporal gravity, only when the query names a time: the scores of the
   :data:`GRAVITY_CANDIDATES` best fused hits and of every hit of the time
   channel are multiplied by ``1 + gravity * closeness``
   (:mod:`ctx.hub.retrieval.temporal.gravity`). A memory whose text names the
   query's cycles ("every Tuesday") is close to them whenever written. A
   relation to an undated event ("two weeks before the launch") is dated by
   the event's best BM25 match in the view.
6. One-hop expansion: each neighbour (by any link, either way) of the five
   best hits enters with its hit's score times ``expand``, or is raised to
   that score if it ranked lower. Through a RELATES_TO link the score is
   also times how much the neighbour bears on the question (the cosine of
   its vector to the question's, or without vectors the share of the
   question's words it holds): "related" says two memories are about one
   thing, not that the second answers this question, and raising such
   neighbours at half their hit's score put memories of another subject
   into the first ten (LoCoMo after a Dream cycle, 4,825 accepted links:
   recall@10 0.726 against 0.730 before; weighed by the cosine, 0.729;
   benchmarks/results/dream_expand.md). The other types (DEPENDS_ON,
   DERIVED_FROM, CHILD_OF, CONTRADICTS) say the neighbour is context for
   the hit whatever its words, and keep the whole damped score.
7. Superseded memories are dropped unless asked for.
8. Relevance: each of the :data:`RELEVANCE_CANDIDATES` best hits gets a
   relevance in 0..1 that compares across queries: the largest of its
   vector cosine (of its best passage), the share of the query's word
   weight it holds (:meth:`~ctx.hub.retrieval.index.searcher.Searcher.coverage`, with
   or without the query's time phrases, whichever is more), and 1 for a
   memory the time channel found (made in a time the query names) when
   the query asks nothing else any of the hits holds. A hit under the
   floor is weak. What an answer keeps of them is
   :mod:`ctx.hub.retrieval.floors`': nothing when no hit reaches the floor
   (or, for an explicit recall, the lower weak floor, lower still when the
   query names a name the store holds, or asks in the first person a store
   of its writer's own words), and otherwise the hits that reach it and
   those below it whose score and relevance do not fall below ``fall_off``
   times the best ones.
9. An optional reranker (``[recall.reranker]``, off by default) reorders the
   best hits, blending its scores with the fused ones, failing open
   (:mod:`ctx.hub.retrieval.rerank`).

A channel that fails (the embedder is down) is left out with a warning; the
others still answer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ctx.engine import Adjacency, Memory
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.boost import (
    TAG_CANDIDATES,
    NamedTags,
    bounded,
    name_tags,
    tag_boosts,
)
from ctx.hub.retrieval.embedders import EmbedderError, reads
from ctx.hub.retrieval.focus import vector_focus
from ctx.hub.retrieval.index.language import asks
from ctx.hub.retrieval.index.parts import question_parts
from ctx.hub.retrieval.index.searcher import Searcher
from ctx.hub.retrieval.index.spelling import Respelling
from ctx.hub.retrieval.index.view import LiveView
from ctx.hub.retrieval.rerank import rerank
from ctx.hub.retrieval.temporal.gravity import closeness
from ctx.hub.retrieval.temporal.parse import (
    Cycle,
    TemporalQuery,
    Window,
    extract_dates,
    parse_temporal,
)

__all__ = [
    "CHANNELS",
    "FIRST_PERSON_STORE",
    "GRAVITY_CANDIDATES",
    "RELEVANCE_CANDIDATES",
    "STRONG_HITS",
    "Channels",
    "Ranked",
    "Ranking",
    "apply_gravity",
    "apply_tags",
    "fuse",
    "fuse_ranks",
    "lift",
    "neighbours",
    "rank",
    "search_channels",
    "set_relevance",
]

CHANNELS = ("bm25", "vector", "fuzzy", "time")
MAX_CYCLE_CHARS = 4_000
"""How much of a memory's text is read for the cycles it names (step 5)."""
STRONG_HITS = 5
"""How many of the best hits have their linked neighbours considered."""

RELEVANCE_CANDIDATES = 100
"""How many of the best hits get a relevance (step 8): as many as a
channel's default depth, so a search for 100 memories that all match keeps
them all."""

FIRST_PERSON_STORE = 0.5
"""The share of English memories written in the first person singular
("I", "me", "my") from which a store is a person's own words: a question
asked in the first person there names its writer (:attr:`Ranking.named`)."""

_FIRST_PERSON = re.compile(r"(?<![\w./])(?:[Ii]|[Mm]e|[Mm]y|[Mm]yself)(?![\w./+-])")
"""A word of the first person singular: not "i.e.", "I/O", "i++", "my.cnf",
"my-app", nor "ME" (Maine) in capitals."""

GRAVITY_CANDIDATES = 64
"""How many of the best fused hits gravity weighs (each is read from git);
hits of the time channel are always weighed."""


@dataclass(slots=True)
class Ranked:
    """One memory in a ranking, with what put it there.

    Attributes:
        id: The memory id.
        score: Its final score.
        channels: Per channel, its (rank from 1, raw score, contribution).
        fused: The fused score before gravity (tags included).
        tagged: Whether it carries a tag the query names.
        tag_boost: What the tag boost multiplied its fused score by (step 4).
        named: Its tags the query names.
        closeness: Its temporal closeness (0 when the query names no time).
        relevance: How relevant it is, 0..1, comparable across queries
            (step 8; 0 for hits past the candidates).
        passage: For a memory of several passages that the vector channel
            found, the number (from 0) of the passage it matched best;
            ``None`` for any other.
        via: For a memory that entered by expansion: (link type, the hit it
            is linked to, "out" if that hit links to it, else "in").
    """

    id: str
    score: float = 0.0
    channels: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    fused: float = 0.0
    tagged: bool = False
    tag_boost: float = 1.0
    named: tuple[str, ...] = ()
    closeness: float = 0.0
    relevance: float = 0.0
    passage: int | None = None
    via: tuple[str, str, str] | None = None


@dataclass
class Ranking:
    """The ranked memories of one query, and what the query meant.

    ``read`` returns a memory of the view by id (each read from git once).
    ``named``: whether the query names someone or something the store
    holds (a word of it, as written or respelt, or a tag of a hit; step 1
    and step 4; typed in lower case, a word near a tag's value:
    :func:`~ctx.hub.retrieval.index.spelling.near_a_tag`; or, asked in the
    first person, the writer of a store of its own words:
    :data:`FIRST_PERSON_STORE`), which lowers an explicit
    recall's :func:`~ctx.hub.retrieval.floors.weak_floor`. ``may_name``, where
    set: whether the memories write a word of a query typed in lower case
    as a name ("mel" of a store that writes "Mel"), which names someone
    too; it reads memories, so the weak floor asks it only where the
    answer turns on it. ``respelt``: each word
    of the query the store spells otherwise, with its held spelling.
    ``focus``: the question the vector channel ordered memories by, when it
    was not the query: words left out (:mod:`ctx.hub.retrieval.focus`), or
    respelt. ``reranked``: a
    reranker ordered the best hits (step 9).
    """

    hits: list[Ranked]
    temporal: TemporalQuery
    warnings: list[str]
    read: Callable[[str], Memory | None]
    named: bool = False
    may_name: Callable[[], bool] | None = None
    respelt: Mapping[str, str] = field(default_factory=dict)
    focus: str | None = None
    reranked: bool = False


def _event_windows(searcher: Searcher, query: TemporalQuery) -> list[Window]:
    """Dates each relation's event by its best match, and returns the windows."""
    windows = []
    for relation in query.relations:
        found = searcher.search_bm25(relation.event, 1)
        if not found:
            continue
        memory = searcher.read(searcher.view.by_blob[found[0][0]])
        if memory is None:
            continue
        event = _happened(memory)
        offset = relation.offset if relation.direction == "after" else -relation.offset
        slack = max(relation.offset / 2, timedelta(days=1))
        try:
            start, end = event + offset - slack, event + offset + slack
        except OverflowError:  # a stored time near year 1 or 9999
            continue
        windows.append(
            Window(start=start, end=end, label=relation.label, precision="day")
        )
    return windows


def _happened(memory: Memory) -> datetime:
    """Returns the memory's ``created_at``, read as UTC if it has no offset.

    The engine accepts no such time, but a store written by another tool
    may hold one, and a naive time cannot be compared with a query's.
    """
    moment = memory.created_at
    return moment if moment.utcoffset() is not None else moment.replace(tzinfo=UTC)


def _closeness(
    windows: Sequence[Window], cycles: Sequence[Cycle], memory: Memory
) -> float:
    """Returns how close the memory's moments are to the windows and cycles.

    Its moments are when it happened and the dates its text names; the
    closeness is the best of theirs, at most 1. A memory that happened in a
    window the question names (every hit of the time channel) is 1 without
    reading its text for dates, the costliest step of gravity (about 1 ms
    for a memory of a few thousand words).
    """
    happened = _happened(memory)
    near = closeness(windows, cycles, [happened])
    if near >= 1.0:
        return near
    text = f"{memory.title}\n{memory.body}" if memory.title else memory.body
    return closeness(windows, cycles, [happened, *_named_dates(text, happened)])


@functools.lru_cache(maxsize=4096)
def _named_dates(text: str, happened: datetime) -> tuple[datetime, ...]:
    """The dates a text names, kept for the next query that pulls it in.

    Reading a long memory's dates is the costliest step of gravity (about
    10-150 ms for a text of thousands of words), and the same memories
    come back query after query in a running hub.
    """
    try:
        return extract_dates(text, happened)
    except (ValueError, OverflowError):  # a stored time near year 1 or 9999
        return ()


@dataclass
class Channels:
    """What each channel found for one query, before fusion.

    Attributes:
        temporal: What the query meant in time.
        windows: Its date windows, relations to events included.
        text: What the word channels search: the whole query.
        hits: Per channel, (blob id, raw score), best first.
        weights: Per channel, its weight in the fusion.
        warnings: Channels that failed, in words.
        read: Reads a memory of the view by id.
        passages: Per blob of several passages the vector channel found,
            its best passage.
        respelling: The names the query names, and how the store spells
            those it spells otherwise (step 1).
        focus: What the vector channel asked instead of the query, if it
            left words out (:mod:`ctx.hub.retrieval.focus`).
        parts: The parts a long query is asked by too, by the vector
            channel and the word share of step 8, and instead of it by BM25
            and the fuzzy channel
            (:func:`~ctx.hub.retrieval.index.parts.question_parts`).
    """

    temporal: TemporalQuery
    windows: list[Window]
    text: str
    hits: dict[str, list[tuple[str, float]]]
    weights: dict[str, float]
    warnings: list[str]
    read: Callable[[str], Memory | None]
    passages: dict[str, int] = field(default_factory=dict)
    respelling: Respelling = field(default_factory=Respelling)
    focus: str | None = None
    parts: list[str] = field(default_factory=list)

    @property
    def asked(self) -> str:
        """The query with its names as the store spells them (step 1)."""
        return self.respelling.apply(self.text)

    @property
    def rest(self) -> str:
        """The query without its time phrases, its names as the store spells them."""
        return self.respelling.apply(self.temporal.rest)


def search_channels(
    searcher: Searcher,
    query: str,
    *,
    config: RecallConfig,
    now: datetime,
    fuzzy: bool | None = None,
) -> Channels:
    """Parses ``query`` for time and asks each weighted channel (steps 1-2)."""
    temporal = parse_temporal(query, now)
    text = query.strip()
    windows = [*temporal.windows, *_event_windows(searcher, temporal)]
    depth = config.depth
    weights = {
        "bm25": config.bm25,
        "vector": config.vector,
        "fuzzy": (
            config.fuzzy
            if fuzzy is None
            else max(config.fuzzy, config.bm25)
            if fuzzy
            else 0.0
        ),
        "time": config.bm25,
    }
    channels = Channels(temporal, windows, text, {}, weights, [], searcher.read)
    channels.respelling = searcher.respell(text, temporal.spans)
    channels.parts = question_parts(channels.asked)
    # The word channels read the question as written, a long one by its
    # parts: summed over a pasted log's words, their scores rank by the log.
    said = channels.parts if channels.asked == text else question_parts(text)
    hits = channels.hits
    if weights["bm25"]:
        hits["bm25"] = searcher.search_bm25(text, depth, parts=said)
    # A question in a script the model was not trained on (Chinese for
    # MiniLM) has cosines that measure nothing: left out, as a channel
    # that failed is, its ranks neither fused nor counted as relevance.
    if weights["vector"] and text.strip() and reads(searcher.embedder, channels.asked):
        try:
            # The tags the question may name are those of the lexical
            # channel's best hits, asked for when it has no weight too.
            lexical = hits.get("bm25")
            if lexical is None:
                lexical = searcher.search_bm25(text, TAG_CANDIDATES, parts=said)
            focus = vector_focus(searcher, channels.asked, lexical)
            if focus is not None and not reads(searcher.embedder, focus):
                focus = None
            found = searcher.search_vectors(
                channels.asked, depth, focus=focus, parts=channels.parts
            )
            channels.focus = focus
            # A vector pointing away from the query is no evidence at all.
            hits["vector"] = [(blob, cos) for blob, cos in found if cos > 0]
            channels.passages = searcher.passage
        except EmbedderError as exc:
            channels.warnings.append(f"Vector search is unavailable ({exc.message}).")
    if weights["fuzzy"]:
        hits["fuzzy"] = searcher.search_fuzzy(text, depth, parts=said)
    if windows and weights["time"]:
        spans = [(w.start, w.end) for w in windows]
        hits["time"] = searcher.search_time(temporal.rest, depth, spans)
    return channels


def fuse(channels: Channels, view: LiveView, k: float) -> dict[str, Ranked]:
    """Weighted reciprocal rank fusion of the channels' hits (step 3)."""
    by_blob = view.by_blob
    ranked = fuse_ranks(
        {
            channel: [(by_blob.get(blob), raw) for blob, raw in hits]
            for channel, hits in channels.hits.items()
        },
        channels.weights,
        k,
    )
    for blob, _ in channels.hits.get("vector", ()):
        memory_id = by_blob.get(blob)
        if memory_id is not None:
            ranked[memory_id].passage = channels.passages.get(blob)
    return ranked


def fuse_ranks(
    hits: Mapping[str, Sequence[tuple[str | None, float]]],
    weights: Mapping[str, float],
    k: float,
) -> dict[str, Ranked]:
    """Weighted reciprocal rank fusion of ranked lists of ids.

    An id at rank ``r`` (from 1) of channel ``c`` gets ``weights[c] / (k +
    r)``, summed over channels. Recall fuses memories with it, and ``ctx
    find`` code chunks.

    Args:
        hits: Per channel, (id, raw score), best first; an id of None
            (a hit outside what is asked about) keeps its rank and counts
            for nothing.
        weights: Per channel, its weight.
        k: The rank offset.
    """
    ranked: dict[str, Ranked] = {}
    for channel, found in hits.items():
        weight = weights[channel]
        for position, (key, raw) in enumerate(found, start=1):
            if key is None:
                continue
            entry = ranked.get(key)
            if entry is None:
                entry = ranked[key] = Ranked(key)
            contribution = weight / (k + position)
            entry.channels[channel] = (position, raw, contribution)
            entry.fused += contribution
    for entry in ranked.values():
        entry.score = entry.fused
    return ranked


def apply_tags(
    ranked: dict[str, Ranked],
    searcher: Searcher,
    channels: Channels,
    weight: float,
) -> None:
    """Multiplies the fused scores of hits with a tag the query names (step 4).

    Each of the :data:`~ctx.hub.retrieval.boost.TAG_CANDIDATES` best fused
    hits that carries a named tag has its fused score multiplied by up to
    ``1 + weight``, but never lifted above a hit it was below that holds
    the query's other words clearly better (:func:`~ctx.hub.retrieval.boost.
    bounded`); in place.
    """
    text = channels.asked
    if not weight or not ranked or not text.strip():
        return
    best = sorted(ranked.values(), key=lambda r: (-r.fused, r.id))[:TAG_CANDIDATES]
    carrying = []
    for entry in best:
        memory = channels.read(entry.id)
        if memory is not None and memory.tags:
            carrying.append((entry.id, memory.tags))
    named = name_tags(text, carrying)
    if not named.tags:
        return
    entries = searcher.view.catalog.entries
    blob_of = {r.id: entries[r.id].blob for r in best if r.id in entries}
    shares = _other_words(searcher, channels, named, carrying, blob_of.values())
    backing = {}
    for entry in best:
        share = shares.get(blob_of.get(entry.id, ""), 0.0) if shares else 1.0
        # Meaning counts as for relevance: a turn that answers in other
        # words (its cosine to the question) matches them too.
        cosine = entry.channels["vector"][1] if "vector" in entry.channels else 0.0
        backing[entry.id] = min(1.0, max(share, cosine))
    boosts = tag_boosts(searcher, text, named, weight)
    boosted = bounded({r.id: r.fused for r in best}, backing, boosts)
    for memory_id, tags in named.tags.items():
        entry = ranked[memory_id]
        entry.tagged = True
        entry.named = tags
        entry.tag_boost = boosted[memory_id] / entry.fused if entry.fused else 1.0
        entry.fused = entry.score = boosted[memory_id]


def _other_words(
    searcher: Searcher,
    channels: Channels,
    named: NamedTags,
    carrying: Sequence[tuple[str, Sequence[str]]],
    blobs: Collection[str],
) -> dict[str, float]:
    """Returns per blob the share of the query's other words it holds.

    The other words are those that named no tag, less those no hit holds.
    Empty when the query has none to weigh. As for relevance, a time phrase
    is judged by time, so the share without the query's time phrases counts
    when it is larger.
    """
    text = channels.asked
    among = set(blobs)
    rests = {named.rest}
    if channels.rest != text:
        rests.add(name_tags(channels.rest, carrying).rest)
    shares: dict[str, float] = {}
    for rest in rests:
        # A word none of the hits holds tells none of them from another; it
        # would only shrink every share alike.
        words = rest.split()
        held = [
            w
            for w, h in zip(words, searcher.held(text, among, words), strict=True)
            if h
        ]
        if not held:
            continue
        for blob, share in searcher.coverage(text, among, part=" ".join(held)).items():
            shares[blob] = max(share, shares.get(blob, 0.0))
    return shares


def apply_gravity(
    ranked: dict[str, Ranked], channels: Channels, gravity: float
) -> None:
    """Sets each fused score times its temporal boost (step 5), in place."""
    for entry in ranked.values():
        entry.score = entry.fused
    temporal = channels.temporal
    if not (channels.windows or temporal.cycles) or not gravity:
        return
    by_fused = sorted(ranked.values(), key=lambda r: (-r.fused, r.id))
    pulled = by_fused[:GRAVITY_CANDIDATES] + [
        r for r in by_fused[GRAVITY_CANDIDATES:] if "time" in r.channels
    ]
    for entry in pulled:
        memory = channels.read(entry.id)
        if memory is not None:
            cycles = temporal.cycles
            if cycles and _names_cycles(memory, cycles):
                cycles = ()  # "every Tuesday" in its text holds on any day
            entry.closeness = (
                _closeness(channels.windows, cycles, memory)
                if channels.windows or cycles
                else 1.0
            )
            entry.score *= 1 + gravity * entry.closeness


def _names_cycles(memory: Memory, cycles: Sequence[Cycle]) -> bool:
    """Returns whether the memory's text names each of ``cycles`` itself.

    A memory that says "every Tuesday" is about Tuesdays whenever it was
    written, so a question about "every Tuesday" finds it close in time.
    """
    text = f"{memory.title}\n{memory.body}" if memory.title else memory.body
    named = parse_temporal(text[:MAX_CYCLE_CHARS], _happened(memory)).cycles
    return all(
        any(n.dimension == c.dimension and set(n.values) & set(c.values) for n in named)
        for c in cycles
    )


def rank(
    searcher: Searcher,
    query: str,
    *,
    config: RecallConfig,
    now: datetime,
    links: Sequence[Adjacency] = (),
    include_superseded: bool = False,
    fuzzy: bool | None = None,
) -> Ranking:
    """Ranks the memories of the searcher's view for ``query`` (module doc for how).

    Args:
        searcher: The live memories to rank, and their indexes.
        query: The question; its time phrases are resolved against ``now``.
        config: Weights, ``k``, depth, gravity and expansion.
        now: The moment the query is asked (timezone-aware).
        links: The link graphs to expand over (and to find superseded ids in).
        include_superseded: Keep memories that another one supersedes.
        fuzzy: Force the fuzzy channel on or off; by default its weight decides.
    """
    view = searcher.view
    channels = search_channels(searcher, query, config=config, now=now, fuzzy=fuzzy)
    ranked = fuse(channels, view, config.k)
    apply_tags(ranked, searcher, channels, config.tags)
    apply_gravity(ranked, channels, config.gravity)
    superseded: set[str] = set()
    if not include_superseded:
        for graph in links:
            superseded |= graph.superseded()
    best = sorted(
        (r for r in ranked.values() if r.id not in superseded),
        key=lambda r: (-r.score, r.id),
    )
    if config.expand and links:
        _expand(
            best[:STRONG_HITS],
            ranked,
            links,
            searcher,
            channels.asked,
            superseded,
            config.expand,
        )
        best = sorted(
            (r for r in ranked.values() if r.id not in superseded),
            key=lambda r: (-r.score, r.id),
        )
    set_relevance(best[:RELEVANCE_CANDIDATES], searcher, channels)
    best, failed = rerank(best, query, channels.read, config.reranker)
    if failed is not None:
        channels.warnings.append(failed)
    reranker = config.reranker
    reranked = bool(reranker.url) and reranker.weight > 0 and failed is None
    respelling = channels.respelling
    held = respelling.held
    return Ranking(
        best,
        channels.temporal,
        channels.warnings,
        channels.read,
        named=bool(respelling.names or respelling.near_tags)
        or any(r.tagged for r in ranked.values())
        or _asks_its_writer(searcher, query),
        may_name=(lambda: searcher.names_among(held)) if held else None,
        respelt=respelling.words,
        focus=channels.focus
        or (channels.asked if respelling.words and "vector" in channels.hits else None),
        reranked=reranked,
    )


def _asks_its_writer(searcher: Searcher, query: str) -> bool:
    """Returns whether ``query`` asks, in the first person, a store of its own words.

    "When did I go to the support group?" asked of a store whose memories
    are mostly written in the first person singular (a person's own notes
    or turns: :data:`FIRST_PERSON_STORE`) is about the one who wrote them,
    someone the store holds, as a question that names them is. English
    only: "i" is "in" in Swedish and "and" in Polish; a question the
    language detector would be asked about
    (:func:`~ctx.hub.retrieval.index.language.asks`) is left as it is.
    """
    if not _FIRST_PERSON.search(query) or asks(query):
        return False  # not in the first person, or maybe not in English
    return searcher.first_person_share() >= FIRST_PERSON_STORE


def set_relevance(
    hits: Sequence[Ranked], searcher: Searcher, channels: Channels
) -> None:
    """Sets each hit's relevance (step 8), in place."""
    entries = searcher.view.catalog.entries
    blob_of = {r.id: entries[r.id].blob for r in hits if r.id in entries}
    shares, timed = _word_shares(searcher, channels, set(blob_of.values()))
    # A memory of the time the question names is relevant whatever its
    # words only when the question asks nothing else the store holds ("what
    # happened yesterday?"); otherwise it must hold the other words too:
    # with "in October", every memory of October counted as relevant, and a
    # question about another conversation's people found them (issue 29).
    only_time = bool(blob_of) and timed is not None and not any(timed.values())
    other: dict[str, float] = {}
    for entry in hits:
        cosine = entry.channels["vector"][1] if "vector" in entry.channels else 0.0
        timely = 1.0 if only_time and "time" in entry.channels else 0.0
        other[entry.id] = max(cosine, timely)
    # A long memory's words count where its cosine does, in its best
    # passage: a session of a thousand words holds most of a question's
    # words here and there, whatever it asks (a passage's share is never
    # above the whole's, so it is asked only where the share decides).
    deciding = {
        blob_of[r.id]
        for r in hits
        if r.id in blob_of and shares.get(blob_of[r.id], 0.0) > other[r.id]
    }
    if deciding:
        shares.update(_word_shares(searcher, channels, deciding, by_passage=True)[0])
    # A long question is as relevant to a memory as its best part is.
    for part in channels.parts:
        found = searcher.coverage(part, set(blob_of.values()), by_passage=True)
        for blob, share in found.items():
            shares[blob] = max(share, shares.get(blob, 0.0))
    for entry in hits:
        share = shares.get(blob_of.get(entry.id, ""), 0.0)
        entry.relevance = min(1.0, max(other[entry.id], share))


def _word_shares(
    searcher: Searcher,
    channels: Channels,
    blobs: set[str],
    *,
    by_passage: bool = False,
) -> tuple[dict[str, float], dict[str, float] | None]:
    """Returns each blob's share of the question's words, and of its words but time.

    The share is the better of the two (a time phrase is judged by time: a
    memory need not say "yesterday"); the second is ``None`` when the
    question names no time. ``by_passage``: see
    :meth:`~ctx.hub.retrieval.index.searcher.Searcher.coverage`.
    """
    text, rest = channels.asked, channels.rest
    shares = searcher.coverage(text, blobs, by_passage=by_passage)
    if rest == text:
        return shares, None
    apart = searcher.coverage(text, blobs, part=rest, by_passage=by_passage)
    for blob, share in apart.items():
        shares[blob] = max(share, shares.get(blob, 0.0))
    return shares, apart


def _expand(
    strong: list[Ranked],
    ranked: dict[str, Ranked],
    links: Sequence[Adjacency],
    searcher: Searcher,
    text: str,
    superseded: set[str],
    damping: float,
) -> None:
    entries = searcher.view.catalog.entries
    bearing: dict[str, float] = {}

    def bears(memory_id: str) -> float:
        """How much a neighbour bears on the question, 0..1 (see step 6)."""
        if memory_id not in bearing:
            blob = entries[memory_id].blob
            cosine = searcher.cosine(blob)
            if cosine is None:  # no vectors to compare: its words instead
                cosine = searcher.coverage(text, [blob]).get(blob, 0.0)
            bearing[memory_id] = max(0.0, cosine)
        return bearing[memory_id]

    for hit, (link_type, other, direction) in neighbours(
        strong, links, entries, superseded
    ):
        score = hit.score * damping
        if link_type == "RELATES_TO":
            score *= bears(other)
        lift(ranked, other, score, (link_type, hit.id, direction), enter=score > 0)


def neighbours(
    strong: Sequence[Ranked],
    links: Sequence[Adjacency],
    entries: Mapping[str, object],
    superseded: Collection[str],
) -> Iterator[tuple[Ranked, tuple[str, str, str]]]:
    """Yields each of ``strong`` with each link of it (step 6).

    A link is (link type, the other memory, "out" if the hit links to it,
    else "in"); only those to memories of ``entries`` not superseded.
    """
    for hit in strong:
        for graph in links:
            linked = [(t, n, "out") for t, n in graph.outgoing(hit.id)]
            linked += [(t, n, "in") for t, n in graph.incoming(hit.id)]
            for link in linked:
                if link[1] not in superseded and link[1] in entries:
                    yield hit, link


def lift(
    ranked: dict[str, Ranked],
    memory_id: str,
    score: float,
    via: tuple[str, str, str],
    *,
    enter: bool,
) -> None:
    """Raises a ranked memory to ``score`` through ``via`` (step 6).

    A memory not ranked yet enters at ``score`` only if ``enter``.
    """
    found = ranked.get(memory_id)
    if found is None:
        if enter:
            ranked[memory_id] = Ranked(memory_id, score=score, via=via)
    elif found.score < score:
        found.score = score
        found.via = via
