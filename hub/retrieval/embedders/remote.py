"""Adapters for embedding servers: OpenAI-compatible and Ollama.

Both speak JSON over HTTP through :func:`~ctx.hub.http_json.post_json`.
Every failure, from a server that is down to an answer of the wrong shape,
becomes one :class:`~ctx.hub.retrieval.embedders.base.EmbedderError` whose message
names the URL.
The vectors are normalised here whatever the server does, so that they obey
the :class:`~ctx.hub.retrieval.embedders.base.Embedder` contract.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ctx.engine import plural
from ctx.hub.http_json import PostFailedError, post_json
from ctx.hub.retrieval.embedders.base import EmbedderError

__all__ = ["OllamaEmbedder", "OpenAIEmbedder"]

_HINT = "Start the embedding server, or choose another embedder in the store's config."
_BATCH = 64


class _JSONEndpoint:
    """POSTs JSON to one URL and returns the decoded answer."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float) -> None:
        self.url = url
        self._headers = headers
        self._timeout = timeout

    def post(self, payload: object) -> object:
        """Returns the decoded JSON answer to ``payload``.

        Raises:
            EmbedderError: The server could not be reached, answered with an
                HTTP error, or did not answer JSON.
        """
        try:
            return post_json(
                self.url, payload, timeout=self._timeout, headers=self._headers
            )
        except PostFailedError as exc:
            raise EmbedderError(
                f"The embedding endpoint {self.url} {exc}.", hint=_HINT
            ) from exc

    def bad_answer(self, what: str) -> EmbedderError:
        """Returns the error for a JSON answer of the wrong shape."""
        return EmbedderError(
            f"The embedding endpoint {self.url} answered {what}.", hint=_HINT
        )


def _matrix(
    endpoint: _JSONEndpoint, rows: object, count: int, dimensions: int | None
) -> npt.NDArray[np.float32]:
    """Returns ``rows`` (lists of numbers) as normalised float32 rows.

    Raises:
        EmbedderError: The rows are not ``count`` finite, non-zero vectors of
            one length (``dimensions`` if given).
    """
    if not isinstance(rows, list) or len(rows) != count:
        got = plural(len(rows), "vector") if isinstance(rows, list) else "no vectors"
        raise endpoint.bad_answer(f"{got} for {plural(count, 'text')}")
    try:
        matrix = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise endpoint.bad_answer(
            "vectors that are not lists of numbers of one length"
        ) from exc
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise endpoint.bad_answer("something other than one vector per text")
    if dimensions is not None and matrix.shape[1] != dimensions:
        raise endpoint.bad_answer(
            f"vectors of {matrix.shape[1]} dimensions where {dimensions} were expected"
        )
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or not np.all(norms > 0.0):
        raise endpoint.bad_answer("a zero or non-finite vector")
    result: npt.NDArray[np.float32] = (matrix / norms).astype(np.float32)
    return result


class _RemoteEmbedder:
    """What both adapters share: batching and the learned dimensions."""

    _endpoint: _JSONEndpoint
    _dimensions: int | None

    @property
    def dimensions(self) -> int:
        """Returns the length of every vector.

        Unless given when the embedder was made, the server is asked once,
        with one short text, the first time this is read before an embed.
        """
        if self._dimensions is None:
            self.embed(["dimensions"])
        assert self._dimensions is not None  # set by embed()
        return self._dimensions

    def _request(self, texts: list[str]) -> object:
        """Returns the vectors the server gave for one batch, not yet checked."""
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns one unit row per text, shape ``(len(texts), dimensions)``.

        No texts make no request; their shape is ``(0, 0)`` while the
        dimensions are still unknown.

        Raises:
            EmbedderError: The server is down, failed, or answered nonsense.
        """
        if not texts:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), _BATCH):
            batch = list(texts[start : start + _BATCH])
            rows = _matrix(
                self._endpoint, self._request(batch), len(batch), self._dimensions
            )
            self._dimensions = rows.shape[1]
            parts.append(rows)
        return np.concatenate(parts)


def _base(url: str) -> str:
    """Returns a server's base URL without a trailing slash.

    Raises:
        EmbedderError: The URL is not http(s).
    """
    if not url.startswith(("http://", "https://")):
        raise EmbedderError(
            f"An embedding server's base_url must start with http:// or "
            f"https://, not {url!r}."
        )
    return url.rstrip("/")


class OpenAIEmbedder(_RemoteEmbedder):
    """Embeds texts with an OpenAI-compatible ``POST /v1/embeddings``.

    Works with OpenAI itself and with the many servers that copy its API
    (vLLM, llama.cpp, LM Studio, text-embeddings-inference, Ollama's ``/v1``).

    Args:
        base_url: The server, e.g. ``"https://api.openai.com"``; a trailing
            ``/v1`` is allowed.
        model: The model to ask for.
        api_key: Sent as a bearer token when given.
        dimensions: Asked of the server (OpenAI's ``dimensions`` field, for
            models that can shorten their vectors) and checked in every
            answer; when left out, learned from the first answer.
        timeout: Seconds to wait for one answer.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout: float = 30.0,
    ) -> None:
        base = _base(base_url)
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._endpoint = _JSONEndpoint(base + "/v1/embeddings", headers, timeout)
        self._model = model
        self._asked_dimensions = dimensions
        self._dimensions = dimensions

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self._endpoint.url!r}, {self._model!r})"

    @property
    def name(self) -> str:
        """Returns ``"openai:<model>@1"`` (with ``-<dimensions>`` if asked)."""
        size = f"-{self._asked_dimensions}" if self._asked_dimensions else ""
        return f"openai:{self._model}{size}@1"

    def _request(self, texts: list[str]) -> object:
        payload: dict[str, object] = {"model": self._model, "input": texts}
        if self._asked_dimensions is not None:
            payload["dimensions"] = self._asked_dimensions
        answer = self._endpoint.post(payload)
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list):
            raise self._endpoint.bad_answer('JSON without a "data" list')
        rows: list[object] = [None] * len(data)
        for position, item in enumerate(data):
            if not isinstance(item, dict) or "embedding" not in item:
                raise self._endpoint.bad_answer('an item without an "embedding"')
            # Servers may return the items in any order; "index" says which
            # input each one belongs to.
            index = item.get("index", position)
            if not isinstance(index, int) or not 0 <= index < len(data):
                raise self._endpoint.bad_answer(f"an item with index {index!r}")
            rows[index] = item["embedding"]
        return rows


class OllamaEmbedder(_RemoteEmbedder):
    """Embeds texts with Ollama's ``POST /api/embed``.

    Args:
        base_url: The Ollama server.
        model: An embedding model pulled into it, e.g. ``"nomic-embed-text"``.
        timeout: Seconds to wait for one answer (the first call may load the
            model).
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:11434",
        model: str = "nomic-embed-text",
        timeout: float = 60.0,
    ) -> None:
        self._endpoint = _JSONEndpoint(_base(base_url) + "/api/embed", {}, timeout)
        self._model = model
        self._dimensions = None

    def __repr__(self) -> str:
        return f"OllamaEmbedder({self._endpoint.url!r}, {self._model!r})"

    @property
    def name(self) -> str:
        """Returns ``"ollama:<model>@1"``."""
        return f"ollama:{self._model}@1"

    def _request(self, texts: list[str]) -> object:
        answer = self._endpoint.post({"model": self._model, "input": texts})
        if not isinstance(answer, dict) or "embeddings" not in answer:
            raise self._endpoint.bad_answer('JSON without "embeddings"')
        return answer["embeddings"]
