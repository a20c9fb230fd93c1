"""The one small interface every embedder implements, and its error.

An embedder turns texts into unit vectors. The store records an embedder's
:attr:`Embedder.name` next to the vectors it built, so the name must change
whenever the vectors would (another model, another version, another size):
a changed name means a reindex.
"""

from __future__ import annotations

import os
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
    "VocabularyEmbedder",
    "cpu_count",
    "embed_queries",
    "knows_word",
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
