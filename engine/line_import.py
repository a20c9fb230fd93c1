"""The plain import format: one new memory per JSON line, all in one commit.

Format (version 1; docs/import-format.md), one JSON object per line; blank
lines are skipped::

    {"text": "...",               required, the body
     "title": "...",              optional
     "kind": "decision",          optional, default "fact"
     "context": "decisions",      optional, default "general"
     "tags": ["project:ctx"],     optional
     "when": "2023-05-08T13:56:00+00:00",  optional, default now; any
                                  form of ``times.parse_time``
     "pinned": false,             optional
     "meta": {"k": "v"}}          optional, string values

Unknown keys are refused, so a typo is an error rather than lost data.
Every line is checked before anything is written, and the first bad one is
named (``Line 7: …``). The public way in is
:func:`~ctx.engine.imports.import_memories`, which sends a file here unless
its first line is an export header (``graph_import.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

import msgspec

from ctx.engine.errors import InvalidInputError
from ctx.engine.jsonl import decode_line
from ctx.engine.memories import Draft, WriteResult, remember_many
from ctx.engine.model import Intent
from ctx.engine.store import Store
from ctx.engine.times import parse_time

__all__ = ["ImportLine", "TimeParser", "import_lines", "parse_lines"]

TimeParser = Callable[[str, str], datetime]
"""Reads a time given as text: ``(text, what) -> moment``, raising
:class:`~ctx.engine.InvalidInputError` (:func:`~ctx.engine.parse_time`)."""


class ImportLine(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One line of an import file."""

    text: str
    title: str | None = None
    kind: str = "fact"
    context: str = "general"
    tags: list[str] = []
    when: str | None = None
    pinned: bool = False
    meta: dict[str, str] = {}


_DECODER = msgspec.json.Decoder(ImportLine)


def parse_lines(
    lines: Iterable[bytes], when: TimeParser = parse_time
) -> tuple[list[Draft], list[int]]:
    """Decodes and checks the shape of every line.

    Args:
        lines: The file's lines.
        when: Reads the ``when`` of a line; the default takes the absolute
            forms with an offset (the command line passes the hub's
            :func:`~ctx.hub.parse_moment`: local time and phrases too).

    Returns:
        The drafts and, for each, its 1-based line number.

    Raises:
        InvalidInputError: naming the first bad line (1-based).
    """
    drafts: list[Draft] = []
    numbers: list[int] = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        item = decode_line(_DECODER, n, raw)
        moment = None if item.when is None else when(item.when, f"Line {n}: `when`")
        numbers.append(n)
        drafts.append(
            Draft(
                text=item.text,
                title=item.title,
                kind=item.kind,
                context=item.context,
                tags=tuple(item.tags),
                when=moment,
                pinned=item.pinned,
                meta=item.meta,
            )
        )
    if not drafts:
        raise InvalidInputError("The import holds no memories.")
    return drafts, numbers


def import_lines(
    store: Store,
    lines: Iterable[bytes],
    intent: Intent,
    *,
    branch: str | None = None,
    source: str = "import",
    when: TimeParser = parse_time,
) -> WriteResult:
    """Validates every line, then writes all memories in one commit.

    Args:
        store: The store.
        lines: The file's lines (bytes).
        intent: Who writes and why.
        branch: The branch to write (default: HEAD).
        source: What the commit message names as the origin (a file name).
        when: Reads each line's ``when`` (:func:`parse_lines`).

    Returns:
        The commit and the new memories' ids, in file order.

    Raises:
        InvalidInputError: a bad line, named ``Line N: …``; nothing written.
    """
    drafts, numbers = parse_lines(lines, when)
    return remember_many(
        store,
        drafts,
        intent,
        branch=branch,
        summary="Import {n} from " + source,
        labels=[f"Line {n}" for n in numbers],
    )
