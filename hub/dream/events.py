"""Two statements compared word by word: what changed, and which are events.

Dream's rules (:mod:`~ctx.hub.dream.rules`) ask it of a pair of memories.
A text is read as tokens that keep ids, versions and dates whole (PR-107,
v1.2.3, 2026-03-01), each marked when a value mark ("is", "to", ``=``,
``:``) comes before it; two texts' tokens are matched, and the runs where
they differ are what changed (:func:`value_changes`). Two records of
something that happened (:func:`happened`: a date, a past action) that
differ in two places, or by an id, a number, a date or a person (whom
an action went to among them), are separate events
(:func:`separate_events`), never an update; two such
events of one shape are one routine (:func:`one_routine`), never linked.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

__all__ = [
    "CALENDAR",
    "FILLERS",
    "RESTATE",
    "WORD_RE",
    "differing_runs",
    "happened",
    "names_subject",
    "one_routine",
    "separate_events",
    "value_changes",
    "what_changed",
]

WORD_RE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?", re.UNICODE)
# A token keeps ids, versions and dates whole: PR-107, v1.2.3, 2026-03-01.
_TOKEN_RE = re.compile(r"[^\W_]+(?:['\u2019./:_-][^\W_]+)*", re.UNICODE)
_JOINED_RE = re.compile(r"[^\W_][_/-][^\W_]")
_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b")
# Something that happened: a past action not after "is", "has" (a state).
_PAST_RE = re.compile(
    r"[a-z]{3,}ed|ran|went|met|made|wrote|saw|took|got|did|found|gave|sent|"
    r"built|began|held|led|paid|spent|bought|chose|broke|won|lost|left|told|said"
)
_NOT_PAST = frozenset(
    ("speed", "indeed", "exceed", "proceed", "succeed", "embed", "based", "shared")
)
_STATE_AUX = frozenset(
    ("is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "get")
)
# What introduces a value: "port is 9090", "moved to Berlin", "timeout = 30".
_VALUE_MARKS = frozenset(("is", "are", "was", "were", "be", "to", "becomes", "equals"))
_GIVING = frozenset(
    (
        "sent",
        "handed",
        "gave",
        "passed",
        "forwarded",
        "escalated",
        "assigned",
        "reassigned",
        "delegated",
        "emailed",
        "mailed",
        "shipped",
        "delivered",
        "paid",
        "returned",
        "invoiced",
        "reported",
        "submitted",
        "presented",
        "wrote",
        "messaged",
        "introduced",
        "referred",
        "lent",
        "sold",
        "deployed",
        "released",
        "published",
        "promoted",
        "pushed",
    )
)
"""Past actions that go to someone or somewhere: what "to" introduces after
them, in the same clause, is whom or where it went ("sent the invoice to
Acme", "handed the pager to Carol", "deployed the api to staging"), which
tells one event from another, not a value it changed to."""
_CLAUSE_ENDS = frozenset(("and", "then", "but", "after", "before", "while"))
_PHRASE_ENDS = frozenset(
    (
        *_VALUE_MARKS,
        "that",
        "which",
        "who",
        "because",
        "since",
        "so",
        "when",
        "until",
        "with",
        "in",
        "on",
        "at",
        "for",
        "of",
        "from",
        "by",
        "set",
    )
)
"""Words that end whom or where an action went to: what follows is said of
it ("reported to Alice that the port is 8080")."""
_WHEN = frozenset(
    (
        "next",
        "last",
        "this",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "quarter",
        "day",
        "days",
        "tonight",
        "morning",
        "afternoon",
        "evening",
        "later",
    )
)
"""Words of a time: "pushed the deadline to Friday", "to next week" put a
thing off, to a value, where "to" names no one."""
_DETERMINERS = frozenset(("the", "a", "an", "our", "my", "their", "his", "her", "its"))
CALENDAR = frozenset(
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
FILLERS = frozenset(
    ("really", "so", "just", "actually", "very", "totally", "definitely", "quite")
)
# Words that restate a value without changing it: "now listens on 9090".
RESTATE = FILLERS | {"now", "currently", "still"}


class _Token:
    """A token of a text, folded, with what introduced it."""

    __slots__ = ("fold", "marked", "text", "whom")

    def __init__(self, text: str, marked: bool, whom: bool = False) -> None:
        self.text = text
        self.fold = text.casefold()
        self.marked = marked
        self.whom = whom
        """A word of whom or where an action went to (:data:`_GIVING`),
        never marked."""


def _tokens(text: str) -> list[_Token]:
    """Returns the tokens of ``text`` without restating fillers ("now").

    A token is marked when a value mark ("is", "to", ``=``, ``:``) comes
    right before it.
    """
    out: list[_Token] = []
    last_end = 0
    last = ""
    giving = whom = False  # an action that goes to someone; after its "to"
    for found in _TOKEN_RE.finditer(text):
        token = found.group()
        fold = token.casefold()
        between = text[last_end : found.start()]
        last_end = found.end()
        if fold in RESTATE:
            continue
        if fold in _CLAUSE_ENDS or any(c in between for c in ".,;:!?"):
            giving = whom = False  # another clause: another action
        if whom and (fold in _PHRASE_ENDS or fold == "to"):
            giving = whom = False  # the phrase of whom it went to has ended
        whom = whom or (giving and last == "to")
        if whom and (
            fold in CALENDAR or fold in _WHEN or any(c.isdigit() for c in fold)
        ):
            whom = False  # a time or a number: a value ("pushed to Friday")
        named = whom and fold not in _DETERMINERS
        marked = not whom and (last in _VALUE_MARKS or any(c in between for c in ":="))
        out.append(_Token(token, marked, named))
        if fold in _GIVING:
            giving = True
        elif _PAST_RE.fullmatch(fold) and fold not in _NOT_PAST:
            giving = whom = False  # another action: "... and moved it to X"
        last = fold
    return out


_Runs = tuple[list[_Token], list[_Token], list[tuple[str, int, int, int, int]]]


def differing_runs(a: str, b: str) -> _Runs:
    """Returns the tokens of ``a`` and ``b`` and the runs where they differ."""
    ta, tb = _tokens(a), _tokens(b)
    matcher = SequenceMatcher(
        None, [t.fold for t in ta], [t.fold for t in tb], autojunk=False
    )
    return ta, tb, [op for op in matcher.get_opcodes() if op[0] != "equal"]


def what_changed(changes: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> str:
    """Says what one changed run was and became, for a reason: `` (8080 -> 9090)``.

    Nothing when the texts differ in more places than one.
    """
    if len(changes) != 1:
        return ""
    was, now = (_clipped(" ".join(words)) for words in changes[0])
    if not was:
        return f" (added {now})"
    return f" (removed {was})" if not now else f" ({was} -> {now})"


def _clipped(text: str, most: int = 40) -> str:
    if len(text) <= most:
        return text
    return (text[:most].rsplit(" ", 1)[0] or text[:most]) + "…"


def value_changes(a: str, b: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Returns the runs of words that differ between ``a`` and ``b``, in order.

    Each is (the words of ``a``, the words of ``b``): one replaced, added
    (nothing on the ``a`` side) or removed run. Case and fillers such as
    "now" and "really" are ignored.
    """
    ta, tb, runs = differing_runs(a, b)
    return [
        (tuple(t.text for t in ta[i1:i2]), tuple(t.text for t in tb[j1:j2]))
        for _, i1, i2, j1, j2 in runs
    ]


def names_subject(a: str, b: str) -> bool:
    """Returns whether the one run that differs is in what the texts are about.

    A value comes after what it is the value of: a run with fewer than two
    words before it ("Queue 0 drains", "The staging database is") changes
    the subject, not its value.
    """
    ta, _, runs = differing_runs(a, b)
    start = runs[0][1]
    return sum(t.fold not in _ARTICLES for t in ta[:start]) < 2


def happened(text: str) -> bool:
    """Returns whether ``text`` records an event: a date, or a past action."""
    if _DATE_RE.search(text):
        return True
    folded = WORD_RE.findall(text.casefold())
    if any(w in CALENDAR for w in folded):
        return True
    return any(
        _PAST_RE.fullmatch(w) is not None
        and w not in _NOT_PAST
        and (i == 0 or folded[i - 1] not in _STATE_AUX)
        for i, w in enumerate(folded)
    )


def _names_event(token: str) -> bool:
    """Returns whether a token tells one event from another.

    An id (letters and digits, or words joined by ``-``, ``_`` or ``/``:
    PR-107, test_case_04, wt-rqual), a long number, a date.
    """
    digits = sum(c.isdigit() for c in token)
    if not digits:
        return token.casefold() in CALENDAR or _JOINED_RE.search(token) is not None
    return digits >= 3 or digits < len(token.replace(",", "").replace(".", ""))


_ARTICLES = frozenset(("the", "a", "an"))


def separate_events(a: str, b: str) -> bool:
    """Returns whether two texts record separate events of the same shape.

    They do when they differ in two places or more (routine note 7 about
    pull request 107, note 8 about pull request 108: a new value changes
    one place), or when both record something that happened (a date, a
    past action) and differ by an id, a number, a date or a person
    (:func:`_tells_events`) that no value mark ("is", "to", ``=``, ``:``)
    introduces.
    """
    ta, tb, runs = differing_runs(a, b)
    if len(runs) >= 2:
        return True
    if not runs or not (happened(a) and happened(b)):
        return False
    _, i1, i2, j1, j2 = runs[0]
    changed = [(ta, i) for i in range(i1, i2)] + [(tb, j) for j in range(j1, j2)]
    return any(_tells_events(tokens, at) for tokens, at in changed)


_BY_PEOPLE = frozenset(
    ["with", "by", "from", "for", "and", "met", "told", "asked", "called", "paired"]
)
"""Words after which a name is who took part (met with Alice), not a value."""


def _tells_events(tokens: list[_Token], at: int) -> bool:
    """Returns whether token ``at`` tells one event from another.

    An id, a number, a date, or a person's name (the text's first word, a
    capitalised word after "with", "by", "met" and the like, or whom an
    action went to: "handed the pager to Carol"), with no value mark before
    it ("decided to use Redis" names a value).
    """
    token = tokens[at]
    if token.whom:
        return True
    if token.marked:
        return False
    if _names_event(token.text) or token.text.isdigit():
        return True
    return token.text[:1].isupper() and (at == 0 or tokens[at - 1].fold in _BY_PEOPLE)


def one_routine(a: str, b: str) -> bool:
    """Returns whether two texts record two events of one routine.

    Both record something that happened, open with the same word and keep
    most of one shape, told apart as separate events are (an id, a number,
    a person: "Reviewed PR 107 about CI", "Reviewed PR 112 about the login
    page"). A link between them adds nothing a reader needs: in a store of
    routine notes it was most of what Dream proposed.
    """
    ta, tb, runs = differing_runs(a, b)
    if not ta or not tb or ta[0].fold != tb[0].fold:
        return False
    changed = sum(i2 - i1 + j2 - j1 for _, i1, i2, j1, j2 in runs)
    kept = (len(ta) + len(tb) - changed) / (len(ta) + len(tb))
    return kept >= 0.5 and happened(a) and happened(b) and separate_events(a, b)
