"""The rows of a vector index: its interface, its files, and exact search.

:class:`VectorIndex` (keys, rows, save and open, the sidecar file) and
:class:`FlatVectors` (brute force over the memory-mapped rows), on which
:class:`~ctx.hub.retrieval.index.hnsw.HnswVectors` builds its graph. The public names,
and
the design and measurements behind the two kinds, are in
:mod:`ctx.hub.retrieval.index.vectors`.

**Checksums.** The sidecar records a blake3 digest of every block of
:data:`BLOCK` rows, over the block's keys and its vectors' bytes, so a
changed byte in the data file and a changed or reordered key in the sidecar
both show as the blocks they touch. Saving digests only the blocks changed
since the last save (appending a few rows digests the last block).
:meth:`FlatVectors.damaged` digests every block again (as much work as
reading every row): it is asked where that cost is paid once, not for every
query (docs/recall.md, "Damage"). A search whose scores are not numbers (a
row of NaN) raises :class:`VectorIndexCorruptError` naming the rows' keys.
"""

from __future__ import annotations

import abc
import os
import secrets
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

import blake3
import msgspec
import numpy as np
import numpy.typing as npt

from ctx.engine import StoreError, plural
from ctx.hub.retrieval.index.errors import IndexCorruptError
from ctx.hub.retrieval.index.passages import MARK as _MARK
from ctx.hub.retrieval.index.passages import owner

if TYPE_CHECKING:
    from typing import Self

__all__ = [
    "BLOCK",
    "SIDECAR",
    "SPREAD_SAMPLE",
    "FlatVectors",
    "VectorIndex",
    "VectorIndexCorruptError",
    "VectorIndexError",
]

SIDECAR = "vectors.json"
"""Name of the sidecar file inside an index folder."""

Kind = Literal["flat", "hnsw"]
Vectors = npt.NDArray[np.float32]


BLOCK = 64
"""Rows per checksum: a damaged byte costs at most this many vectors made
again, and a 100k-row index keeps 1,563 digests (55 kB) in its sidecar."""

SPREAD_SAMPLE = 1024
"""Vectors :meth:`VectorIndex.spread` compares a query with: every one of a
smaller index, else as many spaced evenly over its rows."""


class VectorIndexError(StoreError):
    """A vector index cannot be read, written or asked as it was."""


class VectorIndexCorruptError(VectorIndexError, IndexCorruptError):
    """A vector index holds rows that are not what was saved.

    Attributes:
        keys: The keys of the damaged rows, when they are known.
    """

    def __init__(
        self, message: str, *, keys: Sequence[str] = (), hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.keys = tuple(keys)


class Sidecar(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
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
    made_by: str = ""  # what made the vectors (an embedder's name); "": unknown
    block: int = 0  # rows per checksum; 0: none recorded (an older save)
    checksums: list[str] = []  # one per block of rows (module docstring)


_SIDECAR_VERSION = 1
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Sidecar)


def index_error(message: str) -> VectorIndexError:
    return VectorIndexError(message, hint="Run `ctx reindex`.")


def _unit_rows(vectors: npt.ArrayLike, dimensions: int) -> Vectors:
    """Returns ``vectors`` as C-contiguous float32 unit rows (zero rows stay zero)."""
    rows = np.array(vectors, dtype=np.float32, copy=True, ndmin=2, order="C")
    if rows.ndim != 2 or rows.shape[1] != dimensions:
        raise index_error(
            f"Vectors of shape {rows.shape} do not fit an index of "
            f"{dimensions} dimensions."
        )
    if not np.isfinite(rows).all():
        raise index_error("Vectors must hold finite numbers only.")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    np.divide(rows, norms, out=rows, where=norms > 0)
    return rows


def _block_sum(keys: Sequence[str | None], rows: Vectors) -> str:
    """Returns the checksum of one block: its keys and its rows' bytes."""
    digest = blake3.blake3("\n".join("\0" if k is None else k for k in keys).encode())
    digest.update(np.ascontiguousarray(rows).tobytes())
    return digest.hexdigest(length=16)


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
        raise index_error(f"Cannot write the vector index at {path.parent}.") from exc


def read_sidecar(folder: Path) -> Sidecar:
    try:
        raw = (folder / SIDECAR).read_bytes()
    except FileNotFoundError as exc:
        raise index_error(f"No vector index at {folder}.") from exc
    except OSError as exc:
        raise index_error(f"Cannot read the vector index at {folder}.") from exc
    try:
        sidecar = _DECODER.decode(raw)
    except msgspec.DecodeError as exc:
        raise index_error(f"The vector index at {folder} is corrupt.") from exc
    if (
        sidecar.version != _SIDECAR_VERSION
        or sidecar.dimensions < 1
        or sidecar.size < 0
        or "/" in sidecar.data
        or sidecar.data in ("", ".", "..")
    ):
        raise index_error(f"The vector index at {folder} is corrupt.")
    return sidecar


def _top(
    scores: Vectors, rows: npt.NDArray[np.int64], k: int
) -> list[tuple[int, float]]:
    """Returns the (row, score) of the ``k`` best scores, best first.

    Ties go to the lower row, so results are deterministic.
    """
    count = scores.shape[0]
    if k <= 0 or count == 0:
        return []
    best = np.argpartition(-scores, k - 1)[:k] if k < count else np.arange(count)
    best = best[np.lexsort((rows[best], -scores[best]))]
    # Whole arrays to Python at once: indexing them one by one costs more.
    return list(zip(rows[best].tolist(), scores[best].tolist(), strict=True))


class VectorIndex(abc.ABC):
    """Cosine nearest neighbours over unit vectors, keyed by blob id.

    Adding a key that is present replaces its vector. Changes live in memory
    (and, for a flat index on disk, in its data file) until :meth:`save`
    makes them durable; an index without a path lives in memory only.
    """

    kind: ClassVar[Kind]

    def __init__(self, dimensions: int, path: str | os.PathLike[str] | None) -> None:
        if dimensions < 1:
            raise index_error(f"An index needs at least 1 dimension, not {dimensions}.")
        self._dimensions = dimensions
        self._path = None if path is None else Path(path)
        self._keys: list[str | None] = []
        self._rows: dict[str, int] = {}
        self.made_by = ""
        """What made the vectors (an embedder's name), kept in the sidecar."""
        # Per block of BLOCK rows, its saved checksum; None: changed since.
        self._sums: list[str | None] = []
        # Rows of the last frozenset searched, valid while _version holds.
        self._version = 0
        self._cached: tuple[frozenset[str], int, npt.NDArray[np.int64]] | None = None
        # Blob -> the keys of its passages after the first; built when asked.
        self._passages: dict[str, list[str]] | None = None
        # The rows spread() compares with, valid while _version holds.
        self._sample: tuple[int, Vectors] | None = None

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
            raise index_error(
                f"Got {plural(len(keys), 'key')} for {plural(rows.shape[0], 'vector')}."
            )
        if len(set(keys)) != len(keys):
            raise index_error("The keys of one add must differ.")
        if not keys:
            return
        self.remove(key for key in keys if key in self._rows)
        first = len(self._keys)
        self._touch(range(first // BLOCK, len(self._sums)))
        self._append(rows, first)
        self._keys.extend(keys)
        self._rows.update((key, first + i) for i, key in enumerate(keys))
        if self._passages is not None:
            self._note_passages(keys)
        self._version += 1

    def remove(self, keys: Iterable[str]) -> None:
        """Removes the vectors of the given keys; absent keys are ignored.

        A memory's vectors go together: removing any key of a blob (its own
        or a passage's, :mod:`ctx.hub.retrieval.index.passages`) removes them all.
        """
        family = {k: None for key in keys for k in self.family(owner(key)[0])}
        self._remove_keys(list(family))

    def family(self, blob: str) -> list[str]:
        """Returns the keys of ``blob``'s vectors present: its own, then passages'."""
        passages = self._passage_map().get(blob, [])
        return ([blob] if blob in self._rows else []) + passages

    def spread(self, vector: npt.ArrayLike) -> tuple[float, float] | None:
        """Returns the mean and standard deviation of ``vector``'s cosines here.

        Cosines to text it mostly has nothing to do with, measured on at
        most :data:`SPREAD_SAMPLE` vectors spaced evenly over the rows;
        ``None`` for an empty index.
        """
        sampled = self._sample
        if sampled is None or sampled[0] != self._version:
            keys = self._keys
            step = max(1, len(keys) // SPREAD_SAMPLE)
            sample = [key for key in keys[::step] if key is not None]
            sampled = self._sample = (self._version, self.vectors_of(sample))
        if not sampled[1].shape[0]:
            return None
        query = _unit_rows(vector, self._dimensions)[0]
        with np.errstate(invalid="ignore", over="ignore"):
            cosines = sampled[1] @ query
        cosines = cosines[np.isfinite(cosines)]  # a damaged row: searched apart
        if not cosines.size:
            return None
        return float(cosines.mean()), float(cosines.std())

    def blob_count(self) -> int:
        """Returns how many blobs have vectors here (each counted once).

        ``len`` counts keys: a long memory has one per passage.
        """
        return len(self._rows) - sum(map(len, self._passage_map().values()))

    def is_long(self, blob: str) -> bool:
        """Returns whether ``blob`` has vectors for passages after its first."""
        return blob in self._passage_map()

    def has_passages(self) -> bool:
        """Returns whether any memory here has more than one vector."""
        return bool(self._passage_map())

    def _passage_map(self) -> dict[str, list[str]]:
        if self._passages is None:
            self._passages = {}
            self._note_passages([key for key in self._rows if _MARK in key])
        return self._passages

    def _note_passages(self, keys: Iterable[str]) -> None:
        assert self._passages is not None
        for key in keys:
            blob, number = owner(key)
            if number:
                self._passages.setdefault(blob, []).append(key)

    def _remove_keys(self, keys: Sequence[str]) -> None:
        dead = [row for key in keys if (row := self._rows.pop(key, None)) is not None]
        if self._passages is not None:
            for key in keys:
                blob, number = owner(key)
                if number and blob in self._passages:
                    del self._passages[blob]
        for row in dead:
            self._keys[row] = None
        self._touch({row // BLOCK for row in dead})
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
            raise index_error(f"Search takes one vector, not {query.shape[0]}.")
        if k <= 0 or not self._rows:
            return []
        candidates = None if allowed is None else self._candidates(allowed)
        if candidates is not None and candidates.size == 0:
            return []
        found = self._search(query[0], k, candidates)
        keys = self._keys
        return [(key, score) for row, score in found if (key := keys[row]) is not None]

    def _touch(self, blocks: Iterable[int]) -> None:
        """Marks blocks changed: their checksums are made again at save."""
        for block in blocks:
            if block < len(self._sums):
                self._sums[block] = None

    def _corrupt(self, rows: Iterable[int], what: str) -> VectorIndexCorruptError:
        """Returns the error for ``rows`` found damaged (``what`` says how)."""
        keys = [key for row in rows if (key := self._keys[int(row)]) is not None]
        where = "in memory" if self._path is None else f"at {self._path}"
        return VectorIndexCorruptError(
            f"The vector index {where} holds {plural(len(keys), what)}.",
            keys=keys,
            hint="Run `ctx reindex`.",
        )

    def _candidates(self, allowed: Collection[str]) -> npt.NDArray[np.int64]:
        """Returns the sorted rows of the allowed keys, cached for a frozenset."""
        cached = self._cached
        if cached is not None and cached[0] is allowed and cached[1] == self._version:
            return cached[2]
        rows = self._rows
        keys: Iterable[str] = allowed
        if passages := self._passage_map():
            extra = [k for blob in allowed for k in passages.get(blob, ())]
            keys = [*allowed, *extra]
        found = np.fromiter(
            (row for row in map(rows.get, keys) if row is not None), dtype=np.int64
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

    @abc.abstractmethod
    def damaged(self) -> list[str]:
        """Returns the keys whose rows fail their checksum or are not finite."""

    def compact(self) -> None:
        """Drops removed rows, renumbering the rest (and saves if on disk)."""
        live = np.array(
            [row for row, key in enumerate(self._keys) if key is not None],
            dtype=np.int64,
        )
        self._rebuild(live)
        self._keys = [self._keys[row] for row in live]
        self._rows = {key: row for row, key in enumerate(self._keys) if key}
        self._passages = None
        self._sums = []
        self._version += 1
        if self._path is not None:
            self.save()

    def save(self) -> None:
        """Makes every change durable in the index folder.

        Raises:
            VectorIndexError: The index lives in memory, or cannot be written.
        """
        if self._path is None:
            raise index_error("An index in memory cannot be saved.")
        try:
            self._path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise index_error(
                f"Cannot create the vector index at {self._path}."
            ) from exc
        sidecar = self._write_data(
            self._path,
            Sidecar(
                version=_SIDECAR_VERSION,
                kind=self.kind,
                dimensions=self._dimensions,
                data="",
                size=0,
                keys=self._keys,
                made_by=self.made_by,
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
        sidecar = read_sidecar(folder)
        if sidecar.kind != cls.kind:
            raise index_error(
                f"The vector index at {folder} is {sidecar.kind}, not {cls.kind}."
            )
        return cls._opened(folder, sidecar, folder)

    @classmethod
    def _opened(cls, folder: Path, sidecar: Sidecar, path: Path | None) -> Self:
        """Returns the index ``sidecar`` describes, bound to ``path``."""
        index = cls(sidecar.dimensions, path)
        index.made_by = sidecar.made_by
        index._keys = list(sidecar.keys)
        blocks = -(-len(sidecar.keys) // BLOCK)
        if sidecar.block == BLOCK and len(sidecar.checksums) == blocks:
            index._sums = list(sidecar.checksums)
        index._rows = {key: row for row, key in enumerate(sidecar.keys) if key}
        if len(index._rows) != sum(key is not None for key in sidecar.keys):
            raise index_error(f"The vector index at {folder} is corrupt.")
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
    def _write_data(self, folder: Path, sidecar: Sidecar) -> Sidecar:
        """Writes the data durably; returns ``sidecar`` naming its files."""

    @abc.abstractmethod
    def _load(self, folder: Path, sidecar: Sidecar) -> None:
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
                raise index_error(
                    f"Cannot write the vector index at {folder}."
                ) from exc
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
            raise index_error(f"Cannot map the vector data at {file}.") from exc

    def vectors_of(self, keys: Sequence[str]) -> Vectors:
        """Returns the stored (unit) vectors of ``keys``, one row each."""
        rows = [self._rows[key] for key in keys]
        return np.array(self._matrix[rows], dtype=np.float32)

    def damaged(self) -> list[str]:
        """Returns the keys whose rows fail their checksum or are not finite.

        Reads every row (about as long as hashing the data file: see
        docs/recall.md, "Damage"). Blocks changed since the last save, and
        an index saved before checksums, are checked for finite rows only.
        """
        keys, sums, matrix = self._keys, self._sums, self._matrix
        bad: list[int] = []
        for first in range(0, len(keys), BLOCK):
            last = min(len(keys), first + BLOCK)
            rows = matrix[first:last]
            block = first // BLOCK
            saved = sums[block] if block < len(sums) else None
            if saved is not None and _block_sum(keys[first:last], rows) != saved:
                bad.extend(range(first, last))
                continue
            finite = np.isfinite(rows).all(axis=1)
            if not finite.all():
                bad.extend(first + int(row) for row in np.flatnonzero(~finite))
        return [key for row in bad if (key := keys[row]) is not None]

    def _checksums(self) -> list[str]:
        """Returns every block's checksum, making those changed since a save."""
        keys, sums = self._keys, self._sums
        blocks = -(-len(keys) // BLOCK)
        del sums[blocks:]
        sums.extend([None] * (blocks - len(sums)))
        for block, saved in enumerate(sums):
            if saved is None:
                first = block * BLOCK
                last = min(len(keys), first + BLOCK)
                sums[block] = _block_sum(keys[first:last], self._matrix[first:last])
        return [s for s in sums if s is not None]

    def _tombstone(self, rows: list[int]) -> None:
        self._live[rows] = False
        self._dead += len(rows)

    def _search(
        self, query: Vectors, k: int, candidates: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        matrix = self._matrix
        with np.errstate(invalid="ignore", over="ignore"):  # damage: checked below
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
        finite = np.isfinite(scores)
        if not finite.all():
            raise self._corrupt(rows[~finite], "row that is not numbers")
        return _top(scores, rows, k)

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
            raise index_error(
                f"Cannot write the vector index at {file.parent}."
            ) from exc

    def _write_data(self, folder: Path, sidecar: Sidecar) -> Sidecar:
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
            raise index_error(f"Cannot write the vector index at {folder}.") from exc
        return msgspec.structs.replace(
            sidecar,
            data=self._data,
            size=size,
            block=BLOCK,
            checksums=self._checksums(),
        )

    def _load(self, folder: Path, sidecar: Sidecar) -> None:
        file = folder / sidecar.data
        size = len(sidecar.keys) * sidecar.dimensions * 4
        try:
            actual = file.stat().st_size
        except OSError as exc:
            raise index_error(f"The vector index at {folder} lacks its data.") from exc
        if sidecar.size != size or actual < size:
            raise index_error(
                f"The vector data at {folder} holds {plural(actual, 'byte')}, "
                f"not the {size:,} its {plural(len(sidecar.keys), 'row')} need."
            )
        self._data = sidecar.data
        self._map(file, len(sidecar.keys))
        self._live = np.array([key is not None for key in sidecar.keys], dtype=bool)
        self._dead = len(sidecar.keys) - len(self._rows)
