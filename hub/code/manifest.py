"""The code index's manifest (``manifest.msgpack``): what the index holds.

The manifest names the indexed root and, per file, its size, modification
time, content id, language, chunks and each chunk's vector key. At 1M lines
it holds about 70,000 chunks (16 MB), and decoding all of them costs half a
second: more than a re-index of one changed file needs. So it is read in two
ways:

- :class:`Manifest`, whole, for the questions (``ctx find``, ``symbols``,
  ``deps``, ``chunk``);
- :class:`Outline`, each file's entry left as its msgpack bytes
  (:class:`msgspec.Raw`, no object made), with :class:`FileHead` decoded
  from those bytes for what a re-index compares (size, time, content id)
  and counts (vector keys). An unchanged file's bytes are written back as
  they were read.

The vectors' keys (``vector_keys.txt``, see :mod:`ctx.hub.code.vectors`)
are read here too (:func:`stored_keys`), without numpy, so that a re-index
can count the chunks still waiting for a vector.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgspec

from ctx.hub.code.results import Chunk

__all__ = [
    "FORMAT",
    "KEYS",
    "MANIFEST",
    "ROWS",
    "FileEntry",
    "FileHead",
    "Manifest",
    "Outline",
    "raw_entry",
    "read_manifest",
    "read_outline",
    "stored_keys",
    "write_outline",
]

FORMAT = 2
"""Version of the folder's layout and of how files are cut; another version
is built again (its vectors kept: they are found by the text they embed).
2: Python definitions inside ``if``/``try``/``with`` blocks are chunks,
imports inside functions count as dependencies, minified files are left
out."""

MANIFEST = "manifest.msgpack"
ROWS = "vectors.f32"
KEYS = "vector_keys.txt"


class FileEntry(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One file of the tree, as last indexed.

    ``skipped`` says why a file is left out ("" when indexed); ``keys`` holds
    each chunk's vector key (the hash of the text embedded).
    """

    size: int
    mtime_ns: int
    id: str = ""
    language: str = ""
    skipped: str = ""
    chunks: tuple[Chunk, ...] = ()
    keys: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    as_text: bool = False


class FileHead(msgspec.Struct, kw_only=True):
    """The part of a :class:`FileEntry` a re-index reads (its chunks are skipped)."""

    size: int
    mtime_ns: int
    id: str = ""
    skipped: str = ""
    keys: tuple[str, ...] = ()
    as_text: bool = False


class _Header(msgspec.Struct, kw_only=True):
    """What the manifest says of the whole index.

    ``vectors``: whether the chunks are to be embedded (off with
    ``--no-vectors``); the hub embeds those without a vector only then.
    """

    format: int = FORMAT
    root: str = ""
    git: bool = False
    embedder: str = ""
    dimensions: int = 0
    generation: int = 0
    vectors: bool = True


class Manifest(_Header, kw_only=True):
    """What the code index holds (``manifest.msgpack``), every file decoded."""

    files: dict[str, FileEntry] = {}


class Outline(_Header, kw_only=True):
    """The manifest with each file's entry left as its encoded bytes."""

    files: dict[str, msgspec.Raw] = {}

    def heads(self) -> dict[str, FileHead]:
        """Returns each file's :class:`FileHead`."""
        decode = _HEAD.decode
        return {path: decode(raw) for path, raw in self.files.items()}

    def entry(self, path: str) -> FileEntry:
        """Returns one file's whole entry."""
        return _ENTRY.decode(self.files[path])


_HEAD = msgspec.msgpack.Decoder(FileHead)
_ENTRY = msgspec.msgpack.Decoder(FileEntry)
_ENCODER = msgspec.msgpack.Encoder()


def raw_entry(entry: FileEntry) -> msgspec.Raw:
    """Returns a file's entry encoded, as an :class:`Outline` holds it."""
    return msgspec.Raw(_ENCODER.encode(entry))


def read_manifest(folder: Path) -> Manifest:
    """Returns the whole manifest (empty when missing, damaged or of another format).

    Of another format, it keeps the embedder its vectors were made by.
    """
    manifest = Manifest()
    with contextlib.suppress(OSError, msgspec.DecodeError):
        manifest = msgspec.msgpack.decode(
            (folder / MANIFEST).read_bytes(), type=Manifest
        )
    if manifest.format == FORMAT:
        return manifest
    return Manifest(embedder=manifest.embedder, dimensions=manifest.dimensions)


def read_outline(folder: Path) -> Outline:
    """Returns the manifest's :class:`Outline` (empty as :func:`read_manifest`)."""
    outline = Outline()
    with contextlib.suppress(OSError, msgspec.DecodeError):
        outline = msgspec.msgpack.decode((folder / MANIFEST).read_bytes(), type=Outline)
    if outline.format == FORMAT:
        return outline
    # Files are cut again; the vectors, found by the text they embed, are
    # kept for the chunks whose text is the same (most of them).
    return Outline(embedder=outline.embedder, dimensions=outline.dimensions)


def write_outline(folder: Path, outline: Outline) -> tuple[int, int]:
    """Replaces the manifest in one rename, durably; returns its (mtime, size)."""
    temp = folder / f".{MANIFEST}.{os.getpid()}"
    with temp.open("wb") as file:
        file.write(_ENCODER.encode(outline))
        file.flush()
        os.fsync(file.fileno())
    os.replace(temp, folder / MANIFEST)
    info = (folder / MANIFEST).stat()
    return info.st_mtime_ns, info.st_size


def stored_keys(folder: Path, dimensions: int) -> list[str] | None:
    """Returns the keys of the vector rows stored whole, in row order.

    A crash mid-append leaves at most a row without a key or a key without
    a row: only the rows that have both count. None when there are no
    vector files (or no dimensions).
    """
    if not dimensions:
        return None
    try:
        keys = [key for key in (folder / KEYS).read_text("ascii").split("\n") if key]
        size = (folder / ROWS).stat().st_size
    except (OSError, UnicodeDecodeError):
        return None
    return keys[: min(len(keys), size // (4 * dimensions))]
