"""The vocabulary and the per-phrase rules of :mod:`ctx.hub.retrieval.temporal.parse`.

Each rule is a handler registered with :func:`_rule` for one or more patterns; it
turns one matched phrase into windows, cycles or the head of a relation, resolved
against a :class:`RuleContext`. Combining the phrases of a text is left to
:mod:`ctx.hub.retrieval.temporal.parse`, whose docstring states the policies.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from ctx.hub.retrieval.temporal.calendar import (
    HOLIDAYS,
    Cycle,
    Direction,
    Occurrence,
    Precision,
    Relation,
    Window,
    add_months,
    fixed,
    make_window,
    month_span,
    season_span,
    shares,
    shift,
)

# --- vocabulary ---------------------------------------------------------------------


def split_words(text: str) -> list[str]:
    """Returns the words of ``text`` (split on white space)."""
    return text.split()


_MONTH_NAMES = split_words(
    "january february march april may june july august september october november"
    " december"
)
_DAY_NAMES = split_words("monday tuesday wednesday thursday friday saturday sunday")
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, 1)} | {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_PLAIN_MONTHS = frozenset(_MONTH_NAMES) - {"march", "april", "may", "june", "august"}
_WEEKDAYS = {name: i for i, name in enumerate(_DAY_NAMES)} | {
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3,
    "thurs": 3, "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
_NUMBERS = {
    word: i
    for i, word in enumerate(
        split_words(
            "zero one two three four five six seven eight nine ten eleven twelve"
            " thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        )
    )
} | {"a": 1, "an": 1, "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3}
_NUMBERS |= {"few": 3, "several": 3, "the": 1}
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3}
_ORDINALS |= {"fourth": 4, "4th": 4}
_UNIT_PRECISION: dict[str, Precision] = {"hour": "hour", "day": "day", "week": "week"}
_UNIT_PRECISION |= {"fortnight": "week", "month": "month", "quarter": "quarter"}
_UNIT_PRECISION["year"] = "year"
_PART_WORDS = {"night": 0, "midnight": 0, "morning": 1, "dawn": 1, "afternoon": 2}
_PART_WORDS |= {"noon": 2, "evening": 3, "dusk": 3}
_PART_HOURS = {"morning": (5, 12), "afternoon": (12, 17), "evening": (17, 22)}
_PART_HOURS["night"] = (17, 29)  # a named day's night: its evening and small hours
_SEASONS = {"winter": 0, "spring": 1, "summer": 2, "autumn": 3, "fall": 3}
_LAST = ("last", "past", "previous", "this past", "the previous")
_NEXT = ("next", "coming", "this coming", "the next", "the following", "the coming")
_RELATIVE = (*_LAST, *_NEXT, "this")

# Words before an ambiguous name that make it a date ("until May", "since 2022").
_CONTEXT = frozenset(
    split_words(
        "in during since until till by before after from of through throughout around"
        " between early mid late last this next every each on"
    )
) | frozenset(_DAY_NAMES)
# Words after "May 8" or "on the 15th" that keep it a date ("May 8 at noon").
_FOLLOW = frozenset(
    split_words(
        "and or but at in on to when where with for from through till until of"
        " during before after"
    )
)


def _alt(words: Sequence[str]) -> str:
    return "|".join(sorted((w.replace(" ", r"\s+") for w in words), key=len)[::-1])


_B = r"(?<!\w)"
_E = r"(?![\w]|-[^\W\d_])"  # not inside a word, nor the head of a hyphen compound
_PREP = rf"(?:{_B}(?P<prep>in|on|during|at|over|around|throughout|for)\s+)?"
_YEAR = r"(?P<year>(?:19|20)[0-9][0-9])(?![0-9])"
_OPT_YEAR = rf"(?:,?\s+(?:of\s+)?{_YEAR})?"
_DAY = r"(?P<day>[0-9][0-9]?)(?P<ord>st|nd|rd|th)?(?![0-9]|:[0-9])"
_MONTH = rf"(?P<month>{_alt(list(_MONTHS))})"
_WD = rf"(?P<wd>{_alt(list(_WEEKDAYS))})"
_WD_FULL = _alt(_DAY_NAMES)
_WD_PREFIX = rf"(?:{_B}(?:{_WD_FULL}),?\s+)?"
_NUM_WORDS = _alt([w for w in _NUMBERS if w != "the"])
_NUM = rf"(?P<num>[0-9]{{1,4}}|{_NUM_WORDS})"
_UNIT = r"(?P<unit>hour|day|week|fortnight|month|quarter|year)s?"
_UNIT_OR_WEEKEND = r"(?P<unit>hour|day|weekend|week|fortnight|month|quarter|year)s?"
_MOD = r"(?:(?P<mod>early|mid|late|the\s+(?:end|beginning|start|middle)\s+of)[\s-]+)?"
_REL = rf"(?:(?P<rel>{_alt(_RELATIVE)})\s+)?"
_PART = r"(?:\s+(?:in\s+the\s+)?(?P<part>morning|afternoon|evening|night))?"
_PARTS = r"(?P<part>morning|afternoon|evening|night)"
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"
_NUMERIC_END = r"(?![\w:/-]|\.[0-9])"
_NUMERIC_START = r"(?<![\w.:/-])"
_HOLIDAY = (
    r"(?P<holiday>christmas\s+eve|christmas\s+day|christmas(?:time)?|xmas|boxing\s+day"
    r"|new\s+year['\u2019]?s['\u2019]?\s+(?:eve|day)|new\s+year['\u2019]?s?"
    r"|easter\s+(?:sunday|monday)"
    r"|good\s+friday|easter(?!\s+eggs?\b)|thanksgiving|halloween"
    r"|valentine['\u2019]?s['\u2019]?(?:\s+day)?)"
)


# Classes of words that rules need: a rule is only tried where one of its keys
# occurs. A whole word (case aside) of a class but "holiday", whose names may
# stand inside a word; "digit" is any digit.
def _key_words() -> dict[str, frozenset[str]]:
    """Returns each key word (casefolded) and its classes."""
    classes = (
        ("month", list(_MONTHS), ("",)),
        ("weekday", list(_WEEKDAYS), ("", "s")),
        (
            "unit",
            split_words("hour day week fortnight month quarter year"),
            ("", "s", "end", "ends", "day", "days"),
        ),
        ("dayword", split_words("today tonight yesterday tomorrow"), ("",)),
        (
            "part",
            split_words("morning afternoon evening night midnight dawn dusk noon"),
            ("", "s"),
        ),
        ("season", split_words("spring summer autumn fall winter"), ("", "s", "time")),
        ("recent", split_words("recently lately late"), ("",)),
    )
    words: dict[str, frozenset[str]] = {}
    for name, stems, tails in classes:
        for word in (stem + tail for stem in stems for tail in tails):
            words[word] = words.get(word, frozenset()) | {name}
    return words


_KEY_WORDS = _key_words()
_HOLIDAY_NAMES = split_words(
    "christmas xmas boxing easter thanksgiving halloween valentine"
)
_HOLIDAY_PAIRS = re.compile(r"new\s+year|good\s+friday")
_WORDS = re.compile(r"\w+")
_DIGIT = re.compile(r"[0-9]")


def key_classes(text: str) -> set[str]:
    """Returns the classes of words that rules need which ``text`` holds.

    A word at a time and a dictionary, not one pattern of every key word
    tried at every character: 160 µs a kilobyte that way, the costliest step
    of reading the dates a long memory names.
    """
    folded = text.casefold()
    found: set[str] = set()
    for word in _KEY_WORDS.keys() & _WORDS.findall(folded):
        found |= _KEY_WORDS[word]
    if _DIGIT.search(folded):
        found.add("digit")
    if any(name in folded for name in _HOLIDAY_NAMES) or (
        ("year" in folded or "friday" in folded) and _HOLIDAY_PAIRS.search(folded)
    ):
        found.add("holiday")
    return found


_WORD_BEFORE = re.compile(r"(\w+)[\s,]*\Z")
_CONTINUES = re.compile(
    rf"(?:{_alt(list(_MONTHS))}|[0-9](?:st|nd|rd|th)?)\s*"
    r"(?:and|to|until|till|through|or|-|\u2013)\s*\Z",
    re.IGNORECASE,
)


# --- which occurrence a name means --------------------------------------------------


def _pick(
    occurrence: Occurrence, today: date, rel: str | None, year: str | None = None
) -> tuple[date, date]:
    """Returns the occurrence that a name means, by the past-leaning policy."""
    if year is not None:
        return occurrence(int(year))
    spans = []
    for y in range(today.year - 8, today.year + 9):  # leap days recur within 8 years
        try:
            spans.append(occurrence(y))
        except ValueError:
            continue
    if rel in _LAST:
        return max(s for s in spans if s[1] <= today)
    if rel in _NEXT:
        return min(s for s in spans if s[0] > today)
    if rel == "this":
        current = [s for s in spans if s[0] <= today < s[1]]
        return current[0] if current else occurrence(today.year)
    return max(s for s in spans if s[0] <= today)


# --- one phrase ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Head:
    """The "two weeks before" of a relation, waiting for its event."""

    amount: int
    unit: str
    direction: Direction


Item = Window | Cycle | Relation | Head


@dataclass(frozen=True, slots=True)
class RuleContext:
    """The text being parsed and the moment it is resolved against."""

    text: str
    now: datetime

    @property
    def today(self) -> date:
        """Returns the day of :attr:`now`."""
        return self.now.date()

    def at(self, day: date, hours: int = 0) -> datetime:
        """Returns ``hours`` after midnight of ``day``, in the zone of :attr:`now`."""
        midnight = datetime.combine(day, time(), tzinfo=self.now.tzinfo)
        return midnight + timedelta(hours=hours)

    def days(self, span: tuple[date, date], label: str, precision: Precision) -> Window:
        """Returns the window of whole days ``span``."""
        return make_window(self.at(span[0]), self.at(span[1]), label, precision)

    def day(self, day: date, label: str, part: str | None = None) -> Window:
        """Returns the window of one day, or of a part of it."""
        if part is None:
            return self.days((day, day + timedelta(1)), label, "day")
        first, end = _PART_HOURS[part]
        return make_window(self.at(day, first), self.at(day, end), label, "hour")

    def unit(self, moment: datetime, unit: str, label: str) -> Window:
        """Returns the calendar unit that contains ``moment``."""
        day = moment.date()
        if unit == "hour":
            start = self.at(day, moment.hour)
            return make_window(start, start + timedelta(hours=1), label, "hour")
        if unit == "day":
            return self.day(day, label)
        if unit in ("week", "fortnight"):
            monday = day - timedelta(day.weekday())
            return self.days((monday, monday + timedelta(7)), label, "week")
        size = {"month": 1, "quarter": 3, "year": 12}[unit]
        first = date(day.year, (day.month - 1) // size * size + 1, 1)
        span = (first, add_months(first, size))
        return self.days(span, label, _UNIT_PRECISION[unit])


def _g(m: re.Match[str], name: str) -> str | None:
    if name not in m.re.groupindex or m.group(name) is None:
        return None
    return " ".join(m.group(name).lower().split())


def _number(m: re.Match[str]) -> int:
    text = _g(m, "num")
    if text is None:
        return 1
    value = int(text) if text.isdigit() else _NUMBERS[text]
    if value > 10_000:
        raise ValueError("too far away")
    return value


def _followed_ok(ctx: RuleContext, end: int) -> bool:
    after = ctx.text[end : end + 40].lstrip()
    if not after or not after[0].isalnum():
        return True
    return after.split(None, 1)[0].lower() in _FOLLOW


def _in_context(m: re.Match[str], ctx: RuleContext) -> bool:
    """Returns whether the word before an ambiguous name makes it a date."""
    before = ctx.text[max(0, m.start() - 40) : m.start()]
    found = _WORD_BEFORE.search(before)
    if found and found.group(1).lower() in _CONTEXT:
        return True
    return bool(_CONTINUES.search(before))


def _month_ok(m: re.Match[str], ctx: RuleContext) -> bool:
    word = _g(m, "month")
    if word in _PLAIN_MONTHS or any(_g(m, g) for g in ("prep", "mod", "year", "ord")):
        return True
    if _in_context(m, ctx):
        return True
    if _g(m, "day") or (_g(m, "rel") and word == "may"):
        return _followed_ok(ctx, m.end())
    return bool(_g(m, "rel"))


def _weekend_of(ctx: RuleContext, weeks: int, label: str) -> Window:
    saturday = ctx.today + timedelta(5 - ctx.today.weekday() + 7 * weeks)
    return ctx.days((saturday, saturday + timedelta(2)), label, "day")


_Handler = Callable[[re.Match[str], RuleContext, str], Sequence[Item] | None]
RULES: list[tuple[str, frozenset[str], _Handler]] = []


@functools.cache
def compiled(pattern: str) -> re.Pattern[str]:
    """Returns a rule's pattern compiled, once, when a text first needs it.

    A rule is tried only where its keys occur, so most texts need few of
    them; compiling all of them at import cost a fresh process ~10 ms.
    """
    return re.compile(pattern, re.IGNORECASE)


def _rule(keys: str, *patterns: str) -> Callable[[_Handler], _Handler]:
    """Registers a handler for phrases that match any of ``patterns``.

    A rule is only tried on text where one of its ``keys`` (classes of
    :func:`key_classes`) occurs; registration order breaks ties between
    equally long phrases.
    """

    def register(handler: _Handler) -> _Handler:
        for pattern in patterns:
            RULES.append((pattern, frozenset(keys.split()), handler))
        return handler

    return register


@_rule(
    "dayword unit",
    rf"{_PREP}{_B}(?P<word>today|tonight|yesterday|tomorrow"
    rf"|(?:the\s+)?day\s+(?:before\s+yesterday|after\s+tomorrow)){_PART}{_E}",
)
def _day_word(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    word = (_g(m, "word") or "").removeprefix("the ")
    offset = {"yesterday": -1, "tomorrow": 1, "day before yesterday": -2}.get(word, 0)
    offset = 2 if word == "day after tomorrow" else offset
    part = _g(m, "part") or ("night" if word == "tonight" else None)
    return [ctx.day(ctx.today + timedelta(offset), label, part)]


@_rule("part", rf"{_B}(?P<rel>this|last)\s+{_PARTS}{_E}")
def _part_of_today(
    m: re.Match[str], ctx: RuleContext, label: str
) -> Sequence[Item] | None:
    part = _g(m, "part") or ""
    if _g(m, "rel") == "this":
        return [ctx.day(ctx.today, label, part)]
    return [ctx.day(ctx.today - timedelta(1), label, part)] if part == "night" else None


@_rule(
    "unit",
    rf"{_B}{_NUM}\s+{_UNIT_OR_WEEKEND}\s+(?:ago|back){_E}",
    rf"{_B}in\s+{_NUM}\s+{_UNIT}(?:['\u2019]s?\s+time)?{_E}",
    rf"{_B}{_NUM}\s+{_UNIT}\s+from\s+now{_E}",
)
def _ago(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    sign = -1 if label.endswith(("ago", "back")) else 1
    unit = _g(m, "unit") or ""
    if unit == "weekend":
        return [_weekend_of(ctx, sign * _number(m), label)]
    return [ctx.unit(shift(ctx.now, sign * _number(m), unit), unit, label)]


@_rule(
    "unit",
    rf"{_PREP}{_B}(?P<rel>last|previous|the\s+previous|this|current|the\s+current"
    rf"|{_alt(_NEXT)})\s+(?P<unit>weekend|week|month|quarter|year){_E}",
    rf"{_PREP}{_B}(?:the\s+)?(?P<unit>weekend|week|month|quarter|year)\s+"
    rf"(?P<rel>before\s+last|after\s+next){_E}",
)
def _period(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    rel, unit = _g(m, "rel") or "", _g(m, "unit") or ""
    step = {"before last": -2, "after next": 2, "this": 0, "current": 0}.get(rel)
    if step is None:
        step = 1 if rel in _NEXT else 0 if rel == "the current" else -1
    if unit == "weekend":
        return [_weekend_of(ctx, step, label)]
    return [ctx.unit(shift(ctx.now, step, unit), unit, label)]


@_rule("unit", rf"{_PREP}{_B}(?:the\s+)?weekend{_E}")
def _weekend(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    return [_weekend_of(ctx, -1 if ctx.today.weekday() < 5 else 0, label)]


@_rule(
    "unit",
    rf"{_B}(?:(?:on|at|over|during)\s+)?(?:the\s+)?(?:weekends|weekdays){_E}",
    rf"{_B}(?:every|each)\s+(?:weekend|weekday){_E}",
)
def _workdays(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    values = (5, 6) if "weekend" in label else (0, 1, 2, 3, 4)
    return [Cycle(dimension="weekday", values=values, label=label)]


@_rule(
    "unit",
    rf"(?:{_B}(?:in|over|during|within|for)\s+)?{_B}(?:(?:the|this)\s+past"
    rf"|the\s+last)\s+(?:{_NUM}\s+)?{_UNIT_OR_WEEKEND}{_E}",
    rf"(?:{_B}(?:in|over|during|within|for)\s+)?{_B}(?:past|last|previous)\s+"
    rf"{_NUM}\s+{_UNIT_OR_WEEKEND}{_E}",
    rf"(?:{_B}(?:in|over|during|within|for)\s+)?{_B}(?P<ahead>(?:the\s+)?(?:next"
    rf"|coming))\s+{_NUM}\s+{_UNIT}{_E}",
)
def _rolling(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item] | None:
    amount, unit, ahead = _number(m), _g(m, "unit") or "", bool(_g(m, "ahead"))
    if unit == "weekend":
        return None if _g(m, "num") else [_weekend_of(ctx, -1, label)]
    far = ctx.unit(shift(ctx.now, amount if ahead else -amount, unit), "hour", label)
    near = ctx.unit(ctx.now, "hour", label)
    if unit == "hour":
        start, end = (near.start, far.end) if ahead else (far.start, near.end)
        return [make_window(start, end, label, "hour")]
    days = (ctx.today, far.start.date()) if ahead else (far.start.date(), ctx.today)
    span = (days[0], days[1] + timedelta(1))
    return [ctx.days(span, label, _UNIT_PRECISION[unit])]


@_rule(
    "recent unit",
    rf"{_B}(?:(?:most\s+)?recently|lately|of\s+late|the\s+other\s+day){_E}",
)
def _recent(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    if label == "the other day":
        return [ctx.days((ctx.today - timedelta(7), ctx.today), label, "day")]
    # A fortnight: "what did we try recently?" reaches back past last week.
    span = (ctx.today - timedelta(14), ctx.today + timedelta(1))
    return [ctx.days(span, label, "day")]


@_rule(
    "unit dayword",
    rf"{_B}(?:earlier|later|so\s+far)\s+(?:this\s+(?P<unit>week|month|quarter|year)"
    rf"|today){_E}",
)
def _earlier(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    whole = ctx.unit(ctx.now, _g(m, "unit") or "day", label)
    if label.startswith("later"):
        return [make_window(ctx.now, whole.end, label, whole.precision)]
    return [make_window(whole.start, ctx.now, label, whole.precision)]


@_rule(
    "month",
    rf"{_PREP}{_B}{_MOD}{_MONTH}(?:\s+of|,)?\s+{_YEAR}{_E}",
    rf"{_PREP}{_B}(?:(?P<rel>{_alt((*_RELATIVE, 'every', 'each'))})\s+)?{_MOD}{_MONTH}"
    rf"{_E}",
)
def _month(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item] | None:
    if not _month_ok(m, ctx):
        return None
    month, rel = _MONTHS[_g(m, "month") or ""], _g(m, "rel")
    if rel in ("every", "each"):
        return [Cycle(dimension="month", values=(month,), label=label)]
    span = _pick(lambda y: month_span(y, month), ctx.today, rel, _g(m, "year"))
    return [ctx.days(shares(span, _g(m, "mod"), "month"), label, "month")]


@_rule(
    "month",
    rf"{_PREP}{_WD_PREFIX}{_B}(?:the\s+)?{_DAY}(?P<of>\s+of)?\s+{_MONTH}"
    rf"(?:,?\s+{_YEAR})?{_PART}{_E}",
    rf"{_PREP}{_WD_PREFIX}{_B}{_MONTH}\s+(?:the\s+)?{_DAY}(?:,?\s+{_YEAR})?{_PART}{_E}",
)
def _day_month(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item] | None:
    if not _month_ok(m, ctx):
        return None
    month, day = _MONTHS[_g(m, "month") or ""], int(m["day"])
    start, _ = _pick(fixed(month, day), ctx.today, None, _g(m, "year"))
    return [ctx.day(start, label, _g(m, "part"))]


@_rule(
    "digit",
    rf"{_PREP}{_NUMERIC_START}{_YEAR}(?P<sep>[-/])(?P<a>[0-9][0-9]?)(?P=sep)"
    r"(?P<b>[0-9][0-9]?)(?:[T\s](?P<hour>[0-9][0-9]):[0-9][0-9]"
    r"(?::[0-9][0-9](?:\.[0-9]+)?)?(?:Z|[+-][0-9][0-9]:?[0-9][0-9])?)?"
    rf"{_NUMERIC_END}",
    rf"{_PREP}{_NUMERIC_START}(?P<a>[0-9][0-9]?)(?P<dot>[/.])(?P<b>[0-9][0-9]?)"
    rf"(?P=dot){_YEAR}{_NUMERIC_END}",
    rf"{_PREP}{_NUMERIC_START}{_YEAR}-(?P<a>0[1-9]|1[0-2]){_NUMERIC_END}",
)
def _numeric_date(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    year, first, second = int(m["year"]), int(m["a"]), int(_g(m, "b") or 0)
    if "b" not in m.re.groupindex:  # year and month: 2023-05
        return [ctx.days(month_span(year, first), label, "month")]
    if "sep" in m.re.groupindex:  # year first: always year, month, day
        day = date(year, first, second)
    else:
        try:
            day = date(year, second, first)  # day first: 8/5/2023 is 8 May
        except ValueError:
            day = date(year, first, second)
    if _g(m, "hour") is None:
        return [ctx.day(day, label)]
    hour = int(m["hour"])
    if hour > 23:
        raise ValueError("no such hour")
    return [make_window(ctx.at(day, hour), ctx.at(day, hour + 1), label, "hour")]


@_rule(
    "digit",
    rf"{_PREP}{_NUMERIC_START}{_YEAR}-?w(?P<week>[0-9][0-9]){_E}",
    rf"{_PREP}{_B}(?:week|wk)\s*(?P<week>[0-9][0-9]?)(?![0-9]){_OPT_YEAR}"
    rf"(?!\s+of\s+(?!(?:19|20)[0-9][0-9])){_E}",
    rf"{_B}(?P<every>every|each)\s+week\s+(?P<week>[0-9][0-9]?){_E}",
)
def _week_number(
    m: re.Match[str], ctx: RuleContext, label: str
) -> Sequence[Item] | None:
    week, year = int(m["week"]), _g(m, "year")
    if _g(m, "every"):
        if not 1 <= week <= 53:
            return None
        return [Cycle(dimension="week", values=(week,), label=label)]
    if year is None and _g(m, "prep") not in ("in", "during"):
        return None

    def occurrence(y: int) -> tuple[date, date]:
        monday = date.fromisocalendar(y, week, 1)
        return monday, monday + timedelta(7)

    return [ctx.days(_pick(occurrence, ctx.today, None, year), label, "week")]


@_rule("digit", rf"{_PREP}{_B}{_MOD}(?P<the>the\s+year\s+)?{_YEAR}(?![\w]|-[0-9])")
def _year(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item] | None:
    if not (_g(m, "prep") or _g(m, "mod") or _g(m, "the")) and not _in_context(m, ctx):
        return None
    year = int(m["year"])
    span = shares((date(year, 1, 1), date(year + 1, 1, 1)), _g(m, "mod"), "year")
    return [ctx.days(span, label, "year")]


@_rule(
    "digit unit",
    rf"{_PREP}{_B}(?:(?P<rel>last|this|next|every|each)\s+)?q(?P<q>[1-4]){_OPT_YEAR}{_E}",
    rf"{_PREP}{_NUMERIC_START}{_YEAR}\s*-?\s*q(?P<q>[1-4]){_E}",
    rf"{_PREP}{_B}(?:the\s+)?(?P<q>{_alt(list(_ORDINALS))})\s+quarter\s+of\s+{_YEAR}{_E}",
)
def _quarter(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item] | None:
    rel, year, text = _g(m, "rel"), _g(m, "year"), _g(m, "q") or ""
    quarter = int(text) if text.isdigit() else _ORDINALS[text]
    if rel in ("every", "each"):
        return [Cycle(dimension="quarter", values=(quarter,), label=label)]
    if not (rel or year or _g(m, "prep")) and not _in_context(m, ctx):
        return None
    first = 3 * quarter - 2

    def occurrence(y: int) -> tuple[date, date]:
        return date(y, first, 1), add_months(date(y, first, 1), 3)

    return [ctx.days(_pick(occurrence, ctx.today, rel, year), label, "quarter")]


@_rule(
    "season",
    rf"{_PREP}{_B}(?P<rel>{_alt(_RELATIVE)})\s+{_SEASON}{_E}",
    rf"{_PREP}{_B}(?:the\s+)?{_SEASON}\s+(?:of\s+)?{_YEAR}{_E}",
)
def _season_window(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    occurrence = season_span(_SEASONS[_g(m, "season") or ""])
    span = _pick(occurrence, ctx.today, _g(m, "rel"), _g(m, "year"))
    return [ctx.days(span, label, "season")]


@_rule(
    "season",
    rf"{_B}(?:in|during|over|through|throughout|every|each)\s+(?:the\s+)?{_SEASON}"
    rf"(?:s|time)?{_E}",
)
def _season_cycle(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    value = _SEASONS[_g(m, "season") or ""]
    return [Cycle(dimension="season", values=(value,), label=label)]


@_rule("weekday", rf"{_PREP}{_B}{_REL}{_WD}{_PART}{_E}")
def _weekday(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item] | None:
    word, rel, today = _g(m, "wd") or "", _g(m, "rel"), ctx.today
    if word not in _DAY_NAMES and not (
        rel or _g(m, "prep") == "on" or _in_context(m, ctx)
    ):
        return None
    behind = (today.weekday() - _WEEKDAYS[word]) % 7
    if rel in _LAST:
        day = today - timedelta(behind or 7)
    elif rel in _NEXT:
        day = today + timedelta(7 - behind)
    elif rel == "this":
        day = today + timedelta(_WEEKDAYS[word] - today.weekday())
    else:
        day = today - timedelta(behind)
    return [ctx.day(day, label, _g(m, "part"))]


_WD_AND = r"\s*(?:,|and|or|&)\s*"


@_rule(
    "weekday",
    rf"{_B}(?:every|each)\s+(?:{_WD_FULL})(?:{_WD_AND}(?:every\s+)?(?:{_WD_FULL}))*"
    rf"(?:\s+{_PARTS}s?)?{_E}",
    rf"(?:{_B}(?:on|during)\s+)?{_B}(?:{_WD_FULL})s(?:{_WD_AND}(?:{_WD_FULL})s)*"
    rf"(?:\s+{_PARTS}s)?{_E}",
    rf"(?:{_B}(?:on|during)\s+)?{_B}(?:{_WD_FULL})(?:{_WD_AND}(?:{_WD_FULL}))*\s+"
    rf"{_PARTS}s{_E}",
)
def _weekday_cycle(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    values = tuple(sorted({_WEEKDAYS[n] for n in re.findall(_WD_FULL, label)}))
    items: list[Item] = [Cycle(dimension="weekday", values=values, label=label)]
    part = _g(m, "part")
    if part:
        value = _PART_WORDS[part]
        items.append(Cycle(dimension="time_of_day", values=(value,), label=label))
    return items


@_rule("holiday", rf"{_PREP}{_B}{_REL}{_HOLIDAY}{_OPT_YEAR}{_E}")
def _holiday(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    name = re.sub(r"['\u2019]", " ", _g(m, "holiday") or "")
    name = " ".join(name.replace("year s", "years").replace("ine s", "ines").split())
    span = _pick(HOLIDAYS[name], ctx.today, _g(m, "rel"), _g(m, "year"))
    return [ctx.days(span, label, "day")]


@_rule(
    "unit",
    rf"{_B}(?P<num>[0-9]{{1,4}}|{_NUM_WORDS}|the)\s+{_UNIT}\s+"
    rf"(?P<dir>before|after|prior\s+to){_E}",
)
def _head(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    direction: Direction = "after" if _g(m, "dir") == "after" else "before"
    return [Head(amount=_number(m), unit=_g(m, "unit") or "", direction=direction)]


@_rule(
    "part",
    rf"{_B}(?:(?:early|late)\s+)?(?:in|during)\s+the\s+{_PARTS}s?{_E}",
    rf"{_B}(?:(?:early|late)\s+)?at\s+(?P<part>night|midnight|dawn|dusk|noon){_E}",
    rf"{_B}(?:every|each)\s+{_PARTS}{_E}",
    rf"{_B}(?:(?:in|during)\s+)?(?:the\s+)?(?P<part>mornings|afternoons|evenings){_E}",
)
def _part_cycle(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    value = _PART_WORDS[(_g(m, "part") or "").removesuffix("s")]
    return [Cycle(dimension="time_of_day", values=(value,), label=label)]


_NTH_DAY = r"(?P<day>[0-9][0-9]?(?=st|nd|rd|th)|first)(?:st|nd|rd|th)?"


@_rule(
    "digit unit",
    rf"{_B}(?:(?P<on>on)\s+)?the\s+{_NTH_DAY}"
    rf"(?P<of>\s+of\s+(?:every|each|the)\s+month)?{_E}",
    rf"{_B}(?P<every>every|each)\s+{_NTH_DAY}(?:\s+of\s+the\s+month)?{_E}",
)
def _monthday(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item] | None:
    day = 1 if _g(m, "day") == "first" else int(m["day"])
    if not 1 <= day <= 31:
        return None
    if not (_g(m, "of") or _g(m, "every")) and not (
        _g(m, "on") and _followed_ok(ctx, m.end())
    ):
        return None
    return [Cycle(dimension="monthday", values=(day,), label=label)]


@_rule(
    "month",
    rf"{_PREP}{_B}(?:the\s+)?(?P<nth>{_alt((*_ORDINALS, 'last'))})\s+week\s+of\s+"
    rf"(?:(?P<rel>last|this|next)\s+)?{_MONTH}{_OPT_YEAR}{_E}",
)
def _nth_week(m: re.Match[str], ctx: RuleContext, label: str) -> Sequence[Item]:
    month, nth, year = _MONTHS[_g(m, "month") or ""], _g(m, "nth") or "", _g(m, "year")
    start, end = _pick(lambda y: month_span(y, month), ctx.today, _g(m, "rel"), year)
    if nth != "last":
        end = start + timedelta(7 * _ORDINALS[nth])
    return [ctx.days((end - timedelta(7), end), label, "week")]
