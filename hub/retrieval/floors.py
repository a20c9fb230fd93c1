"""Which ranked hits an answer keeps: the floor, the weak floor, and the tail.

Every hit of a ranking has a relevance on a fixed scale (step 8 of
:mod:`ctx.hub.retrieval.ranking`). A hit whose relevance reaches the floor
is strong. An explicit recall whose hits are all weak still answers with
those that reach its weak floor, lower for a question that names someone
the store holds (:attr:`~ctx.hub.retrieval.ranking.Ranking.named`): a
name, a tag, or, asked in the first person, the writer of a store of their
own words (:data:`~ctx.hub.retrieval.ranking.FIRST_PERSON_STORE`).
:func:`relevant` applies the floors and drops the tail of weak hits
(docs/recall.md, "Only what matters").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctx.hub.config import RecallConfig

if TYPE_CHECKING:
    from ctx.hub.retrieval.ranking import Ranked, Ranking

__all__ = [
    "NAMED_WEAK_SHARE",
    "WEAK_SHARE",
    "relevant",
    "weak_floor",
]

WEAK_SHARE = 0.94
"""The weak floor of an explicit recall, as a share of the floor
(:func:`weak_floor`): 0.423 at the default floor of 0.45. On LoCoMo
(benchmarks/results/empty_answers.md) a weak floor of 0.42 left 80.8% of
the questions asked of another conversation's store empty, 0.41 77.9%."""

NAMED_WEAK_SHARE = 0.55
"""The weak floor of an explicit recall whose question names a name the
store holds (:attr:`~ctx.hub.retrieval.ranking.Ranking.named`), as a share
of the floor: 0.2475 at the default floor (why: docs/recall.md,
"Questions that name what the store holds"). Such a question is about
something the store holds; its other words may still be few or said
otherwise ("what did Mel say about the trip?", "Which cities have I
visited?" of a person's own notes), and what it asks is then best answered
by its best hits, marked weak. A question asked of another store seldom
names a name that store holds (0.7% of LoCoMo's), but one in the first
person asked of a person's own words always does: of the first-person
questions of another conversation's speaker, 19.0% are left empty at this
floor, 48.8% at 0.75 (they get weak hits; docs/recall.md)."""


def relevant(
    ranking: Ranking, floor: float, fall_off: float, *, weak: float | None = None
) -> tuple[list[Ranked], Ranked | None]:
    """Returns the hits that matter, and the best hit if none does.

    A hit whose relevance reaches ``floor`` is strong; any other is weak.
    When no hit is strong, the hits are judged against ``weak`` instead (a
    lower floor, for a caller who asked and would rather have weak hits
    than nothing; ``None``: the floor), and when none reaches that either,
    nothing matters: the best hit is returned alone, as the near miss.
    Otherwise a hit is kept if it reaches that floor itself, or if its score
    is at least ``fall_off`` times the best score and its relevance at least
    ``fall_off`` times the best relevance: the tail of weak hits is dropped,
    however many strong ones there are. The second test is for a small
    store, where every memory is near the top of some channel's list (the
    vector channel lists them all) and the score alone fell off too little:
    "What day is pottery?" asked of twenty notes gave the pottery note and
    twelve weak ones of relevance 0.00 to 0.24. It spares a hit that
    something relevance does not measure put there: a link (step 6), the
    time channel, a reranker (whose order then judges the tail), or the
    ranking itself: its first hit is never a tail.
    """
    hits = ranking.hits
    if not hits:
        return [], None
    best = max(r.relevance for r in hits)
    least = floor if best >= floor or weak is None else min(weak, floor)
    if best < least:
        return [], max(hits, key=lambda r: r.relevance)
    lowest = hits[0].score * fall_off
    faint = 0.0 if ranking.reranked else best * fall_off

    def kept(hit: Ranked) -> bool:
        if hit.relevance >= least or hit is hits[0]:
            return True
        if hit.score < lowest:
            return False
        return hit.relevance >= faint or hit.via is not None or "time" in hit.channels

    return [r for r in hits if kept(r)], None


def weak_floor(config: RecallConfig, ranking: Ranking | None = None) -> float:
    """Returns the relevance a weak hit needs for an explicit recall to give it.

    An explicit recall (``ctx recall``, ``ctx search``, MCP, HTTP) whose best
    hit is under the floor answers with the hits that reach this, marked
    weak, rather than with nothing; the hook keeps the floor alone. It is
    :data:`WEAK_SHARE` of the floor, and :data:`NAMED_WEAK_SHARE` for a
    ranking whose query names a name the store holds (:attr:`Ranking.named`,
    or :attr:`Ranking.may_name`).
    """
    named = ranking is not None and (ranking.named or _may_name(ranking, config))
    return config.floor * (NAMED_WEAK_SHARE if named else WEAK_SHARE)


def _may_name(ranking: Ranking, config: RecallConfig) -> bool:
    """Returns :attr:`Ranking.may_name`'s answer where the weak floor turns on it.

    That is where no hit is strong and the best reaches the lower floor;
    elsewhere the memories it reads would change nothing.
    """
    if ranking.may_name is None or not ranking.hits:
        return False
    best = max(r.relevance for r in ranking.hits)
    if best >= config.floor or best < config.floor * NAMED_WEAK_SHARE:
        return False
    return ranking.may_name()
