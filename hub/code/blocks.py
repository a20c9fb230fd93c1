"""Text files cut into blocks: Markdown by heading, config files by key.

:func:`chunk_text` cuts Markdown at its headings (``section`` chunks, named
by the heading; fenced code is not read for headings), TOML at its tables
and top-level keys, YAML at its top-level keys and JSON at the keys of its
outer object (``config`` chunks, named by the key or ``[table]``); a few
short keys together make one block. A source file that did not parse is cut
in blocks of about :data:`TEXT_BLOCK` lines at blank lines (``text``).
Blocks, like functions, are cut at :data:`MAX_LINES` (:func:`cuts`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from ctx.hub.code.results import Chunk

__all__ = [
    "MAX_LINES",
    "SUMMARY_CHARS",
    "TEXT_BLOCK",
    "FileChunks",
    "chunk_text",
    "cuts",
    "first_line",
]

MAX_LINES = 60
"""The longest chunk, in lines, before a function or a block is cut: about
what the embedder reads (256 tokens) twice over, and a screenful to show."""

TEXT_BLOCK = 40
"""Lines of a block of text, cut at blank lines."""

SUMMARY_CHARS = 120
"""The longest one-line summary kept."""


@dataclass
class FileChunks:
    """A file cut into chunks.

    Attributes:
        chunks: The chunks, in line order.
        texts: Each chunk's text (its lines).
        modules: The modules or files the file's imports name, as written.
        as_text: The file did not parse and was cut as text.
    """

    chunks: list[Chunk] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    as_text: bool = False


def cuts(start: int, end: int, boundaries: list[int]) -> list[tuple[int, int]]:
    """Returns ``start..end`` cut into spans of at most MAX_LINES at boundaries.

    A span starts at ``start`` or at a boundary; a stretch between two
    boundaries longer than MAX_LINES stays whole (never cut mid-statement).
    """
    if end - start + 1 <= MAX_LINES:
        return [(start, end)]
    spans = []
    first = start
    for boundary in sorted(set(boundaries)):
        if boundary <= first or boundary > end:
            continue
        if boundary - first > MAX_LINES or (
            boundary - first >= MAX_LINES // 2 and end - first + 1 > MAX_LINES
        ):
            spans.append((first, boundary - 1))
            first = boundary
    spans.append((first, end))
    return spans


def first_line(text: str) -> str:
    """Returns the first line of ``text`` that is not blank, stripped."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped
    return ""


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TOML_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?")
_TOP_KEY = re.compile(r"""^["']?([\w.\-]+)["']?\s*[:=]""")
_JSON_KEY = re.compile(r'^(\s*)"([^"]+)"\s*:')


def chunk_text(
    path: str, text: str, language: str, *, as_text: bool = False
) -> FileChunks:
    """Returns a text file's blocks.

    Markdown is cut at headings (``section``, named by the heading), TOML at
    tables and top-level keys, YAML at top-level keys, JSON at the keys of
    its outer object (``config``); a source file that did not parse, in
    blocks of about :data:`TEXT_BLOCK` lines cut at blank lines (``text``).
    """
    lines = text.split("\n")
    if as_text:
        starts = _blankcuts(lines)
        kind = "text"
    elif language == "markdown":
        starts = _markdown_starts(lines)
        kind = "section"
    else:
        starts = _config_starts(lines, language)
        kind = "config"
    out = FileChunks(as_text=as_text)
    bounds = [*starts, (len(lines) + 1, "")]
    for (start, name), (next_start, _) in itertools.pairwise(bounds):
        end = next_start - 1
        while end >= start and not lines[end - 1].strip():
            end -= 1
        if end < start:
            continue
        for first, last in cuts(start, end, [s for s, _ in _blankcuts(lines)]):
            body = "\n".join(lines[first - 1 : last])
            out.chunks.append(
                Chunk(
                    path=path,
                    start=first,
                    end=last,
                    language=language,
                    kind=kind,
                    name=name,
                    summary=(name or first_line(body))[:SUMMARY_CHARS],
                )
            )
            out.texts.append(body)
    return out


def _markdown_starts(lines: list[str]) -> list[tuple[int, str]]:
    starts = [(1, "")]
    fenced = False
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        heading = None if fenced else _HEADING.match(line)
        if heading:
            if starts[-1][0] == number or (
                number > 1 and not any(x.strip() for x in lines[: number - 1])
            ):
                starts[-1] = (starts[-1][0], heading.group(2))
            else:
                starts.append((number, heading.group(2)))
    return starts


def _config_starts(lines: list[str], language: str) -> list[tuple[int, str]]:
    starts: list[tuple[int, str]] = []
    indent = None
    if language == "json":
        depths = [len(m.group(1)) for line in lines if (m := _JSON_KEY.match(line))]
        indent = min(depths) if depths else None
    for number, line in enumerate(lines, start=1):
        name = None
        if language == "json":
            match = _JSON_KEY.match(line)
            if match and len(match.group(1)) == indent:
                name = match.group(2)
        elif language == "toml" and (table := _TOML_TABLE.match(line)):
            name = table.group(1)
        elif not line[:1].isspace() and (key := _TOP_KEY.match(line)):
            if language == "toml" and starts and starts[-1][1].startswith("["):
                continue
            name = key.group(1)
        if name is None:
            continue
        if language == "toml" and _TOML_TABLE.match(line):
            name = f"[{name}]"
        if starts and number - starts[-1][0] < 3 and not name.startswith("["):
            continue  # a few short keys together make one block
        starts.append((number, name))
    if not starts or starts[0][0] != 1:
        starts.insert(0, (1, ""))
    return starts


def _blankcuts(lines: list[str]) -> list[tuple[int, str]]:
    starts = [(1, "")]
    for number, line in enumerate(lines, start=1):
        after_blank = number > 1 and not lines[number - 2].strip() and line.strip()
        if after_blank and number - starts[-1][0] >= TEXT_BLOCK // 2:
            starts.append((number, ""))
    return starts
