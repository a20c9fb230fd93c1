"""The one small interface every embedder implements, and its error.

An embedder turns texts into unit vectors. The store records an embedder's
:attr:`Embedder.name` next to the vectors it built, so the name must change
whenever the vectors would (another model, another version, another size):
a changed name means a reindex.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, cast

from ctx.engine import CtxError
from ctx.hub.retrieval.embedders.wordpiece import is_whole_word

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "Embedder",
    "EmbedderError",
    "QueryEmbedder",
    "ReadingEmbedder",
    "VocabularyEmbedder",
    "cpu_count",
    "embed_queries",
    "knows_word",
    "mostly_latin",
    "reads",
]


class EmbedderError(CtxError):
    """An embedder could not be built or could not embed.

    Raised for a bad embedder configuration, a model that is not installed,
    and an embedding endpoint that is down or answers nonsense. The hub
    treats it as "no vectors this time": lexical recall still answers.
    """


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    Attributes:
        name: A stable id of the model and its version, recorded in the
            store, e.g. ``"minilm-l6-v2-int8@1"`` or ``"hashing-384@1"``.
        dimensions: The length of every vector.
    """

    @property
    def name(self) -> str:
        """Returns the stable id of the model and its version."""
        ...

    @property
    def dimensions(self) -> int:
        """Returns the length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns one unit row per text, shape ``(len(texts), dimensions)``.

        Raises:
            EmbedderError: The model could not be loaded or the endpoint
                could not be used.
        """
        ...


class QueryEmbedder(Embedder, Protocol):
    """An embedder that embeds a query otherwise than what it is matched to.

    E5 models, for one, were trained with ``"query: "`` before a question
    and ``"passage: "`` before a text to find: :meth:`Embedder.embed` makes
    the passages' vectors and :meth:`embed_queries` the questions'.
    """

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns one unit row per query, shape ``(len(texts), dimensions)``.

        Raises:
            EmbedderError: The model could not be loaded or run.
        """
        ...


class VocabularyEmbedder(Embedder, Protocol):
    """An embedder that can tell the words its model knows whole.

    MiniLM's WordPiece vocabulary holds about 23,000 whole words: common
    English words, names and places. Recall uses it to tell a name spelt
    otherwise than the store spells it from a word of its own
    (:mod:`ctx.hub.retrieval.index.spelling`).
    """

    def knows_word(self, word: str) -> bool:
        """Returns whether the model's vocabulary holds ``word`` whole."""
        ...


def knows_word(embedder: Embedder, word: str) -> bool:
    """Returns whether ``word`` is a whole word of ``embedder``'s vocabulary.

    That is :meth:`VocabularyEmbedder.knows_word` where the embedder has
    it; an embedder that cannot tell (an endpoint, the hashing embedder)
    is answered by the WordPiece vocabulary that ships with ctx, which
    stands for "a common word or name" whatever makes the vectors.
    """
    if callable(getattr(type(embedder), "knows_word", None)):
        return cast("VocabularyEmbedder", embedder).knows_word(word)
    return is_whole_word(word)


class ReadingEmbedder(Embedder, Protocol):
    """An embedder that can tell a text its model was not trained to read.

    all-MiniLM-L6-v2 was trained on English: for a text in Chinese or
    Russian its cosines are not a measure of meaning (every such text sits
    at 0.4-0.7 of every other, an unrelated question nearest of all), and
    recall leaves its vector channel out for such a question
    (:func:`~ctx.hub.retrieval.ranking.search_channels`).
    """

    def reads(self, text: str) -> bool:
        """Returns whether the model's vectors of ``text`` mean something."""
        ...


def reads(embedder: Embedder, text: str) -> bool:
    """Returns whether ``embedder``'s vectors of ``text`` mean something.

    That is :meth:`ReadingEmbedder.reads` where the embedder has it; any
    other reads every text (the multilingual E5, an endpoint ctx cannot
    ask, the hashing embedder, whose vectors are the text's own words).
    """
    if callable(getattr(type(embedder), "reads", None)):
        return cast("ReadingEmbedder", embedder).reads(text)
    return True


_IDEOGRAPH = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
"""Chinese characters and Japanese kana: written without spaces, each one
carries about what a word does."""
_LETTERS = re.compile(r"[^\W\d_]+")


def mostly_latin(text: str) -> bool:
    """Returns whether at least half of ``text``'s words are in Latin letters.

    A word is a run of letters, and each Chinese character or Japanese kana
    is one (:data:`_IDEOGRAPH`): "天气怎么样 weather" is five words of
    Chinese and one of English. Latin letters are those of Unicode's Latin
    blocks up to Latin Extended-B (English, and the accented letters of
    other languages in Latin script). A text without letters counts as
    Latin.
    """
    words = latin = 0
    for run in _LETTERS.findall(text):
        ideographs = len(_IDEOGRAPH.findall(run))
        if ideographs:
            words += ideographs + bool(_IDEOGRAPH.sub("", run))
        else:
            words += 1
            latin += max(run) <= "\u024f"
    return latin * 2 >= words


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Returns the vectors of ``texts`` asked as queries of ``embedder``.

    That is :meth:`QueryEmbedder.embed_queries` where the embedder has it,
    and :meth:`Embedder.embed` for an embedder that embeds both alike.

    Raises:
        EmbedderError: The model could not be loaded or run.
    """
    # Looked up on the type: isinstance() on a Protocol would read every
    # member, and a remote embedder's ``dimensions`` asks its server.
    if callable(getattr(type(embedder), "embed_queries", None)):
        return cast("QueryEmbedder", embedder).embed_queries(texts)
    return embedder.embed(texts)


def cpu_count() -> int:
    """Returns the number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1
