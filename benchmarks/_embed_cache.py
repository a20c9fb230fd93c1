"""An embedder that remembers the vectors it made, on disk, for quality runs.

Quality benchmarks rebuild the same corpora many times (one store per
variant, one run after another); the vectors of a text never change for one
model, so :class:`CachedEmbedder` keys them by the blake3 hash of the text
(and whether it was embedded as a query) and embeds only the texts it has
not seen. The file lives under ``benchmarks/.data`` (not committed) and is
named after the embedder's ``name``, so another model never reads it.
Timing benchmarks must not use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import blake3
import numpy as np
import numpy.typing as npt

from ctx.hub.retrieval.embedders import Embedder, embed_queries

DATA = Path(__file__).resolve().parent / ".data"


class CachedEmbedder:
    """Wraps ``inner``; embeds each distinct text once across runs.

    Args:
        inner: The embedder that makes the vectors.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.path = DATA / f"vectors-{inner.name.replace('/', '_')}.npz"
        self._known: dict[bytes, npt.NDArray[np.float32]] = {}
        self.embedded = 0
        if self.path.exists():
            with np.load(self.path) as stored:
                keys, rows = stored["keys"], stored["rows"]
            self._known = {bytes(k): rows[i] for i, k in enumerate(keys)}
        self._saved = len(self._known)

    @property
    def name(self) -> str:
        """Returns the inner embedder's name: the store sees that model."""
        return self.inner.name

    @property
    def dimensions(self) -> int:
        """Returns the inner embedder's dimensions."""
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns the vectors of ``texts`` as passages (documents)."""
        return self._cached(texts, b"p", self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Returns the vectors of ``texts`` asked as queries."""
        return self._cached(texts, b"q", lambda t: embed_queries(self.inner, t))

    def _cached(self, texts, kind, make) -> npt.NDArray[np.float32]:  # type: ignore[no-untyped-def]
        keys = [blake3.blake3(kind + t.encode()).digest(16) for t in texts]
        missing = sorted(
            {
                k: t for k, t in zip(keys, texts, strict=True) if k not in self._known
            }.items()
        )
        if missing:
            rows = make([t for _, t in missing])
            self.embedded += len(missing)
            for (key, _), row in zip(missing, rows, strict=True):
                self._known[key] = row
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = self._known[key]
        return out

    def save(self) -> None:
        """Writes what is new to the cache file."""
        if len(self._known) == self._saved:
            return
        DATA.mkdir(exist_ok=True)
        keys = np.array(list(self._known), dtype="S16")
        rows = np.stack(list(self._known.values())).astype(np.float32)
        temporary = self.path.with_suffix(".tmp.npz")
        np.savez(temporary, keys=keys, rows=rows)
        temporary.replace(self.path)
        self._saved = len(self._known)
