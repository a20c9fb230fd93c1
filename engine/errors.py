"""The errors ctx raises, rooted at :class:`CtxError`.

Every error carries a user-facing message (a full sentence), an optional
``hint`` and an ``exit_code`` that the command line returns::

    CtxError                      exit 1
    ├── InvalidInputError         exit 4   bad text, ids, names, options
    ├── NotFoundError             exit 3
    │   ├── MemoryNotFoundError
    │   ├── RefNotFoundError      (branches)
    │   ├── CommitNotFoundError   (revisions)
    │   ├── LinkNotFoundError
    │   └── RemoteNotFoundError
    ├── ConflictError             exit 5   branch exists, unresolved conflicts
    ├── StoreError                exit 6   the store itself
    │   ├── NotAStoreError
    │   ├── ReadOnlyStoreError
    │   ├── DiskFullError                  no space left, or the quota used up
    │   ├── CorruptStoreError
    │   └── StoreBusyError        exit 7   the write lock could not be taken
    └── RemoteError               exit 8   a remote unreachable, refusing, not a store

Usage errors detected by the command-line parser itself exit with 2.
"""

from __future__ import annotations

import re

__all__ = [
    "CommitNotFoundError",
    "ConflictError",
    "CorruptStoreError",
    "CtxError",
    "DiskFullError",
    "InvalidInputError",
    "LinkNotFoundError",
    "MemoryNotFoundError",
    "NotAStoreError",
    "NotFoundError",
    "ReadOnlyStoreError",
    "RefNotFoundError",
    "RemoteError",
    "RemoteNotFoundError",
    "StoreBusyError",
    "StoreError",
    "damaged_branch",
    "store_damage",
]


class CtxError(Exception):
    """Base of every error ctx raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class InvalidInputError(CtxError):
    """Input was rejected before anything was written."""

    exit_code = 4


class NotFoundError(CtxError):
    """Something named by the caller does not exist."""

    exit_code = 3


class MemoryNotFoundError(NotFoundError):
    """No memory has the given id on the given revision."""


class RefNotFoundError(NotFoundError):
    """No branch has the given name."""


class CommitNotFoundError(NotFoundError):
    """A revision does not name a commit of the store."""


class LinkNotFoundError(NotFoundError):
    """No link of the given type joins the two memories."""


class ConflictError(CtxError):
    """The operation clashes with the state of the store."""

    exit_code = 5


class StoreError(CtxError):
    """The store cannot be used as asked."""

    exit_code = 6


class NotAStoreError(StoreError):
    """A folder is not a ctx store."""


class ReadOnlyStoreError(StoreError):
    """The store cannot be written."""


class DiskFullError(StoreError):
    """The disk holding the store is full, or the user's quota is used up."""


class CorruptStoreError(StoreError):
    """The store holds objects that cannot be read."""


class StoreBusyError(StoreError):
    """Another writer held the store's lock for too long."""

    exit_code = 7


class RemoteNotFoundError(NotFoundError):
    """No remote has the given name."""


class RemoteError(CtxError):
    """A remote could not be reached, refused us, or holds no ctx store."""

    exit_code = 8


def store_damage(exc: BaseException) -> CorruptStoreError | None:
    """Returns the error to report for ``exc`` if it says the store is damaged.

    Reading a damaged git object or ref raises what dulwich, zlib or struct
    raise on bad bytes (a truncated object, a pack with garbage in it, a
    branch file holding no commit id), anywhere in a command; ``ctx fsck``
    says which. Those are told from a programming error by where they were
    raised: in dulwich's own code (zlib and struct are called from there).
    ``None`` for any other exception.
    """
    import struct
    import traceback
    import zlib

    from dulwich.errors import ChecksumMismatch, FileFormatException

    if isinstance(exc, CtxError):
        return None
    frames = traceback.extract_tb(exc.__traceback__)
    inside = bool(frames) and "/dulwich/" in frames[-1].filename
    known = (ChecksumMismatch, FileFormatException, zlib.error, struct.error)
    missing = isinstance(exc, KeyError) and _names_an_object(exc)
    if not inside or not (
        missing or isinstance(exc, (*known, AssertionError, TypeError, ValueError))
    ):
        return None
    what = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    said = f"{type(exc).__name__}: {what}" if what else type(exc).__name__
    if missing:
        key = exc.args[0]
        said = f"object {key.decode() if isinstance(key, bytes) else key} is missing"
    return CorruptStoreError(
        f"The store's git data is damaged ({said[:200]}).", hint=_FSCK_HINT
    )


_OBJECT_ID = re.compile(r"[0-9a-f]{40}")

_FSCK_HINT = (
    "`ctx fsck` lists what cannot be read; a clone or a backup of the store "
    "restores it."
)


def damaged_branch(branch: str, what: str) -> CorruptStoreError:
    """Returns the error for a branch whose file ``what`` ("holds no id", ...).

    Its repair is said too: deleting the branch (``ctx branch -D``).
    """
    return CorruptStoreError(
        f"Branch {branch!r} {what}.",
        hint=f"{_FSCK_HINT[:-1]}, or `ctx branch -D {branch}` drops the branch.",
    )


def _names_an_object(exc: KeyError) -> bool:
    """Whether ``exc`` is dulwich's for an object id it does not hold.

    A branch file or a tree naming an object the store lacks: the ids a
    user gives are resolved, with their own errors, before dulwich is asked.
    """
    key = exc.args[0] if exc.args else None
    if isinstance(key, bytes):
        key = key.decode("ascii", "replace")
    # engine.ids.is_object_id's rule: ids imports this module, not the reverse.
    return isinstance(key, str) and _OBJECT_ID.fullmatch(key) is not None
