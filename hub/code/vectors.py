"""The code index's vectors: one per distinct chunk text, appended, searched exactly.

Two files hold them: ``vectors.f32`` (rows of float32, appended) and
``vector_keys.txt`` (the key of each row, one a line: the blake3 of the text
embedded). A chunk whose text was embedded before, in any file or any earlier
index run, reuses its row, so re-indexing a changed file embeds only its
changed chunks. Rows are only appended: a crash between the two appends
leaves at most a row without a key (or a key without a row), and only the
rows that have both count. Rows no chunk uses any more are dropped when they
outnumber the used ones (:meth:`CodeVectors.compact`).

The rows file is memory-mapped, not read: a re-index that embeds one chunk
does not read a million lines' vectors. A search is exact (a matrix product
over the rows of the chunks asked about): at 100k chunks of 384 dimensions
about 6 ms (``benchmarks/results/vectors.md``, flat), with no graph to build
or load.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ctx.hub.code.manifest import KEYS, ROWS, stored_keys

__all__ = ["CodeVectors"]


class CodeVectors:
    """The vectors of a code index folder, for one embedder's dimensions."""

    def __init__(self, folder: Path, dimensions: int) -> None:
        self.folder = folder
        self.dimensions = dimensions
        self.rows: dict[str, int] = {}
        self._matrix: npt.NDArray[np.float32] = np.zeros(
            (0, dimensions), dtype=np.float32
        )
        self._load()

    def _load(self) -> None:
        keys = stored_keys(self.folder, self.dimensions) or []
        self._matrix = self._map(len(keys))
        self.rows = {key: row for row, key in enumerate(keys)}

    def _map(self, count: int) -> npt.NDArray[np.float32]:
        """Returns the first ``count`` rows, mapped from the file (not read)."""
        if count == 0:
            return np.zeros((0, self.dimensions), np.float32)
        return np.memmap(
            self.folder / ROWS,
            dtype=np.float32,
            mode="r",
            shape=(count, self.dimensions),
        )

    def missing(self, keys: Sequence[str]) -> list[str]:
        """Returns the keys, each once, that have no vector yet."""
        return [key for key in dict.fromkeys(keys) if key not in self.rows]

    def append(self, keys: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Appends one row per key and makes it durable."""
        if not keys:
            return
        if len(self.rows) != len(self._matrix) or self._torn():
            self._rewrite(self._matrix, list(self.rows))
        block = np.ascontiguousarray(vectors, dtype=np.float32)
        with (self.folder / ROWS).open("ab") as file:
            file.write(block.tobytes())
            file.flush()
            os.fsync(file.fileno())
        with (self.folder / KEYS).open("a", encoding="ascii") as file:
            file.write("".join(f"{key}\n" for key in keys))
            file.flush()
            os.fsync(file.fileno())
        start = len(self._matrix)
        self._matrix = self._map(start + len(keys))
        self.rows.update({key: start + i for i, key in enumerate(keys)})

    def _torn(self) -> bool:
        """Returns whether the files hold more than the rows read (a crash)."""
        try:
            size = (self.folder / ROWS).stat().st_size
            lines = (self.folder / KEYS).read_bytes().count(b"\n")
        except OSError:
            return True
        return size != len(self._matrix) * self.dimensions * 4 or lines != len(
            self._matrix
        )

    def compact(self, used: Collection[str]) -> None:
        """Drops the rows no chunk uses when they outnumber the used ones."""
        if len(self.rows) <= 2 * max(1, len(used)):
            return
        keep = [key for key in self.rows if key in used]
        matrix = self._matrix[[self.rows[key] for key in keep]]
        self._rewrite(matrix, keep)

    def _rewrite(self, matrix: npt.NDArray[np.float32], keys: list[str]) -> None:
        for name, data in (
            (ROWS, np.ascontiguousarray(matrix, np.float32).tobytes()),
            (KEYS, "".join(f"{key}\n" for key in keys).encode("ascii")),
        ):
            temp = self.folder / f".{name}.{os.getpid()}"
            with temp.open("wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, self.folder / name)
        self._matrix = self._map(len(keys))
        self.rows = {key: row for row, key in enumerate(keys)}

    def search(
        self, query: npt.NDArray[np.float32], keys: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """Returns the best (position in ``keys``, cosine), best first."""
        positions = [i for i, key in enumerate(keys) if key in self.rows]
        if not positions or limit < 1:
            return []
        rows = np.fromiter(
            (self.rows[keys[i]] for i in positions),
            dtype=np.int64,
            count=len(positions),
        )
        return self.search_rows(query, rows, np.asarray(positions), limit)

    def search_rows(
        self,
        query: npt.NDArray[np.float32],
        rows: npt.NDArray[np.int64],
        positions: npt.NDArray[np.int64],
        limit: int,
    ) -> list[tuple[int, float]]:
        """Returns the best (position, cosine) among ``rows`` (each at its position)."""
        if rows.size == 0:
            return []
        # Scoring every row and picking costs less than copying the rows out.
        scores = (self._matrix @ query.astype(np.float32).reshape(-1))[rows]
        limit = min(limit, scores.size)
        best = np.argpartition(-scores, limit - 1)[:limit]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(positions[i]), float(scores[i])) for i in best]
