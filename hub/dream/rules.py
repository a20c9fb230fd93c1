"""The rules Dream judges a pair of memories by, and one memory alone.

A pair (an examined memory and one of its neighbours in the indexes) is, in
this order, the first that matches:

1. a **duplicate**: the same text once normalised (case, spacing and
   punctuation ignored; a copy of a body without its title counts: the
   titled one is kept), or vectors and words both nearly the same (cosine
   at least :attr:`Thresholds.duplicate_cosine` and word overlap at least
   :attr:`Thresholds.duplicate_words`, with no content word on one side
   only but filler words, and no negation on one side only). The newest is
   kept; it supersedes the others.
2. an **update**: the same subject with a changed value, written at least
   :attr:`Thresholds.newer_gap` later: the same kind and title with another
   body, or the same subject (cosine and overlap of content words above the
   ``subject`` thresholds, or most content words shared: the ``update``
   thresholds, since a new name or number moves the vector, not the words)
   stated again with *one* value changed (one run of words replaced,
   added or negated, fillers such as "now" aside). Two records of separate
   events are never an update (:mod:`~ctx.hub.dream.events`): notes that
   differ in two places or more (routine note 7 about pull request 107, note 8
   about pull request 108), or that record something that happened (a past
   action, a date) and differ by an id, a number, a date or a person (met
   with Alice, with Bob) that no "is", "to", "=" or ":" introduces as a
   value. The newer supersedes the older.
3. a **contradiction**: the same subject (the ``subject`` thresholds), one
   side negated and the other not, with neither clearly newer: a
   CONTRADICTS link.
4. nothing, when the pair came within :attr:`Thresholds.near_miss` of the
   same-subject thresholds: nearly one memory twice is no evidence of a
   relation, and a link would only crowd recall's expansion.
5. a **link**: DEPENDS_ON when one says it needs the other ("depends on",
   "requires", "uses", ... followed by a name the other holds, which the
   other does not say it needs as well: two statements of one need are
   near-copies, not a dependency); RELATES_TO for neighbours (cosine at
   least :attr:`Thresholds.entity_cosine`) that name the same *rare* entity
   (a capitalised name, an identifier, a word in lower case opening a
   sentence, a tag's value, held by few memories of the store: ``rare``),
   or for memories that carry the same tag (``speaker:``, ``project:``: the
   same subject; tier and ``recurs:`` tags aside), were written at least
   :attr:`Thresholds.newer_gap` apart and are neighbours
   (:attr:`Thresholds.link_cosine`), or say the same rare word (from
   :attr:`Thresholds.entity_cosine`). Being near neighbours is not enough
   by itself: on LoCoMo the nearest turn of another conversation is about
   the same kind of thing in other people's lives, and the nearest turn of
   the same sitting is most often the other half of one exchange, which a
   link adds nothing to.

One memory alone may be a **recurrence** (the temporal parser finds a
cycle: every Monday, on the 1st of every month; or it says weekly, daily,
each quarter) or a **tier** change (working memories not written for
:attr:`Thresholds.stale_days` go off-context; memories agents said they
used, through ``ctx feedback``, in at least
:attr:`Thresholds.reference_uses` recalls become reference).

The thresholds were measured on LoCoMo by ``benchmarks/bench_dream.py``
(results in ``benchmarks/results/dream.md``) with the default embedder, and
the rules on realistic agent memory by ``benchmarks/bench_dream_agent.py``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from ctx.engine import Memory
from ctx.hub.dream.events import (
    CALENDAR,
    FILLERS,
    RESTATE,
    WORD_RE,
    names_subject,
    one_routine,
    separate_events,
    value_changes,
    what_changed,
)

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

_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|cannot|no longer|"
    r"[a-z]+n['\u2019]t|stopped|quit|without)\b",
    re.IGNORECASE,
)
_NAME_RE = re.compile(
    r"\b(?:[A-Z][\w-]*[A-Za-z0-9]|[a-z]+_[a-z0-9_]+|[a-z]+\.[a-z][a-z0-9]*)"
)
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?]\s+|\n)\s*([A-Z][\w-]*)")
# A sentence that opens in lower case opens with a name spelt that way
# (a tool, a command, a library: "dulwich needs merge3 ...").
_LOWER_START_RE = re.compile(
    r"(?:^|[.!?]\s+|\n)\s*([a-z][a-z0-9]*(?:[._-][a-z0-9]+)*)\b"
)
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
_STATE_TAGS = frozenset(("tier", "recurs"))
# Words that open a sentence in lower case without naming anything.
_OPENING_WORDS = frozenset(
    ("also", "and", "but", "yes", "yeah", "okay", "haha", "lol", "well", "then")
)
_RARE_WORD_LETTERS = 4
_COUNTS = frozenset(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
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
    entity_cosine: float = 0.3
    link_cosine: float = 0.45
    update_cosine: float = 0.6
    update_words: float = 0.6
    near_miss: float = 0.1
    newer_gap: timedelta = timedelta(hours=12)
    stale_days: int = 180
    reference_uses: int = 3


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
    """Returns ``text`` lower-cased, accents folded, punctuation and spacing gone.

    An accent is a combining mark on a Latin letter (Résumé, resume); the
    marks of other scripts (a Devanagari virama) are part of their words.
    """
    kept: list[str] = []
    latin = False  # whether the last letter kept is Latin
    for c in unicodedata.normalize("NFKD", text.casefold()):
        if unicodedata.combining(c):
            if latin:
                continue
        else:
            latin = c < _LATIN_END
        kept.append(c)
    return " ".join(WORD_RE.findall("".join(kept)))


_LATIN_END = "\u0250"
"""Where the Latin letters end (after Latin Extended-B)."""


_WORDS_RE = re.compile(r"[^\W\d_]*\d+(?:\.\d+)+|" + WORD_RE.pattern, re.UNICODE)
"""A word, or a number with dots kept whole (and the letters before it,
"v1.4.1"): "1.4.1" and "1.4.4" are two versions, where their digits alone
are the same words."""


def words(text: str) -> frozenset[str]:
    """Returns the distinct lower-case words of ``text``, dotted numbers whole."""
    return frozenset(_WORDS_RE.findall(text.casefold()))


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
    (``snake_case``, ``dotted.names``), a word in lower case that opens a
    sentence (a name spelt that way: "onnxruntime threads fight ...") and
    the values of its tags.
    """
    text = _text(memory)
    openers = {m.group(1) for m in _SENTENCE_START_RE.finditer(text)}
    found = {
        name.casefold()
        for name in _NAME_RE.findall(text)
        if name not in openers and len(name) > 2
    }
    found |= _lower_names(text)
    found |= {tag.split(":", 1)[1].casefold() for tag in memory.tags}
    return frozenset(found - _STOP - CALENDAR)


def _lower_names(text: str) -> frozenset[str]:
    """Returns the words in lower case that open a sentence of ``text``."""
    return frozenset(
        m.group(1)
        for m in _LOWER_START_RE.finditer(text)
        if len(m.group(1)) > 2
        and m.group(1) not in FILLERS | _OPENING_WORDS | _STOP | CALENDAR
    )


def _capitalised(memory: Memory) -> frozenset[str]:
    """Returns every capitalised word of a memory, sentence openers too."""
    return frozenset(n.casefold() for n in _NAME_RE.findall(_text(memory)))


def _shared_names(a: Memory, b: Memory) -> frozenset[str]:
    """Returns the names both memories mention.

    A name that opens a sentence on one side ("Sentry drops events ...")
    counts when the other side names it inside a sentence ("... go to
    Sentry"); a name that only ever opens sentences (a speaker's) does not.
    One spelt in lower case ("onnxruntime threads fight ...") counts when
    the other holds the word ("... runs on onnxruntime"); a capitalised
    word ("Hint: ...") does not count for the same word in lower case,
    which is most often an ordinary word ("with a hint").
    """
    ea, eb = entities(a), entities(b)
    text_a, text_b = _text(a), _text(b)
    return (
        (ea & (eb | _capitalised(b)))
        | (eb & _capitalised(a))
        | (_lower_names(text_a) & words(text_b))
        | (_lower_names(text_b) & words(text_a))
    )


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
    """Returns whether ``a`` says it needs something ``b`` names.

    What it needs is a word of four letters or more, not a number: "needs
    two approvals" needs no memory that says "two".

    Not when ``b`` says it needs the same: two statements of one need are
    near-copies of each other, not a dependency.
    """
    named = entities(b) | _capitalised(b) | (words(_text(b)) - _STOP)
    needed = {
        m.group(1).casefold()
        for m in _NEEDS_RE.finditer(_text(a))
        if len(m.group(1)) > 3
        and m.group(1).casefold() not in _COUNTS
        and not m.group(1).replace(".", "").replace(",", "").isdigit()
    }
    also = {m.group(1).casefold() for m in _NEEDS_RE.finditer(_text(b))}
    return bool((needed & named) - also)


_RELATIONS = frozenset(
    [
        "before",
        "after",
        "during",
        "since",
        "until",
        "above",
        "below",
        "over",
        "under",
        "without",
        "into",
        "onto",
        "about",
        "around",
        "between",
    ]
)


def _holds_value(change: tuple[tuple[str, ...], tuple[str, ...]]) -> bool:
    """Returns whether a changed run holds a value: a content word, a negation.

    "after the fix" and "before the fix" differ by a relation, not a value.
    """
    said = [w.casefold() for w in (*change[0], *change[1])]
    if negated(" ".join(said)):
        return True
    return any(w not in _STOP and w not in _RELATIONS for w in said)


def _negation_only(changes: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> bool:
    return all(negated(" ".join((*old, *new))) for old, new in changes)


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
    copy = _copy(a, b)
    if copy is not None:
        return copy
    same_words = overlap(words(text_a), words(text_b))
    cos = -1.0 if cosine is None else cosine
    content_a = words(text_a) - _STOP - RESTATE
    content_b = words(text_b) - _STOP - RESTATE
    # Words only one side has: a changed value or a "not".
    differ = content_a ^ content_b
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
    newer_by_gap = _gap(a, b) >= limits.newer_gap
    if (
        a.title
        and b.title
        and a.kind == b.kind
        and a.title.casefold() == b.title.casefold()
        and _gap(a, b) > timedelta(0)
        and not separate_events(a.body, b.body)
    ):
        return Judgement(
            "update",
            "SUPERSEDES",
            newer.id,
            older.id,
            0.9,
            f"the same {a.kind} titled {a.title!r}, written later"
            + what_changed(value_changes(older.body, newer.body)),
        )
    subject = overlap(content_a, content_b)
    same_subject = cos >= limits.subject_cosine and subject >= limits.subject_words
    # Most content words shared, a few changed: the same subject even when
    # the changed value moves the vector (a new name, a new number).
    same_value_slot = cos >= limits.update_cosine and subject >= limits.update_words
    if same_subject or same_value_slot:
        changes = value_changes(older.body, newer.body)
        if (
            len(changes) == 1
            and newer_by_gap
            and _holds_value(changes[0])
            and not separate_events(older.body, newer.body)
            and not names_subject(older.body, newer.body)
        ):
            return Judgement(
                "update",
                "SUPERSEDES",
                newer.id,
                older.id,
                round(min(0.85, cos), 3),
                f"the same subject (cosine {cos:.2f}, words {subject:.2f}), "
                f"one value changed{what_changed(changes)}, "
                f"{_gap(a, b).days} days later",
            )
        if flipped and same_subject and _negation_only(changes):
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
    # Either way round: the pair gets one verdict whichever side is examined
    # (a RELATES_TO from the other side would propose the pair twice).
    for needs, needed in ((a, b), (b, a)):
        if subject < 0.5 and _needs(needs, needed):
            return Judgement(
                "link",
                "DEPENDS_ON",
                needs.id,
                needed.id,
                0.7,
                "it says it needs what the other names",
            )
    shared = sorted(name for name in _shared_names(a, b) if rare is None or rare(name))
    tagged = sorted(_subject_tags(a) & _subject_tags(b))
    why = ""
    if shared and cos >= limits.entity_cosine:
        why = f"names {', '.join(shared[:3])} (cosine {cos:.2f})"
    elif tagged and cos >= limits.link_cosine and newer_by_gap:
        why = (
            f"both tagged {', '.join(tagged[:3])}, strong neighbours "
            f"(cosine {cos:.2f}), written {_gap(a, b).days} days apart"
        )
    elif tagged and cos >= limits.entity_cosine and newer_by_gap:
        rare_words = _rare_words(content_a & content_b, rare)
        if rare_words:
            why = (
                f"both tagged {', '.join(tagged[:3])}, both say "
                f"{', '.join(rare_words[:3])} (cosine {cos:.2f}), written "
                f"{_gap(a, b).days} days apart"
            )
    if why and not one_routine(a.body, b.body):
        first, second = sorted((a.id, b.id))
        return Judgement(
            "link", "RELATES_TO", first, second, round(max(cos, 0.5), 3), why
        )
    return None


def _rare_words(
    shared: frozenset[str], rare: Callable[[str], bool] | None
) -> list[str]:
    """Returns the shared words few memories hold (not numbers, not dates)."""
    return sorted(
        w
        for w in shared
        if len(w) >= _RARE_WORD_LETTERS
        and w.isalpha()
        and w not in CALENDAR
        and (rare is None or rare(w))
    )


def _copy(a: Memory, b: Memory) -> Judgement | None:
    """Returns a duplicate verdict when one text is the other's copy.

    The same text once normalised; or the same body, under the same title
    or with a title on one side only (the titled one is kept: the copy
    adds nothing to it). Otherwise the newest is kept.
    """
    newer, older = _newer(a, b)
    if normalise(_text(a)) == normalise(_text(b)):
        return Judgement(
            "duplicate", "SUPERSEDES", newer.id, older.id, 1.0, "the same text"
        )
    if normalise(a.body) != normalise(b.body):
        return None
    titles = (normalise(a.title or ""), normalise(b.title or ""))
    if all(titles) and titles[0] != titles[1]:
        return None  # one body under two titles: a reviewer tells them apart
    kept, copy = (a, b) if a.title and not b.title else (b, a)
    if not (a.title and not b.title) and not (b.title and not a.title):
        kept, copy = newer, older
    return Judgement(
        "duplicate",
        "SUPERSEDES",
        kept.id,
        copy.id,
        0.98,
        "the same text" + (", the titled one kept" if kept.title else ""),
    )


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
