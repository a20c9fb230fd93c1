"""Recall learns from use: fusion weights and budget per caller, from feedback.

A learning step (``ctx recall learn``, or the hub once enough feedback has
come in) reads the feedback of one caller (an agent) that no step has
learned from yet (:mod:`ctx.hub.retrieval.feedback`) and moves that caller's
weights, starting from the store's ``[recall]`` config:

- Each logged query is ranked again with the caller's current weights. A
  hit's score is ``m * sum_c w_c / (k + rank_c)`` (``m``: its tag and time
  boosts), so a hit's score under other weights is its score with each
  channel's share scaled by ``w'_c / w_c`` (:class:`_Rescorer`; gravity's
  choice of candidates is kept as it was).
- Direction: each pair of a used hit ``u`` and a returned hit ``n`` that was
  not used but ranks at or above it is a mistake; recalls without one teach
  nothing. The gradient of the margin ``score(u) - score(n)`` in ``log w_c``
  is ``w_c * (m_u / (k + rank_c(u)) - m_n / (k + rank_c(n)))``, averaged
  over each recall's mistakes and summed over recalls. Scaling every weight
  alike ranks nothing differently, so the gradient's mean over the channels
  that are on is taken out: a step changes only the weights' ratios (a
  weight of 0 stays 0). The weights are
  then scaled so their sum stays the configured sum (scores keep their
  scale), and clamped to the bounds.
- Validation: the step is tried at :data:`LEARNING_RATE`, half and a
  quarter of it (the channel with the strongest evidence moves by about
  that much in log terms). Each candidate re-ranks the step's logged
  recalls; the one with the best mean reciprocal rank of the used hits is
  kept, if that beats the current weights' and puts no fewer used hits in
  the first ten. Otherwise the weights stay as they were.
- Held out: with at least :data:`HOLD_OUT_MIN` recalls, every
  :data:`HOLD_OUT_EVERY`-th (in the log's order) is kept out of the
  gradient and the choice above, and a candidate is kept only if it puts
  more of their used hits in the first ten, at no lower mean reciprocal
  rank. A step fitted to the recalls it learned from could rank others
  worse (LoCoMo: a step that raised the training MRR lowered recall@10 on
  held-out conversations, and so did one that also raised the held-out
  recalls' MRR); recall@10 is what a step must not lower, so it must show
  a gain there on recalls it did not learn from.
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
from dataclasses import dataclass
from datetime import datetime

from ctx.engine import NotFoundError
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.feedback import LoggedRecall, RecallLog
from ctx.hub.retrieval.index.projection import Projection
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

__all__ = ["HOLD_OUT_EVERY", "HOLD_OUT_MIN", "LEARNING_RATE", "STEP_SIZES", "learn"]

LEARNING_RATE = 0.1
"""How far one step may move: about 10% for the weight with the most evidence."""

STEP_SIZES = (1.0, 0.5, 0.25)
"""The fractions of :data:`LEARNING_RATE` a step tries, each validated."""

HOLD_OUT_EVERY = 4
"""Every this many-th recall of a step checks it instead of teaching it."""

HOLD_OUT_MIN = 20
"""Fewer recalls than this are all learned from and checked in-sample: a
handful held out would judge a step by one or two questions."""

_MARGIN = 1.25  # the budget aims a quarter above what 90% of recalls needed
_TOP = 10  # a step may not put fewer used hits in this many first places


@dataclass
class _Hit:
    """One hit of a logged query ranked again: its score, by learned weight."""

    id: str
    fixed: float  # the part of its score no learned weight makes
    parts: dict[str, float]  # the part each learned weight makes


def _split(hit: Ranked) -> _Hit:
    total = sum(contribution for _, _, contribution in hit.channels.values())
    parts = dict.fromkeys(LEARNED, 0.0)
    if not total:
        return _Hit(hit.id, hit.score, parts)
    for channel, (_, _, contribution) in hit.channels.items():
        parts["bm25" if channel == "time" else channel] += (
            hit.score * contribution / total
        )
    return _Hit(hit.id, 0.0, parts)


@dataclass
class _Rescorer:
    """A logged recall ranked again, scored anew under other weights."""

    hits: list[_Hit]
    returned: list[str]  # what the recall returned, in its order
    used: set[str]

    def scores(self, ratio: dict[str, float]) -> dict[str, float]:
        return {
            h.id: h.fixed + sum(h.parts[n] * ratio[n] for n in LEARNED)
            for h in self.hits
        }

    def gradient(self) -> tuple[dict[str, float], int]:
        """Returns the margins' gradient in log weights, and the mistakes."""
        scores = self.scores(dict.fromkeys(LEARNED, 1.0))
        by_id = {h.id: h for h in self.hits}
        grad = dict.fromkeys(LEARNED, 0.0)
        mistakes = 0
        for u in self.used:
            good = by_id.get(u)
            score_u = scores.get(u, 0.0)
            for other in self.returned:
                bad = by_id.get(other)
                if other in self.used or bad is None or scores[other] < score_u:
                    continue
                mistakes += 1
                for name in LEARNED:
                    grad[name] += (good.parts[name] if good else 0.0) - bad.parts[name]
        if mistakes:
            grad = {name: value / mistakes for name, value in grad.items()}
        return grad, mistakes

    def quality(self, ratio: dict[str, float]) -> tuple[float, float]:
        """Returns the used hits' mean reciprocal rank, and share in the top."""
        scores = self.scores(ratio)
        order = sorted(scores, key=lambda i: (-scores[i], i))
        place = {hit: n for n, hit in enumerate(order, start=1)}
        found = [place[u] for u in self.used if u in place]
        mrr = sum(1 / p for p in found) / len(self.used)
        top = sum(p <= _TOP for p in found) / len(self.used)
        return mrr, top


def _rescorer(
    projection: Projection, recall: LoggedRecall, used: set[str], config: RecallConfig
) -> _Rescorer:
    [source] = open_sources(projection, branch=recall.branch)
    ranking = rank(
        projection.searcher(source.view), recall.query, config=config, now=recall.now
    )
    return _Rescorer(
        [_split(hit) for hit in ranking.hits], [h.id for h in recall.hits], used
    )


def _quality(recalls: list[_Rescorer], ratio: dict[str, float]) -> tuple[float, float]:
    each = [r.quality(ratio) for r in recalls]
    return (sum(m for m, _ in each) / len(each), sum(t for _, t in each) / len(each))


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


def _candidate(
    before: Tuning, grad: dict[str, float], size: float, config: RecallConfig
) -> dict[str, float]:
    """Returns the weights one step of ``size`` along ``grad`` gives."""
    largest = max(abs(g) for g in grad.values())
    moved = {
        name: getattr(before, name) * math.exp(size * grad[name] / largest)
        for name in LEARNED
    }
    total = sum(getattr(config, name) for name in LEARNED)
    scale = total / (sum(moved.values()) or total)
    limits = bounds(config)
    return {name: _clamp(moved[name] * scale, *limits[name]) for name in LEARNED}


def _held_out(recalls: list[_Rescorer]) -> tuple[list[_Rescorer], list[_Rescorer]]:
    """Returns the recalls a step learns from and those that check it."""
    if len(recalls) < HOLD_OUT_MIN:
        return recalls, recalls
    last = HOLD_OUT_EVERY - 1
    return (
        [r for n, r in enumerate(recalls) if n % HOLD_OUT_EVERY != last],
        [r for n, r in enumerate(recalls) if n % HOLD_OUT_EVERY == last],
    )


def _step_weights(
    before: Tuning, recalls: list[_Rescorer], config: RecallConfig
) -> tuple[dict[str, float], int, float, float]:
    """Returns the validated weights, the mistakes, and MRR before and after.

    The MRRs are over every recall of the step; the weights are learned
    from some of them and checked on the others (:func:`_held_out`).
    """
    kept = {name: getattr(before, name) for name in LEARNED}
    fit, check = _held_out(recalls)
    grad = dict.fromkeys(LEARNED, 0.0)
    mistakes = 0
    for recall in fit:
        one, count = recall.gradient()
        mistakes += count
        for name in LEARNED:
            grad[name] += one[name]
    active = [name for name in LEARNED if kept[name]]  # a weight of 0 stays 0
    mean = sum(grad[name] for name in active) / max(1, len(active))
    grad = {name: grad[name] - mean if kept[name] else 0.0 for name in LEARNED}
    same = dict.fromkeys(LEARNED, 1.0)
    mrr_all = _quality(recalls, same)[0]
    if not mistakes or not any(grad.values()):
        return kept, mistakes, mrr_all, mrr_all
    mrr, top = _quality(fit, same)
    check_mrr, check_top = _quality(check, same)
    best = (mrr, kept, same)
    for size in STEP_SIZES:
        weights = _candidate(before, grad, LEARNING_RATE * size, config)
        ratio = {n: weights[n] / kept[n] if kept[n] else 1.0 for n in LEARNED}
        new_mrr, new_top = _quality(fit, ratio)
        if new_mrr > best[0] and new_top >= top:
            held_mrr, held_top = _quality(check, ratio)
            better = held_top > check_top if check is not fit else held_mrr > check_mrr
            if better and held_mrr >= check_mrr:
                best = (new_mrr, weights, ratio)
    return best[1], mistakes, mrr_all, _quality(recalls, best[2])[0]


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
    recalls = [
        _rescorer(projection, recall, set(feedback.used), current)
        for recall, feedback in fresh
    ]
    weights, mistakes, mrr_before, mrr_after = _step_weights(before, recalls, config)
    needs = sorted(_needed(recall, set(feedback.used)) for recall, feedback in fresh)
    target = _MARGIN * needs[min(len(needs) - 1, int(0.9 * len(needs)))]
    budget = before.budget + LEARNING_RATE * (target - before.budget)
    after = Tuning(
        at=now,
        reason="learned",
        budget=round(_clamp(budget, *bounds(config)["budget"])),
        feedback=len(fresh),
        mistakes=mistakes,
        learned_until=max(f.at for _, f in fresh),
        mrr_before=round(mrr_before, 4),
        mrr_after=round(mrr_after, 4),
        **weights,
    )
    record_tuning(store_path, agent, after)
    return LearnReport(agent=agent, before=before, after=after)
