"""The error every damaged index raises: what the projection repairs.

An index's files may stop holding what was written (a crash on a file system
that lost a write, a disk error, a hand edit): a Tantivy segment that no
longer decodes, vector rows that fail their checksum or are not finite. Each
index raises its own subclass
(:class:`~ctx.hub.retrieval.index.lexical_errors.LexicalIndexCorruptError`,
:class:`~ctx.hub.retrieval.index.rows.VectorIndexCorruptError`), and whoever
holds the projection catches this base, repairs the index from the commits
(:meth:`~ctx.hub.retrieval.index.projection.Projection.repair`) and asks
again. Errors that are not damage (a busy lock, a read-only folder) are not
of this family.
"""

from __future__ import annotations

from ctx.engine import StoreError

__all__ = ["IndexCorruptError", "is_panic"]


class IndexCorruptError(StoreError):
    """An index cannot be read as it was written: rebuild or repair it."""


def is_panic(exc: BaseException) -> bool:
    """Returns whether ``exc`` is a Rust panic raised through pyo3 (Tantivy's).

    pyo3 makes the class at run time (``pyo3_runtime.PanicException``, a
    ``BaseException``, so that ``except Exception`` does not swallow it) and
    registers no module to import it from, so it is known by its name.
    """
    kind = type(exc)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"
