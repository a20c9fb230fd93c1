"""HNSW search over a vector index's rows (hnswlib), with an exact delta.

See :mod:`ctx.hub.retrieval.index.vectors` for when it is chosen and what it costs.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
import numpy as np
import numpy.typing as npt

from ctx.engine import plural
from ctx.hub.retrieval.index.rows import (
    FlatVectors,
    Kind,
    Sidecar,
    Vectors,
    index_error,
)

if TYPE_CHECKING:
    from typing import Self

__all__ = ["HnswVectors"]

_GRAPH_CHUNK = 65_536  # rows copied out of the data file per graph insertion


class HnswVectors(FlatVectors):
    """Approximate cosine search over an hnswlib graph (inner product space).

    The vectors are kept as a :class:`FlatVectors` keeps them, and the graph
    (whose labels are rows) is built over the first rows. Rows added since
    (the delta, at most :attr:`DELTA_MAX`) are searched exactly and merged
    with the graph's answer; when the delta is full it is added to the
    graph. So adding a few vectors and saving appends to the data file and
    leaves the graph file as it is: rewriting a 100k-vector graph (170 MB)
    to add one cost ~150 ms. Removal marks labels deleted in memory; the
    sidecar's keys carry the marks to the next load. :meth:`compact`
    rebuilds the graph from the live rows.

    An ``allowed`` set of up to ``exact_below`` rows is scored exactly from
    the array (hnswlib's filtered search gets slow when few nodes pass: 34 ms
    for 100 of 50k, against under 1 ms here); a larger one is applied inside
    the graph search by hnswlib's filter callback, with ef raised by the
    inverse of the fraction allowed (at most :attr:`MAX_EF`) to keep recall.

    :meth:`open` with ``graph=False`` leaves the graph on disk: searches are
    exact over the rows, and the graph is loaded only when a change needs it
    (the delta is full, or :meth:`compact`). Loading a 100k-vector graph
    costs more than one exact search, so a process that asks one question
    answers sooner without it.
    """

    kind: ClassVar[Kind] = "hnsw"
    M: ClassVar[int] = 16
    EF_CONSTRUCTION: ClassVar[int] = 200
    MAX_EF: ClassVar[int] = 512
    DELTA_MAX: ClassVar[int] = 4096

    def __init__(
        self,
        dimensions: int,
        path: str | os.PathLike[str] | None = None,
        *,
        ef: int = 64,
        exact_below: int = 10_000,
    ) -> None:
        super().__init__(dimensions, path)
        self.ef = ef
        self.exact_below = exact_below
        self._graph = self._new_graph(1024)
        self._graph_rows = 0  # rows 0.. in the graph; the rest is the delta
        self._saved: tuple[str, int, int] | None = None  # graph file, size, capacity
        self._unloaded: tuple[Path, Sidecar] | None = None  # graph left on disk

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, graph: bool = True) -> Self:
        """Returns the index saved in folder ``path``.

        Args:
            path: The index folder.
            graph: Load the graph now. Without it, searches are exact over
                the rows (the answers of a flat index) and the graph is
                loaded when a change first needs it.

        Raises:
            VectorIndexError: There is no HNSW index there, or it is corrupt.
        """
        index = super().open(path)
        if graph:
            index._load_graph()
        return index

    @property
    def graph_loaded(self) -> bool:
        """Returns whether the graph is in memory (searches use it)."""
        return self._unloaded is None

    def _new_graph(self, capacity: int) -> Any:  # hnswlib.Index: untyped
        import hnswlib  # heavy: kept lazy

        graph = hnswlib.Index(space="ip", dim=self._dimensions)
        graph.init_index(
            max_elements=capacity, ef_construction=self.EF_CONSTRUCTION, M=self.M
        )
        return graph

    def _append(self, rows: Vectors, first: int) -> None:
        super()._append(rows, first)
        count = first + rows.shape[0]
        if self._graph_rows < 0:
            self._load_graph()  # saved before sidecars counted the graph's rows
        if count - self._graph_rows >= self.DELTA_MAX:
            self._load_graph()
            self._grow_graph(count)

    @classmethod
    def from_flat(cls, flat: FlatVectors) -> HnswVectors:
        """Returns an HNSW index over the rows of ``flat``, sharing its data file.

        ``flat`` must not be used afterwards. The graph is built from the
        (memory-mapped) rows in chunks, so no second copy of the vectors is
        made: converting a million went from about 10 GB resident to the
        graph's own size.
        """
        index = cls(flat.dimensions, flat.path)
        index._keys, index._rows = flat._keys, flat._rows
        index._matrix, index._buffer = flat._matrix, flat._buffer
        index._live, index._dead, index._data = flat._live, flat._dead, flat._data
        index.made_by, index._sums = flat.made_by, flat._sums
        index._graph = index._new_graph(max(1024, len(index._keys)))
        index._grow_graph(len(index._keys))
        return index

    def _grow_graph(self, count: int) -> None:
        """Adds rows ``_graph_rows`` to ``count`` to the graph."""
        capacity = self._graph.get_max_elements()
        if count > capacity:
            self._graph.resize_index(max(count, 2 * capacity))
        for start in range(self._graph_rows, count, _GRAPH_CHUNK):
            rows = np.arange(start, min(start + _GRAPH_CHUNK, count), dtype=np.int64)
            self._graph.add_items(np.ascontiguousarray(self._matrix[rows]), rows)
            for row in rows[~self._live[rows]]:
                self._graph.mark_deleted(int(row))
        self._graph_rows = count
        self._saved = None

    def _tombstone(self, rows: list[int]) -> None:
        super()._tombstone(rows)
        if self._unloaded is not None:
            return  # loading the graph marks every removed row
        for row in rows:
            if row < self._graph_rows:
                self._graph.mark_deleted(row)

    def _search(
        self, query: Vectors, k: int, candidates: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        if self._unloaded is not None or (
            candidates is not None and candidates.size <= self.exact_below
        ):
            return super()._search(query, k, candidates)
        cut = self._graph_rows
        if candidates is None:
            delta = np.arange(cut, self._matrix.shape[0])
            delta = delta[self._live[cut:]]
        else:
            delta = candidates[candidates >= cut]
        found = self._graph_search(query, k, candidates) if cut else []
        if delta.size:
            found += super()._search(query, k, delta)
            found.sort(key=lambda hit: -hit[1])
        return found[:k]

    def _graph_search(
        self, query: Vectors, k: int, candidates: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        cut = self._graph_rows
        live = int(np.count_nonzero(self._live[:cut]))
        if candidates is not None:
            candidates = candidates[candidates < cut]
            live = candidates.size
        k = min(k, live)
        if k <= 0:
            return []
        ef = max(self.ef, k)
        filter_ = None
        if candidates is not None:
            ef = min(max(ef, self.MAX_EF), round(ef * cut / live))
            filter_ = set(candidates.tolist()).__contains__
        self._graph.set_ef(ef)
        for fewer in range(k, 0, -1):
            try:
                labels, distances = self._graph.knn_query(
                    query, k=fewer, num_threads=1, filter=filter_
                )
            except RuntimeError:
                # hnswlib found fewer than asked (a sparse filter): ask for less.
                continue
            if not np.isfinite(distances).all():
                bad = labels[0][~np.isfinite(distances[0])]
                raise self._corrupt(bad, "rows that are not numbers")
            return [
                (int(row), 1.0 - float(d))
                for row, d in zip(labels[0], distances[0], strict=True)
            ]
        return []

    def _rebuild(self, live: npt.NDArray[np.int64]) -> None:
        super()._rebuild(live)
        self._unloaded = None
        self._graph = self._new_graph(max(1024, live.size))
        self._graph_rows = 0
        self._grow_graph(live.size)

    def _write_data(self, folder: Path, sidecar: Sidecar) -> Sidecar:
        sidecar = super()._write_data(folder, sidecar)
        if self._saved is None or not (folder / self._saved[0]).exists():
            self._saved = self._write_graph(folder)
        graph, size, capacity = self._saved
        return msgspec.structs.replace(
            sidecar,
            graph=graph,
            graph_size=size,
            capacity=capacity,
            graph_rows=self._graph_rows,
        )

    def _write_graph(self, folder: Path) -> tuple[str, int, int]:
        graph = f"hnsw-{secrets.token_hex(6)}.bin"
        file = folder / graph
        try:
            self._graph.save_index(str(file))
            with file.open("rb") as out:
                os.fsync(out.fileno())
            size = file.stat().st_size
        except (OSError, RuntimeError) as exc:
            file.unlink(missing_ok=True)
            raise index_error(f"Cannot write the vector index at {folder}.") from exc
        return graph, size, self._graph.get_max_elements()

    def _load(self, folder: Path, sidecar: Sidecar) -> None:
        super()._load(folder, sidecar)
        file = folder / sidecar.graph
        try:
            actual = file.stat().st_size if sidecar.graph else -1
        except OSError as exc:
            raise index_error(f"The vector index at {folder} lacks its graph.") from exc
        if actual != sidecar.graph_size:
            # Checked before hnswlib reads it: a truncated graph can crash it.
            raise index_error(
                f"The vector graph at {folder} holds {plural(actual, 'byte')}, "
                f"not {sidecar.graph_size:,}."
            )
        if sidecar.graph_rows > len(sidecar.keys):
            raise index_error(f"The vector index at {folder} is corrupt.")
        self._unloaded = (folder, sidecar)
        self._graph_rows = sidecar.graph_rows  # -1 until the graph is loaded
        self._saved = (sidecar.graph, sidecar.graph_size, sidecar.capacity)

    def _adopt_graph(self, other: HnswVectors) -> bool:
        """Takes ``other``'s loaded graph if it is the graph saved here.

        Refused (False) when ``other`` has no graph in memory, has changed
        it since it was saved, or has removed a row this index still holds.
        Rows removed here but not in ``other`` are marked in the graph,
        which ``other`` must not be used with afterwards.
        """
        if self._unloaded is None or other._unloaded is not None:
            return False
        if other._saved is None or self._saved is None:
            return False
        rows = other._graph_rows
        if other._saved[0] != self._saved[0] or self._graph_rows not in (-1, rows):
            return False
        if rows > len(self._keys) or np.any(~other._live[:rows] & self._live[:rows]):
            return False
        graph = other._graph
        _mark_deleted(graph, np.flatnonzero(other._live[:rows] & ~self._live[:rows]))
        self._graph, self._graph_rows, self._unloaded = graph, rows, None
        return True

    def _load_graph(self) -> None:
        """Reads the graph left on disk by :meth:`open`, if any.

        Rows removed since it was saved, or since the index was opened, are
        marked deleted in it.
        """
        if self._unloaded is None:
            return
        folder, sidecar = self._unloaded
        import hnswlib

        graph = hnswlib.Index(space="ip", dim=sidecar.dimensions)
        try:
            graph.load_index(str(folder / sidecar.graph), max_elements=sidecar.capacity)
        except (RuntimeError, ValueError, MemoryError) as exc:
            raise index_error(f"The vector graph at {folder} is corrupt.") from exc
        rows = graph.element_count
        if rows > len(sidecar.keys) or sidecar.graph_rows not in (-1, rows):
            raise index_error(
                f"The vector graph at {folder} holds {plural(rows, 'row')}, not the "
                f"{sidecar.graph_rows} of the {len(sidecar.keys)} it indexes."
            )
        self._graph_rows = rows
        _mark_deleted(graph, np.flatnonzero(~self._live[:rows]))
        self._graph = graph
        self._unloaded = None


def _mark_deleted(graph: Any, rows: npt.NDArray[np.intp]) -> None:
    """Marks ``rows`` deleted in an hnswlib graph (rows marked already stay so)."""
    for row in rows:
        with contextlib.suppress(RuntimeError):
            graph.mark_deleted(int(row))
