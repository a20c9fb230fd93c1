"""Temporal gravity: how close a memory's moments are to the time a query names.

A memory's anchors are its ``created_at`` and the dates its text names,
resolved against that timestamp
(:func:`ctx.hub.retrieval.temporal.parse.extract_dates`).
:func:`closeness` scores them against a parsed query, from 0 (far) to 1:

- Windows ("last week", "in March", "on 8 May 2023"): 1 inside the window,
  then ``exp(-d / scale)`` for an anchor ``d`` away from its nearest edge, where
  ``scale`` is half the window's length and at least half a day: a miss by a
  day matters for "yesterday", much less for "in 2022".
- Cycles ("every Tuesday", "in the mornings", "in the spring"): per dimension a
  Gaussian ``exp(-d^2 / 2)`` of the circular distance ``d`` (in the dimension's
  units: days of the week, months, ...) to the nearest accepted value, so a
  Monday is close to "Tuesdays" and a Friday is not; the dimensions multiply.
- Both together ("every Tuesday in March"): the two scores multiply.

The best anchor counts. A query that names no time gets no gravity at all
(:func:`closeness` is never asked), so it is never reordered by time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from ctx.hub.retrieval.temporal.parse import Cycle, Dimension, Window, cycle_value

__all__ = ["closeness", "window_closeness"]

_PERIOD: dict[Dimension, int] = {
    "weekday": 7,
    "week": 53,
    "month": 12,
    "quarter": 4,
    "monthday": 31,
    "season": 4,
    "time_of_day": 4,
}
_MIN_SCALE = timedelta(hours=12)


def window_closeness(window: Window, moment: datetime) -> float:
    """Returns 1 inside ``window``, decaying with the distance outside it."""
    if window.contains(moment):
        return 1.0
    distance = window.start - moment if moment < window.start else moment - window.end
    scale = max((window.end - window.start) / 2, _MIN_SCALE)
    return math.exp(-(distance / scale))


def _cycle_closeness(cycle: Cycle, moment: datetime) -> float:
    period = _PERIOD[cycle.dimension]
    value = cycle_value(cycle.dimension, moment)
    distance = min(
        min(abs(value - accepted), period - abs(value - accepted))
        for accepted in cycle.values
    )
    return math.exp(-(distance**2) / 2)


def closeness(
    windows: Sequence[Window], cycles: Sequence[Cycle], anchors: Sequence[datetime]
) -> float:
    """Returns how close the best of ``anchors`` is to the windows and cycles.

    Args:
        windows: The windows the query names (any one may hold an anchor).
        cycles: The cyclic constraints (all must hold).
        anchors: The memory's moments, timezone-aware.

    Returns:
        A number in 0..1; 0 when there are no anchors or nothing to be close to.
    """
    if not windows and not cycles:
        return 0.0
    best = 0.0
    for anchor in anchors:
        score = max((window_closeness(w, anchor) for w in windows), default=1.0)
        for cycle in cycles:
            score *= _cycle_closeness(cycle, anchor)
        best = max(best, score)
    return best
