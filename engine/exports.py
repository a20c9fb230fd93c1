"""The export format (``ctx-export``): a branch's whole graph as JSON Lines.

One JSON object per line, each line ending in a newline (docs/export-format.md
has the long form)::

    {"format":"ctx-export","version":1,"memories":2,"links":1}
    {"type":"memory","path":"memory/general/…/01J….json","memory":{…}}
    {"type":"memory","path":"pinned/style/use-black.json","memory":{…}}
    {"type":"link","source":"01J…","link_type":"RELATES_TO","target":…}

The header comes first; memory lines follow sorted by path, then link lines
sorted by their path under ``links/``. ``memory`` and ``link`` hold the
stored :class:`~ctx.engine.model.Memory` and :class:`~ctx.engine.model.Link`
with every field, and keys come in a fixed order, so exporting, importing
into an empty store and exporting again gives the same bytes.

This module writes the format and recognises its header
(:func:`is_graph_export`); reading it back is ``graph_import.py``, reached
through :func:`~ctx.engine.imports.import_memories`.
"""

from __future__ import annotations

import codecs
from collections.abc import Collection, Iterator, Mapping

import msgspec
from dulwich.objects import ObjectID

from ctx.engine.branches import resolve_revision
from ctx.engine.errors import MemoryNotFoundError
from ctx.engine.ids import MemoryId, parse_memory_id
from ctx.engine.layout import PINNED, PRIMED, SESSIONS, memory_path
from ctx.engine.model import Link, Memory
from ctx.engine.snapshot import LinkRecord, MemoryRecord, Snapshot, UnreadableMemory
from ctx.engine.store import Store

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "ExportHeader",
    "ExportLines",
    "LinkLine",
    "MemoryFinder",
    "MemoryLine",
    "export_lines",
    "is_graph_export",
]

FORMAT_NAME = "ctx-export"
"""The ``format`` value of an export's header line."""
FORMAT_VERSION = 1
"""The newest export format version this ctx writes and reads."""


# -- the lines ------------------------------------------------------------------


class ExportHeader(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The first line of an export.

    Attributes:
        format: Always :data:`FORMAT_NAME`.
        version: The format version (:data:`FORMAT_VERSION`).
        memories: How many memory lines follow; checked on import when given,
            so a file cut short at a line boundary is refused.
        links: How many link lines follow; checked likewise.
    """

    format: str
    version: int
    memories: int | None = None
    links: int | None = None


class MemoryLine(
    msgspec.Struct, frozen=True, kw_only=True, tag="memory", tag_field="type"
):
    """One memory of an export: where it lives and its stored content."""

    path: str
    memory: Memory


class LinkLine(msgspec.Struct, frozen=True, kw_only=True, tag="link", tag_field="type"):
    """One typed link of an export: its two ends, its type and its content."""

    source: MemoryId
    link_type: str
    target: MemoryId
    link: Link


class _FormatProbe(msgspec.Struct, frozen=True, kw_only=True):
    format: str


_ENCODER = msgspec.json.Encoder(order="deterministic")
_FORMAT_PROBE = msgspec.json.Decoder(_FormatProbe)


def _line(value: ExportHeader | MemoryLine | LinkLine) -> bytes:
    return _ENCODER.encode(value) + b"\n"


class MemoryFinder:
    """Finds where memories live in a snapshot, reading each area once.

    Shared by :func:`export_lines` (the memories ``ids`` names) and the graph
    import (where an imported id already lives). ``known`` holds blob ids
    already looked up in bulk (``None``: absent); other paths are looked up
    one by one.
    """

    def __init__(
        self, snap: Snapshot, known: Mapping[str, ObjectID | None] | None = None
    ) -> None:
        self._snap = snap
        self._known = known or {}
        self._contexts = snap.contexts()
        self._others: dict[MemoryId, str] | None = None

    def blob_id(self, path: str) -> str | None:
        """Returns the blob id at ``path`` (``None``: nothing there)."""
        if path in self._known:
            found = self._known[path]
            return None if found is None else found.decode("ascii")
        return self._snap.blob_id(path)

    def path_of(self, memory_id: MemoryId) -> str | None:
        """Returns where the memory ``memory_id`` lives (``None``: nowhere)."""
        for context in self._contexts:
            path = memory_path(context, memory_id)
            if self.blob_id(path) is not None:
                return path
        if self._others is None:
            self._others = {}
            for area in (PINNED, PRIMED, SESSIONS):
                for rec in self._snap.memories(area):
                    self._others.setdefault(rec.memory.id, rec.path)
        return self._others.get(memory_id)


# -- export -----------------------------------------------------------------------


class ExportLines(Iterator[bytes]):
    """The lines of an export, encoded as they are consumed.

    Attributes:
        unreadable: The memory files left out because they cannot be read
            (a store written by another tool may hold one); the header
            counts only the memories exported.
    """

    def __init__(
        self, lines: Iterator[bytes], unreadable: tuple[UnreadableMemory, ...]
    ) -> None:
        self._lines = lines
        self.unreadable = unreadable

    def __next__(self) -> bytes:
        """Returns the next line."""
        return next(self._lines)


def export_lines(
    store: Store, *, rev: str | None = None, ids: Collection[str] | None = None
) -> ExportLines:
    """Returns the lines of an export of the graph at ``rev``.

    The work (resolving ``rev``, reading the memories) is done before this
    returns, so errors surface here; the lines are encoded as they are
    consumed. ``b"".join(export_lines(store))`` is the whole file.

    Args:
        store: The store.
        rev: The revision to export (default: the HEAD branch).
        ids: Export only these memories and the links between them. ``None``
            exports every memory; every link whose two ends are exported is
            exported too (a link left dangling by ``forget`` is not).

    Returns:
        Byte lines, each ending in a newline: the header, the memories sorted
        by path, then the links sorted by path; and the memory files left
        out because they cannot be read (only when ``ids`` is ``None``: a
        memory asked for by id that cannot be read is an error).

    Raises:
        CommitNotFoundError: ``rev`` names no commit.
        InvalidInputError: an entry of ``ids`` is not a memory id.
        MemoryNotFoundError: an entry of ``ids`` is not a memory at ``rev``.
        CorruptStoreError: a memory of ``ids`` cannot be read.
    """
    snap = store.snapshot(resolve_revision(store, rev))
    records: list[MemoryRecord]
    links: list[LinkRecord]
    if ids is None:
        records = list(snap.memories())
        exported = {r.memory.id for r in records}
        links = [
            r for r in snap.links() if r.source in exported and r.target in exported
        ]
    else:
        finder = MemoryFinder(snap)
        wanted = sorted({parse_memory_id(i) for i in ids})
        records = []
        for mid in wanted:
            path = finder.path_of(mid)
            blob = None if path is None else snap.blob_id(path)
            if path is None or blob is None:
                raise MemoryNotFoundError(
                    f"No memory {mid} here.",
                    hint="`ctx ls` lists memories; `ctx log` shows removed ones.",
                )
            records.append(snap.record(path, blob))
        exported = set(wanted)
        links = [
            r for mid in wanted for r in snap.links_from(mid) if r.target in exported
        ]
    records.sort(key=lambda r: r.path)
    links.sort(key=lambda r: r.path)
    header = ExportHeader(
        format=FORMAT_NAME,
        version=FORMAT_VERSION,
        memories=len(records),
        links=len(links),
    )
    unreadable = tuple(u for _, u in sorted(snap.unreadable.items()))
    return ExportLines(_encode_lines(header, records, links), unreadable)


def _encode_lines(
    header: ExportHeader, records: list[MemoryRecord], links: list[LinkRecord]
) -> Iterator[bytes]:
    yield _line(header)
    for rec in records:
        yield _line(MemoryLine(path=rec.path, memory=rec.memory))
    for link in links:
        yield _line(
            LinkLine(
                source=link.source,
                link_type=link.type,
                target=link.target,
                link=link.link,
            )
        )


def is_graph_export(first_line: bytes) -> bool:
    """Returns whether ``first_line`` is the header of a ``ctx-export`` file.

    True for any version, so that an export from a newer ctx is refused with
    a clear message rather than read as the simple memory-per-line import
    format. A leading UTF-8 byte order mark is ignored.
    """
    try:
        probe = _FORMAT_PROBE.decode(first_line.removeprefix(codecs.BOM_UTF8))
    except (msgspec.DecodeError, RecursionError):  # the line's own decoder says why
        return False
    return probe.format == FORMAT_NAME
