"""Short ids: a memory named by the start or the end of its id, as git does.

A memory id is a ULID: its first ten characters are the time it was made,
its last sixteen random. Ids made close together share their first 8 to 10
characters, so a short id may be either end: any prefix or suffix of at
least :data:`MIN_SHORT` characters that names one live memory of the
revision read names that memory. A full id takes the fast path and reads
nothing. Listings print the end (:func:`abbreviate`): the shortest suffix,
at least :data:`MIN_SHOWN` characters, that no other id of the revision
shares.

Both ask the text index (``texts.py``), where the ids and the ids reversed
are indexed: a look-up is one or two range queries at any store size.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ctx.engine.branches import resolve_revision
from ctx.engine.errors import InvalidInputError, MemoryNotFoundError
from ctx.engine.ids import MemoryId, parse_memory_id
from ctx.engine.store import Store

if TYPE_CHECKING:
    from ctx.engine.texts import TextIndex

__all__ = ["MIN_SHORT", "MIN_SHOWN", "abbreviate", "resolve_memory_id"]

MIN_SHORT = 6
"""The fewest characters of an id that may name a memory."""

MIN_SHOWN = 8
"""The fewest characters a listing shows of an id: 40 random bits, which a
million ids share in about one pair (that pair's listing gets more)."""

_SHOWN_AT_ONCE = 3  # candidates an ambiguous short id lists before "and N more"
_PART_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]+$")
_QUOTED_ID_RE = re.compile(r'"([0-7][0-9A-HJKMNP-TV-Z]{25})"')
_SCAN_OVER = 64  # above this many ids, one ordered scan beats two queries each


def resolve_memory_id(
    store: Store, text: str, rev: str | None = None, *, removed: bool = False
) -> MemoryId:
    """Returns the id ``text`` names: a full id, or a unique short one.

    Args:
        store: The store.
        text: A full id, or at least :data:`MIN_SHORT` characters from its
            start or its end (any case).
        rev: The revision whose live memories a short id is looked up in
            (branch, commit; default HEAD). A full id is not looked up.
        removed: When no live memory matches, look in the history of
            ``rev`` too (a removed memory's log), reading the history index.

    Raises:
        InvalidInputError: ``text`` is not an id or a part of one, or it
            names several memories (the message lists a few).
        MemoryNotFoundError: no live memory's id starts or ends with it.
    """
    part = text.strip().upper()
    if len(part) == 26:
        return parse_memory_id(text)
    if len(part) < MIN_SHORT or len(part) > 26 or not _PART_RE.fullmatch(part):
        raise InvalidInputError(
            f"{text!r} is not a memory id: give its 26 characters, or at least "
            f"{MIN_SHORT} from its start or its end.",
            hint="Ids look like 01JD2X9K7M3Q4R5S6T7V8W9XYZ; `ctx ls` lists them.",
        )
    ids, count = _index(store, rev).ids_matching(part, _SHOWN_AT_ONCE + 1)
    if count == 0 and removed:
        ids = _in_history(store, rev, part)
        count = len(ids)
    if count == 1:
        return ids[0]
    if count == 0:
        raise MemoryNotFoundError(
            f"No memory here has an id that starts or ends with {part}.",
            hint="`ctx ls` lists memories; `ctx log` shows removed ones.",
        )
    shown = ", ".join(ids[:_SHOWN_AT_ONCE])
    more = count - _SHOWN_AT_ONCE
    listed = f"{shown} and {more} more" if more > 0 else shown
    raise InvalidInputError(
        f"Id {part} is ambiguous: it names {count} memories ({listed}).",
        hint="Give more of its characters.",
    )


def abbreviate(
    store: Store, ids: Iterable[str], rev: str | None = None
) -> dict[str, str]:
    """Returns the short form of each id, as listings print it.

    The short form is the end of the id, all of one length: the shortest,
    at least :data:`MIN_SHOWN`, at which none of ``ids`` shares its end
    with another live memory's id at ``rev``. An id that is not live there
    (a removed memory in a log) gets the same length.
    """
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    index = _index(store, rev)
    width = MIN_SHOWN
    if len(wanted) > _SCAN_OVER:
        chosen = set(wanted)
        ordered = index.ids_by_suffix()
        for mid, other in itertools.pairwise(ordered):
            if mid in chosen or other in chosen:
                width = max(width, _common_suffix(mid, other) + 1)
    else:
        for mid in wanted:
            for other in index.suffix_neighbours(mid):
                if other != mid:
                    width = max(width, _common_suffix(mid, other) + 1)
    width = min(width, 26)
    return {mid: mid[-width:] for mid in wanted}


def _in_history(store: Store, rev: str | None, part: str) -> list[MemoryId]:
    """Returns the ids starting or ending with ``part`` in ``rev``'s history.

    Only the commits whose encoded changes mention ``part`` are read.
    """
    found: set[str] = set()
    for rec in store.history.records(resolve_revision(store, rev)):
        if rec.mentions(part):
            found.update(
                mid
                for mid in _QUOTED_ID_RE.findall(bytes(rec.raw_changes).decode())
                if mid.startswith(part) or mid.endswith(part)
            )
    return sorted(MemoryId(mid) for mid in found)


def _index(store: Store, rev: str | None) -> TextIndex:
    # Here, not at the top: the text index (sqlite3) opens only when a short
    # id is looked up, and whole ids (``ctx ls``'s conflict marks) need none.
    from ctx.engine.texts import text_index

    return text_index(store, store.snapshot(resolve_revision(store, rev)))


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n
