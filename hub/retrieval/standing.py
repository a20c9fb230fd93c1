"""A long memory over a recall's budget, answered by one of its passages.

A memory of thousands of words (a session, a runbook) rarely fits a budget
whole; the passage of it that matches the question may. Which passage: the
one the vector channel matched, where the channel placed the memory, else
the one holding most of the question's words
(:func:`~ctx.hub.retrieval.index.coverage.best_passage`).

None is looked for when no passage of the memory fits the room left. Once a
budget is nearly spent, every long memory ranked after it was otherwise
searched passage by passage only to be left out: on ``bench_recall.py``'s
store of 10,000 memories (one in fifty long), sixteen searches a question,
and an in-process recall's p50 9.2 ms without them against 17.1 ms with
them.
"""

from __future__ import annotations

import functools

from ctx.engine import estimate_tokens
from ctx.hub.retrieval.index.coverage import best_passage
from ctx.hub.retrieval.index.passages import passages
from ctx.hub.retrieval.results import PassageMatch

__all__ = ["matched_passage", "standing_passage"]


@functools.lru_cache(maxsize=256)
def _pieces(text: str) -> tuple[tuple[str, ...], int]:
    """Returns a text's passages and the tokens of the shortest, kept.

    The same long memories come back question after question.
    """
    pieces = tuple(passages(text))
    return pieces, min(map(estimate_tokens, pieces), default=0)


def standing_passage(
    text: str, question: str, room: int, *, number: int | None = None
) -> PassageMatch | None:
    """Returns the passage that stands for a long text, if one can fit.

    Args:
        text: The memory's text, as its vectors were made from it.
        question: What was asked.
        room: The tokens a passage may take; when even its shortest passage
            takes more, nothing is searched and None returned.
        number: The passage (from 0) the vector channel matched, if any.

    Returns:
        The passage, or None for a text of one passage, or one no passage
        of which holds a word of the question.
    """
    pieces, shortest = _pieces(text)
    if len(pieces) < 2 or shortest > room:
        return None
    if number is None or number >= len(pieces):
        number = best_passage(question, pieces)
        if number is None:
            return None
    return _match(pieces, number)


def matched_passage(text: str, number: int) -> PassageMatch | None:
    """Returns passage ``number`` (from 0) of a long text, as a hit names it.

    None for a text of one passage, or a number past its passages.
    """
    pieces, _ = _pieces(text)
    if len(pieces) < 2 or number >= len(pieces):
        return None
    return _match(pieces, number)


def _match(pieces: tuple[str, ...], number: int) -> PassageMatch:
    return PassageMatch(number=number + 1, of=len(pieces), text=pieces[number])
