"""The lexical index's errors, and where Tantivy's errors become them.

Every error Tantivy raises is translated into a :class:`LexicalIndexError` (a
:class:`~ctx.engine.StoreError`). An index that cannot be read (a segment file
truncated or with bytes changed) makes Tantivy raise an error or panic, in
Rust: pyo3 raises the panic as ``pyo3_runtime.PanicException``, which derives
from ``BaseException``, so ``except Exception`` does not see it. Opening,
searching, counting and reading documents go through :func:`reading`, which
turns both into a :class:`LexicalIndexCorruptError`, which the projection
repairs by rebuilding the index from the commits
(:mod:`ctx.hub.retrieval.index.errors`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ctx.engine import StoreBusyError, StoreError
from ctx.hub.retrieval.index.errors import IndexCorruptError, is_panic

__all__ = [
    "REBUILD",
    "LexicalIndexBusyError",
    "LexicalIndexCorruptError",
    "LexicalIndexError",
    "one_line",
    "reading",
]


class LexicalIndexError(StoreError):
    """The lexical index cannot be opened, read or written.

    A missing, corrupt or incompatible index folder raises it with the hint to
    rebuild: the index is a projection of the commits and loses nothing.
    """


class LexicalIndexBusyError(LexicalIndexError, StoreBusyError):
    """Another writer, in this process or another, holds the index's lock."""


class LexicalIndexCorruptError(LexicalIndexError, IndexCorruptError):
    """The index's files cannot be read: Tantivy failed or panicked on them."""


REBUILD = "Run `ctx reindex` to rebuild it."
"""The hint of every error that a rebuild mends."""


@contextlib.contextmanager
def reading(
    doing: str, *, errors: tuple[type[Exception], ...] = (ValueError,)
) -> Iterator[None]:
    """Turns Tantivy's errors and panics in the block into a corrupt index.

    Args:
        doing: What failed, for the message ("read the lexical index in X").
        errors: The errors that mean the index cannot be read (writing, only
            a panic does: an error may be a busy lock or a full disk).
    """
    try:
        yield
    except errors as exc:
        raise LexicalIndexCorruptError(
            f"Cannot {doing} ({one_line(exc)}).", hint=REBUILD
        ) from exc
    except BaseException as exc:
        if not is_panic(exc):
            raise  # KeyboardInterrupt, SystemExit, ... go on
        raise LexicalIndexCorruptError(
            f"Cannot {doing} (Tantivy panicked: {one_line(exc)}).", hint=REBUILD
        ) from exc


def one_line(exc: BaseException) -> str:
    """Returns an error's text on one line of at most 200 characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."
