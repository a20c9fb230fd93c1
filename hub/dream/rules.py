"""The rules Dream judges a pair of memories by, and one memory alone.

A pair (an examined memory and one of its neighbours in the indexes) is, in
this order, the first that matches:

1. a **duplicate**: the same text once normalised (case, spacing and
   punctuation ignored), or vectors and words both nearly the same (cosine
   at least :attr:`Thresholds.duplicate_cosine` and word overlap at least
   :attr:`Thresholds.duplicate_words`, with no content word on one side
   only but filler words, and no negation on one side only). The newest is
   kept; it supersedes the others.
2. an **update**: the same kind and title with another body, or the same
   subject with a changed value (a word, number or negation only one side
   has) and a date at least :attr:`Thresholds.newer_gap` later. The same
   subject: cosine and overlap of content words above the ``subject``
   thresholds, or most content words shared (the ``update`` thresholds: a
   new name or number moves the vector, not the words). The newer
   supersedes the older.
3. a **contradiction**: the same subject (the ``subject`` thresholds), one
   side negated and the other not, with neither clearly newer: a
   CONTRADICTS link.
4. nothing, when the pair came within :attr:`Thresholds.near_miss` of the
   same-subject thresholds: nearly one memory twice is no evidence of a
   relation, and a link would only crowd recall's expansion.
5. a **link**: DEPENDS_ON when one says it needs the other ("depends on",
   "requires", "uses", ... followed by a name the other holds); RELATES_TO
   for neighbours (cosine at least :attr:`Thresholds.entity_cosine`) that
   name the same *rare* entity (a capitalised name, an identifier, a tag's
   value, held by few memories of the store: ``rare``), or for strong
   neighbours (:attr:`Thresholds.link_cosine`) that carry the same tag
   (``speaker:``, ``project:``: the same subject; tier and ``recurs:`` tags
   aside) and were written at least :attr:`Thresholds.newer_gap` apart.
   Being near neighbours is not enough by itself: on LoCoMo the nearest
   turn of another conversation is about the same kind of thing in other
   people's lives, and the nearest turn of the same sitting is most often
   the other half of one exchange, which a link adds nothing to.

One memory alone may be a **recurrence** (the temporal parser finds a
cycle: every Monday, on the 1st of every month; or it says weekly, daily,
each quarter) or a **tier** change (working memories untouched for
:attr:`Thresholds.stale_days` go off-context; memories agents were given in
at least :attr:`Thresholds.reference_sessions` hook sessions become
reference).

The thresholds were measured on LoCoMo by ``benchmarks/bench_dream.py``
(results in ``benchmarks/results/dream.md``) with the default embedder.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from ctx.engine import Memory

__all__ = [
    "Judgement",
    "Thresholds",
    "entities",
    "judge_pair",
    "negated",
    "normalise",
    "overlap",
    "recurrence",
    "stale",
    "words",
]

_WORD_RE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?", re.UNICODE)
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|cannot|no longer|"
    r"[a-z]+n['\u2019]t|stopped|quit|without)\b",
    re.IGNORECASE,
)
_NAME_RE = re.compile(r"\b(?:[A-Z][\w-]*[A-Za-z0-9]|[a-z]+_[a-z0-9_]+|[a-z]+\.[a-z]+)")
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?]\s+|\n)\s*([A-Z][\w-]*)")
_NEEDS_RE = re.compile(
    r"\b(?:depends on|depend on|requires?|needs?|uses|built on|relies on|"
    r"because of|blocked by)\s+(?:the\s+|a\s+|an\s+)?([\w.-]+)",
    re.IGNORECASE,
)
_EVERY_RE = re.compile(
    r"\b(?:(?:every|each)\s+(day|week|month|quarter|year)|"
    r"(daily|weekly|monthly|quarterly|yearly|annually|nightly))\b",
    re.IGNORECASE,
)
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "they",
        "this",
        "to",
        "too",
        "up",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
_CALENDAR = frozenset(
    [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "today",
        "yesterday",
        "tomorrow",
    ]
)
_STATE_TAGS = frozenset(("tier", "recurs"))
_FILLERS = frozenset(
    ("really", "so", "just", "actually", "very", "totally", "definitely", "quite")
)
_UNIT_PERIOD = {
    "day": "daily",
    "night": "daily",
    "week": "weekly",
    "month": "monthly",
    "quarter": "quarterly",
    "year": "yearly",
    "nightly": "daily",
    "annually": "yearly",
}
_DIMENSION_PERIOD = {
    "weekday": "weekly",
    "time_of_day": "daily",
    "monthday": "monthly",
    "week": "yearly",
    "month": "yearly",
    "quarter": "yearly",
    "season": "yearly",
}


@dataclass(frozen=True)
class Thresholds:
    """The cut-offs of the rules (see the module docstring)."""

    duplicate_cosine: float = 0.9
    duplicate_words: float = 0.7
    subject_cosine: float = 0.75
    subject_words: float = 0.4
    entity_cosine: float = 0.45
    link_cosine: float = 0.5
    update_cosine: float = 0.6
    update_words: float = 0.6
    near_miss: float = 0.1
    newer_gap: timedelta = timedelta(hours=12)
    stale_days: int = 180
    reference_sessions: int = 5


@dataclass(frozen=True)
class Judgement:
    """What a pair is, by the rules.

    Attributes:
        kind: duplicate, update, contradiction or link.
        link: The link type to add.
        source: The memory the link goes from.
        target: The memory it goes to.
        confidence: How sure the rule is, 0..1.
        reason: The evidence, one line.
    """

    kind: str
    link: str
    source: str
    target: str
    confidence: float
    reason: str


def normalise(text: str) -> str:
    """Returns ``text`` lower-cased, accents folded, punctuation and spacing gone."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    return " ".join(_WORD_RE.findall(folded))


def words(text: str) -> frozenset[str]:
    """Returns the distinct lower-case words of ``text``."""
    return frozenset(_WORD_RE.findall(text.casefold()))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Returns the Jaccard overlap of two word sets (0 when both are empty)."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def negated(text: str) -> bool:
    """Returns whether ``text`` holds a negation (not, never, no longer, ...)."""
    return _NEGATION_RE.search(text) is not None


def entities(memory: Memory) -> frozenset[str]:
    """Returns the names a memory mentions, lower-cased.

    Capitalised words that do not open a sentence, identifiers
    (``snake_case``, ``dotted.names``) and the values of its tags.
    """
    text = _text(memory)
    openers = {m.group(1) for m in _SENTENCE_START_RE.finditer(text)}
    found = {
        name.casefold()
        for name in _NAME_RE.findall(text)
        if name not in openers and len(name) > 2
    }
    found |= {tag.split(":", 1)[1].casefold() for tag in memory.tags}
    return frozenset(found - _STOP - _CALENDAR)


def _text(memory: Memory) -> str:
    return f"{memory.title}\n{memory.body}" if memory.title else memory.body


def _newer(a: Memory, b: Memory) -> tuple[Memory, Memory]:
    """Returns (newer, older), by date, then by id (the later write)."""
    if (a.created_at, a.id) >= (b.created_at, b.id):
        return a, b
    return b, a


def _gap(a: Memory, b: Memory) -> timedelta:
    return abs(a.created_at - b.created_at)


def _needs(a: Memory, b: Memory) -> bool:
    """Returns whether ``a`` says it needs something ``b`` names."""
    named = entities(b) | (words(_text(b)) - _STOP)
    return any(m.group(1).casefold() in named for m in _NEEDS_RE.finditer(_text(a)))


def judge_pair(
    a: Memory,
    b: Memory,
    cosine: float | None,
    limits: Thresholds,
    rare: Callable[[str], bool] | None = None,
) -> Judgement | None:
    """Returns what the pair ``a``, ``b`` is by the rules, or ``None``.

    Args:
        a: The memory examined.
        b: One of its neighbours.
        cosine: The cosine of their vectors (``None`` without vectors).
        limits: The thresholds.
        rare: Whether a name is rare in the store (few memories hold it); a
            shared name links only if rare. ``None``: every name counts.
    """
    text_a, text_b = _text(a), _text(b)
    newer, older = _newer(a, b)
    same_words = overlap(words(text_a), words(text_b))
    if normalise(text_a) == normalise(text_b):
        return Judgement(
            "duplicate", "SUPERSEDES", newer.id, older.id, 1.0, "the same text"
        )
    cos = -1.0 if cosine is None else cosine
    content_a = words(text_a) - _STOP
    content_b = words(text_b) - _STOP
    # Words only one side has, fillers aside: a changed value or a "not".
    differ = (content_a ^ content_b) - _FILLERS
    flipped = negated(text_a) != negated(text_b)
    if (
        cos >= limits.duplicate_cosine
        and same_words >= limits.duplicate_words
        and not differ
        and not flipped
    ):
        return Judgement(
            "duplicate",
            "SUPERSEDES",
            newer.id,
            older.id,
            round((cos + same_words) / 2, 3),
            f"nearly the same: cosine {cos:.2f}, words {same_words:.2f}",
        )
    if (
        a.title
        and b.title
        and a.kind == b.kind
        and a.title.casefold() == b.title.casefold()
        and _gap(a, b) > timedelta(0)
    ):
        return Judgement(
            "update",
            "SUPERSEDES",
            newer.id,
            older.id,
            0.9,
            f"the same {a.kind} titled {a.title!r}, written later",
        )
    subject = overlap(content_a, content_b)
    same_subject = cos >= limits.subject_cosine and subject >= limits.subject_words
    # Most content words shared, a few changed: the same subject even when
    # the changed value moves the vector (a new name, a new number).
    same_value_slot = cos >= limits.update_cosine and subject >= limits.update_words
    newer_by_gap = _gap(a, b) >= limits.newer_gap
    if same_subject or same_value_slot:
        if (flipped or differ) and newer_by_gap:
            return Judgement(
                "update",
                "SUPERSEDES",
                newer.id,
                older.id,
                round(min(0.85, cos), 3),
                f"the same subject (cosine {cos:.2f}, words {subject:.2f}), "
                f"changed, {_gap(a, b).days} days later",
            )
        if flipped and same_subject:
            first, second = sorted((a.id, b.id))
            return Judgement(
                "contradiction",
                "CONTRADICTS",
                first,
                second,
                round(min(0.8, cos), 3),
                f"the same subject (cosine {cos:.2f}), one side negated, "
                "neither clearly newer",
            )
    if (
        cos >= limits.subject_cosine - limits.near_miss
        and subject >= limits.subject_words - limits.near_miss
    ) or (
        cos >= limits.update_cosine - limits.near_miss
        and subject >= limits.update_words - limits.near_miss
    ):
        return None  # nearly one memory twice: not evidence of a relation
    if _needs(a, b):
        return Judgement(
            "link",
            "DEPENDS_ON",
            a.id,
            b.id,
            0.7,
            "it says it needs what the other names",
        )
    shared = sorted(
        name for name in entities(a) & entities(b) if rare is None or rare(name)
    )
    tagged = sorted(_subject_tags(a) & _subject_tags(b))
    why = ""
    if shared and cos >= limits.entity_cosine:
        why = f"names {', '.join(shared[:3])} (cosine {cos:.2f})"
    elif tagged and cos >= limits.link_cosine and newer_by_gap:
        why = (
            f"both tagged {', '.join(tagged[:3])}, strong neighbours "
            f"(cosine {cos:.2f}), written {_gap(a, b).days} days apart"
        )
    if why:
        first, second = sorted((a.id, b.id))
        return Judgement(
            "link", "RELATES_TO", first, second, round(max(cos, 0.5), 3), why
        )
    return None


def _subject_tags(memory: Memory) -> frozenset[str]:
    """Returns the tags that name what a memory is about (not its tier, cycle)."""
    return frozenset(t for t in memory.tags if t.split(":", 1)[0] not in _STATE_TAGS)


def recurrence(memory: Memory, cycles: list[tuple[str, str]]) -> str | None:
    """Returns the ``recurs:`` tag for a memory about something that repeats.

    Args:
        memory: The memory.
        cycles: The (dimension, label) of each cycle the temporal parser found
            in its text.
    """
    if any(tag.startswith("recurs:") for tag in memory.tags):
        return None
    for dimension, _label in cycles:
        return f"recurs:{_DIMENSION_PERIOD[dimension]}"
    found = _EVERY_RE.search(_text(memory))
    if found is None:
        return None
    unit = (found.group(1) or found.group(2)).casefold()
    return f"recurs:{_UNIT_PERIOD.get(unit, unit)}"


def stale(memory: Memory, now: datetime, limits: Thresholds) -> bool:
    """Returns whether a memory is old enough to leave the context."""
    return now - memory.created_at >= timedelta(days=limits.stale_days)
