"""A long question's parts: its lines, each asked on its own too.

A prompt may hold a pasted log, a diff or a stack trace beside what it
asks. Read whole, the embedder read the first window of it (a question
after a long log never), and the question's few words were a small share
of all the words the word share weighs, most of them no memory holds
(numbers, ids): "How do we deploy to production?" and forty lines of a
build's output got "nothing relevant". So a long question is asked by its
parts too (:func:`question_parts`): the vector channel embeds them, and a
memory's relevance is the best of the whole's and each part's; BM25 and the
fuzzy channel score a memory by its best part alone (docs/recall.md, "Long
questions: their lines").
"""

from __future__ import annotations

from collections.abc import Sequence

import tantivy

from ctx.hub.retrieval.index.passages import lines
from ctx.hub.retrieval.index.schema import content_analyzer

__all__ = [
    "MAX_PARTS",
    "PART_MIN_WORDS",
    "PART_WORDS",
    "QUESTION_WORDS",
    "best_part",
    "question_parts",
]

QUESTION_WORDS = 80
"""A question of more words than this is asked by its parts. A question
as people ask one is far shorter (LoCoMo's and Cranfield's are under 50
words), and is read whole alone."""

PART_WORDS = 40
"""Words per part at most: a longer line is cut at its sentences' ends, and
a longer sentence between words."""

PART_MIN_WORDS = 3
"""The fewest words a part holds, one of them no function word: a word or
two alone say too little ("Thanks!", "Done.", "See below:"), and "How do
we deploy?" is a question. A shorter line joins the line after it (the
last, the one before): ``KeyError: 'STRIPE_WEBHOOK_SECRET'`` may be what a
traceback says."""

MAX_PARTS = 24
"""The most parts a question is asked by: its first and its last half,
where a prompt says what it asks."""


def question_parts(text: str) -> list[str]:
    """Returns the parts a long question is asked by: none if it is short.

    Of a question of more than :data:`QUESTION_WORDS` words, its lines (cut
    to :data:`PART_WORDS` words, as :func:`~.passages.lines` cuts them),
    each once (a log repeats its lines), of :data:`PART_MIN_WORDS` words or
    more, a shorter one joined to the next; the first and last halves of
    :data:`MAX_PARTS` of them. The vector channel asks them beside the
    whole question, the word channels instead of it.
    """
    if len(text.split(maxsplit=QUESTION_WORDS)) <= QUESTION_WORDS:
        return []
    analyse = content_analyzer().analyze
    found: dict[str, None] = {}
    short: list[str] = []  # the lines before, too short alone
    last = ""
    for line in lines(text, PART_WORDS):
        part = " ".join([*short, line])
        if len(part.split(maxsplit=PART_MIN_WORDS)) >= PART_MIN_WORDS and analyse(part):
            found[part] = None
            short, last = [], part
        else:
            short.append(line)
    if short and last:  # the last lines: with the one before them
        if next(reversed(found)) == last:
            del found[last]
        found[" ".join([last, *short])] = None
    parts = list(found)
    if len(parts) <= MAX_PARTS:
        return parts
    half = MAX_PARTS // 2
    return parts[:half] + parts[-half:]


def best_part(queries: Sequence[tantivy.Query | None]) -> tantivy.Query | None:
    """Returns one query that scores a document as the best of ``queries``.

    One query alone as it is; several (a long question's parts, each asked
    as the index asks a text) as Tantivy's disjunction max with no tie
    breaker: a document's score is its best part's, in one search. ``None``
    ones (a part of no words) are left out; ``None`` if all are.
    """
    found = [query for query in queries if query is not None]
    if len(found) <= 1:
        return found[0] if found else None
    return tantivy.Query.disjunction_max_query(found)
