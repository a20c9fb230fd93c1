"""Tantivy's segment files, checked against the checksums in their footers.

Tantivy ends each file of a segment with a footer holding the CRC-32 of the
bytes before it, and does not check it when it reads: a damaged file makes
it return an error, panic, or abort the whole process (an allocation sized
by garbage), which nothing in Python can catch. So
:class:`~ctx.hub.retrieval.index.lexical.LexicalIndex` has every file checked before
Tantivy opens it (:func:`check_files`). A segment file is never written
again, so each is read whole once, and then recognised by its size and
mtime, which ``.ctx-checked.json`` in the index folder records for the next
process: opening a checked index costs a ``stat`` per file.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib
from pathlib import Path

import msgspec

__all__ = ["Checked", "check_files", "unchanged"]

# Tantivy (0.22) ends each segment file with a footer: JSON holding the CRC-32
# of the bytes before it, then the JSON's length and a magic number (u32 LE).
_FOOTER_END = struct.Struct("<II")
_FOOTER_MAGIC = 1337


class _Footer(msgspec.Struct):
    crc: int


_SEGMENT_FILES = ("idx", "pos", "term", "store", "fast", "fieldnorm")


class _Deletes(msgspec.Struct):
    opstamp: int


class _Segment(msgspec.Struct):
    segment_id: str
    deletes: _Deletes | None = None


class _Meta(msgspec.Struct):
    segments: list[_Segment]


def _segment_files(folder: Path) -> list[Path]:
    """Returns the files of the segments ``meta.json`` names.

    Raises:
        ValueError: ``meta.json`` cannot be read.
    """
    try:
        meta = msgspec.json.decode((folder / "meta.json").read_bytes(), type=_Meta)
    except (OSError, msgspec.DecodeError) as exc:
        raise ValueError(f"meta.json: {exc}") from exc
    files = []
    for segment in meta.segments:
        name = segment.segment_id.replace("-", "")
        files += [folder / f"{name}.{ext}" for ext in _SEGMENT_FILES]
        if segment.deletes is not None:
            files.append(folder / f"{name}.{segment.deletes.opstamp}.del")
    return files


_CHECKED = ".ctx-checked.json"
"""Segment files whose checksum held, with their size and mtime."""

Checked = dict[str, tuple[int, int]]
"""File name -> (size, mtime in ns) when its checksum held."""


def _mark(file: Path) -> tuple[int, int]:
    stat = file.stat()
    return (stat.st_size, stat.st_mtime_ns)


def unchanged(folder: Path, checked: Checked) -> bool:
    """Returns whether ``meta.json`` and the files ``checked`` are as checked.

    Asked before every read of a recall (a few times each): the paths are
    joined as strings, at a third of what a ``Path`` per file cost.
    """
    base = os.fspath(folder) + os.sep
    try:
        for name, mark in checked.items():
            stat = os.stat(base + name)
            if (stat.st_size, stat.st_mtime_ns) != mark:
                return False
    except OSError:
        return False
    return bool(checked)


def check_files(folder: Path, *, every: bool) -> Checked:
    """Checks the checksum of each segment file not checked before.

    Args:
        folder: The index folder.
        every: Check files already checked too.

    Returns:
        The files checked (and ``meta.json``), each with its size and mtime.

    Raises:
        ValueError: A file fails its checksum, or ``meta.json`` is unreadable.
    """
    try:
        meta = _mark(folder / "meta.json")
    except FileNotFoundError:
        return {}  # a new index: Tantivy writes it
    except OSError as exc:
        raise ValueError(f"meta.json: {exc}") from exc
    record = folder / _CHECKED
    before: Checked = {}
    if not every:
        with contextlib.suppress(OSError, msgspec.DecodeError):
            before = msgspec.json.decode(record.read_bytes(), type=Checked)
    checked: Checked = {}
    for file in _segment_files(folder):
        try:
            stat = file.stat()
            mark = (stat.st_size, stat.st_mtime_ns)
            if before.get(file.name) != mark and not _footer_holds(file.read_bytes()):
                raise ValueError(f"{file.name} fails its checksum")
        except FileNotFoundError:
            continue  # merged away by a commit meanwhile
        except OSError as exc:
            raise ValueError(f"{file.name}: {exc}") from exc
        checked[file.name] = mark
    checked["meta.json"] = meta
    if checked != before:
        temp = folder / f".{_CHECKED}.{os.getpid()}"
        with contextlib.suppress(OSError):  # a read-only folder checks again
            temp.write_bytes(msgspec.json.encode(checked))
            os.replace(temp, record)
    return checked


def _footer_holds(data: bytes) -> bool:
    """Returns whether a Tantivy file ends in its footer, with the right CRC-32."""
    if len(data) < _FOOTER_END.size:
        return False
    length, magic = _FOOTER_END.unpack_from(data, len(data) - _FOOTER_END.size)
    start = len(data) - _FOOTER_END.size - length
    if magic != _FOOTER_MAGIC or start < 0:
        return False
    try:
        footer = msgspec.json.decode(data[start : -_FOOTER_END.size], type=_Footer)
    except msgspec.DecodeError:
        return False
    return zlib.crc32(memoryview(data)[:start]) == footer.crc
