"""JSON text edited in place: a member or an item added or removed as text.

A host's settings file is the user's too: re-encoding it whole would
reformat what ctx has no business with (an array kept on one line, keys
spaced by hand). So the file is parsed with the place of every value, and
an edit splices the text: an added member goes after the container's last
one (a comma, a new line at the indentation of its siblings, the value
encoded with the file's indentation unit); a removed one takes its comma
with it. Removing what was added gives back the same bytes. A file on one
line gets its additions on that line.

Comments are kept: Gemini CLI and Cursor read their settings as JSON with
``//`` and ``/* */`` comments (Gemini CLI through ``strip-json-comments``),
so a file that holds some is read with each comment as blanks of the same
length (:func:`_blank_comments`), at the same places, and edited as text
as any other.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctx.engine import InvalidInputError

__all__ = ["JsonText", "invalid_file"]

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\r\n]*")
_UNIT_RE = re.compile(r"\A[ \t\r\n]*[\{\[][ \t]*\r?\n([ \t]+)\S")

Key = str | int


def invalid_file(path: Path, what: str) -> InvalidInputError:
    """Returns the error for a settings file ctx cannot edit."""
    return InvalidInputError(
        f"{path} {what}; nothing was written.",
        hint="Fix or move the file, then run the command again.",
    )


@dataclass
class _Node:
    start: int
    end: int
    value: Any  # Any: JSON as the file holds it
    keys: list[str] = field(default_factory=list)
    key_starts: list[int] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)


_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\r\n]*|/\*[\s\S]*?\*/|/\*')
"""A string (kept whole: it may hold ``//``), a comment, or an unclosed ``/*``."""


def _blank_comments(text: str) -> str:
    """Returns ``text`` with each comment as spaces (its line ends kept).

    Raises:
        ValueError: A ``/*`` comment is not closed.
    """

    def blank(token: re.Match[str]) -> str:
        found = token[0]
        if found[0] == '"':
            return found
        if found == "/*":
            raise ValueError(f"a /* comment at char {token.start()} is not closed")
        return re.sub(r"[^\r\n]", " ", found)

    return _TOKENS.sub(blank, text) if "/" in text else text


def _skip(text: str, i: int) -> int:
    match = _WS.match(text, i)
    assert match is not None
    return match.end()


def _parse(text: str, i: int) -> tuple[_Node, int]:
    opening = text[i]
    if opening not in "{[":
        value, end = _DECODER.raw_decode(text, i)
        return _Node(i, end, value), end
    closing = "}" if opening == "{" else "]"
    node = _Node(i, i, {} if opening == "{" else [])
    j = _skip(text, i + 1)
    while text[j] != closing:
        if opening == "{":
            key, k = _DECODER.raw_decode(text, j)
            node.keys.append(key)
            node.key_starts.append(j)
            j = _skip(text, _skip(text, k) + 1)  # past the colon
        child, j = _parse(text, j)
        if opening == "{":
            node.value[node.keys[-1]] = child.value
            node.children.append(child)
        else:
            node.key_starts.append(child.start)
            node.value.append(child.value)
            node.children.append(child)
        j = _skip(text, j)
        if text[j] == ",":
            j = _skip(text, j + 1)
    node.end = j + 1
    return node, j + 1


class JsonText:
    """A JSON settings file's text, edited member by member.

    Args:
        path: The file (for messages).
        text: Its text; None or blank is an empty object.

    Raises:
        InvalidInputError: The text is not JSON, or not an object.
    """

    def __init__(self, path: Path, text: str | None) -> None:
        self.path = path
        self.blank = text is None or not text.strip()
        self.text = "{}\n" if self.blank else (text or "")
        try:
            data = json.loads(_blank_comments(self.text))
        except ValueError as exc:
            raise invalid_file(path, f"is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise invalid_file(path, "does not hold a JSON object")
        self._parsed: tuple[str, _Node] | None = None
        unit = _UNIT_RE.match(_blank_comments(self.text))
        one_line = "\n" not in self.text.strip() and bool(data)
        self.unit: str | None = None if one_line else (unit.group(1) if unit else "  ")

    @property
    def data(self) -> dict[str, Any]:
        """The document's value, as the text holds it now."""
        value: dict[str, Any] = self._root().value
        return value

    def _root(self) -> _Node:
        # Parsed again only when an edit changed the text.
        if self._parsed is None or self._parsed[0] is not self.text:
            plain = _blank_comments(self.text)
            self._parsed = (self.text, _parse(plain, _skip(plain, 0))[0])
        return self._parsed[1]

    def _node(self, path: tuple[Key, ...]) -> _Node:
        node = self._root()
        for key in path:
            index = node.keys.index(key) if isinstance(key, str) else key
            node = node.children[index]
        return node

    def _line_indent(self, at: int) -> str:
        start = self.text.rfind("\n", 0, at) + 1
        line = self.text[start:at]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def _encode(self, value: object, indent: str) -> str:
        text = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return text.replace("\n", "\n" + indent)

    def _comment_ends(self, at: int, limit: int) -> int:
        """Returns where the comment that trails ``at`` on its line ends.

        That is the line's end when what stands from ``at`` to it (before
        ``limit``) is a comment and blanks, else ``at``: a comment after a
        member on its line is the member's, and stays with it.
        """
        line_end = self.text.find("\n", at, limit)
        if line_end < 0:
            return at
        rest = self.text[at:line_end]
        try:
            blank = _blank_comments(rest)
        except ValueError:  # a /* comment that goes on past the line
            return at
        return line_end if rest.strip() and not blank.strip() else at

    def append(self, path: tuple[Key, ...], key: str | None, value: object) -> None:
        """Adds ``key: value`` after the last member of the object at ``path``.

        With ``key`` None, ``value`` is added as the last item of the array
        at ``path``. Comments stay where they were, with the members they
        follow: one trailing the last member stays on its line, and those in
        an empty container stay above the first member.
        """
        node = self._node(path)
        name = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
        if not node.children:
            inner = self.text[node.start + 1 : node.end - 1]
            if self.unit is None:
                added = name + json.dumps(value, ensure_ascii=False)
                inner = f"{inner.rstrip()} {added} " if inner.strip() else added
            else:
                outer = self._line_indent(node.start)
                indent = outer + self.unit
                added = f"\n{indent}{name}{self._encode(value, indent)}"
                if inner.strip():  # comments, kept above the member
                    kept = inner.rstrip()
                    inner = kept + added + inner[len(kept) :]
                else:
                    inner = f"{added}\n{outer}"
            self.text = self.text[: node.start + 1] + inner + self.text[node.end - 1 :]
            return
        last = node.children[-1]
        at = node.key_starts[-1]
        lead = self.text[self.text.rfind("\n", 0, at) + 1 : at]
        if self.unit is None or lead.strip():
            # The last member shares its line: so does the new one.
            added = ", " + name + json.dumps(value, ensure_ascii=False)
            self.text = self.text[: last.end] + added + self.text[last.end :]
            return
        after = self._comment_ends(last.end, node.end - 1)
        self.text = (
            self.text[: last.end]
            + ","
            + self.text[last.end : after]
            + f"\n{lead}{name}{self._encode(value, lead)}"
            + self.text[after:]
        )

    def remove(self, path: tuple[Key, ...], key: Key) -> None:
        """Removes the member ``key`` (or the item at index ``key``) at ``path``.

        A comment trailing it on its line goes with it; comments on lines of
        their own stay, and one trailing the comma before it is the previous
        member's, and stays on that member's line.
        """
        node = self._node(path)
        index = node.keys.index(key) if isinstance(key, str) else key
        child = node.children[index]
        at = node.key_starts[index]
        inner = range(node.start + 1, node.end - 1)
        line = self.text.rfind("\n", inner.start, at)
        own_line = line >= 0 and not self.text[line:at].strip()
        if len(node.children) == 1:
            around = self.text[inner.start : at] + self.text[child.end : inner.stop]
            if not around.strip():
                self._cut((inner.start, inner.stop))
                return
            start = line if own_line else at
            self._cut((start, self._comment_ends(child.end, inner.stop)))
            return
        plain = _blank_comments(self.text)
        if index == len(node.children) - 1:
            # The last: the comma before it goes, the previous member's
            # comment stays on its line.
            previous = node.children[index - 1].end
            comma = plain.index(",", previous)
            end = self._comment_ends(child.end, inner.stop)
            start = line if own_line and line > comma else comma + 1
            self._cut((previous, comma + 1), (start, end))
            return
        # Any other: with the comma after it, and its line if it has one.
        comma = plain.index(",", child.end)
        after = self._comment_ends(comma + 1, node.key_starts[index + 1])
        line_end = _WS.match(self.text, after)
        assert line_end is not None
        gap = self.text[after : line_end.end()]
        if own_line and "\n" in gap:
            self._cut((line + 1, after + gap.index("\n") + 1))
        else:
            self._cut((at, line_end.end()))

    def _cut(self, *spans: tuple[int, int]) -> None:
        for start, end in reversed(spans):
            self.text = self.text[:start] + self.text[end:]

    def encode(self) -> str | None:
        """Returns the text, or None when it holds nothing: no member, no comment."""
        if not self.data and self.text == _blank_comments(self.text):
            return None
        return self.text
