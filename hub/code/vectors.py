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
about 6 ms on an idle machine (``benchmarks/results/vectors.md``, flat), but
40 ms or more at 68k on two cores shared with other work, where numpy's
threads wait for the CPU. So a long-running process (the hub) builds an
hnswlib graph over the rows once there are :data:`GRAPH_MIN` of them
(:class:`Graph`, in memory only: built again by a new hub, never a file to
keep in step) and searches it for a question over every chunk, with the
rows appended since it was built searched exactly beside it; a question
filtered by language or path stays exact.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import blake3
import numpy as np
import numpy.typing as npt

from ctx.hub.code.manifest import KEYS, ROWS, stored_keys

__all__ = ["GRAPH_MIN", "CodeVectors", "Graph"]

GRAPH_MIN = 20_000
"""Rows from which the hub searches a graph (below, exact costs a few ms)."""

_M, _EF_CONSTRUCTION, _EF = 16, 200, 200  # ef above the channel's depth (100)


class Graph:
    """An hnswlib graph over the first ``count`` rows of a :class:`CodeVectors`.

    ``keys`` names those rows' keys (a digest): the graph serves only
    vectors whose first rows are still those (a compaction renumbers them).
    """

    def __init__(self, index: Any, count: int, keys: str) -> None:
        self.index = index
        self.count = count
        self.keys = keys

    @classmethod
    def build(cls, vectors: CodeVectors) -> Graph:
        """Returns a graph over every row ``vectors`` holds now (slow: seconds)."""
        import hnswlib  # heavy: kept lazy

        count = len(vectors.rows)
        index = hnswlib.Index(space="ip", dim=vectors.dimensions)
        index.init_index(
            max_elements=max(count, 1), ef_construction=_EF_CONSTRUCTION, M=_M
        )
        step = 8192
        for start in range(0, count, step):
            block = np.ascontiguousarray(vectors.matrix[start : start + step])
            index.add_items(block, np.arange(start, start + len(block)))
        index.set_ef(_EF)
        return cls(index, count, vectors.digest(count))


class CodeVectors:
    """The vectors of a code index folder, for one embedder's dimensions."""

    def __init__(self, folder: Path, dimensions: int) -> None:
        self.folder = folder
        self.dimensions = dimensions
        self.rows: dict[str, int] = {}
        self._matrix: npt.NDArray[np.float32] = np.zeros(
            (0, dimensions), dtype=np.float32
        )
        self.graph: Graph | None = None
        self._load()

    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        """Returns the rows (mapped from the file)."""
        return self._matrix

    def digest(self, count: int) -> str:
        """Returns a digest of the keys of the first ``count`` rows."""
        keys = list(self.rows)[:count]  # a dict keeps its rows' order
        return blake3.blake3("\n".join(keys).encode()).hexdigest()

    def adopt(self, graph: Graph | None) -> bool:
        """Searches ``graph`` from now on if it was built over these rows."""
        if graph is None or graph.count > len(self.rows):
            return False
        if graph.keys != self.digest(graph.count):
            return False
        self.graph = graph
        return True

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
        self.graph = None  # rows renumbered

    def nearest(
        self, query: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[int, float]]:
        """Returns the best (row, cosine) over every row, through the graph.

        The rows appended since the graph was built are scored exactly.

        Raises:
            ValueError: There is no graph.
        """
        if self.graph is None:
            raise ValueError("No graph to search.")
        vector = query.astype(np.float32).reshape(1, -1)
        count = self.graph.count
        found: list[tuple[int, float]] = []
        if count:
            labels, distances = self.graph.index.knn_query(
                vector, k=min(limit, count), num_threads=1
            )
            found = [
                (int(row), 1.0 - float(d))
                for row, d in zip(labels[0], distances[0], strict=True)
            ]
        if len(self._matrix) > count:
            scores = self._matrix[count:] @ vector.reshape(-1)
            found += [(count + i, float(score)) for i, score in enumerate(scores)]
        found.sort(key=lambda pair: -pair[1])
        return found[:limit]

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
