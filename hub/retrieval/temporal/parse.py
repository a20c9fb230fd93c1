"""Deterministic parsing of the time that queries and memories name.

Recall turns the temporal phrases of a query ("yesterday", "last week", "in March",
"every Tuesday", "two weeks before the launch") into data: half-open windows, cyclic
constraints, point anchors and unresolved relations, plus the query with those phrases
removed. Memories get anchors the same way from their own text, resolved against their
own timestamp (:func:`extract_dates`). Nothing here reads the clock: ``now`` is always
passed in, every datetime returned carries ``now``'s ``tzinfo`` (pass an aware one),
and days begin at midnight in that zone. All matching is case-insensitive.

Policies:

- Weeks are ISO weeks (Monday to Sunday); a weekend is the Saturday and Sunday of its
  ISO week. "last/this/next week|month|quarter|year|weekend" are the previous, current
  and following calendar periods; "the week before last" and "the week after next" go
  two periods back or forward.
- Past-leaning names: a month, day of a month, quarter, ISO week, holiday or weekday
  named without a year or last/this/next ("in March", "8 May", "in Q3", "at Christmas",
  "on Tuesday", "the weekend") is its most recent occurrence that has begun, today
  included. With "last" it is the most recent one that has ended (for a weekday: the
  most recent before today), with "next" the first one that begins after today, with
  "this" the one under way, else the one in the current year (for a weekday: the one in
  the current ISO week).
- "N units ago" and "in N units" are the calendar unit (hour, day, week, weekend,
  month, quarter, year) that contains ``now`` shifted by N units. "the past/last N
  units" is rolling, rounded out to whole days: from the midnight before ``now`` minus
  N units to the end of today (to the end of this hour for hours); "the next N units"
  runs from the start of today to the end of the day that ``now`` plus N units falls
  in. "recently"/"lately" are the past 14 days; "the other day" is the 7 days before
  today; "earlier this week" runs from the start of the week to ``now``, "later this
  week" from ``now`` to its end.
- Numbers are digits or words up to twenty; "a"/"an" are 1, "a couple (of)" is 2,
  "a few" and "several" are 3. A fortnight is two weeks.
- Seasons are meteorological, northern hemisphere: winter December to February (named
  by the year of its January: "winter 2023" begins in December 2022), spring March to
  May, summer June to August, autumn (or fall) September to November. With
  last/this/next or a year a season is a window; otherwise ("in the spring") a cycle.
  "early/mid/late" split a month into days 1-10, 11-20 and 21 to the end, and a year
  into January-April, May-August and September-December.
- Not parsed: clock times ("at 3pm"), decades, and vague spans ("a while ago").
- Times of day: 0 night (22:00-05:00), 1 morning (05:00-12:00), 2 afternoon
  (12:00-17:00), 3 evening (17:00-22:00). "in the mornings" is a cycle; "yesterday
  morning" or "this evening" a window of those hours, where a named day's "night"
  ("tonight", "last night", "Friday night") runs from 17:00 to 05:00 the next day.
- Cycles, otherwise: "every Tuesday", "on Tuesdays", "on weekends" (weekday 0-6,
  Monday 0), "every March" (month 1-12), "every Q3" (quarter 1-4), "on the 15th"
  (monthday), "every week 20" (ISO week). Cycles of one dimension are merged.
- Quarters: "Q3", "2022-Q3", "the third quarter of 2022" (an ordinal quarter needs
  its year: "in the 4th quarter" of a game is not a date).
- Holidays: Christmas is 24-26 December (Eve, Day and Boxing Day alone are one day),
  New Year is 31 December and 1 January, Easter is Good Friday to Easter Monday (by
  the Gregorian computus), Thanksgiving the fourth Thursday of November (US),
  Halloween 31 October, Valentine's Day 14 February.
- Dates: ISO "2023-05-08" (a time after it narrows to the hour; a zone offset is
  ignored), "2023-05", "2023-W19"; named months in any order ("8 May 2023", "May 8th",
  "the 8th of May"). Slashed or dotted dates need a four-digit year and are read day
  first ("8/5/2023" is 8 May) unless only the month-first reading is a valid date.
- Ambiguous words are temporal only in date-like context: "may", "march", "april",
  "june", "august" and month or weekday abbreviations need a preposition ("in May"),
  last/this/next, early/mid/late, a day or a year next to them; "may" with only
  last/this/next must also be followed by punctuation, the end or a preposition ("this
  may be" is not a date). A bare year needs a preposition ("in 2022", "since 2022").
  Names never match inside words ("mayday", "marching") nor as the first part of a
  hyphenated compound ("sunday-school", "march-madness"); "mid-March" does match.
- Relations: "<duration> before|after <event>" resolves to a window when the event is
  itself a date ("two weeks before 8 May 2023" is 24 April 2023); otherwise it is kept
  as a :class:`Relation` (months count as 30 days and years as 365 there) whose event
  words stay in ``rest`` for the lexical channels. "since X" runs from the start of X
  to the end of today; "between X and Y" and "from X to Y" from the start of X to the
  end of Y.
- Overlapping phrases resolve leftmost-longest; a phrase that would name an impossible
  date (31 February, a year past 9999) is not a temporal phrase. In ``rest`` a
  connective left alone between two removed phrases ("yesterday, and last Friday")
  goes with them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import msgspec

from ctx.hub.retrieval.temporal.calendar import (
    UNIT_DAYS,
    Cycle,
    Dimension,
    Direction,
    Precision,
    Relation,
    Window,
    cycle_value,
    make_window,
    shift,
)
from ctx.hub.retrieval.temporal.rules import (
    RULES,
    Head,
    Item,
    RuleContext,
    compiled,
    key_classes,
    split_words,
)

__all__ = [
    "Cycle",
    "Dimension",
    "Direction",
    "Precision",
    "Relation",
    "TemporalQuery",
    "Window",
    "cycle_value",
    "extract_dates",
    "extract_windows",
    "moment_of",
    "parse_temporal",
]


class TemporalQuery(msgspec.Struct, frozen=True, kw_only=True):
    """What :func:`parse_temporal` found in a query.

    Attributes:
        windows: Windows named, in the order of the text.
        cycles: Cyclic constraints, one per dimension, in order of first mention.
        relations: Times relative to events that could not be dated.
        anchors: The start of each window of a day or finer: the point dates named.
        rest: The query without its temporal phrases, for the lexical channels.
        spans: The ``(start, end)`` offsets of each recognised phrase in the query.
    """

    windows: tuple[Window, ...] = ()
    cycles: tuple[Cycle, ...] = ()
    relations: tuple[Relation, ...] = ()
    anchors: tuple[datetime, ...] = ()
    rest: str = ""
    spans: tuple[tuple[int, int], ...] = ()

    @property
    def has_time(self) -> bool:
        """Whether the query names any time (a window, a cycle or a relation)."""
        return bool(self.windows or self.cycles or self.relations)


# --- the whole text -----------------------------------------------------------------


_COARSENESS = ("hour", "day", "week", "month", "quarter", "season", "year")
_EVENT_STOP = frozenset(
    split_words(
        "and or but when where what which who why how did do does was were is are"
        " we i you they he she it that so then because while if"
    )
)
_RANGE_GAP = re.compile(r"\s*(and|to|until|till|through|-|\u2013)\s*", re.IGNORECASE)
_RANGE_OPEN = re.compile(r"(?<!\w)(between|from)\s+\Z", re.IGNORECASE)
_SEAM = re.compile(r"[\s,;&]*(?:(?:and|or)[\s,;]*)?", re.IGNORECASE)
_SINCE = re.compile(r"(?<!\w)since\s+\Z", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Found:
    """A recognised phrase: its offsets and what it names."""

    start: int
    end: int
    items: tuple[Item, ...]

    @property
    def window(self) -> Window | None:
        first = self.items[0]
        return first if len(self.items) == 1 and isinstance(first, Window) else None


def _scan(ctx: RuleContext) -> list[_Found]:
    """Returns the phrases found, leftmost-longest, in the order of the text."""
    candidates: list[tuple[int, int, int, _Found]] = []
    present = key_classes(ctx.text)
    for order, (pattern, keys, handler) in enumerate(RULES):
        if keys.isdisjoint(present):
            continue
        for m in compiled(pattern).finditer(ctx.text):
            label = " ".join(m.group().lower().split())
            try:
                items = handler(m, ctx, label)
            except (ValueError, OverflowError):  # an impossible date is no date
                continue
            if items:
                found = _Found(m.start(), m.end(), tuple(items))
                candidates.append((m.start() - m.end(), m.start(), order, found))
    candidates.sort(key=lambda c: c[:3])
    taken = bytearray(len(ctx.text))
    chosen = []
    for *_, found in candidates:
        if not any(taken[found.start : found.end]):
            taken[found.start : found.end] = b"\1" * (found.end - found.start)
            chosen.append(found)
    return sorted(chosen, key=lambda f: f.start)


def _label(ctx: RuleContext, start: int, end: int) -> str:
    return " ".join(ctx.text[start:end].lower().split())


def _resolve(
    head: Head, f: _Found, nxt: _Found | None, ctx: RuleContext
) -> _Found | None:
    """Returns "two weeks before 8 May" as a window, when the event is a date."""
    event = nxt.window if nxt else None
    if nxt is None or event is None or ctx.text[f.end : nxt.start].strip():
        return None
    amount = head.amount if head.direction == "after" else -head.amount
    try:
        start, end = (shift(t, amount, head.unit) for t in (event.start, event.end))
        shifted = make_window(
            start, end, _label(ctx, f.start, nxt.end), event.precision
        )
    except (ValueError, OverflowError):
        return None
    return _Found(f.start, nxt.end, (shifted,))


def _relation(
    head: Head, f: _Found, nxt: _Found | None, ctx: RuleContext
) -> _Found | None:
    """Returns "two weeks before the launch" as a relation to an undated event."""
    words: list[str] = []
    for token in ctx.text[f.end : nxt.start if nxt else len(ctx.text)].split():
        word = token.strip(".,;:!?()[]\"'\u201c\u201d\u2018\u2019")
        if not word or word.lower() in _EVENT_STOP or not word[0].isalnum():
            break
        words.append(word)
        if len(words) == 6 or not token.endswith(word[-1]):
            break
    if not words:
        return None
    days = UNIT_DAYS.get(head.unit, 0) * head.amount
    offset = timedelta(days=days, hours=head.amount * (head.unit == "hour"))
    relation = Relation(
        offset=offset,
        direction=head.direction,
        event=" ".join(words),
        label=_label(ctx, f.start, f.end),
    )
    return _Found(f.start, f.end, (relation,))


def _range(f: _Found, nxt: _Found | None, ctx: RuleContext) -> _Found | None:
    """Returns "between March and May" or "from 8 to 12 May" as one window."""
    first, last = f.window, nxt.window if nxt else None
    if nxt is None or first is None or last is None or first.start >= last.end:
        return None
    gap = _RANGE_GAP.fullmatch(ctx.text, f.end, nxt.start)
    opening = _RANGE_OPEN.search(ctx.text[max(0, f.start - 20) : f.start])
    if gap is None or (gap.group(1).lower() == "and") != bool(
        opening and opening.group(1).lower() == "between"
    ):
        return None
    start = f.start - (len(opening.group()) if opening else 0)
    precision = max(first.precision, last.precision, key=_COARSENESS.index)
    label = _label(ctx, start, nxt.end)
    return _Found(
        start, nxt.end, (make_window(first.start, last.end, label, precision),)
    )


def _since(f: _Found, ctx: RuleContext) -> _Found:
    """Returns "since March" as a window from March to the end of today."""
    window, opening = f.window, _SINCE.search(ctx.text[max(0, f.start - 10) : f.start])
    if window is None or opening is None:
        return f
    start = f.start - len(opening.group())
    try:
        end = max(window.end, ctx.at(ctx.today + timedelta(1)))
    except OverflowError:
        return f
    since = make_window(window.start, end, _label(ctx, start, f.end), window.precision)
    return _Found(start, f.end, (since,))


def _combine(found: list[_Found], ctx: RuleContext) -> list[_Found]:
    """Joins relations to their events, ranges to their ends, and "since" phrases."""
    out: list[_Found] = []
    i = 0
    while i < len(found):
        f, nxt = found[i], found[i + 1] if i + 1 < len(found) else None
        head = f.items[0]
        if isinstance(head, Head):
            resolved = _resolve(head, f, nxt, ctx)
            relation = resolved or _relation(head, f, nxt, ctx)
            out.extend([relation] if relation else [])
            i += 2 if resolved else 1
            continue
        joined = _range(f, nxt, ctx)
        out.append(_since(joined or f, ctx))
        i += 2 if joined else 1
    return out


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """Returns ``text`` with the spans cut out and the seams tidied."""
    pieces = [text[: spans[0][0]] if spans else text]
    pieces += [text[a[1] : b[0]] for a, b in itertools.pairwise(spans)]
    pieces += [text[spans[-1][1] :]] if spans else []
    rest = pieces[0].strip()
    for i, piece in enumerate(pieces[1:], 1):
        # "yesterday, and last Friday" leaves only a connective: drop it
        piece = "" if i < len(pieces) - 1 and _SEAM.fullmatch(piece) else piece.strip()
        if not rest:
            rest = piece.lstrip(",;:").strip()
        elif piece:
            rest += ("" if piece[0] in ",.;:!?)" else " ") + piece
    return rest


def _parse(text: str, now: datetime) -> list[_Found]:
    ctx = RuleContext(text, now)
    found = _combine(_scan(ctx), ctx)
    for i, f in enumerate(found):
        if (
            text.startswith(("'s", "\u2019s"), f.end)
            and not text[f.end + 2 : f.end + 3].isalnum()
        ):
            found[i] = _Found(f.start, f.end + 2, f.items)
    return found


def parse_temporal(query: str, now: datetime) -> TemporalQuery:
    """Returns the time a query names, resolved against ``now``.

    Args:
        query: The query as the user wrote it.
        now: The moment the query is asked (timezone-aware); never read from a clock.

    Returns:
        The windows, cycles and relations found, the anchors they name, the offsets
        of each phrase, and the query without them. A query that names no time gives
        an empty result whose ``rest`` is the query stripped.
    """
    found = _parse(query, now)
    items = [item for f in found for item in f.items]
    windows = tuple(i for i in items if isinstance(i, Window))
    merged: dict[Dimension, tuple[set[int], list[str]]] = {}
    for cycle in (i for i in items if isinstance(i, Cycle)):
        values, labels = merged.setdefault(cycle.dimension, (set(), []))
        values.update(cycle.values)
        labels.extend([cycle.label] if cycle.label not in labels else [])
    spans = tuple((f.start, f.end) for f in found)
    return TemporalQuery(
        windows=windows,
        cycles=tuple(
            Cycle(dimension=d, values=tuple(sorted(v)), label=", ".join(labels))
            for d, (v, labels) in merged.items()
        ),
        relations=tuple(i for i in items if isinstance(i, Relation)),
        anchors=tuple(w.start for w in windows if w.precision in ("hour", "day")),
        rest=_without(query, spans) if spans else query.strip(),
        spans=spans,
    )


def moment_of(text: str, now: datetime) -> datetime | None:
    """Returns the moment a phrase names by itself, or None if it names none.

    ``now`` is ``now``; a phrase that is wholly one window ("yesterday",
    "last Tuesday", "2 weeks ago", "in March") names the window's start.
    Anything else (words besides the phrase, a cycle such as "every Monday",
    several windows) names no moment.
    """
    if text.strip().lower() == "now":
        return now
    found = parse_temporal(text, now)
    if found.rest or found.cycles or found.relations or len(found.windows) != 1:
        return None
    return found.windows[0].start


def extract_windows(text: str, reference: datetime) -> tuple[Window, ...]:
    """Returns the windows a memory's text names, resolved against its timestamp.

    "yesterday" in a memory written on 8 May 2023 is 7 May 2023, by the same rules
    as :func:`parse_temporal` with ``now=reference``.

    Args:
        text: The memory's text.
        reference: When the memory was written (timezone-aware).

    Returns:
        The windows, in the order of the text.
    """
    return parse_temporal(text, reference).windows


def extract_dates(text: str, reference: datetime) -> tuple[datetime, ...]:
    """Returns the dates a memory's text names, resolved against its timestamp.

    Each date is the start of a window from :func:`extract_windows`: "yesterday"
    written on 8 May 2023 gives 2023-05-07 00:00, "last month" 2023-04-01, "in 2022"
    2022-01-01. Windows that contain ``reference`` itself ("today", "this week",
    "lately", "in 2023") give none: the memory's own timestamp already anchors it
    there. Duplicates are dropped.

    Args:
        text: The memory's text.
        reference: When the memory was written (timezone-aware).

    Returns:
        The dates, in the order of the text.
    """
    windows = extract_windows(text, reference)
    return tuple(dict.fromkeys(w.start for w in windows if not w.contains(reference)))
