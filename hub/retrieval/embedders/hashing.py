"""A dependency-free embedder: signed feature hashing of words and trigrams.

It needs no model and no network, and it is the same in every process and
on every machine (blake3, not Python's salted ``hash()``). It is lexical, not
semantic: DESIGN.md measured that it recovers only about a fifth of MiniLM's
nearest neighbours, so it serves tests and tiny installs, not as the default.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence

import blake3
import numpy as np
import numpy.typing as npt

from ctx.hub.retrieval.embedders.base import EmbedderError

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+")

# Relative weights of the three feature families. A word has one unigram and
# up to len+2 trigrams: each word's trigrams share one unit of weight so that
# long words do not drown short ones, and the trigrams (which catch typos and
# inflections) count a little less than exact words and phrases.
_UNIGRAM = 1.0
_BIGRAM = 0.7
_TRIGRAMS_PER_WORD = 0.7

# Texts with no word at all (empty, only punctuation) all map to this one
# feature, so that every row still has unit length.
_NO_WORDS = "\x00empty"


@functools.lru_cache(maxsize=1 << 17)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    """Returns the stable column and sign of a feature."""
    digest = blake3.blake3(feature.encode("utf-8")).digest(8)
    value = int.from_bytes(digest, "little")
    return (value >> 1) % dimensions, -1.0 if value & 1 else 1.0


def _features(text: str) -> list[tuple[str, float]]:
    """Returns the weighted features of one text."""
    words = _WORD.findall(text.lower())
    if not words:
        return [(_NO_WORDS, 1.0)]
    features = [("w " + word, _UNIGRAM) for word in words]
    features.extend(
        ("b " + first + " " + second, _BIGRAM)
        for first, second in itertools.pairwise(words)
    )
    for word in words:
        padded = "<" + word + ">"
        count = len(padded) - 2
        weight = _TRIGRAMS_PER_WORD / count
        features.extend(("c " + padded[i : i + 3], weight) for i in range(count))
    return features


class HashingEmbedder:
    """Embeds texts by hashing their words, word pairs and char trigrams.

    Features are the lower-cased word unigrams, bigrams of adjacent words,
    and character trigrams of each word with ``<`` and ``>`` marking its
    ends. Each feature adds its weight, with a sign, to one column picked by
    its blake3 hash; the rows are then L2-normalised.

    Args:
        dimensions: The length of the vectors (at least 16).

    Raises:
        EmbedderError: ``dimensions`` is too small.
    """

    def __init__(self, dimensions: int = 384) -> None:
        if isinstance(dimensions, bool) or not isinstance(dimensions, int):
            raise EmbedderError(
                f"The hashing embedder's dimensions must be a whole number, "
                f"not {dimensions!r}."
            )
        if dimensions < 16:
            raise EmbedderError(
                f"The hashing embedder needs at least 16 dimensions, not {dimensions}."
            )
        self._dimensions = dimensions

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimensions={self._dimensions})"

    @property
    def name(self) -> str:
        """Returns ``"hashing-<dimensions>@1"``."""
        return f"hashing-{self._dimensions}@1"

    @property
    def dimensions(self) -> int:
        """Returns the length of every vector."""
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns one unit row per text, shape ``(len(texts), dimensions)``."""
        out = np.zeros((len(texts), self._dimensions), dtype=np.float64)
        for row, text in enumerate(texts):
            features = _features(text)
            columns = np.empty(len(features), dtype=np.intp)
            weights = np.empty(len(features), dtype=np.float64)
            for i, (feature, weight) in enumerate(features):
                column, sign = _slot(feature, self._dimensions)
                columns[i] = column
                weights[i] = sign * weight
            out[row] = np.bincount(columns, weights=weights, minlength=self._dimensions)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        # Signed features can cancel out exactly (very rarely); such a row
        # falls back to the no-words feature rather than staying all zero.
        empty = norms[:, 0] == 0.0
        if empty.any():
            column, sign = _slot(_NO_WORDS, self._dimensions)
            out[empty] = 0.0
            out[empty, column] = sign
            norms[empty] = 1.0
        result: npt.NDArray[np.float32] = (out / norms).astype(np.float32)
        return result
