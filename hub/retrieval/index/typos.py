"""Words of a question typed in haste, and the words of the store they mean.

Words that name no one are misspelt too, in a question typed in haste
("who is the ownr of the bilingg servise?"): no memory holds them, MiniLM
cuts each into pieces that mean little, and with these three the answer's
cosine fell from 0.74 to under 0, out of the vector channel's list (0.32
with the two of one edit respelt). So a word of :data:`TYPO_MIN_CHARS`
letters or more that no memory holds (nor its stem), that the embedder
does not know whole, nor its stem as the stem of a word it knows (a word
of the language is taken as meant: "adapt" is no typo of "adopt", "pals"
none of "pass"), and that is no function word, month or weekday, nor a
suspect of the name rules (a capitalised word inside a sentence is a
name's to judge), nor in capitals or joined to digits or an underscore
(an acronym, an identifier), is **typed in haste** (:func:`typo_of`): it
is respelt to the word one edit from it (most typos are one letter added,
dropped, changed or two swapped; Damerau, 1964), first letter kept, that
live memories hold, no function word ("thisk" is "thick", not "this"),
each looked up in the index; of several, the one of the same letters (a
swap: "recieved" is "received", not "relieved"), then the one more
memories hold, and a tie of that respells nothing. Two edits reached
real words MiniLM cuts into pieces: "partake" became "parade",
"grieving" "giving", "pastimes" "pastries".

Each word is judged alone (a question typed in haste may have several),
but past :data:`HASTE_MAX` such words none is (each costs a few hundred
look-ups in the index, well under a millisecond): such a question is not
English, or not about what the store holds. Nor is any in a question in
another language (:func:`~ctx.hub.retrieval.index.language.detect`):
"Garten" is no typo of "garden" but a German word.

:func:`in_haste` is asked after the name rules of
:mod:`~ctx.hub.retrieval.index.spelling`, with the words they respelt and
the names they found left as they are; recall reads the question with
both respellings (:meth:`~ctx.hub.retrieval.index.searcher.Searcher.respell`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import tantivy

from ctx.hub.retrieval.embedders import whole_words
from ctx.hub.retrieval.index.language import detect
from ctx.hub.retrieval.index.lexical_errors import reading
from ctx.hub.retrieval.index.schema import content_analyzer
from ctx.hub.retrieval.index.spelling import (
    WORD,
    capitalised,
    doc_freq,
    held_as,
    may_name,
    starts_sentence,
)

if TYPE_CHECKING:
    from ctx.hub.retrieval.index.lexical import LexicalIndex

__all__ = ["HASTE_MAX", "TYPO_EDITS", "TYPO_MIN_CHARS", "in_haste", "typo_of"]

HASTE_MAX = 4
"""Words typed in haste a question may have at most for any to be respelt
(module doc)."""

TYPO_MIN_CHARS = 4
"""The shortest word that may be respelt as typed in haste: a typo of a
shorter one is as often another word ("teh", "fro")."""

TYPO_EDITS = 1
"""The edits a word typed in haste is from the word it means (module doc)."""


def in_haste(
    question: str,
    spans: Sequence[tuple[int, int]],
    indexes: Sequence[LexicalIndex],
    knows: Callable[[str], bool],
    taken: Collection[str],
) -> dict[str, str]:
    """Returns the question's words typed in haste, each with the word it means.

    See the module doc; ``taken``: the words the name rules respelt, and
    the names (lower-case), which are left as they are.
    """
    if detect(question) is not None:  # words of another language are no typos
        return {}
    unheld: dict[str, str] = {}
    for match in WORD.finditer(question):
        word = match.group()
        lower = word.lower()
        if (
            len(word) < TYPO_MIN_CHARS
            or word in taken
            or lower in taken
            or word.isupper()  # an acronym or a constant ("SERVISE" is shouted)
            or (capitalised(word) and not starts_sentence(question, match.start()))
            or not _whole(question, match)
            or not may_name(match, spans)
            or knows(lower)
        ):
            continue
        stems = content_analyzer().analyze(word)
        if (
            len(stems) == 1
            and held_as(lower, indexes, None, stems) is None
            and stems[0] not in _known_stems()  # built on first use: 30 ms
        ):
            unheld[word] = lower
    if len(unheld) > HASTE_MAX:
        return {}
    found: dict[str, str] = {}
    for word, lower in unheld.items():
        meant = typo_of(lower, indexes)
        if meant is not None:
            found[word] = meant.capitalize() if word[:1].isupper() else meant
    return found


def typo_of(word: str, indexes: Sequence[LexicalIndex]) -> str | None:
    """Returns the one word the memories hold that ``word`` (lower-case) misspells.

    Each word :data:`TYPO_EDITS` from it, its first letter kept
    (:func:`_one_edit`), looked up in the index (a microsecond each), no
    function word ("thisk" is not "this"): of those the live memories hold
    (of any branch; not an edited memory's old version, which the
    document frequency still counts), the ones of its letters (a swap) if
    any, then the one most memories hold; ``None`` for none, or a tie.
    """
    held = {}
    for other in _one_edit(word):
        if (
            doc_freq(indexes, other)
            and content_analyzer().analyze(other)
            and (count := _live(indexes, other))
        ):
            held[other] = count
    swapped = {other: n for other, n in held.items() if sorted(other) == sorted(word)}
    held = swapped or held
    if not held:
        return None
    most = max(held.values())
    best = [other for other, count in held.items() if count == most]
    return best[0] if len(best) == 1 else None


def _one_edit(word: str) -> set[str]:
    """Returns the words one edit from ``word`` that keep its first letter.

    A letter dropped, added, changed, or two adjacent ones swapped (as
    Norvig's spelling corrector makes them), with the letters a-z and
    those of the word.
    """
    letters = set("abcdefghijklmnopqrstuvwxyz") | set(word)
    found: set[str] = set()
    for at in range(1, len(word) + 1):
        left, right = word[:at], word[at:]
        for letter in letters:
            found.add(left + letter + right)
            if right:
                found.add(left + letter + right[1:])
        if right:
            found.add(left + right[1:])
        if len(right) > 1:
            found.add(left + right[1] + right[0] + right[2:])
    found.discard(word)
    return found


def _live(indexes: Sequence[LexicalIndex], word: str) -> int:
    """Returns how many live memories of ``indexes`` hold ``word`` as a word."""
    total = 0
    for index in indexes:
        query = tantivy.Query.term_query(index.schema, "words", word)
        with reading(f"search {index.where}"):
            found = index.current_searcher().search(query, 1, count=True)
        total += found.count or 0  # type: ignore[attr-defined]  # not in the stubs
    return total


def _whole(text: str, match: re.Match[str]) -> bool:
    """Returns whether a match of :data:`WORD` is a word of its own in ``text``.

    Not part of one with digits or an underscore ("servise2", "get_usr"),
    which :meth:`Respelling.apply` would not find whole.
    """
    before = text[match.start() - 1] if match.start() else " "
    after = text[match.end()] if match.end() < len(text) else " "
    return not (before.isalnum() or before == "_" or after.isalnum() or after == "_")


@functools.cache
def _known_stems() -> frozenset[str]:
    """Returns the stems of the shipped vocabulary's whole words (built once)."""
    analyzer = content_analyzer()
    return frozenset(
        stem[0]
        for word in whole_words()
        if word.isalpha() and len(stem := analyzer.analyze(word)) == 1
    )
