"""Ranking: channels, weighted reciprocal rank fusion, gravity, link expansion.

:func:`rank` turns a query into memory ids, best first, for one live view:

1. The query is parsed for time (:func:`ctx.hub.temporal.parse_temporal`); the
   channels search what is left of it.
2. Channels, each the best ``depth`` blobs of the view: ``bm25`` (Tantivy,
   stemmed), ``vector`` (the embedder, cosine), ``fuzzy`` (typos and
   identifiers), and, when the query names windows of time, ``time`` (BM25
   restricted to memories created in those windows; every one of them if the
   query has no other words).
3. Weighted reciprocal rank fusion: a memory at rank ``r`` (from 1) of channel
   ``c`` gets ``weight_c / (k + r)``, summed over channels.
4. Temporal gravity, only when the query names a time: the scores of the
   :data:`GRAVITY_CANDIDATES` best fused hits and of every hit of the time
   channel are multiplied by ``1 + gravity * closeness``
   (:mod:`ctx.hub.gravity`). A
   relation to an undated event ("two weeks before the launch") is dated by
   the event's best BM25 match in the view.
5. One-hop expansion: each neighbour (by any link, either way) of the five
   best hits enters with its hit's score times ``expand``, or is raised to
   that score if it ranked lower.
6. Superseded memories are dropped unless asked for.

A channel that fails (the embedder is down) is left out with a warning; the
others still answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ctx.engine import Adjacency, Memory
from ctx.hub.config import RecallConfig
from ctx.hub.embedders import EmbedderError
from ctx.hub.gravity import closeness
from ctx.hub.projection import LiveView, Projection
from ctx.hub.temporal import TemporalQuery, Window, extract_dates, parse_temporal

__all__ = ["CHANNELS", "GRAVITY_CANDIDATES", "STRONG_HITS", "Ranked", "Ranking", "rank"]

CHANNELS = ("bm25", "vector", "fuzzy", "time")
STRONG_HITS = 5
"""How many of the best hits have their linked neighbours considered."""

GRAVITY_CANDIDATES = 64
"""How many of the best fused hits gravity weighs (each is read from git);
hits of the time channel are always weighed."""


@dataclass
class Ranked:
    """One memory in a ranking, with what put it there.

    Attributes:
        id: The memory id.
        score: Its final score.
        channels: Per channel, its (rank from 1, raw score, contribution).
        fused: The fused score before gravity.
        closeness: Its temporal closeness (0 when the query names no time).
        via: For a memory that entered by expansion: (link type, the hit it
            is linked to, "out" if that hit links to it, else "in").
    """

    id: str
    score: float = 0.0
    channels: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    fused: float = 0.0
    closeness: float = 0.0
    via: tuple[str, str, str] | None = None


@dataclass
class Ranking:
    """The ranked memories of one query, and what the query meant.

    ``read`` returns a memory of the view by id (each read from git once).
    """

    hits: list[Ranked]
    temporal: TemporalQuery
    warnings: list[str]
    read: Callable[[str], Memory | None]


def _event_windows(
    projection: Projection, view: LiveView, query: TemporalQuery, read: _Reader
) -> list[Window]:
    """Dates each relation's event by its best match, and returns the windows."""
    windows = []
    for relation in query.relations:
        found = projection.lexical_search(view, relation.event, 1)
        if not found:
            continue
        memory = read(view.by_blob[found[0][0]])
        if memory is None:
            continue
        event = memory.created_at
        offset = relation.offset if relation.direction == "after" else -relation.offset
        slack = max(relation.offset / 2, timedelta(days=1))
        windows.append(
            Window(
                start=event + offset - slack,
                end=event + offset + slack,
                label=relation.label,
                precision="day",
            )
        )
    return windows


class _Reader:
    """Reads memories of a view by id (through the projection's cache)."""

    def __init__(self, projection: Projection, view: LiveView) -> None:
        self._read = projection.read_memory
        self._entries = view.catalog.entries

    def __call__(self, memory_id: str) -> Memory | None:
        entry = self._entries.get(memory_id)
        if entry is None:
            return None
        return self._read(entry.path, entry.blob)


def _anchors(memory: Memory) -> list[datetime]:
    text = f"{memory.title}\n{memory.body}" if memory.title else memory.body
    return [memory.created_at, *extract_dates(text, memory.created_at)]


def rank(
    projection: Projection,
    view: LiveView,
    query: str,
    *,
    config: RecallConfig,
    now: datetime,
    links: Sequence[Adjacency] = (),
    include_superseded: bool = False,
    fuzzy: bool | None = None,
) -> Ranking:
    """Ranks the memories of ``view`` for ``query`` (module doc for how).

    Args:
        projection: The indexes, caught up to ``view``.
        view: The live memories to rank.
        query: The question; its time phrases are resolved against ``now``.
        config: Weights, ``k``, depth, gravity and expansion.
        now: The moment the query is asked (timezone-aware).
        links: The link graphs to expand over (and to find superseded ids in).
        include_superseded: Keep memories that another one supersedes.
        fuzzy: Force the fuzzy channel on or off; by default its weight decides.
    """
    temporal = parse_temporal(query, now)
    text = temporal.rest
    warnings: list[str] = []
    read = _Reader(projection, view)
    windows = [*temporal.windows, *_event_windows(projection, view, temporal, read)]
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
    results: dict[str, list[tuple[str, float]]] = {}
    if weights["bm25"]:
        results["bm25"] = projection.lexical_search(view, text, depth)
    if weights["vector"] and text.strip():
        try:
            found = projection.vector_search(view, text, depth)
            # A vector pointing away from the query is no evidence at all.
            results["vector"] = [(blob, cos) for blob, cos in found if cos > 0]
        except EmbedderError as exc:
            warnings.append(f"Vector search is unavailable ({exc.message}).")
    if weights["fuzzy"]:
        results["fuzzy"] = projection.lexical_search(view, text, depth, fuzzy=True)
    if windows and weights["time"]:
        spans = [(w.start, w.end) for w in windows]
        results["time"] = projection.lexical_search(view, text, depth, within=spans)
    ranked: dict[str, Ranked] = {}
    for channel, hits in results.items():
        weight = weights[channel]
        for position, (blob, raw) in enumerate(hits, start=1):
            memory_id = view.by_blob.get(blob)
            if memory_id is None:
                continue
            entry = ranked.setdefault(memory_id, Ranked(memory_id))
            contribution = weight / (config.k + position)
            entry.channels[channel] = (position, raw, contribution)
            entry.fused += contribution
    for entry in ranked.values():
        entry.score = entry.fused
    if (windows or temporal.cycles) and config.gravity:
        by_fused = sorted(ranked.values(), key=lambda r: -r.fused)
        pulled = by_fused[:GRAVITY_CANDIDATES] + [
            r for r in by_fused[GRAVITY_CANDIDATES:] if "time" in r.channels
        ]
        for entry in pulled:
            memory = read(entry.id)
            if memory is not None:
                entry.closeness = closeness(windows, temporal.cycles, _anchors(memory))
                entry.score *= 1 + config.gravity * entry.closeness
    superseded: set[str] = set()
    if not include_superseded:
        for graph in links:
            superseded |= graph.superseded()
    best = sorted(
        (r for r in ranked.values() if r.id not in superseded),
        key=lambda r: (-r.score, r.id),
    )
    if config.expand and links:
        _expand(best[:STRONG_HITS], ranked, links, view, superseded, config.expand)
        best = sorted(
            (r for r in ranked.values() if r.id not in superseded),
            key=lambda r: (-r.score, r.id),
        )
    return Ranking(best, temporal, warnings, read)


def _expand(
    strong: list[Ranked],
    ranked: dict[str, Ranked],
    links: Sequence[Adjacency],
    view: LiveView,
    superseded: set[str],
    damping: float,
) -> None:
    entries = view.catalog.entries
    for hit in strong:
        for graph in links:
            neighbours = [(t, n, "out") for t, n in graph.outgoing(hit.id)]
            neighbours += [(t, n, "in") for t, n in graph.incoming(hit.id)]
            for link_type, other, direction in neighbours:
                if other in superseded or other not in entries:
                    continue
                score = hit.score * damping
                found = ranked.get(other)
                if found is None:
                    ranked[other] = Ranked(
                        other, score=score, via=(link_type, hit.id, direction)
                    )
                elif found.score < score:
                    found.score = score
                    found.via = (link_type, hit.id, direction)
