"""Long memories as passages: the windows of text their vectors are made from.

An embedder reads a bounded window of text (MiniLM: 256 word pieces, about
190 English words); a memory longer than that used to get one vector of its
first window, so the vector channel never saw the rest of a session's
transcript or a document's section. :func:`passages` cuts a text longer
than :data:`WINDOW_WORDS` words (about the window) into windows of at most
:data:`PASSAGE_WORDS` words at line boundaries (a
transcript's turns, a document's paragraphs), a line longer than a window at
sentence ends and, failing those, between words; each window after the first
starts with the last line (or sentence) of the one before, up to
:data:`OVERLAP_WORDS` words, so that a question about two adjacent turns
finds them together.

Keys: passage 0 is keyed by the blob id itself, like the one vector of a
short memory, and passage ``n`` by ``<blob>#<n>`` (:func:`passage_key`).
So a short memory's vector is as it always was, every vector of a memory is
keyed by its blob id (reused across branches, copied by text hash, removed
with its blob; see :mod:`ctx.hub.retrieval.index.rows`), and a search maps its hits
back to blobs with :func:`owner`, keeping each memory's best passage.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ctx.hub.retrieval.embedders import Embedder

__all__ = [
    "MARK",
    "OVERLAP_WORDS",
    "PASSAGE_WORDS",
    "WINDOW_WORDS",
    "chance_order",
    "embed_passages",
    "is_long",
    "lines",
    "may_be_long",
    "owner",
    "passage_key",
    "passage_texts",
    "passages",
]

PASSAGE_WORDS = 120
"""Words per passage at most. MiniLM's window is 256 word pieces, and English
prose and conversation take about 1.3 word pieces a word, so 120 words leave
room for names and numbers (which take more) and for a reply context before
the first passage. On LoCoMo sessions (3 conversations, 354 questions),
hybrid any@5 was 0.909 with passages of 80 words and 0.919 with 120;
vectors alone 0.804 and 0.812 (benchmarks/results/sessions.md has 120)."""

WINDOW_WORDS = 300
"""A text of up to this many words keeps one vector, of its first window
(MiniLM reads 256 word pieces, about 190 words: most of such a text).
Splitting Cranfield's abstracts of 120-180 words cost nDCG@10 0.415 ->
0.407 (benchmarks/results/cranfield_passages.md), and splitting those of
180-300 words still cost it 0.414 -> 0.410 (best passage past 300 words
against past 180, same store: benchmarks/results/passage_scoring.md, which
has LoCoMo's sessions beside it; only 7 of their 272 are within 300 words)."""

OVERLAP_WORDS = 60
"""At most this many words of a passage's end begin the next passage."""

MARK = "#"
"""What joins a blob id and a passage number in a vector key."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def passage_key(blob: str, number: int) -> str:
    """Returns the vector key of passage ``number`` (from 0) of ``blob``."""
    return blob if number == 0 else f"{blob}{MARK}{number}"


def owner(key: str) -> tuple[str, int]:
    """Returns the blob and passage number of a vector key."""
    blob, _, number = key.partition(MARK)
    return blob, int(number) if number.isdigit() else 0


def _units(text: str, passage_words: int) -> list[list[str]]:
    """Returns the text's lines (long ones cut) as lists of words."""
    units: list[list[str]] = []
    for line in text.splitlines():
        words = line.split()
        if len(words) <= passage_words:
            if words:
                units.append(words)
            continue
        for sentence in _SENTENCE_END.split(line):
            part = sentence.split()
            for start in range(0, len(part), passage_words):
                units.append(part[start : start + passage_words])
    return units


def passages(text: str) -> list[str]:
    """Returns the passages to embed for ``text``: itself if it is short.

    A text of more than :data:`WINDOW_WORDS` words gives overlapping windows
    of whole lines (or sentences), each at most :data:`PASSAGE_WORDS` words
    (module doc). A long text's passages are kept for the next call (recall
    shows the passage of a long memory that matched, for every query).
    """
    if not is_long(text):
        return [text]
    return list(_windows(text, WINDOW_WORDS, PASSAGE_WORDS))


def lines(text: str, most: int) -> list[str]:
    """Returns the lines of ``text`` as :func:`passages` reads them.

    Each of its words joined by single spaces; a line of more than ``most``
    words cut at its sentences' ends, and a longer sentence between words.
    """
    return [" ".join(unit) for unit in _units(text, most)]


def is_long(text: str) -> bool:
    """Returns whether :func:`passages` cuts ``text`` into several passages."""
    limit = max(WINDOW_WORDS, PASSAGE_WORDS)
    # Words are separated: fewer than 2n + 1 characters hold at most n words.
    return len(text) > 2 * limit and len(text.split(maxsplit=limit)) > limit


def may_be_long(tokens: int) -> bool:
    """Returns whether a text of ``tokens`` estimated tokens can be long.

    A test before reading it: :func:`is_long` wants more than
    ``2 * WINDOW_WORDS`` characters, and an estimate is a quarter of them.
    """
    return tokens * 4 > 2 * max(WINDOW_WORDS, PASSAGE_WORDS)


@functools.lru_cache(maxsize=256)
def _windows(text: str, window_words: int, passage_words: int) -> tuple[str, ...]:
    # The sizes are arguments so that the cache never answers for others.
    units = _units(text, passage_words)
    if sum(len(u) for u in units) <= max(window_words, passage_words):
        return (text,)
    windows: list[list[list[str]]] = []
    current: list[list[str]] = []
    size = 0
    for unit in units:
        if current and size + len(unit) > passage_words:
            windows.append(current)
            tail = current[-1]
            carried = [tail] if len(tail) <= OVERLAP_WORDS else []
            if carried and len(tail) + len(unit) > passage_words:
                carried = []
            current, size = carried, sum(len(u) for u in carried)
        current.append(unit)
        size += len(unit)
    windows.append(current)
    return tuple("\n".join(" ".join(u) for u in window) for window in windows)


def _log_chance(z: float, count: int) -> float:
    """Returns the log chance that unrelated text's best passage scores ``z``.

    ``z``: spreads above the mean cosine; ``count``: passages.

    One passage: the normal tail ``p`` at ``z``; the best of ``count``:
    ``1 - (1 - p) ** count`` (Šidák's correction). Past 30 spreads, where
    ``p`` nears the smallest float, by the tail's asymptote.
    """
    if z < 30.0:
        tail = 0.5 * math.erfc(z / math.sqrt(2.0))
        if tail >= 1.0:
            return 0.0
        return math.log(-math.expm1(count * math.log1p(-tail)))
    return math.log(count) - z * z / 2 - math.log(z * math.sqrt(2 * math.pi))


def chance_order(
    best: Mapping[str, float],
    counts: Mapping[str, int],
    mean: float,
    spread: float,
) -> list[str]:
    """Returns the blobs of ``best``, the least likely by chance first.

    ``best``: each blob's best cosine to the query; ``counts``: how many
    passages it has (1 when absent); ``mean`` and ``spread``: the mean and
    standard deviation of the query's cosines to the index's vectors, the
    cosines of text that has nothing to do with it. The best of many
    passages is high by chance alone: a session of twenty passages holds
    one close to most questions about its speakers. So a memory is ranked
    by the chance of a best passage that high among as many passages of
    unrelated text (:func:`_log_chance`); memories of one passage keep
    their order by cosine, and a long memory needs a better best passage
    to rank beside a short one. Equal chances go by cosine, then blob.
    """
    if spread <= 1e-6:
        return sorted(best, key=lambda blob: (-best[blob], blob))
    chance = {
        blob: _log_chance((cosine - mean) / spread, counts.get(blob, 1))
        for blob, cosine in best.items()
    }
    return sorted(best, key=lambda blob: (chance[blob], -best[blob], blob))


def embed_passages(
    embedder: Embedder, texts: Sequence[tuple[str, str]]
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """Returns the keys and vectors of the passages of each (blob, text).

    One call of the embedder for all of them.

    Raises:
        EmbedderError: The embedder failed.
    """
    keys, pieces = passage_texts(texts)
    return keys, embedder.embed(pieces)


def passage_texts(texts: Sequence[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """Returns the vector key and the text of every passage of each (blob, text)."""
    keys: list[str] = []
    pieces: list[str] = []
    for blob, text in texts:
        for number, piece in enumerate(passages(text)):
            keys.append(passage_key(blob, number))
            pieces.append(piece)
    return keys, pieces
