"""Ingesting text files as ``source`` memories, split to fit, in one commit.

Each file becomes one memory under ``memory/<context>/``, or several when it
is larger than one piece (16,000 bytes by default, well under the body limit
so that a piece stays a useful unit of recall). Pieces are exact slices of
the text: joined in order they give back the file. A cut falls after a blank
line (the blank lines stay with the piece before it); a paragraph larger
than a piece is cut after a line break, and a line larger than a piece
between two characters, never inside one.

This is its own module rather than part of ``imports.py``: cutting text
(paragraphs, lines, UTF-8 boundaries) is a concept of its own, which
:func:`split_text` offers alone, while ``imports.py`` is about the ways in
and the formats. The public entry point is
:func:`~ctx.engine.imports.import_files`, which returns the same
:class:`~ctx.engine.imports.ImportResult` as every import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import msgspec

from ctx.engine.branches import target_branch
from ctx.engine.errors import InvalidInputError
from ctx.engine.ids import MemoryId, new_memory_id
from ctx.engine.layout import check_context, memory_path
from ctx.engine.memories import (
    Draft,
    WriteResult,
    already_there,
    build_memory,
    tip_text_index,
)
from ctx.engine.model import MAX_BODY_BYTES, Intent, Memory, Source, encode
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store
from ctx.engine.texts import text_index
from ctx.engine.wording import plural

__all__ = ["DEFAULT_PIECE_BYTES", "MIN_PIECE_BYTES", "ingest_files", "split_text"]

DEFAULT_PIECE_BYTES = 16_000
"""The default largest piece of a file, in UTF-8 bytes."""
MIN_PIECE_BYTES = 64
"""The smallest piece size :func:`ingest_files` accepts."""

_MAX_NAME_CHARS = 255
_BOM = "\ufeff"
# A paragraph ends at a line break followed by one or more blank lines; the
# cut goes after the blank lines.
_PARAGRAPH_END_RE = re.compile(r"\n(?:[ \t\r\f\v]*\n)+")


def _cut_after(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Returns ``text`` cut after every match of ``pattern`` (no empty parts)."""
    parts: list[str] = []
    start = 0
    for match in pattern.finditer(text):
        if match.end() > start:
            parts.append(text[start : match.end()])
            start = match.end()
    if start < len(text):
        parts.append(text[start:])
    return parts


def _hard_split(text: str, max_bytes: int) -> list[str]:
    data = text.encode("utf-8")
    parts: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + max_bytes, len(data))
        # Back off while the cut would land on a UTF-8 continuation byte.
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end -= 1
        parts.append(data[start:end].decode("utf-8"))
        start = end
    return parts


def _atoms(text: str, max_bytes: int) -> Iterable[tuple[str, int]]:
    """Yields ``(slice, size)`` units no larger than ``max_bytes``."""
    for paragraph in _cut_after(text, _PARAGRAPH_END_RE):
        size = len(paragraph.encode("utf-8"))
        if size <= max_bytes:
            yield paragraph, size
            continue
        for line in paragraph.splitlines(keepends=True):
            size = len(line.encode("utf-8"))
            if size <= max_bytes:
                yield line, size
                continue
            for chunk in _hard_split(line, max_bytes):
                yield chunk, len(chunk.encode("utf-8"))


def split_text(text: str, max_bytes: int = DEFAULT_PIECE_BYTES) -> list[str]:
    """Returns ``text`` cut into pieces of at most ``max_bytes`` UTF-8 bytes.

    ``"".join(split_text(text))`` is ``text``. Cuts prefer paragraph ends
    (after blank lines), then line ends, then any character boundary; as
    much as fits goes into each piece.

    Raises:
        InvalidInputError: ``max_bytes`` is below :data:`MIN_PIECE_BYTES`.
    """
    if max_bytes < MIN_PIECE_BYTES:
        raise InvalidInputError(
            f"A piece must be allowed at least {MIN_PIECE_BYTES} bytes."
        )
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for atom, size in _atoms(text, max_bytes):
        if current and used + size > max_bytes:
            pieces.append("".join(current))
            current, used = [], 0
        current.append(atom)
        used += size
    if current:
        pieces.append("".join(current))
    return pieces


def _absorb_blank(pieces: list[str]) -> list[str]:
    """Returns ``pieces`` with whitespace-only ones joined to a neighbour.

    A memory needs some text, and a long run of blank lines can fill a whole
    piece; it goes with the piece before it (the one after, at the start),
    which may then pass the piece size but not the body limit.
    """
    out: list[str] = []
    carry = ""
    for piece in pieces:
        if piece.strip():
            out.append(carry + piece)
            carry = ""
        elif out and len((out[-1] + piece).encode("utf-8")) <= MAX_BODY_BYTES:
            out[-1] += piece
        elif out:
            out.append(piece)  # refused by check_body, naming the file
        else:
            carry += piece
    if carry:
        out.append(carry)
    return out


def _check_name(name: str) -> str:
    if (
        not name.strip()
        or len(name) > _MAX_NAME_CHARS
        or any(c in name for c in "\x00\r\n")
    ):
        raise InvalidInputError(
            f"File name {name!r} cannot title a memory.",
            hint=f"Use one line of 1 to {_MAX_NAME_CHARS} characters.",
        )
    return name


def _decode(name: str, data: bytes) -> str:
    if b"\x00" in data:
        raise InvalidInputError(
            f"{name} looks binary (it contains NUL bytes).",
            hint="Only text files can be ingested.",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{name} is not UTF-8 text (invalid byte at offset {exc.start}).",
            hint="Convert it to UTF-8 first (for example with iconv).",
        ) from None
    text = text.removeprefix(_BOM)
    if not text.strip():
        raise InvalidInputError(f"{name} is empty.")
    return text


def ingest_files(
    store: Store,
    files: Sequence[tuple[str, bytes]],
    intent: Intent,
    *,
    tags: Sequence[str] = (),
    branch: str | None = None,
    context: str = "sources",
    max_bytes: int = DEFAULT_PIECE_BYTES,
) -> WriteResult:
    """Writes text files as ``source`` memories under ``memory/<context>/``.

    A file that fits in one piece becomes one memory titled with its name.
    A larger one is cut (see :func:`split_text`) into memories titled
    ``name (part 2/5)`` with meta ``{"file": name, "part": "2", "parts":
    "5"}``; every memory carries meta ``file`` and a
    :class:`~ctx.engine.model.Source` naming the file and its title. A
    leading UTF-8 byte order mark is dropped; a piece that would hold only
    blank lines joins its neighbour. A piece whose text (whitespace
    normalised) the branch already holds, in any context and with any tags,
    is not written again, as ``remember`` and ``import`` skip it: its id is
    that memory's, and it is counted in ``skipped``. Every file is checked
    before anything is written; all memories are one commit (none when
    everything is there).

    Args:
        store: The store.
        files: ``(name, content)`` pairs, in the order to write them.
        intent: Who writes and why.
        tags: ``namespace:value`` tags for every memory.
        branch: The branch (default: HEAD).
        context: The folder under ``memory/``.
        max_bytes: The largest piece, in UTF-8 bytes.

    Returns:
        The commit and the pieces' ids and paths, in file order.

    Raises:
        InvalidInputError: no files, a file that is binary, not UTF-8 or
            empty, or bad tags, context or piece size. Nothing is written.
    """
    if not files:
        raise InvalidInputError("There are no files to ingest.")
    check_context(context)
    if not MIN_PIECE_BYTES <= max_bytes <= MAX_BODY_BYTES:
        raise InvalidInputError(
            f"The piece size must be {MIN_PIECE_BYTES} to {MAX_BODY_BYTES} bytes."
        )
    now = store.clock()
    pieces: list[Memory] = []
    for name, data in files:
        _check_name(name)
        parts = _absorb_blank(split_text(_decode(name, data), max_bytes))
        for number, body in enumerate(parts, 1):
            meta = {"file": name}
            title = name
            if len(parts) > 1:
                meta.update(part=str(number), parts=str(len(parts)))
                title = f"{name} (part {number}/{len(parts)})"
            draft = Draft(
                text=body,
                title=title,
                kind="source",
                context=context,
                tags=tuple(tags),
                when=now,
                meta=meta,
            )
            try:
                memory = build_memory(draft, new_memory_id(now), now)
            except InvalidInputError as exc:
                raise InvalidInputError(
                    f"{name}: {exc.message}", hint=exc.hint
                ) from None
            memory = msgspec.structs.replace(
                memory, source=Source(file=name, section=title)
            )
            pieces.append(memory)

    ids: list[MemoryId] = []
    paths: list[str] = []
    skipped: list[int] = []

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        # A piece whose text the branch (or an earlier piece) holds is that
        # memory: a file ingested again writes only what changed in it.
        there = already_there(text_index(store, snap), pieces)
        ids.clear()
        paths.clear()
        skipped.clear()
        out: dict[str, bytes | None] = {}
        for n, memory in enumerate(pieces):
            where = there.get(n)
            if where is None:
                path = memory_path(context, memory.id)
                out[path] = encode(memory)
                ids.append(memory.id)
                paths.append(path)
                continue
            skipped.append(n)
            mid, path = (ids[where], paths[where]) if isinstance(where, int) else where
            ids.append(mid)
            paths.append(path)
        return out

    name = target_branch(store, branch)
    fresh = len(pieces) - len(already_there(tip_text_index(store, name), pieces))
    what = files[0][0] if len(files) == 1 else plural(len(files), "file")
    summary = f"Ingest {what} as {plural(fresh, 'memory')}"
    commit = store.write(name, intent, summary, build)
    return WriteResult(
        commit=commit, ids=tuple(ids), paths=tuple(paths), skipped=tuple(skipped)
    )
