"""The log: the commits that changed memories, newest first."""

from __future__ import annotations

from collections.abc import Collection, Iterator

import msgspec

from ctx.engine.abbreviation import resolve_memory_id
from ctx.engine.branches import resolve_revision
from ctx.engine.commits import CommitInfo
from ctx.engine.errors import InvalidInputError, MemoryNotFoundError
from ctx.engine.history import Change, CommitRecord
from ctx.engine.ids import CommitId
from ctx.engine.layout import CONFLICTS, LINKS, MEMORY_AREAS, PROPOSALS, VIEWS
from ctx.engine.store import Store

__all__ = ["LogEntry", "PathChange", "last_commits", "log"]


class PathChange(msgspec.Struct, frozen=True, kw_only=True):
    """One changed path in a commit: added, changed or removed."""

    path: str
    status: str
    memory_id: str | None = None
    old_blob: str | None = None
    new_blob: str | None = None


class LogEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A commit and the changes it made (filtered when the log is)."""

    commit: CommitInfo
    changes: tuple[PathChange, ...]


_TOP_FOLDERS = (*MEMORY_AREAS, LINKS, CONFLICTS, VIEWS, PROPOSALS)
"""The store's top folders, each a path to follow without a slash."""


def _status(old: str | None, new: str | None) -> str:
    if old is None:
        return "added"
    return "removed" if new is None else "changed"


def log(
    store: Store,
    target: str | None = None,
    *,
    rev: str | None = None,
    limit: int | None = None,
) -> list[LogEntry]:
    """Returns the commits of a branch, newest first.

    Args:
        store: The store.
        target: A memory id or a path prefix to follow; ``None`` for all.
        rev: Where to start (branch, commit; default HEAD).
        limit: At most this many entries.
    """
    if limit is not None and limit < 1:
        raise InvalidInputError("The number of entries must be at least 1.")
    tip = resolve_revision(store, rev)
    memory_id = prefix = None
    if target:
        # A path as a shell completes it: "./memory", "/memory", "conflicts".
        path = target.removeprefix("./").lstrip("/")
        if "/" in path or path in _TOP_FOLDERS:
            if ".." in path.split("/"):
                raise InvalidInputError(f"Path {target!r} may not contain '..'.")
            prefix = path
        else:
            memory_id = resolve_memory_id(store, target, rev, removed=True)
    out: list[LogEntry] = []
    records: Iterator[tuple[CommitRecord, list[Change]]]
    if memory_id is None and prefix is None:
        records = ((r, list(r.changes)) for r in store.history.newest(tip))
    else:
        records = store.history.touching(tip, memory_id=memory_id, prefix=prefix)
    for rec, changes in records:
        out.append(
            LogEntry(
                commit=store.commit(CommitId(rec.commit)),
                changes=tuple(
                    PathChange(
                        path=c.path,
                        status=_status(c.old, c.new),
                        memory_id=c.id,
                        old_blob=c.old,
                        new_blob=c.new,
                    )
                    for c in changes
                ),
            )
        )
        if limit is not None and len(out) >= limit:
            break
    if memory_id is not None and not out:
        # A full id is taken as given: a mistyped one must not read as "no
        # history" (blame, show and the rest say so too).
        raise MemoryNotFoundError(f"No commit touched memory {memory_id}.")
    return out


def last_commits(
    store: Store, memory_ids: Collection[str], *, rev: str | None = None
) -> dict[str, CommitInfo]:
    """Returns the newest commit that changed each memory, in one walk.

    What ``log(store, memory_id, limit=1)`` answers for one memory, for many
    at once: history is walked once, newest first, until every memory is
    found, and each commit's changes are searched, not decoded
    (:meth:`~ctx.engine.history.History.changed_memories`): decoding the
    commit of an import of 10,000 memories cost each recall that asked
    about one of them about 6 ms. A bulk import's are decoded once, and
    the memories it changed kept.

    Args:
        store: The store.
        memory_ids: Full memory ids; those history never changed are left out.
        rev: Where to start (branch, commit; default HEAD).
    """
    tip = resolve_revision(store, rev)
    wanted = set(memory_ids)
    found: dict[str, CommitInfo] = {}
    for rec in store.history.newest(tip):
        if not wanted:
            break
        named = store.history.changed_memories(rec, wanted)
        if not named:
            continue
        info = store.commit(CommitId(rec.commit))
        for memory_id in named:
            found[memory_id] = info
        wanted.difference_update(named)
    return found
