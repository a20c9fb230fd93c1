"""Counts in words: "1 memory", "3 memories", "an 80 budget".

Every message that states a count, in every layer (the engine's errors and
commit summaries, the hub's notices and footers, the command line's lines),
says it through :func:`plural`, so the noun agrees with the number, and
large numbers are grouped alike ("12,000 memories"). :func:`article` picks
"a" or "an" for a number as it is read aloud ("an 8", "an 11", "an 800",
"a 1,500").
"""

from __future__ import annotations

__all__ = ["article", "plural"]


def _plural_noun(noun: str) -> str:
    head, _, last = noun.rpartition(" ")
    if last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        last = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}" if head else last


def plural(count: int, noun: str, many: str | None = None) -> str:
    """Returns ``count`` and ``noun``, the noun made plural unless ``count`` is 1.

    The plural is English's regular one ("memory" -> "memories", "branch" ->
    "branches", "file" -> "files"; the last word of a phrase), or ``many``.
    The count is grouped by thousands: ``plural(12000, "token")`` is
    ``"12,000 tokens"``.

    Args:
        count: How many.
        noun: The noun for one ("memory"), possibly a phrase ("link change").
        many: The noun for any other count, where the regular rule is wrong.
    """
    word = noun if count == 1 else many or _plural_noun(noun)
    return f"{count:,} {word}"


def article(count: int) -> str:
    """Returns "an" for a number read aloud with a vowel first, else "a".

    "an 8", "an 11", "an 18", "an 80", "an 800", "an 8,000", "an 11,000";
    "a 1", "a 100", "a 1,500".
    """
    digits = str(abs(count))
    lead = digits[: len(digits) % 3 or 3]  # what is read before "thousand"...
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"
