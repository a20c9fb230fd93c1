"""Recall learns from use: fusion weights and budget per caller, from feedback.

A learning step (``ctx recall learn``, or the hub once enough feedback has
come in) reads the feedback of one caller (an agent) that no step has
learned from yet (:mod:`ctx.hub.retrieval.feedback`) and moves that caller's
weights, starting from the store's ``[recall]`` config:

- Fusion weights (``bm25``, ``vector``, ``fuzzy``): for each recall, each
  pair of a used hit ``u`` and a returned hit ``n`` that was not used but
  ranks at or above it is a ranking mistake. The query is ranked again with
  the caller's current weights; a hit's score is ``m * sum_c w_c / (k +
  rank_c)`` (``m``: its tag and time boosts), so moving ``w_c`` by its
  gradient ``m_u / (k + rank_c(u)) - m_n / (k + rank_c(n))``, summed over
  the mistakes, raises ``u`` above ``n``. Each weight is multiplied by
  ``exp(LEARNING_RATE * g_c / max |g|)``: the channel with the strongest
  evidence moves by about 10%, the others less; a step with no mistakes
  moves nothing.
- Budget: what the caller used cost the tokens of its returned hits up to the
  last used one; the budget moves :data:`LEARNING_RATE` of the way to 1.25x
  the 90th percentile of that over the step's recalls.
- Bounds: each weight stays within a quarter and four times its configured
  value, the budget within a quarter (at least 256 tokens) and four times.

Each step is kept with the caller's history (:mod:`ctx.hub.retrieval.tuning`):
``ctx recall weights`` shows it, ``--undo`` drops the last entry, ``--reset``
adds one with the configured values.
"""

from __future__ import annotations

import math
from datetime import datetime

from ctx.engine import NotFoundError
from ctx.hub.config import RecallConfig
from ctx.hub.index.projection import Projection
from ctx.hub.retrieval.feedback import LoggedRecall, RecallLog
from ctx.hub.retrieval.ranking import Ranked, rank
from ctx.hub.retrieval.sources import open_sources
from ctx.hub.retrieval.tuning import (
    LEARNED,
    LearnReport,
    Tuning,
    bounds,
    configured,
    record_tuning,
    tuned,
    tuning_of,
)

__all__ = ["LEARNING_RATE", "learn"]

LEARNING_RATE = 0.1
"""How far one step moves: about 10% for the weight with the most evidence."""

_MARGIN = 1.25  # the budget aims a quarter above what 90% of recalls needed


def _factor(hit: Ranked) -> float:
    return hit.score / hit.fused if hit.fused else 1.0


def _features(hit: Ranked | None, k: float) -> dict[str, float]:
    """Returns d(score)/d(weight) of each learned weight for ``hit``."""
    out = dict.fromkeys(LEARNED, 0.0)
    if hit is None:
        return out
    factor = _factor(hit)
    for channel, (position, _, _) in hit.channels.items():
        name = "bm25" if channel == "time" else channel
        if name in out:
            out[name] += factor / (k + position)
    return out


def _gradient(
    projection: Projection,
    recall: LoggedRecall,
    used: set[str],
    config: RecallConfig,
) -> tuple[dict[str, float], int]:
    """Returns the weights' gradient over one recall's mistakes, and their count."""
    [source] = open_sources(projection, branch=recall.branch)
    ranking = rank(
        projection.searcher(source.view), recall.query, config=config, now=recall.now
    )
    by_id = {hit.id: hit for hit in ranking.hits}
    grad = dict.fromkeys(LEARNED, 0.0)
    mistakes = 0
    for u in used:
        good = by_id.get(u)
        score_u = good.score if good is not None else 0.0
        plus = _features(good, config.k)
        for hit in recall.hits:
            other = by_id.get(hit.id)
            if hit.id in used or other is None or other.score < score_u:
                continue
            mistakes += 1
            minus = _features(other, config.k)
            for name in LEARNED:
                grad[name] += plus[name] - minus[name]
    return grad, mistakes


def _needed(recall: LoggedRecall, used: set[str]) -> int:
    """Returns the tokens of the returned hits up to the last one used."""
    spent = needed = 0
    for hit in recall.hits:
        spent += hit.tokens
        if hit.id in used:
            needed = spent
    return needed


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def learn(
    projection: Projection,
    log: RecallLog,
    agent: str,
    config: RecallConfig,
    now: datetime,
) -> LearnReport:
    """Runs one learning step for ``agent`` and records it (module doc: how).

    Args:
        projection: The store's indexes (each logged query is ranked again).
        log: The recall log.
        agent: The caller whose feedback is learned from.
        config: The store's ``[recall]`` config (the start, and the bounds).
        now: The moment of the step.

    Raises:
        NotFoundError: No feedback of ``agent`` is new since the last step.
    """
    assert projection.store.path is not None
    store_path = projection.store.path
    before = tuning_of(store_path, agent) or configured(config, now, "config")
    fresh = [
        (log.recalls[f.recall], f)
        for f in log.feedback
        if f.recall in log.recalls
        and log.recalls[f.recall].agent == agent
        and (before.learned_until is None or f.at > before.learned_until)
    ]
    if not fresh:
        raise NotFoundError(
            f"No new feedback from {agent} to learn from.",
            hint="`ctx feedback RECALL-ID --used ID` records which hits were used.",
        )
    current = tuned(config, before)
    grad = dict.fromkeys(LEARNED, 0.0)
    mistakes = 0
    needs = []
    for recall, feedback in fresh:
        used = set(feedback.used)
        one, count = _gradient(projection, recall, used, current)
        if count:
            for name in LEARNED:
                grad[name] += one[name] / count
        mistakes += count
        needs.append(_needed(recall, used))
    limits = bounds(config)
    largest = max(abs(g) for g in grad.values())
    weights = {}
    for name in LEARNED:
        step = LEARNING_RATE * grad[name] / largest if largest else 0.0
        value = getattr(before, name) * math.exp(step)
        weights[name] = _clamp(value, *limits[name])
    target = _MARGIN * sorted(needs)[min(len(needs) - 1, int(0.9 * len(needs)))]
    budget = before.budget + LEARNING_RATE * (target - before.budget)
    after = Tuning(
        at=now,
        reason="learned",
        budget=round(_clamp(budget, *limits["budget"])),
        feedback=len(fresh),
        mistakes=mistakes,
        learned_until=max(f.at for _, f in fresh),
        **weights,
    )
    record_tuning(store_path, agent, after)
    return LearnReport(agent=agent, before=before, after=after)
