"""An optional reranker: a ``/v1/rerank`` endpoint reorders the best hits.

Off by default; ``[recall.reranker] url`` turns it on
(:class:`~ctx.hub.config.RerankerSettings`). After the ranking's last step,
the ``top`` best hits are sent to the endpoint with the question, in the
shape local servers such as text-embeddings-inference and llama.cpp offer::

    POST {"query": "...", "documents": ["...", ...], "top_n": N, "model": "..."}

and either answer shape is read: ``{"results": [{"index": i,
"relevance_score": s}, ...]}`` (llama.cpp, Jina, Cohere) or ``[{"index": i,
"score": s}, ...]`` (text-embeddings-inference). Each reranked hit's fused
score and its reranker score are both scaled to 0..1 over the reranked hits
(min-max) and blended, ``(1 - weight) * fused + weight * reranker``; the hits
are put in that order and given the fused scores they had, best first, so
scores still fall down the list and hits below ``top`` keep their places.

It fails open: an endpoint that cannot be reached, is slow (``timeout``),
answers an HTTP error or an answer of the wrong shape leaves the ranking as
it was, with a warning.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ctx.engine import Memory
from ctx.hub.config import RerankerSettings

if TYPE_CHECKING:  # ranking calls this module: no import back at run time
    from ctx.hub.retrieval.ranking import Ranked

__all__ = ["RerankError", "rerank"]


class RerankError(Exception):
    """The endpoint failed; the message says how (kept inside this module)."""


def _ask(settings: RerankerSettings, query: str, texts: Sequence[str]) -> list[float]:
    """Returns one score per text from the endpoint.

    Raises:
        RerankError: It could not be reached or answered the wrong shape.
    """
    payload: dict[str, object] = {
        "query": query,
        "documents": list(texts),
        "top_n": len(texts),
    }
    if settings.model:
        payload["model"] = settings.model
    # Only a store that configures a reranker pays for an HTTP client
    # (http.client, ssl, email: 15 ms to import); every recall imports this.
    from ctx.hub.http_json import PostFailedError, post_json

    try:
        answer = post_json(settings.url, payload, timeout=settings.timeout)
    except PostFailedError as exc:
        raise RerankError(str(exc)) from exc
    return _scores(answer, len(texts))


def _scores(answer: object, count: int) -> list[float]:
    """Returns the score of each document from either answer shape."""
    items = answer.get("results") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        raise RerankError("the answer has no results")
    scores: list[float | None] = [None] * count
    for item in items:
        if not isinstance(item, dict):
            raise RerankError("a result is not an object")
        index = item.get("index")
        score = item.get("relevance_score", item.get("score"))
        if (
            not isinstance(index, int)
            or not 0 <= index < count
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise RerankError("a result has no valid index and score")
        scores[index] = float(score)
    if any(s is None for s in scores):
        raise RerankError(f"it scored {len(items)} of {count} documents")
    return [s for s in scores if s is not None]


def _scaled(values: Sequence[float]) -> list[float]:
    low, high = min(values), max(values)
    if high == low:
        return [1.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def rerank(
    hits: list[Ranked],
    query: str,
    read: Callable[[str], Memory | None],
    settings: RerankerSettings,
) -> tuple[list[Ranked], str | None]:
    """Returns ``hits`` with the best ``settings.top`` reranked, and a warning.

    The warning (None when all went well, or when no reranker is set) says
    why the ranking was left as it was.
    """
    if not settings.url or len(hits) < 2:
        return hits, None
    head = hits[: settings.top]
    texts = []
    for hit in head:
        memory = read(hit.id)
        body = "" if memory is None else memory.body
        title = None if memory is None else memory.title
        texts.append(f"{title}\n{body}" if title else body)
    try:
        scores = _ask(settings, query, texts)
    except RerankError as exc:
        return hits, (
            f"The reranker at {settings.url} failed ({exc}); ranked without it."
        )
    fused = _scaled([hit.score for hit in head])
    judged = _scaled(scores)
    blend = [
        (1 - settings.weight) * f + settings.weight * r
        for f, r in zip(fused, judged, strict=True)
    ]
    order = sorted(range(len(head)), key=lambda i: (-blend[i], head[i].id))
    places = sorted((hit.score for hit in head), reverse=True)
    reordered = [head[i] for i in order]
    for hit, score in zip(reordered, places, strict=True):
        hit.score = score
    return [*reordered, *hits[settings.top :]], None
