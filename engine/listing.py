"""A listing of memories (``ctx ls``) and the orders it can take (``--sort``).

A tree lists its memories by path, and a path fans out on the id's last
characters, so that order means nothing to a reader. A listing is sorted
instead: newest first by default, by when each memory happened
(``created_at``, what ``remember --when`` sets), ties broken by id so that
the order is the same on every run.

A memory file that cannot be read (a store written by another tool may hold
one) is left out of the listing and named in it
(:class:`~ctx.engine.snapshot.Listing`), never allowed to fail the listing
of its whole branch.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ctx.engine.errors import InvalidInputError
from ctx.engine.model import headline

if TYPE_CHECKING:  # the command line reads LISTING_ORDERS without loading dulwich
    from ctx.engine.snapshot import Listing, MemoryRecord
    from ctx.engine.store import Store

__all__ = ["LISTING_ORDERS", "list_sorted", "sort_memories"]

LISTING_ORDERS = ("newest", "oldest", "kind", "title", "id", "path")
"""``newest`` (the default) and ``oldest`` by when a memory happened; ``kind``
alphabetically, newest first within a kind; ``title`` by the title (or the
body's first line), case aside; ``id`` by id (the order they were written);
``path`` by where they are stored."""


def _when(record: MemoryRecord) -> datetime:
    # A store written by another tool may hold a time without an offset: UTC.
    when = record.memory.created_at
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def sort_memories(
    records: Iterable[MemoryRecord], order: str = "newest"
) -> list[MemoryRecord]:
    """Returns ``records`` in one of :data:`LISTING_ORDERS`.

    Raises:
        InvalidInputError: ``order`` is not one of them.
    """
    items = list(records)
    if order not in LISTING_ORDERS:
        raise InvalidInputError(
            f"Unknown order {order!r}; use one of {', '.join(LISTING_ORDERS)}."
        )
    if order in ("newest", "oldest", "kind"):
        items.sort(key=lambda r: (_when(r), r.memory.id), reverse=order != "oldest")
        if order == "kind":
            items.sort(key=lambda r: r.memory.kind)  # stable: newest first within
    elif order == "title":
        items.sort(
            key=lambda r: (
                headline(r.memory.title, r.memory.body, 200).casefold(),
                r.memory.id,
            )
        )
    elif order == "id":
        items.sort(key=lambda r: r.memory.id)
    else:
        items.sort(key=lambda r: r.path)
    return items


def list_sorted(
    store: Store,
    rev: str | None = None,
    prefix: str = "",
    *,
    all: bool = False,
    order: str = "newest",
    where: str | None = None,
    now: datetime | None = None,
) -> Listing:
    """Returns the memories at ``rev`` under ``prefix``, in ``order``.

    As :func:`~ctx.engine.memories.list_memories` (memories another one
    SUPERSEDES are left out unless ``all``), sorted by
    :func:`sort_memories`, with the memory files that cannot be read named
    in ``unreadable`` rather than failing the listing. ``where``: only the
    memories that query selects (:func:`~ctx.engine.selection.select`, its
    relative times counted back from ``now``); a file that cannot be read
    matches no query, and is not named.

    Raises:
        InvalidInputError: ``prefix`` holds ``..``, ``order`` is unknown, or
            ``where`` is given without ``now``.
        QuerySyntaxError: ``where`` does not parse.
        CommitNotFoundError: ``rev`` names no commit.
    """
    from ctx.engine.adjacency import adjacency
    from ctx.engine.branches import resolve_revision
    from ctx.engine.snapshot import Listing

    if ".." in prefix.split("/"):
        raise InvalidInputError(f"Path prefix {prefix!r} may not contain '..'.")
    if order not in LISTING_ORDERS:
        sort_memories([], order)  # says which orders there are
    snap = store.snapshot(resolve_revision(store, rev))
    if where is not None:
        from ctx.engine.selection import select

        if now is None:
            raise InvalidInputError("A listing by a query needs the time it is made.")
        chosen = [
            s.record
            for s in select(store, where, now=now, rev=snap.commit, all=all)
            if s.record.path.startswith(prefix)
        ]
    else:
        folder = prefix.rpartition("/")[0]
        records = snap.memories(folder) if folder else snap.memories()
        hidden = set() if all else adjacency(store, snap).superseded()
        chosen = [
            r
            for r in records
            if r.path.startswith(prefix) and r.memory.id not in hidden
        ]
    return Listing(
        memories=tuple(sort_memories(chosen, order)),
        unreadable=tuple(
            u for path, u in sorted(snap.unreadable.items()) if path.startswith(prefix)
        ),
    )
