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
in the graph, who made the vectors, and a checksum per block of rows
(:mod:`ctx.hub.retrieval.index.rows`), replaced atomically), the vectors
``vectors-<token>.f32`` and, for HNSW, the graph ``hnsw-<token>.bin``. A
rewritten data file gets a new name, so a crash between writing data and
sidecar leaves the old pair readable, and a reader that has the old files
open keeps a consistent view.
New rows are appended to the vectors file at once (searchable at once,
durable at :meth:`~VectorIndex.save`); bytes past the rows the sidecar lists
are left by an interrupted save and ignored. Anything else that does not add
up (an unreadable sidecar, a data file shorter than the sidecar says or
missing, a graph of another size) raises :class:`VectorIndexError`; indexes
are projections, so the caller rebuilds.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctx.hub.retrieval.index.hnsw import HnswVectors
from ctx.hub.retrieval.index.rows import (
    SIDECAR,
    FlatVectors,
    VectorIndex,
    VectorIndexCorruptError,
    VectorIndexError,
    index_error,
    read_sidecar,
)

__all__ = [
    "CROSSOVER",
    "SIDECAR",
    "VectorIndex",
    "VectorIndexCorruptError",
    "VectorIndexError",
    "choose_vectors",
    "open_vectors",
    "read_rows",
]

CROSSOVER = 100_000
"""Vector count from which :func:`choose_vectors` picks HNSW (module doc)."""


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
    sidecar = read_sidecar(folder)  # once: at 1M vectors it is 40 MB
    cls = _KINDS.get(sidecar.kind)
    if cls is None:
        raise index_error(f"The vector index at {path} is corrupt.")
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
    sidecar = read_sidecar(folder)
    if sidecar.kind not in _KINDS:
        raise index_error(f"The vector index at {path} is corrupt.")
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
