"""The orders a listing of memories can take (``ctx ls --sort``).

A tree lists its memories by path, and a path fans out on the id's last
characters, so that order means nothing to a reader. A listing is sorted
instead: newest first by default, by when each memory happened
(``created_at``, what ``remember --when`` sets), ties broken by id so that
the order is the same on every run.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ctx.engine.errors import InvalidInputError
from ctx.engine.model import headline

if TYPE_CHECKING:  # the command line reads LISTING_ORDERS without loading dulwich
    from ctx.engine.snapshot import MemoryRecord

__all__ = ["LISTING_ORDERS", "sort_memories"]

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
