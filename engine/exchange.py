"""Exporting a branch's whole graph as JSON Lines, and importing it back.

The format (``ctx-export``, version 1; docs/export-format.md has the long
form). One JSON object per line, each line ending in a newline::

    {"format":"ctx-export","version":1,"memories":2,"links":1}
    {"type":"memory","path":"memory/general/…/01J….json","memory":{…}}
    {"type":"memory","path":"pinned/style/use-black.json","memory":{…}}
    {"type":"link","source":"01J…","link_type":"RELATES_TO","target":…}

The header comes first; memory lines follow sorted by path, then link lines
sorted by their path under ``links/``. ``memory`` and ``link`` hold the
stored :class:`~ctx.engine.model.Memory` and :class:`~ctx.engine.model.Link`
with every field, and keys come in a fixed order, so exporting, importing
into an empty store and exporting again gives the same bytes.

Importing checks every line before anything is written (the first bad line
is named: ``Line 7: …``), then writes the whole graph as one commit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from datetime import datetime

import msgspec
from dulwich.objects import Blob, ObjectID

from ctx.engine import _trees
from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.errors import ConflictError, InvalidInputError, MemoryNotFoundError
from ctx.engine.ids import MemoryId, parse_memory_id
from ctx.engine.layout import (
    check_context,
    check_source_name,
    link_path,
    memory_path,
)
from ctx.engine.memories import WriteResult, normalize_tags
from ctx.engine.model import (
    Intent,
    Link,
    Memory,
    Source,
    check_body,
    check_kind,
    check_link_type,
    check_title,
    decode_memory,
    encode,
)
from ctx.engine.snapshot import LinkRecord, MemoryRecord, Snapshot
from ctx.engine.store import Store

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "ExportHeader",
    "LinkLine",
    "MemoryLine",
    "export_lines",
    "import_graph",
    "is_graph_export",
]

FORMAT_NAME = "ctx-export"
"""The ``format`` value of an export's header line."""
FORMAT_VERSION = 1
"""The newest export format version this ctx writes and reads."""

_MEMORY_VERSION = 1
_LINK_VERSION = 1
_MAX_REASON_CHARS = 2000
_BOM = b"\xef\xbb\xbf"
_AGENT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}$")
_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,127}$")
_SESSION_PART_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}$")
_MAX_SESSION_DEPTH = 6
_HEADER_HINT = f'An export starts with {{"format": "{FORMAT_NAME}", "version": 1}}.'


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


# Strict twins of the stored shapes, for decoding: an unknown key anywhere in
# an import is refused rather than silently dropped. tests/engine/
# test_exchange.py checks that their fields stay those of the model.


class _HeaderIn(ExportHeader, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class _FormatProbe(msgspec.Struct, frozen=True, kw_only=True):
    format: str


class _VersionProbe(msgspec.Struct, frozen=True, kw_only=True):
    version: int


class _SourceIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    file: str
    section: str


class _MemoryIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    version: int
    id: str
    kind: str
    title: str | None = None
    body: str
    tags: tuple[str, ...] = ()
    created_at: datetime
    source: _SourceIn | None = None
    meta: dict[str, str] = {}


class _LinkIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    version: int
    agent: str
    created_at: datetime
    confidence: float | None = None
    reason: str | None = None


class _MemoryLineIn(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    forbid_unknown_fields=True,
    tag="memory",
    tag_field="type",
):
    path: str
    memory: _MemoryIn


class _LinkLineIn(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    forbid_unknown_fields=True,
    tag="link",
    tag_field="type",
):
    source: str
    link_type: str
    target: str
    link: _LinkIn


_ENCODER = msgspec.json.Encoder(order="deterministic")
_FORMAT_PROBE = msgspec.json.Decoder(_FormatProbe)
_VERSION_PROBE = msgspec.json.Decoder(_VersionProbe)
_HEADER_DECODER = msgspec.json.Decoder(_HeaderIn)
_LINE_DECODER = msgspec.json.Decoder(_MemoryLineIn | _LinkLineIn)


def _line(value: ExportHeader | MemoryLine | LinkLine) -> bytes:
    return _ENCODER.encode(value) + b"\n"


class _Finder:
    """Finds where memories live in a snapshot, reading each area once.

    ``known`` holds blob ids already looked up in bulk (``None``: absent);
    other paths are looked up one by one.
    """

    def __init__(
        self, snap: Snapshot, known: Mapping[str, ObjectID | None] | None = None
    ) -> None:
        self._snap = snap
        self._known = known or {}
        self._contexts = snap.contexts()
        self._others: dict[MemoryId, str] | None = None

    def blob_id(self, path: str) -> str | None:
        if path in self._known:
            found = self._known[path]
            return None if found is None else found.decode("ascii")
        return self._snap.blob_id(path)

    def path_of(self, memory_id: MemoryId) -> str | None:
        for context in self._contexts:
            path = memory_path(context, memory_id)
            if self.blob_id(path) is not None:
                return path
        if self._others is None:
            self._others = {}
            for area in ("pinned", "primed", "sessions"):
                for rec in self._snap.memories(area):
                    self._others.setdefault(rec.memory.id, rec.path)
        return self._others.get(memory_id)


# -- export -----------------------------------------------------------------------


def export_lines(
    store: Store, *, rev: str | None = None, ids: Collection[str] | None = None
) -> Iterator[bytes]:
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
        by path, then the links sorted by path.

    Raises:
        CommitNotFoundError: ``rev`` names no commit.
        InvalidInputError: an entry of ``ids`` is not a memory id.
        MemoryNotFoundError: an entry of ``ids`` is not a memory at ``rev``.
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
        finder = _Finder(snap)
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
    return _encode_lines(header, records, links)


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
    a clear message by :func:`import_graph` rather than read as the simple
    memory-per-line import format.
    """
    try:
        probe = _FORMAT_PROBE.decode(first_line.removeprefix(_BOM))
    except msgspec.DecodeError:
        return False
    return probe.format == FORMAT_NAME


# -- import: checking each line ---------------------------------------------------


class _MemoryEntry(msgspec.Struct, frozen=True, kw_only=True):
    line: int
    path: str
    memory: Memory
    data: bytes
    blob: str


class _LinkEntry(msgspec.Struct, frozen=True, kw_only=True):
    line: int
    source: MemoryId
    link_type: str
    target: MemoryId
    path: str
    data: bytes
    blob: str


def _blob_id(data: bytes) -> str:
    return Blob.from_string(data).id.decode("ascii")


def _check_id(text: str) -> MemoryId:
    mid = parse_memory_id(text)
    if mid != text:
        raise InvalidInputError(
            f"{text!r} is not a memory id as stored (26 upper-case characters)."
        )
    return mid


def _check_line_text(what: str, text: str) -> None:
    if "\x00" in text or "\n" in text or "\r" in text:
        raise InvalidInputError(f"{what} must be a single line without NUL bytes.")


def _check_time(what: str, when: datetime) -> datetime:
    if when.tzinfo is None:
        raise InvalidInputError(f"{what} needs a timezone offset.")
    return when


def _check_memory(raw: _MemoryIn) -> Memory:
    if raw.version != _MEMORY_VERSION:
        raise InvalidInputError(
            f"Memory version {raw.version} is not supported "
            f"(this ctx reads version {_MEMORY_VERSION})."
        )
    source = None
    if raw.source is not None:
        _check_line_text("A source file name", raw.source.file)
        _check_line_text("A source section", raw.source.section)
        source = Source(file=raw.source.file, section=raw.source.section)
    for key, value in raw.meta.items():
        if not key or "\x00" in key or "\x00" in value:
            raise InvalidInputError(
                "Meta keys must be non-empty and free of NUL bytes."
            )
    return Memory(
        version=raw.version,
        id=_check_id(raw.id),
        kind=check_kind(raw.kind),
        title=check_title(raw.title),
        body=check_body(raw.body),
        tags=normalize_tags(raw.tags),
        created_at=_check_time("`created_at`", raw.created_at),
        source=source,
        meta=dict(raw.meta),
    )


def _check_path(path: str, memory: Memory) -> str:
    parts = path.split("/")
    if ".." in parts or "." in parts or "" in parts or "\\" in path:
        raise InvalidInputError(
            f"Path {path!r} is not allowed (no '..', '.', '\\' or empty parts)."
        )
    if not parts[-1].endswith(".json"):
        raise InvalidInputError(f"Path {path!r} must end in .json.")
    area = parts[0]
    if area == "memory":
        if len(parts) != 6:
            raise InvalidInputError(
                f"Path {path!r} is not of the form "
                "memory/<context>/<a>/<b>/<c>/<id>.json."
            )
        expected = memory_path(check_context(parts[1]), memory.id)
        if path != expected:
            raise InvalidInputError(
                f"Path {path!r} does not match memory {memory.id} "
                f"(expected {expected!r})."
            )
    elif area in ("pinned", "primed"):
        if len(parts) != 3:
            raise InvalidInputError(
                f"Path {path!r} is not of the form {area}/<source>/<slug>.json."
            )
        check_source_name(parts[1])
        if not _SLUG_RE.match(parts[2][: -len(".json")]):
            raise InvalidInputError(
                f"File name {parts[2]!r} is not allowed.",
                hint="Use lower-case letters, digits and _.- before .json.",
            )
    elif area == "sessions":
        if not 3 <= len(parts) <= _MAX_SESSION_DEPTH or not all(
            _SESSION_PART_RE.match(part) for part in parts[1:]
        ):
            raise InvalidInputError(
                f"Path {path!r} is not of the form sessions/<session>/<name>.json."
            )
    else:
        raise InvalidInputError(
            f"Path {path!r} must start with memory/, pinned/, primed/ or sessions/."
        )
    return path


def _check_link(raw: _LinkIn) -> Link:
    if raw.version != _LINK_VERSION:
        raise InvalidInputError(
            f"Link version {raw.version} is not supported "
            f"(this ctx reads version {_LINK_VERSION})."
        )
    if not _AGENT_RE.match(raw.agent):
        raise InvalidInputError(f"Agent name {raw.agent!r} is not allowed.")
    if raw.confidence is not None and not (
        math.isfinite(raw.confidence) and 0.0 <= raw.confidence <= 1.0
    ):
        raise InvalidInputError(f"Confidence {raw.confidence} is outside 0..1.")
    if raw.reason is not None:
        _check_line_text("A reason", raw.reason)
        if not raw.reason.strip() or len(raw.reason) > _MAX_REASON_CHARS:
            raise InvalidInputError(
                f"A reason must hold 1 to {_MAX_REASON_CHARS} characters."
            )
    return Link(
        version=raw.version,
        agent=raw.agent,
        created_at=_check_time("`created_at`", raw.created_at),
        confidence=raw.confidence,
        reason=raw.reason,
    )


def _decode_header(n: int, raw: bytes) -> ExportHeader:
    raw = raw.removeprefix(_BOM)
    if not is_graph_export(raw):
        raise InvalidInputError(
            f"Line {n}: not a ctx export header.", hint=_HEADER_HINT
        )
    try:
        version = _VERSION_PROBE.decode(raw).version
    except msgspec.DecodeError as exc:
        raise InvalidInputError(f"Line {n}: {exc}.") from None
    if version != FORMAT_VERSION:
        raise InvalidInputError(
            f"Line {n}: export format version {version} is not supported "
            f"(this ctx reads version {FORMAT_VERSION}).",
            hint="A newer ctx wrote this file; upgrade ctx to import it.",
        )
    try:
        header = _HEADER_DECODER.decode(raw)
    except msgspec.DecodeError as exc:
        raise InvalidInputError(f"Line {n}: {exc}.") from None
    for what, count in (("memories", header.memories), ("links", header.links)):
        if count is not None and count < 0:
            raise InvalidInputError(f"Line {n}: `{what}` cannot be negative.")
    return header


def _decode_line(n: int, raw: bytes) -> _MemoryEntry | _LinkEntry:
    try:
        raw.decode("utf-8")
        item = _LINE_DECODER.decode(raw)
    except UnicodeDecodeError:
        raise InvalidInputError(f"Line {n}: not valid UTF-8.") from None
    except msgspec.ValidationError as exc:
        raise InvalidInputError(f"Line {n}: {exc}.") from None
    except msgspec.DecodeError as exc:
        raise InvalidInputError(f"Line {n}: not a JSON object ({exc}).") from None
    try:
        if isinstance(item, _MemoryLineIn):
            memory = _check_memory(item.memory)
            data = encode(memory)
            return _MemoryEntry(
                line=n,
                path=_check_path(item.path, memory),
                memory=memory,
                data=data,
                blob=_blob_id(data),
            )
        source, target = _check_id(item.source), _check_id(item.target)
        if source == target:
            raise InvalidInputError("A memory cannot link to itself.")
        link_type = check_link_type(item.link_type)
        data = encode(_check_link(item.link))
        return _LinkEntry(
            line=n,
            source=source,
            link_type=link_type,
            target=target,
            path=link_path(source, link_type, target),
            data=data,
            blob=_blob_id(data),
        )
    except InvalidInputError as exc:
        raise InvalidInputError(f"Line {n}: {exc.message}", hint=exc.hint) from None


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _parse(
    lines: Iterable[bytes], merge: bool
) -> tuple[list[_MemoryEntry], list[_LinkEntry]]:
    header: ExportHeader | None = None
    memories: list[_MemoryEntry] = []
    links: list[_LinkEntry] = []
    by_id: dict[MemoryId, int] = {}
    by_path: dict[str, int] = {}
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        if header is None:
            header = _decode_header(n, raw)
            continue
        entry = _decode_line(n, raw)
        if isinstance(entry, _MemoryEntry):
            if entry.memory.id in by_id:
                raise InvalidInputError(
                    f"Line {n}: memory {entry.memory.id} is already on line "
                    f"{by_id[entry.memory.id]}."
                )
            by_id[entry.memory.id] = n
        if entry.path in by_path:
            what = "path" if isinstance(entry, _MemoryEntry) else "link"
            raise InvalidInputError(
                f"Line {n}: {what} {entry.path} is already on line "
                f"{by_path[entry.path]}."
            )
        by_path[entry.path] = n
        if isinstance(entry, _MemoryEntry):
            memories.append(entry)
        else:
            links.append(entry)
    if header is None:
        raise InvalidInputError("The import is empty.", hint=_HEADER_HINT)
    for what, announced, found in (
        ("memories", header.memories, len(memories)),
        ("links", header.links, len(links)),
    ):
        if announced is not None and announced != found:
            raise InvalidInputError(
                f"The header announces {announced} {what} but the file holds "
                f"{found}; it may be truncated."
            )
    if not merge:
        for link in links:
            for role, end in (("source", link.source), ("target", link.target)):
                if end not in by_id:
                    raise InvalidInputError(
                        f"Line {link.line}: link {role} {end} is not a memory "
                        "of the file.",
                        hint="Export both ends, or import with merge to link "
                        "to memories already on the branch.",
                    )
    return memories, links


# -- import: writing ------------------------------------------------------------


def import_graph(
    store: Store,
    lines: Iterable[bytes],
    intent: Intent,
    *,
    branch: str | None = None,
    merge: bool = False,
) -> WriteResult:
    """Imports an export (see :func:`export_lines`) as one commit.

    Every line is decoded and checked first: the header and its version,
    each memory as a new memory would be (kind, title, body, tags, times,
    names in its path, the path matching the memory), each link (known
    type, no self-link, both ends in the file), and no id or path twice.
    Then, against the branch: a memory or link already there with the same
    bytes is left alone. Without ``merge`` any other clash (the same id with
    other content or at another path, a link with other content) is
    refused. With ``merge`` the imported version of a memory or link
    replaces the branch's (a memory moves to the file's path), links may end
    at memories already on the branch, and everything else on the branch is
    kept. A path holding a different memory is refused either way.

    Args:
        store: The store.
        lines: The file's lines (bytes; a trailing newline is fine).
        intent: Who writes and why (typically ``intent="import"``).
        branch: The branch to write (default: HEAD).
        merge: Replace memories and links the branch already has.

    Returns:
        The commit (``None`` when everything was already there), the ids of
        the memories written, in file order, and every path written, sorted.

    Raises:
        InvalidInputError: a bad line, named ``Line N: …``; nothing written.
        ConflictError: the branch holds something else under an imported
            id or path (``Line N: …``); nothing written.
    """
    memories, links = _parse(lines, merge)
    if not memories and not links:
        return WriteResult(commit=None, ids=())
    name = target_branch(store, branch)
    file_paths = {m.memory.id: m.path for m in memories}
    written_ids: list[MemoryId] = []
    written: dict[str, bytes | None] = {}

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        # One bulk lookup of every path this import may touch: the file's
        # paths and, for each id, where it would sit in every context.
        probe = {e.path for e in memories} | {link.path for link in links}
        ends = {end for link in links for end in (link.source, link.target)}
        wanted = file_paths.keys() | ends
        probe |= {memory_path(c, mid) for c in snap.contexts() for mid in wanted}
        known = _trees.lookup_many(store.repo.object_store, snap.tree, probe)
        finder = _Finder(snap, known)
        writes, deletes = memory_changes(snap, finder, name)
        for link in links:
            for role, end in (("source", link.source), ("target", link.target)):
                if end not in file_paths and finder.path_of(end) is None:
                    raise InvalidInputError(
                        f"Line {link.line}: link {role} {end} is neither in "
                        f"the file nor on branch {name!r}."
                    )
            current = finder.blob_id(link.path)
            if current == link.blob:
                continue
            if current is not None and not merge:
                raise ConflictError(
                    f"Line {link.line}: the {link.link_type} link from "
                    f"{link.source} to {link.target} already exists on branch "
                    f"{name!r} with different content.",
                    hint="Import with merge to replace it.",
                )
            writes[link.path] = link.data
        written.clear()
        written.update({**deletes, **writes})
        return dict(written)

    def memory_changes(
        snap: Snapshot, finder: _Finder, name: str
    ) -> tuple[dict[str, bytes | None], dict[str, bytes | None]]:
        written_ids.clear()
        writes: dict[str, bytes | None] = {}
        deletes: dict[str, bytes | None] = {}
        for entry in memories:
            mid = entry.memory.id
            occupant = finder.blob_id(entry.path)
            if occupant == entry.blob:
                continue
            other = (
                None
                if occupant is None
                else decode_memory(snap.read_blob(occupant), entry.path).id
            )
            if other == mid and not merge:
                raise ConflictError(
                    f"Line {entry.line}: memory {mid} already exists on "
                    f"branch {name!r} with different content.",
                    hint="Import with merge to replace it.",
                )
            if other is not None and other != mid:
                # With merge, the occupant may itself be moving elsewhere.
                moving = merge and file_paths.get(other, entry.path) != entry.path
                if not moving:
                    raise ConflictError(
                        f"Line {entry.line}: path {entry.path} holds another "
                        f"memory ({other}) on branch {name!r}.",
                        hint="Move or forget that memory first.",
                    )
            if other != mid:
                existing = finder.path_of(mid)
                if existing is not None and not merge:
                    raise ConflictError(
                        f"Line {entry.line}: memory {mid} already exists on "
                        f"branch {name!r} at {existing}.",
                        hint="Import with merge to move and replace it.",
                    )
                if existing is not None:
                    deletes[existing] = None
            writes[entry.path] = entry.data
            written_ids.append(mid)
        return writes, deletes

    summary = (
        f"Import {_plural(len(memories), 'memory', 'memories')} and "
        f"{_plural(len(links), 'link', 'links')}"
    )
    if merge:
        summary += " (merge)"
    commit = store.write(name, intent, summary, build)
    paths = sorted(path for path, data in written.items() if data is not None)
    return WriteResult(commit=commit, ids=tuple(written_ids), paths=tuple(paths))
