"""Reading an export (``ctx-export``) back: every line decoded and checked.

:func:`read_graph` checks a whole file before anything is written: the
header and its version, each memory as a new memory would be (kind, title,
body, tags, times, the names in its path, the path matching the memory),
each link (two stored ids, a known type, no self-link, its content), no id
or path twice, the counts the header announces and, unless the import
merges, both ends of every link in the file. The first bad line is named
(``Line 7: …``; blank lines count). What it returns is written by
``graph_import.py``.
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Collection, Iterable
from datetime import datetime

import msgspec
from dulwich.objects import Blob

from ctx.engine.errors import InvalidInputError
from ctx.engine.exports import (
    FORMAT_NAME,
    FORMAT_VERSION,
    ExportHeader,
    is_graph_export,
)
from ctx.engine.ids import MemoryId, parse_memory_id
from ctx.engine.jsonl import NESTED_TOO_DEEPLY, decode_line
from ctx.engine.layout import (
    MEMORY,
    MEMORY_AREAS,
    PINNED,
    PRIMED,
    SESSIONS,
    check_context,
    check_source_name,
    link_path,
    memory_path,
)
from ctx.engine.memories import normalize_tags
from ctx.engine.model import (
    Link,
    Memory,
    Source,
    check_body,
    check_kind,
    check_link_type,
    check_time,
    check_title,
    encode,
    is_agent_name,
)
from ctx.engine.wording import plural

__all__ = ["Graph", "LinkEntry", "MemoryEntry", "read_graph"]

_MEMORY_VERSION = 1
_LINK_VERSION = 1
_MAX_REASON_CHARS = 2000
_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,127}$")
_SESSION_PART_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}$")
_MAX_SESSION_DEPTH = 6
_HEADER_HINT = f'An export starts with {{"format": "{FORMAT_NAME}", "version": 1}}.'


# -- one line -----------------------------------------------------------------------


# Strict twins of the stored shapes, for decoding: an unknown key anywhere in
# an import is refused rather than silently dropped. tests/engine/
# test_exchange.py checks that their fields stay those of the model.


class _HeaderIn(ExportHeader, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


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


_VERSION_PROBE = msgspec.json.Decoder(_VersionProbe)
_HEADER_DECODER = msgspec.json.Decoder(_HeaderIn)
_LINE_DECODER = msgspec.json.Decoder(_MemoryLineIn | _LinkLineIn)


class MemoryEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A checked memory line: its line number, path, memory and stored bytes."""

    line: int
    path: str
    memory: Memory
    data: bytes
    blob: str


class LinkEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A checked link line: its line number, ends, type, path and stored bytes."""

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
    return check_time(when, what)


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


_AREA_LIST = ", ".join(f"{area}/" for area in MEMORY_AREAS[:-1]) + (
    f" or {MEMORY_AREAS[-1]}/"
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
    if area == MEMORY:
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
    elif area in (PINNED, PRIMED):
        if len(parts) != 3:
            raise InvalidInputError(
                f"Path {path!r} is not of the form {area}/<source>/<slug>.json."
            )
        check_source_name(parts[1])
        if not _SLUG_RE.fullmatch(parts[2][: -len(".json")]):
            raise InvalidInputError(
                f"File name {parts[2]!r} is not allowed.",
                hint="Use lower-case letters, digits and _.- before .json.",
            )
    elif area == SESSIONS:
        if not 3 <= len(parts) <= _MAX_SESSION_DEPTH or not all(
            _SESSION_PART_RE.fullmatch(part) for part in parts[1:]
        ):
            raise InvalidInputError(
                f"Path {path!r} is not of the form sessions/<session>/<name>.json."
            )
    else:
        raise InvalidInputError(f"Path {path!r} must start with {_AREA_LIST}.")
    return path


def _check_link(raw: _LinkIn) -> Link:
    if raw.version != _LINK_VERSION:
        raise InvalidInputError(
            f"Link version {raw.version} is not supported "
            f"(this ctx reads version {_LINK_VERSION})."
        )
    if not is_agent_name(raw.agent):
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
    raw = raw.removeprefix(codecs.BOM_UTF8)
    if not is_graph_export(raw):
        raise InvalidInputError(
            f"Line {n}: not a ctx export header.", hint=_HEADER_HINT
        )
    try:
        version = _VERSION_PROBE.decode(raw).version
    except msgspec.DecodeError as exc:
        raise InvalidInputError(f"Line {n}: {exc}.") from None
    except RecursionError:
        raise InvalidInputError(f"Line {n}: {NESTED_TOO_DEEPLY}") from None
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
    except RecursionError:
        raise InvalidInputError(f"Line {n}: {NESTED_TOO_DEEPLY}") from None
    for what, count in (("memories", header.memories), ("links", header.links)):
        if count is not None and count < 0:
            raise InvalidInputError(f"Line {n}: `{what}` cannot be negative.")
    return header


def _decode_line(n: int, raw: bytes) -> MemoryEntry | LinkEntry:
    item = decode_line(_LINE_DECODER, n, raw)
    try:
        if isinstance(item, _MemoryLineIn):
            memory = _check_memory(item.memory)
            data = encode(memory)
            return MemoryEntry(
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
        return LinkEntry(
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


# -- the whole file -------------------------------------------------------------------


class Graph(msgspec.Struct, frozen=True, kw_only=True):
    """A whole file, checked: its memories and links in file order."""

    memories: tuple[MemoryEntry, ...]
    links: tuple[LinkEntry, ...]


class _Seen:
    """The line on which each memory id and each path was first seen."""

    def __init__(self) -> None:
        self.ids: dict[MemoryId, int] = {}
        self.paths: dict[str, int] = {}

    def add(self, entry: MemoryEntry | LinkEntry) -> None:
        """Records ``entry``, refusing an id or a path seen before."""
        n = entry.line
        if isinstance(entry, MemoryEntry):
            mid = entry.memory.id
            if mid in self.ids:
                raise InvalidInputError(
                    f"Line {n}: memory {mid} is already on line {self.ids[mid]}."
                )
            self.ids[mid] = n
        if entry.path in self.paths:
            what = "path" if isinstance(entry, MemoryEntry) else "link"
            raise InvalidInputError(
                f"Line {n}: {what} {entry.path} is already on line "
                f"{self.paths[entry.path]}."
            )
        self.paths[entry.path] = n


def read_graph(lines: Iterable[bytes], merge: bool) -> Graph:
    """Returns the memories and links of an export, every line checked.

    Args:
        lines: The file's lines (bytes; a trailing newline is fine).
        merge: Links may end at memories that are not in the file (they are
            looked for on the branch when writing).

    Raises:
        InvalidInputError: the first bad line, named ``Line N: …``.
    """
    header: ExportHeader | None = None
    memories: list[MemoryEntry] = []
    links: list[LinkEntry] = []
    seen = _Seen()
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        if header is None:
            header = _decode_header(n, raw)
            continue
        entry = _decode_line(n, raw)
        seen.add(entry)
        if isinstance(entry, MemoryEntry):
            memories.append(entry)
        else:
            links.append(entry)
    if header is None:
        raise InvalidInputError("The import is empty.", hint=_HEADER_HINT)
    _check_counts(header, len(memories), len(links))
    if not merge:
        _check_ends_in_file(links, seen.ids.keys())
    return Graph(memories=tuple(memories), links=tuple(links))


def _check_counts(header: ExportHeader, memories: int, links: int) -> None:
    for what, announced, found in (
        ("memory", header.memories, memories),
        ("link", header.links, links),
    ):
        if announced is not None and announced != found:
            raise InvalidInputError(
                f"The header announces {plural(announced, what)} but the file holds "
                f"{found}; it may be truncated."
            )


def _check_ends_in_file(links: Iterable[LinkEntry], ids: Collection[MemoryId]) -> None:
    for link in links:
        for role, end in (("source", link.source), ("target", link.target)):
            if end not in ids:
                raise InvalidInputError(
                    f"Line {link.line}: link {role} {end} is not a memory of the file.",
                    hint="Export both ends, or import with merge to link "
                    "to memories already on the branch.",
                )
