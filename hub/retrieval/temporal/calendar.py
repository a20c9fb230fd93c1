"""The types of time a parsed query holds, and calendar arithmetic.

The lowest of the temporal modules: the structs (re-exported by
:mod:`ctx.hub.retrieval.temporal.parse`), the value of a moment in each cyclic
dimension, and date
arithmetic on months, quarters, seasons and holidays (Easter by the Gregorian
computus). No text is parsed here; the policies are in
:mod:`ctx.hub.retrieval.temporal.parse`.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Literal

import msgspec

Precision = Literal["hour", "day", "week", "month", "quarter", "season", "year"]
Dimension = Literal[
    "weekday", "week", "month", "quarter", "monthday", "season", "time_of_day"
]
Direction = Literal["before", "after"]


class Window(msgspec.Struct, frozen=True, kw_only=True):
    """A half-open span of time ``[start, end)`` that a phrase names.

    Attributes:
        start: The first moment in the window.
        end: The first moment after it (``start < end``).
        label: The phrase as written, lowercased.
        precision: The calendar unit the phrase is about; the hub may scale its decay
            by it.
    """

    start: datetime
    end: datetime
    label: str
    precision: Precision

    def contains(self, moment: datetime) -> bool:
        """Returns whether ``moment`` (aware, like the window) lies in the window."""
        return self.start <= moment < self.end


class Cycle(msgspec.Struct, frozen=True, kw_only=True):
    """A recurring constraint, such as every Tuesday or the mornings.

    Attributes:
        dimension: What recurs; :func:`cycle_value` gives a moment's value in it.
        values: The accepted values, sorted.
        label: The phrases as written, lowercased, joined by ", ".
    """

    dimension: Dimension
    values: tuple[int, ...]
    label: str

    def contains(self, moment: datetime) -> bool:
        """Returns whether ``moment`` has one of the accepted values."""
        return cycle_value(self.dimension, moment) in self.values


class Relation(msgspec.Struct, frozen=True, kw_only=True):
    """A time relative to an event the parser cannot date ("before the launch").

    Attributes:
        offset: How far from the event (months as 30 days, years as 365).
        direction: Whether the time lies before or after the event.
        event: The event's words as written ("the launch").
        label: The relation phrase as written, lowercased.
    """

    offset: timedelta
    direction: Direction
    event: str
    label: str


def cycle_value(dimension: Dimension, moment: datetime) -> int:
    """Returns ``moment``'s value in a cyclic dimension, as :class:`Cycle` counts it.

    Args:
        dimension: The dimension (see :mod:`ctx.hub.retrieval.temporal.parse` for the
        values).
        moment: The moment, read in its own timezone.

    Returns:
        The weekday (Monday 0), ISO week, month, quarter, day of the month, season
        (winter 0) or time of day (night 0, morning 1, afternoon 2, evening 3).
    """
    if dimension == "weekday":
        return moment.weekday()
    if dimension == "week":
        return moment.isocalendar().week
    if dimension == "month":
        return moment.month
    if dimension == "quarter":
        return (moment.month - 1) // 3 + 1
    if dimension == "monthday":
        return moment.day
    if dimension == "season":
        return moment.month % 12 // 3
    hour = moment.hour
    return (
        1 if 5 <= hour < 12 else 2 if 12 <= hour < 17 else 3 if 17 <= hour < 22 else 0
    )


def make_window(
    start: datetime, end: datetime, label: str, precision: Precision
) -> Window:
    """Returns the window from ``start`` to ``end``; refuses an empty one."""
    if not start < end:
        raise ValueError("an empty window")
    return Window(start=start, end=end, label=label, precision=precision)


# --- calendar arithmetic ------------------------------------------------------------


UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "quarter": 91}
UNIT_DAYS["year"] = 365


def add_months(day: date, months: int) -> date:
    """Returns ``day`` moved by whole months (kept within the month's last day)."""
    year, month = divmod(day.year * 12 + day.month - 1 + months, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


def month_span(year: int, month: int) -> tuple[date, date]:
    """Returns the first day of a month and of the month after it."""
    start = date(year, month, 1)
    return start, add_months(start, 1)


def _easter(year: int) -> date:
    """Returns Easter Sunday (anonymous Gregorian computus)."""
    a, (b, c) = year % 19, divmod(year, 100)
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    el = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * el) // 451
    month, day = divmod(h + el - 7 * m + 114, 31)
    return date(year, month, day + 1)


Occurrence = Callable[[int], tuple[date, date]]


def fixed(month: int, day: int, days: int = 1) -> Occurrence:
    """Returns the occurrence of a date that falls on the same day each year."""
    return lambda y: (date(y, month, day), date(y, month, day) + timedelta(days))


def _around_easter(first: int, end: int) -> Occurrence:
    return lambda y: (_easter(y) + timedelta(first), _easter(y) + timedelta(end))


def _thanksgiving(year: int) -> tuple[date, date]:
    first = date(year, 11, 1)
    day = first + timedelta((3 - first.weekday()) % 7 + 21)
    return day, day + timedelta(1)


def _new_year(year: int) -> tuple[date, date]:
    return date(year - 1, 12, 31), date(year, 1, 2)


HOLIDAYS: dict[str, Occurrence] = {
    "christmas": fixed(12, 24, 3),
    "christmas eve": fixed(12, 24),
    "christmas day": fixed(12, 25),
    "boxing day": fixed(12, 26),
    "new year": _new_year,
    "new years": _new_year,
    "new years day": fixed(1, 1),
    "new years eve": fixed(12, 31),
    "easter": _around_easter(-2, 2),
    "easter sunday": _around_easter(0, 1),
    "easter monday": _around_easter(1, 2),
    "good friday": _around_easter(-2, -1),
    "thanksgiving": _thanksgiving,
    "halloween": fixed(10, 31),
    "valentines": fixed(2, 14),
    "valentines day": fixed(2, 14),
}
HOLIDAYS["christmastime"] = HOLIDAYS["xmas"] = HOLIDAYS["christmas"]


def season_span(season: int) -> Occurrence:
    """Returns the occurrence of a season (0 winter .. 3 autumn) in a year."""
    if season == 0:
        return lambda y: (date(y - 1, 12, 1), date(y, 3, 1))
    return lambda y: (date(y, 3 * season, 1), date(y, 3 * season + 3, 1))


def shares(span: tuple[date, date], mod: str | None, unit: str) -> tuple[date, date]:
    """Returns the early, mid or late part of a month or a year."""
    if mod is None:
        return span
    part = {"mid": 1, "the middle of": 1, "late": 2, "the end of": 2}.get(mod, 0)
    start = span[0]
    if unit == "year":
        return add_months(start, 4 * part), add_months(start, 4 * part + 4)
    bounds = (start, start.replace(day=11), start.replace(day=21), span[1])
    return bounds[part], bounds[part + 1]


def shift(moment: datetime, amount: int, unit: str) -> datetime:
    """Returns ``moment`` moved by ``amount`` units (hour, day, week, month, ...)."""
    if unit == "hour":
        return moment + timedelta(hours=amount)
    if unit in ("day", "week", "fortnight"):
        return moment + timedelta(days=amount * UNIT_DAYS[unit])
    months = amount * {"month": 1, "quarter": 3, "year": 12}[unit]
    return datetime.combine(add_months(moment.date(), months), moment.timetz())
