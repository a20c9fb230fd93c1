"""Recall and search: ranked memories of a branch, packed into a token budget.

:func:`recall` is what ``ctx recall`` prints: the pinned memories first (at
most half the budget, the most relevant to the query first; those left out
are named in the result), then the best of :func:`ctx.hub.retrieval.ranking.rank`, each
taken if it still fits, until the budget or :data:`MAX_HITS` is reached; a
long memory that does not fit whole is taken as its matching passage
(``Hit.passage``) if that fits. A
memory costs its :func:`~ctx.engine.recall_tokens`: its text plus
:data:`~ctx.engine.HEADER_TOKENS` for the line that names it (id, kind, date,
path). The footer's "whole live branch" is every memory the recall could
return (those another one supersedes only with ``include_superseded``),
counted the same way: what ``ctx status`` counts.

With an overlay (``--with main``) the view is the branch's memories plus the
other branch's memories that the branch does not have (by id), each hit
labelled with the branch it came from. :func:`search` is the same ranking as
a plain list (no pinning, no budget) with optional kind/tag/context filters.

Both take the projection once, for a :class:`~ctx.hub.retrieval.index.searcher.Searcher`
over the view they rank; ranking and reading go through that searcher. An
index found damaged while ranking is repaired by the projection, which then
catches the views up again, and the ranking is made once more.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime

import msgspec

from ctx.engine import (
    HEADER_TOKENS,
    Adjacency,
    Catalog,
    CatalogEntry,
    InvalidInputError,
    MemoryId,
    Store,
    conflict_notes,
    context_of,
    estimate_tokens,
    is_archived,
    link_graph,
)
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.floors import relevant, weak_floor
from ctx.hub.retrieval.index.documents import memory_embed_text
from ctx.hub.retrieval.index.errors import IndexCorruptError
from ctx.hub.retrieval.index.passages import may_be_long
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.terms import tag_terms
from ctx.hub.retrieval.index.view import LiveView
from ctx.hub.retrieval.ranking import CHANNELS, Ranked, Ranking, rank
from ctx.hub.retrieval.results import (
    ChannelScore,
    Explanation,
    Hit,
    HitConflict,
    PassageMatch,
    RecallResult,
)
from ctx.hub.retrieval.sources import Source
from ctx.hub.retrieval.standing import matched_passage, standing_passage
from ctx.hub.retrieval.written import with_written

__all__ = [
    "MAX_HITS",
    "MAX_QUERY_CHARS",
    "recall",
    "search",
]

MAX_HITS = 25
"""The most ranked memories one recall returns (pinned ones aside)."""

MAX_QUERY_CHARS = 10_000
"""Longer queries are refused: a pasted file is not a question."""


def _check_query(query: str) -> str:
    text = query.strip()
    if not text:
        raise InvalidInputError(
            "The query is empty.", hint='Ask in words, e.g. "what about auth?"'
        )
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"The query has {len(text):,} characters; at most {MAX_QUERY_CHARS:,}.",
            hint="Ask a question, not a document.",
        )
    return text


def _overlay(sources: Sequence[Source]) -> tuple[LiveView, dict[str, str]]:
    """Returns one view over several branches (earlier ones win by id)."""
    first = sources[0]
    origin: dict[str, str] = {}  # memory id -> branch, where not the first
    if len(sources) == 1:
        return first.view, origin
    entries = dict(first.view.catalog.entries)
    for source in sources[1:]:
        for memory_id, entry in source.view.catalog.entries.items():
            if memory_id not in entries:
                entries[memory_id] = entry
                origin[memory_id] = source.branch
    by_blob = {entry.blob: memory_id for memory_id, entry in entries.items()}
    catalog = Catalog(version=first.view.catalog.version, tree="", entries=entries)
    view = LiveView(first.commit, catalog, by_blob, frozenset(by_blob))
    for source in sources:
        view.pending += source.view.pending
        view.pending_indexes += source.view.pending_indexes
    return view, origin


def _filtered(
    view: LiveView,
    kind: str | None,
    context: str | None,
    blobs: Collection[str] | None = None,
) -> LiveView:
    """Returns the part of ``view`` of that kind and context, in ``blobs`` if given."""
    entries = {
        memory_id: entry
        for memory_id, entry in view.catalog.entries.items()
        if (kind is None or entry.kind == kind)
        and (context is None or context_of(entry.path) == context)
        and (blobs is None or entry.blob in blobs)
    }
    by_blob = {entry.blob: memory_id for memory_id, entry in entries.items()}
    catalog = Catalog(version=view.catalog.version, tree="", entries=entries)
    filtered = LiveView(view.commit, catalog, by_blob, frozenset(by_blob))
    filtered.pending = [blob for blob in view.pending if blob in by_blob]
    filtered.pending_indexes = list(view.pending_indexes)
    return filtered


def _check_tag_filter(tag: str) -> None:
    """Raises unless ``tag`` is a tag, a namespace or a value to search by."""
    namespace, colon, value = tag.partition(":")
    if (
        not tag
        or any(c.isspace() for c in tag)
        or (colon and not (namespace and value))
    ):
        raise InvalidInputError(
            f"A tag to search by is namespace:value, a namespace or a value, "
            f"not {tag!r}.",
            hint="For example service:billing, or billing alone.",
        )


def _explain(ranked: Ranked, config: RecallConfig, ranking: Ranking) -> Explanation:
    """Returns why ``ranked`` ranked; its last commit comes from :func:`_blamed`."""
    channels = tuple(
        ChannelScore(channel=c, rank=r, score=raw, contribution=part)
        for c in CHANNELS
        if c in ranked.channels
        for r, raw, part in [ranked.channels[c]]
    )
    via = None
    if ranked.via is not None:
        link_type, other, direction = ranked.via
        via = (
            f"{other} {link_type} this"
            if direction == "out"
            else f"this {link_type} {other}"
        )
    passage = _passage(ranking, ranked)
    return Explanation(
        channels=channels,
        fused=ranked.fused,
        closeness=ranked.closeness,
        boost=1 + config.gravity * ranked.closeness,
        tag_boost=ranked.tag_boost,
        named_tags=ranked.named,
        passage=passage,
        via=via,
        last_commit=None,
        last_agent=None,
        last_summary=None,
    )


def _blamed(
    store: Store, by_branch: Mapping[str, Source], hits: Sequence[Hit]
) -> list[Hit]:
    """Returns ``hits`` with their writes, and each explanation's last commit.

    One walk of history per branch for all the hits (:func:`with_written`),
    not one per hit: at 100k memories written by one import, asking the log
    hit by hit decoded that import's changes once per hit.
    """
    tips = {branch: source.commit for branch, source in by_branch.items()}
    catalogs = {
        branch: source.view.catalog
        for branch, source in by_branch.items()
        if source.view.commit == source.commit
    }
    return with_written(store, tips, hits, catalogs)


def _hit(
    ranking: Ranking,
    view: LiveView,
    memory_id: str,
    branch: str,
    score: float,
    explain: Explanation | None,
    ranked: Ranked | None = None,
    floor: float = 0.0,
) -> Hit:
    memory = ranking.read(memory_id)
    assert memory is not None  # every id ranked or pinned is in the view
    return Hit.of(
        memory,
        view.catalog.entries[memory_id],
        branch=branch,
        score=score,
        similarity=_similarity(ranked),
        relevance=None if ranked is None else ranked.relevance,
        weak=ranked is not None and ranked.relevance < floor,
        explain=explain,
    )


def _archived(ranking: Ranking, memory_id: str) -> bool:
    """Returns whether a ranked memory was archived (``tier:off-context``)."""
    memory = ranking.read(memory_id)
    return memory is not None and is_archived(memory.tags)


def _passage(ranking: Ranking, ranked: Ranked) -> PassageMatch | None:
    """Returns the passage of a long memory that the vector channel matched."""
    number = ranked.passage
    if number is None:  # one vector, or not found by the vector channel
        return None
    memory = ranking.read(ranked.id)
    if memory is None:
        return None
    return matched_passage(memory_embed_text(memory), number)


def _standing(
    ranking: Ranking, ranked: Ranked, question: str, room: int
) -> PassageMatch | None:
    """Returns the passage that stands for a long memory over the budget.

    :func:`~ctx.hub.retrieval.standing.standing_passage`, of ``room`` tokens
    at most.
    """
    memory = ranking.read(ranked.id)
    if memory is None:
        return None
    text = memory_embed_text(memory)
    return standing_passage(text, question, room, number=ranked.passage)


def _near_miss(
    store: Store,
    by_branch: Mapping[str, Source],
    origin: Mapping[str, str],
    ranking: Ranking,
    missed: Ranked | None,
    config: RecallConfig,
) -> Hit | None:
    """Returns the best hit of a query that found nothing relevant, explained."""
    if missed is None:
        return None
    first = next(iter(by_branch))
    branch = origin.get(missed.id, first)
    why = _explain(missed, config, ranking)
    view = by_branch[branch].view
    if missed.id not in view.catalog.entries:
        return None
    hit = _hit(ranking, view, missed.id, branch, missed.score, why, missed)
    return _blamed(store, by_branch, [hit])[0]


def _weak(kept: Sequence[Ranked], config: RecallConfig) -> bool:
    """Returns whether the best of the ranked hits kept is under the floor."""
    return bool(kept) and max(r.relevance for r in kept) < config.floor


def _similarity(ranked: Ranked | None) -> float | None:
    if ranked is None or "vector" not in ranked.channels:
        return None
    return ranked.channels["vector"][1]


def _cost(entries: Iterable[CatalogEntry]) -> int:
    """Returns what these memories cost in a recall, headers included."""
    return sum(entry.tokens + HEADER_TOKENS for entry in entries)


def _whole(
    entries: Mapping[str, CatalogEntry], tokens: int, hidden: Collection[str]
) -> tuple[int, int]:
    """Returns the memories and tokens of a view but ``hidden``, as recall counts.

    ``tokens`` is the view's own total (every memory's text).
    """
    gone = [entries[mid] for mid in hidden if mid in entries]
    count = len(entries) - len(gone)
    return count, tokens + HEADER_TOKENS * len(entries) - _cost(gone)


def _repairing(
    projection: Projection,
    sources: Sequence[Source],
    ranked: Callable[[Sequence[Source]], Ranking],
) -> Ranking:
    """Returns ``ranked(sources)``, repairing an index found damaged on the way.

    The repaired index is caught up to each source's commit again (no
    watermark moves) and asked once more.
    """
    try:
        return ranked(sources)
    except IndexCorruptError as exc:
        projection.repair(exc)
    again = [
        msgspec.structs.replace(source, view=projection.view(source.commit))
        for source in sources
    ]
    return ranked(again)


def _marked(
    store: Store, sources: Sequence[Source], hits: list[Hit]
) -> tuple[Hit, ...]:
    """Returns ``hits``, each one in conflict on its branch marked so."""
    notes = {}
    for source in sources:
        view = source.view
        if view.commit != source.commit:
            notes[source.branch] = conflict_notes(store, source.commit)
            continue
        if view.conflicts is None:  # read once per commit: a view is reused
            view.conflicts = conflict_notes(store, source.commit)
        notes[source.branch] = view.conflicts
    out = []
    for hit in hits:
        note = notes.get(hit.branch, {}).get(MemoryId(hit.id))
        if note is not None:
            mark = HitConflict(
                fields=note.fields, theirs_ref=note.theirs_ref, theirs=note.theirs
            )
            hit = msgspec.structs.replace(hit, conflict=mark)
        out.append(hit)
    return tuple(out)


def _pinned_order(
    view: LiveView, ranking: Ranking, superseded: Collection[str]
) -> list[str]:
    """Returns the view's pinned memories, the most relevant to the query first.

    Pinned memories the ranking found come in its order, then the others in
    path order, so a small budget keeps the pinned memories that matter.
    """
    pinned = [mid for mid in view.pinned if mid not in superseded]
    position = {r.id: n for n, r in enumerate(ranking.hits)}
    unranked = len(position)
    return sorted(pinned, key=lambda mid: position.get(mid, unranked))


def _graphs(store: Store, sources: Sequence[Source]) -> list[Adjacency]:
    return [link_graph(store, source.commit) for source in sources]


def recall(
    projection: Projection,
    sources: Sequence[Source],
    query: str,
    *,
    config: RecallConfig,
    now: datetime,
    budget: int | None = None,
    include_superseded: bool = False,
    explain: bool = False,
) -> RecallResult:
    """Returns the pinned and most relevant memories, packed into ``budget``.

    Args:
        projection: The store's indexes (caught up to every source's view).
        sources: The branch recalled from, then any overlaid branches.
        query: The question (1 to :data:`MAX_QUERY_CHARS` characters).
        config: Ranking constants and the default budget.
        now: When the query is asked (timezone-aware).
        budget: Tokens to fill; ``config.budget`` when ``None``.
        include_superseded: Keep memories another one supersedes, and the
            archived ones (``tier:off-context``), which are left out else.
        explain: Attach an :class:`Explanation` (channels, gravity, blame).

    Raises:
        InvalidInputError: The query is empty or too long, or the budget < 1.
    """
    started = time.perf_counter()
    text = _check_query(query)
    budget = config.budget if budget is None else budget
    if budget < 1:
        raise InvalidInputError(
            f"The budget must be at least 1 token, not {budget}.",
            hint="Try --budget 1500.",
        )
    store = projection.store
    view, origin = _overlay(sources)
    graphs = _graphs(store, sources)
    ranking = _repairing(
        projection,
        sources,
        lambda current: rank(
            projection.searcher(_overlay(current)[0]),
            text,
            config=config,
            now=now,
            links=graphs,
            include_superseded=include_superseded,
        ),
    )
    by_branch = {s.branch: s for s in sources}
    entries = view.catalog.entries
    superseded = (
        set() if include_superseded else set().union(*(g.superseded() for g in graphs))
    )
    pinned = _pinned_order(view, ranking, superseded)
    hits: list[Hit] = []
    spent = left_out = 0
    pinned_left_out: list[str] = []
    for memory_id in pinned:
        cost = _cost([entries[memory_id]])
        if spent + cost > budget // 2:
            left_out += 1
            pinned_left_out.append(entries[memory_id].path)
            continue
        spent += cost
        branch = origin.get(memory_id, sources[0].branch)
        hits.append(_hit(ranking, view, memory_id, branch, 0.0, None))
    taken = 0
    pinned_set = set(pinned)
    kept, missed = relevant(
        ranking, config.floor, config.fall_off, weak=weak_floor(config, ranking)
    )
    rest = [r for r in kept if r.id not in pinned_set]
    for n, ranked in enumerate(rest):
        if not include_superseded and _archived(ranking, ranked.id):
            continue  # off-context: it left the context, as in compose
        if taken >= MAX_HITS or budget - spent < HEADER_TOKENS:
            left_out += len(rest) - n  # no hit fits any more
            break
        cost = entries[ranked.id].tokens + HEADER_TOKENS
        part = None
        if spent + cost > budget and may_be_long(entries[ranked.id].tokens):
            # A long memory that does not fit: its matching passage may.
            room = budget - spent - HEADER_TOKENS
            part = _standing(ranking, ranked, text, room)
            if part is not None:
                cost = estimate_tokens(part.text) + HEADER_TOKENS
        if spent + cost > budget:
            left_out += 1
            continue
        spent += cost
        taken += 1
        branch = origin.get(ranked.id, sources[0].branch)
        why = _explain(ranked, config, ranking) if explain else None
        hit = _hit(
            ranking, view, ranked.id, branch, ranked.score, why, ranked, config.floor
        )
        if part is not None:
            hit = msgspec.structs.replace(
                hit, body=part.text, tokens=cost, passage=part
            )
        hits.append(hit)
    temporal = ranking.temporal
    live_memories, live_tokens = _whole(entries, view.tokens, superseded)
    return RecallResult(
        query=text,
        branch=sources[0].branch,
        commit=sources[0].commit,
        now=now,
        budget=budget,
        hits=_marked(store, sources, _blamed(store, by_branch, hits)),
        tokens=spent,
        live_memories=live_memories,
        live_tokens=live_tokens,
        left_out=left_out,
        pinned_left_out=tuple(pinned_left_out),
        nothing_relevant=not kept,
        weak=_weak(kept, config),
        near_miss=_near_miss(store, by_branch, origin, ranking, missed, config)
        if explain
        else None,
        vector_question=ranking.focus if explain else None,
        seconds=time.perf_counter() - started,
        temporal=tuple(
            [w.label for w in temporal.windows]
            + [c.label for c in temporal.cycles]
            + [r.label for r in temporal.relations]
        ),
        warnings=tuple(projection.warnings + ranking.warnings),
    )


def search(
    projection: Projection,
    source: Source,
    query: str,
    *,
    config: RecallConfig,
    now: datetime,
    limit: int = 10,
    kind: str | None = None,
    tag: str | None = None,
    context: str | None = None,
    fuzzy: bool = False,
    explain: bool = False,
) -> RecallResult:
    """Returns the best ``limit`` memories as a plain ranked list.

    Filters keep memories of that kind, with that tag, in that context.

    Raises:
        InvalidInputError: The query is empty or too long, or ``limit`` < 1.
    """
    started = time.perf_counter()
    text = _check_query(query)
    if limit < 1:
        raise InvalidInputError(f"-n must be at least 1, not {limit}.")
    if tag is not None:
        _check_tag_filter(tag)
    store = projection.store

    def narrowed(view: LiveView) -> LiveView:
        if kind is None and context is None and tag is None:
            return view
        # The tag narrows what is ranked, as the kind does: filtered after
        # the floors, a tagged memory that bore on the question less than
        # an untagged one was dropped before the tag was asked about.
        tagged = None if tag is None else projection.searcher(view).blobs_tagged(tag)
        return _filtered(view, kind, context, tagged)

    graphs = _graphs(store, [source])
    views: list[LiveView] = []

    def narrowed_ranking(current: Sequence[Source]) -> Ranking:
        # Narrowed here, where a damaged index is repaired: the tag reads it.
        views.append(narrowed(current[0].view))
        return rank(
            projection.searcher(views[-1]),
            text,
            config=config,
            now=now,
            links=graphs,
            fuzzy=fuzzy or None,
        )

    ranking = _repairing(projection, [source], narrowed_ranking)
    view = views[-1]
    entries = source.view.catalog.entries
    superseded = set().union(*(g.superseded() for g in graphs))
    live_memories, live_tokens = _whole(entries, source.view.tokens, superseded)
    hits: list[Hit] = []
    kept, missed = relevant(
        ranking, config.floor, config.fall_off, weak=weak_floor(config, ranking)
    )
    for ranked in kept:
        if ranked.id not in view.catalog.entries:
            continue  # a linked neighbour the filters leave out
        why = _explain(ranked, config, ranking) if explain else None
        hit = _hit(
            ranking,
            view,
            ranked.id,
            source.branch,
            ranked.score,
            why,
            ranked,
            config.floor,
        )
        # Whole, or its namespace or value, in any letter case: the terms
        # the index narrowed by ("b:c" is the value of a:b:c).
        if tag is not None and tag.lower() not in tag_terms(hit.tags):
            continue
        hits.append(hit)
        if len(hits) == limit:
            break
    return RecallResult(
        query=text,
        branch=source.branch,
        commit=source.commit,
        now=now,
        budget=None,
        hits=_marked(store, [source], _blamed(store, {source.branch: source}, hits)),
        tokens=sum(h.tokens for h in hits),
        live_memories=live_memories,
        live_tokens=live_tokens,
        left_out=0,
        nothing_relevant=not kept,
        weak=_weak(kept, config),
        near_miss=_near_miss(
            store, {source.branch: source}, {}, ranking, missed, config
        )
        if explain
        else None,
        vector_question=ranking.focus if explain else None,
        seconds=time.perf_counter() - started,
        temporal=tuple(w.label for w in ranking.temporal.windows),
        warnings=tuple(projection.warnings + ranking.warnings),
    )
