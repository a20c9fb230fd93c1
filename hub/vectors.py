"""Nearest neighbours by cosine: one vector per blob, behind one interface.

:class:`VectorIndex` is the interface the hub's vector channel uses. Keys are
blob ids (a memory on fifty branches has one vector); a query may pass the
set of keys it allows (a branch's live set) and gets only those back. Vectors
are float32 and L2-normalised on the way in, so cosine is a dot product.

An ``allowed`` frozenset has its rows cached until the index changes, so a
branch's live set passed as the same frozenset is turned into rows once.

Two implementations:

- :class:`FlatVectors`: exact, by brute force with numpy over a memory-mapped
  float32 array (rows are appended; removal leaves tombstones that
  :meth:`~VectorIndex.compact` drops). No build cost, no recall loss.
- :class:`HnswVectors`: the same array plus an hnswlib graph over it (inner
  product on unit vectors, M 16, ef_construction 200, ef 64 at query time).
  Approximate, with a build cost, but sub-linear per query. Small allowed
  sets are still scored exactly from the array, and so are the last rows
  added (up to 4,096) until they are folded into the graph, so that adding
  a few vectors never rewrites the graph file.

:func:`choose_vectors` picks between them by the number of vectors against
:data:`CROSSOVER`. Measured on 2026-11-22 by ``benchmarks/bench_vectors.py``
(2 cores, numpy 2.4 with OpenBLAS, hnswlib 0.8; top-10 over 384-d random
unit vectors; ``benchmarks/results/vectors.md``)::

    vectors   flat p50   hnsw p50   hnsw build   hnsw recall@10
                                                 random  clustered
     10,000    0.36 ms    0.24 ms        2.0 s    0.41     0.97
     50,000    1.83 ms    0.50 ms       17.3 s    0.14     0.90
    100,000    5.82 ms    0.69 ms       41.7 s    0.09        -
    200,000   11.73 ms    0.83 ms      106.8 s    0.05        -

HNSW's median query is faster at every size measured, so latency alone
would switch at or below 10k. The crossover is set at 100k instead: below
it brute force costs at most ~6 ms (the issue's budget for a whole recall is
20 ms at 100k) while it is exact and needs no build; HNSW would cost a build
of seconds to a minute and recall (0.97 at 10k on clustered vectors, 0.99 at
100k on real MiniLM vectors per DESIGN.md). From 100k on brute force grows
linearly (12 ms at 200k, ~56 ms at 1M per DESIGN.md) and the graph is needed.

On disk an index is a folder: ``vectors.json`` (the sidecar: kind,
dimensions, row -> key, the names and sizes of the data files and the rows
in the graph, replaced atomically), the vectors ``vectors-<token>.f32`` and,
for HNSW, the graph ``hnsw-<token>.bin``. A rewritten data file gets a new
name, so a crash between writing data and sidecar leaves the old pair
readable, and a reader that has the old files open keeps a consistent view.
New rows are appended to the vectors file at once (searchable at once,
durable at :meth:`~VectorIndex.save`); bytes past the rows the sidecar lists
are left by an interrupted save and ignored. Anything else that does not add
up (an unreadable sidecar, a data file shorter than the sidecar says or
missing, a graph of another size) raises :class:`VectorIndexError`; indexes
are projections, so the caller rebuilds.
"""

from __future__ import annotations

import abc
import contextlib
import os
import secrets
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import msgspec
import numpy as np
import numpy.typing as npt

from ctx.engine import StoreError

if TYPE_CHECKING:
    from typing import Self

__all__ = [
    "CROSSOVER",
    "FlatVectors",
    "HnswVectors",
    "VectorIndex",
    "VectorIndexError",
    "choose_vectors",
    "open_vectors",
    "read_rows",
]

CROSSOVER = 100_000
"""Vector count from which :func:`choose_vectors` picks HNSW (module doc)."""

SIDECAR = "vectors.json"
"""Name of the sidecar file inside an index folder."""

_GRAPH_CHUNK = 65_536  # rows copied out of the data file per graph insertion

Kind = Literal["flat", "hnsw"]
Vectors = npt.NDArray[np.float32]


class VectorIndexError(StoreError):
    """A vector index cannot be read, written or asked as it was."""


class _Sidecar(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the sidecar file holds; ``keys[row]`` is None for a removed row."""

    version: int
    kind: str
    dimensions: int
    data: str
    size: int
    keys: list[str | None]
    graph: str = ""
    graph_size: int = 0
    capacity: int = 0
    graph_rows: int = -1  # rows in the graph; -1: not recorded (an older save)


_SIDECAR_VERSION = 1
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(_Sidecar)


def _error(message: str) -> VectorIndexError:
    return VectorIndexError(message, hint="Run `ctx reindex`.")


def _unit_rows(vectors: npt.ArrayLike, dimensions: int) -> Vectors:
    """Returns ``vectors`` as C-contiguous float32 unit rows (zero rows stay zero)."""
    rows = np.array(vectors, dtype=np.float32, copy=True, ndmin=2, order="C")
    if rows.ndim != 2 or rows.shape[1] != dimensions:
        raise _error(
            f"Vectors of shape {rows.shape} do not fit an index of "
            f"{dimensions} dimensions."
        )
    if not np.isfinite(rows).all():
        raise _error("Vectors must hold finite numbers only.")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    np.divide(rows, norms, out=rows, where=norms > 0)
    return rows


def _write_atomic(path: Path, data: bytes) -> None:
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with temp.open("wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise _error(f"Cannot write the vector index at {path.parent}.") from exc


def _read_sidecar(folder: Path) -> _Sidecar:
    try:
        raw = (folder / SIDECAR).read_bytes()
    except FileNotFoundError as exc:
        raise _error(f"No vector index at {folder}.") from exc
    except OSError as exc:
        raise _error(f"Cannot read the vector index at {folder}.") from exc
    try:
        sidecar = _DECODER.decode(raw)
    except msgspec.DecodeError as exc:
        raise _error(f"The vector index at {folder} is corrupt.") from exc
    if (
        sidecar.version != _SIDECAR_VERSION
        or sidecar.dimensions < 1
        or sidecar.size < 0
        or "/" in sidecar.data
        or sidecar.data in ("", ".", "..")
    ):
        raise _error(f"The vector index at {folder} is corrupt.")
    return sidecar


def _top(scores: Vectors, rows: npt.NDArray[np.int64], k: int) -> list[int]:
    """Returns positions into ``scores`` of the ``k`` best, best first.

    Ties go to the lower row, so results are deterministic.
    """
    count = scores.shape[0]
    if k <= 0 or count == 0:
        return []
    best = np.argpartition(-scores, k - 1)[:k] if k < count else np.arange(count)
    order = np.lexsort((rows[best], -scores[best]))
    return [int(i) for i in best[order]]


class VectorIndex(abc.ABC):
    """Cosine nearest neighbours over unit vectors, keyed by blob id.

    Adding a key that is present replaces its vector. Changes live in memory
    (and, for a flat index on disk, in its data file) until :meth:`save`
    makes them durable; an index without a path lives in memory only.
    """

    kind: ClassVar[Kind]

    def __init__(self, dimensions: int, path: str | os.PathLike[str] | None) -> None:
        if dimensions < 1:
            raise _error(f"An index needs at least 1 dimension, not {dimensions}.")
        self._dimensions = dimensions
        self._path = None if path is None else Path(path)
        self._keys: list[str | None] = []
        self._rows: dict[str, int] = {}
        # Rows of the last frozenset searched, valid while _version holds.
        self._version = 0
        self._cached: tuple[frozenset[str], int, npt.NDArray[np.int64]] | None = None

    @property
    def dimensions(self) -> int:
        """Returns the length of every vector."""
        return self._dimensions

    @property
    def path(self) -> Path | None:
        """Returns the index folder, or None for an index in memory."""
        return self._path

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def keys(self) -> list[str]:
        """Returns the keys present, in the order they were added."""
        return [key for key in self._keys if key is not None]

    def add(self, keys: Sequence[str], vectors: npt.ArrayLike) -> None:
        """Adds one vector per key, replacing the vectors of present keys.

        Raises:
            VectorIndexError: The shapes do not match the keys and dimensions,
                a key repeats, or a vector is not finite.
        """
        rows = _unit_rows(vectors, self._dimensions)
        if len(keys) != rows.shape[0]:
            raise _error(f"Got {len(keys)} keys for {rows.shape[0]} vectors.")
        if len(set(keys)) != len(keys):
            raise _error("The keys of one add must differ.")
        if not keys:
            return
        self.remove(key for key in keys if key in self._rows)
        first = len(self._keys)
        self._append(rows, first)
        self._keys.extend(keys)
        self._rows.update((key, first + i) for i, key in enumerate(keys))
        self._version += 1

    def remove(self, keys: Iterable[str]) -> None:
        """Removes the vectors of the given keys; absent keys are ignored."""
        dead = [row for key in keys if (row := self._rows.pop(key, None)) is not None]
        for row in dead:
            self._keys[row] = None
        if dead:
            self._tombstone(dead)
            self._version += 1

    def search(
        self, vector: npt.ArrayLike, k: int, allowed: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """Returns up to ``k`` (key, cosine) pairs, most similar first.

        Args:
            vector: The query, of :attr:`dimensions` floats (normalised here).
            k: How many neighbours to return.
            allowed: If given, only these keys may be returned (unknown keys
                are ignored).

        Raises:
            VectorIndexError: The query has the wrong dimensions.
        """
        query = _unit_rows(vector, self._dimensions)
        if query.shape[0] != 1:
            raise _error(f"Search takes one vector, not {query.shape[0]}.")
        if k <= 0 or not self._rows:
            return []
        candidates = None if allowed is None else self._candidates(allowed)
        if candidates is not None and candidates.size == 0:
            return []
        found = self._search(query[0], k, candidates)
        keys = self._keys
        return [(key, score) for row, score in found if (key := keys[row]) is not None]

    def _candidates(self, allowed: Collection[str]) -> npt.NDArray[np.int64]:
        """Returns the sorted rows of the allowed keys, cached for a frozenset."""
        cached = self._cached
        if cached is not None and cached[0] is allowed and cached[1] == self._version:
            return cached[2]
        rows = self._rows
        found = np.fromiter(
            (row for row in map(rows.get, allowed) if row is not None), dtype=np.int64
        )
        found.sort()
        if isinstance(allowed, frozenset):
            self._cached = (allowed, self._version, found)
        return found

    @abc.abstractmethod
    def vectors_of(self, keys: Sequence[str]) -> Vectors:
        """Returns the stored (unit) vectors of ``keys``, one row each.

        Raises:
            KeyError: A key is not present.
        """

    def compact(self) -> None:
        """Drops removed rows, renumbering the rest (and saves if on disk)."""
        live = np.array(
            [row for row, key in enumerate(self._keys) if key is not None],
            dtype=np.int64,
        )
        self._rebuild(live)
        self._keys = [self._keys[row] for row in live]
        self._rows = {key: row for row, key in enumerate(self._keys) if key}
        self._version += 1
        if self._path is not None:
            self.save()

    def save(self) -> None:
        """Makes every change durable in the index folder.

        Raises:
            VectorIndexError: The index lives in memory, or cannot be written.
        """
        if self._path is None:
            raise _error("An index in memory cannot be saved.")
        try:
            self._path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _error(f"Cannot create the vector index at {self._path}.") from exc
        sidecar = self._write_data(
            self._path,
            _Sidecar(
                version=_SIDECAR_VERSION,
                kind=self.kind,
                dimensions=self._dimensions,
                data="",
                size=0,
                keys=self._keys,
            ),
        )
        _write_atomic(self._path / SIDECAR, _ENCODER.encode(sidecar))
        for stale in self._path.glob("*-*.*"):
            if stale.name not in (sidecar.data, sidecar.graph) and stale.suffix in (
                ".f32",
                ".bin",
            ):
                stale.unlink(missing_ok=True)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Self:
        """Returns the index saved in folder ``path``.

        Raises:
            VectorIndexError: There is no index of this kind there, or it is
                corrupt.
        """
        folder = Path(path)
        sidecar = _read_sidecar(folder)
        if sidecar.kind != cls.kind:
            raise _error(
                f"The vector index at {folder} is {sidecar.kind}, not {cls.kind}."
            )
        return cls._opened(folder, sidecar, folder)

    @classmethod
    def _opened(cls, folder: Path, sidecar: _Sidecar, path: Path | None) -> Self:
        """Returns the index ``sidecar`` describes, bound to ``path``."""
        index = cls(sidecar.dimensions, path)
        index._keys = list(sidecar.keys)
        index._rows = {key: row for row, key in enumerate(sidecar.keys) if key}
        if len(index._rows) != sum(key is not None for key in sidecar.keys):
            raise _error(f"The vector index at {folder} is corrupt.")
        index._load(folder, sidecar)
        return index

    @abc.abstractmethod
    def _append(self, rows: Vectors, first: int) -> None:
        """Stores ``rows`` as rows ``first``, ``first + 1``, ..."""

    @abc.abstractmethod
    def _tombstone(self, rows: list[int]) -> None:
        """Hides ``rows`` from searches."""

    @abc.abstractmethod
    def _search(
        self, query: Vectors, k: int, candidates: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        """Returns (row, cosine) of the best live rows, among candidates if any."""

    @abc.abstractmethod
    def _rebuild(self, live: npt.NDArray[np.int64]) -> None:
        """Keeps only rows ``live``, renumbered 0, 1, ... in that order."""

    @abc.abstractmethod
    def _write_data(self, folder: Path, sidecar: _Sidecar) -> _Sidecar:
        """Writes the data durably; returns ``sidecar`` naming its files."""

    @abc.abstractmethod
    def _load(self, folder: Path, sidecar: _Sidecar) -> None:
        """Loads the data file the sidecar names."""


class FlatVectors(VectorIndex):
    """Exact cosine search by brute force over a memory-mapped float32 array.

    A query is one matrix-vector product over every row (or over the allowed
    rows, gathered, when they are few) and an ``argpartition`` for the top k.
    """

    kind: ClassVar[Kind] = "flat"

    def __init__(
        self, dimensions: int, path: str | os.PathLike[str] | None = None
    ) -> None:
        super().__init__(dimensions, path)
        self._matrix: Vectors = np.empty((0, dimensions), dtype=np.float32)
        self._buffer: Vectors = self._matrix
        self._live: npt.NDArray[np.bool_] = np.ones(0, dtype=bool)
        self._dead = 0
        self._data: str | None = None

    def _append(self, rows: Vectors, first: int) -> None:
        count = first + rows.shape[0]
        if self._path is None:
            if count > self._buffer.shape[0]:
                grown = np.empty(
                    (max(count, 2 * self._buffer.shape[0], 1024), self._dimensions),
                    dtype=np.float32,
                )
                grown[:first] = self._buffer[:first]
                self._buffer = grown
            self._buffer[first:count] = rows
            self._matrix = self._buffer[:count]
        else:
            if self._data is None:
                self._data = f"vectors-{secrets.token_hex(6)}.f32"
            folder = self._path
            row_bytes = self._dimensions * 4
            try:
                folder.mkdir(parents=True, exist_ok=True)
                with (folder / self._data).open("ab") as file:
                    # Drop the tail an interrupted save may have left.
                    file.truncate(first * row_bytes)
                    file.write(rows.tobytes())
            except OSError as exc:
                raise _error(f"Cannot write the vector index at {folder}.") from exc
            self._map(folder / self._data, count)
        self._live = np.concatenate([self._live, np.ones(rows.shape[0], dtype=bool)])

    def _map(self, file: Path, count: int) -> None:
        if count == 0:
            self._matrix = np.empty((0, self._dimensions), dtype=np.float32)
            return
        try:
            self._matrix = np.memmap(
                file, dtype=np.float32, mode="r", shape=(count, self._dimensions)
            )
        except (OSError, ValueError) as exc:
            raise _error(f"Cannot map the vector data at {file}.") from exc

    def vectors_of(self, keys: Sequence[str]) -> Vectors:
        """Returns the stored (unit) vectors of ``keys``, one row each."""
        rows = [self._rows[key] for key in keys]
        return np.array(self._matrix[rows], dtype=np.float32)

    def _tombstone(self, rows: list[int]) -> None:
        self._live[rows] = False
        self._dead += len(rows)

    def _search(
        self, query: Vectors, k: int, candidates: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        matrix = self._matrix
        if candidates is not None:
            if 4 * candidates.size < matrix.shape[0]:
                scores = matrix[candidates] @ query
            else:
                scores = (matrix @ query)[candidates]
            rows = candidates
        elif self._dead:
            rows = np.flatnonzero(self._live)
            scores = (matrix @ query)[rows]
        else:
            scores = matrix @ query
            rows = np.arange(matrix.shape[0])
        return [(int(rows[i]), float(scores[i])) for i in _top(scores, rows, k)]

    def _rebuild(self, live: npt.NDArray[np.int64]) -> None:
        kept = np.ascontiguousarray(self._matrix[live])
        self._live = np.ones(live.size, dtype=bool)
        self._dead = 0
        if self._path is None:
            self._buffer = self._matrix = kept
            return
        self._data = f"vectors-{secrets.token_hex(6)}.f32"
        self._write_file(self._path / self._data, kept.tobytes())
        self._map(self._path / self._data, live.size)

    def _write_file(self, file: Path, data: bytes) -> None:
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            with file.open("wb") as out:
                out.write(data)
        except OSError as exc:
            raise _error(f"Cannot write the vector index at {file.parent}.") from exc

    def _write_data(self, folder: Path, sidecar: _Sidecar) -> _Sidecar:
        if self._data is None:
            self._data = f"vectors-{secrets.token_hex(6)}.f32"
            self._write_file(folder / self._data, b"")
        file = folder / self._data
        size = len(self._keys) * self._dimensions * 4
        try:
            with file.open("r+b") as out:
                out.truncate(size)
                os.fsync(out.fileno())
        except OSError as exc:
            raise _error(f"Cannot write the vector index at {folder}.") from exc
        return msgspec.structs.replace(sidecar, data=self._data, size=size)

    def _load(self, folder: Path, sidecar: _Sidecar) -> None:
        file = folder / sidecar.data
        size = len(sidecar.keys) * sidecar.dimensions * 4
        try:
            actual = file.stat().st_size
        except OSError as exc:
            raise _error(f"The vector index at {folder} lacks its data.") from exc
        if sidecar.size != size or actual < size:
            raise _error(
                f"The vector data at {folder} holds {actual} bytes, "
                f"not the {size} its {len(sidecar.keys)} rows need."
            )
        self._data = sidecar.data
        self._map(file, len(sidecar.keys))
        self._live = np.array([key is not None for key in sidecar.keys], dtype=bool)
        self._dead = len(sidecar.keys) - len(self._rows)


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
        self._unloaded: tuple[Path, _Sidecar] | None = None  # graph left on disk

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

    def _write_data(self, folder: Path, sidecar: _Sidecar) -> _Sidecar:
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
            raise _error(f"Cannot write the vector index at {folder}.") from exc
        return graph, size, self._graph.get_max_elements()

    def _load(self, folder: Path, sidecar: _Sidecar) -> None:
        super()._load(folder, sidecar)
        file = folder / sidecar.graph
        try:
            actual = file.stat().st_size if sidecar.graph else -1
        except OSError as exc:
            raise _error(f"The vector index at {folder} lacks its graph.") from exc
        if actual != sidecar.graph_size:
            # Checked before hnswlib reads it: a truncated graph can crash it.
            raise _error(
                f"The vector graph at {folder} holds {actual} bytes, "
                f"not {sidecar.graph_size}."
            )
        if sidecar.graph_rows > len(sidecar.keys):
            raise _error(f"The vector index at {folder} is corrupt.")
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
        for row in np.flatnonzero(other._live[:rows] & ~self._live[:rows]):
            with contextlib.suppress(RuntimeError):
                graph.mark_deleted(int(row))
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
            raise _error(f"The vector graph at {folder} is corrupt.") from exc
        rows = graph.element_count
        if rows > len(sidecar.keys) or sidecar.graph_rows not in (-1, rows):
            raise _error(
                f"The vector graph at {folder} holds {rows} rows, not the "
                f"{sidecar.graph_rows} of the {len(sidecar.keys)} it indexes."
            )
        self._graph_rows = rows
        for row, key in enumerate(self._keys[:rows]):
            if key is None:
                with contextlib.suppress(RuntimeError):
                    graph.mark_deleted(row)
        self._graph = graph
        self._unloaded = None


_KINDS: dict[str, type[VectorIndex]] = {"flat": FlatVectors, "hnsw": HnswVectors}


def open_vectors(
    path: str | os.PathLike[str],
    *,
    graph: bool = True,
    previous: VectorIndex | None = None,
) -> VectorIndex:
    """Returns the index saved in folder ``path``, of whichever kind it is.

    Args:
        path: The index folder.
        graph: For an HNSW index, load its graph now; without it, searches
            are exact until a change loads it (:meth:`HnswVectors.open`).
        previous: An earlier opening of the same folder, which is replaced:
            if its graph is the one saved there (another process appended
            or removed rows since), that graph is kept rather than read
            again (a second or more at a million vectors).

    Raises:
        VectorIndexError: There is no index there, or it is corrupt.
    """
    folder = Path(path)
    sidecar = _read_sidecar(folder)  # once: at 1M vectors it is 40 MB
    cls = _KINDS.get(sidecar.kind)
    if cls is None:
        raise _error(f"The vector index at {path} is corrupt.")
    index = cls._opened(folder, sidecar, folder)
    if isinstance(index, HnswVectors):
        if isinstance(previous, HnswVectors) and index._adopt_graph(previous):
            return index
        if graph:
            index._load_graph()
    return index


def read_rows(path: str | os.PathLike[str]) -> FlatVectors:
    """Returns the vectors saved in folder ``path`` (flat or HNSW) to read rows.

    No graph is loaded: the rows are mapped from the data file, and
    :meth:`~VectorIndex.vectors_of` and exact search work. The result is not
    bound to the folder (it cannot be saved there).

    Raises:
        VectorIndexError: There is no index there, or it is corrupt.
    """
    folder = Path(path)
    sidecar = _read_sidecar(folder)
    if sidecar.kind not in _KINDS:
        raise _error(f"The vector index at {path} is corrupt.")
    return FlatVectors._opened(folder, sidecar, None)


def choose_vectors(
    path: str | os.PathLike[str] | None,
    count: int,
    dimensions: int,
    crossover: int = CROSSOVER,
) -> VectorIndex:
    """Returns a new empty index for about ``count`` vectors, flat or HNSW.

    Brute force below ``crossover`` vectors, HNSW from there on (see the
    module docstring for the measurement behind :data:`CROSSOVER`). Nothing
    is read from ``path``; saving the new index replaces any index there.
    """
    if count < crossover:
        return FlatVectors(dimensions, path)
    return HnswVectors(dimensions, path)
