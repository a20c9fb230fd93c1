"""The ``<ctx:*>`` commands an agent writes in its answers, found and checked.

An agent that cannot call tools (or forgets to) can still write to memory by
writing commands in its answer; the ``stop`` hook finds them in the last
message and carries them out. Two forms, XML-like::

    <ctx:remember type="decision" tags="project:x,tier:reference">text</ctx:remember>
    <ctx:link from="ID" to="ID" type="DEPENDS_ON"/>

:func:`parse_commands` returns the commands in the order written, and one
line for each malformed one (reported to the agent in its next context, never
run). Attribute values are quoted with ``"`` or ``'``; they and the bodies
are taken as written (no entity decoding). Names are case-sensitive.

Not commands, so never run:

- anything inside a fenced code block (a line opening with three or more
  backticks or tildes, up to the line that closes it, or the end), inside an
  inline code span (backticks on one line), or on a quoted line (``>``);
- anything inside the block a hook injected (``<ctx:context>...``, see
  :data:`MARKER`): what ctx gave the agent is never captured back.

Any text gives commands, errors or nothing: the parser never raises.

What a hook gives the agent cannot end or open that block, nor carry a
command: :func:`defuse` rewrites every ``<ctx:...>`` tag of recalled text,
however it is spelled (entities, case, spaces, look-alike characters), as an
inert ``[ctx:...]``, and :func:`wrap_context` does so for every spelling of
the marker in whatever it wraps (issue #28).
"""

from __future__ import annotations

import bisect
import functools
import html
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "MARKER",
    "SPECS",
    "Command",
    "CommandSpec",
    "Parsed",
    "defuse",
    "parse_commands",
    "wrap_context",
]

MARKER = "ctx:context"
"""The tag that wraps every text a hook injects."""

MAX_COMMANDS = 50
"""Commands run from one message at most; the rest are reported."""


@dataclass(frozen=True)
class CommandSpec:
    """What one command takes.

    Attributes:
        name: The name after ``ctx:``.
        required: Attributes it needs.
        optional: Attributes it may have.
        body: Whether it needs a body (the text between its tags).
    """

    name: str
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    body: bool = False


SPECS: dict[str, CommandSpec] = {
    s.name: s
    for s in (
        CommandSpec(
            "remember",
            optional=("type", "kind", "tags", "title", "context"),
            body=True,
        ),
        CommandSpec("recall", required=("query",), optional=("budget",)),
        CommandSpec(
            "summarize",
            required=("nodes",),
            optional=("archive", "title", "tags", "context"),
            body=True,
        ),
        CommandSpec("link", required=("from", "to"), optional=("type",)),
        CommandSpec("status"),
        CommandSpec("expand", required=("node",)),
        CommandSpec("supersede", required=("old", "new")),
        CommandSpec("task", optional=("name", "action", "summarize")),
    )
}
"""The commands, by name."""


@dataclass(frozen=True)
class Command:
    """One well-formed command, as written.

    Attributes:
        name: Its name (a key of :data:`SPECS`).
        attrs: Its attributes, as written.
        body: The text between its tags, stripped ("" when it has none).
        source: The command as written, cut to 200 characters.
    """

    name: str
    attrs: dict[str, str]
    body: str
    source: str


@dataclass(frozen=True)
class Parsed:
    """The commands of a text, and why the malformed ones were not taken."""

    commands: tuple[Command, ...]
    errors: tuple[str, ...]


_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
_QUOTE_RE = re.compile(r"^ {0,3}>.*$", re.MULTILINE)
_INLINE_RE = re.compile(r"(`+)[^\n]*?(?<!`)\1(?!`)")
_MARKED_RE = re.compile(
    rf"<{MARKER}\b[^>]*>.*?(?:</{MARKER}>|\Z)", re.DOTALL | re.IGNORECASE
)
_OPEN_RE = re.compile(r"<ctx:")
_TAG_RE = re.compile(
    r"<ctx:(?P<name>[A-Za-z][\w-]*)"
    r"(?P<attrs>(?:\s+[A-Za-z_][\w-]*\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)"
    r"\s*(?P<close>/?)>"
)
_ATTR_RE = re.compile(r"([A-Za-z_][\w-]*)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")


def _mask(text: str) -> str:
    """Returns ``text`` with its code, quotes and injected blocks blanked.

    Blanking keeps every character's place (each becomes a space, newlines
    stay), so what is found in the mask is read from ``text`` at the same
    offsets.
    """
    chars = list(text)

    def blank(start: int, end: int) -> None:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "

    for start, end in _fenced(text):
        blank(start, end)
    masked = "".join(chars)
    for pattern in (_MARKED_RE, _QUOTE_RE, _INLINE_RE):
        for match in pattern.finditer(masked):
            blank(match.start(), match.end())
        masked = "".join(chars)
    return masked


def _fenced(text: str) -> Iterator[tuple[int, int]]:
    """Yields the spans of fenced code blocks (an open fence runs to the end)."""
    position = 0
    while True:
        opening = _FENCE_RE.search(text, position)
        if opening is None:
            return
        fence = opening.group(1)
        closing_re = re.compile(
            rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE
        )
        line_end = text.find("\n", opening.end())
        if line_end < 0:
            yield opening.start(), len(text)
            return
        closing = closing_re.search(text, line_end + 1)
        end = len(text) if closing is None else closing.end()
        yield opening.start(), end
        position = end


def parse_commands(text: str) -> Parsed:
    """Returns the commands written in ``text``, and the malformed ones' errors.

    Never raises: any text gives commands, errors or nothing.
    """
    masked = _mask(text)
    commands: list[Command] = []
    errors: list[str] = []
    position = 0
    while (opening := _OPEN_RE.search(masked, position)) is not None:
        if len(commands) + len(errors) >= MAX_COMMANDS:
            errors.append(
                f"More than {MAX_COMMANDS} commands in one message; "
                "the rest were not run."
            )
            break
        start = opening.start()
        tag = _TAG_RE.match(masked, start)
        if tag is None:
            errors.append(
                f"{_line(text, start)}: {_excerpt(text, start)} is not a "
                "command (an unclosed tag or quote)."
            )
            position = start + 1
            continue
        name = tag.group("name")
        position = tag.end()
        if name == MARKER.split(":", 1)[1]:
            continue
        spec = SPECS.get(name)
        body = ""
        end = tag.end()
        if not tag.group("close"):
            closing = masked.find(f"</ctx:{name}>", tag.end())
            if closing >= 0:
                body = text[tag.end() : closing].strip()
                end = closing + len(f"</ctx:{name}>")
            elif spec is not None and spec.body:
                errors.append(
                    f"{_line(text, start)}: <ctx:{name}> has no closing "
                    f"</ctx:{name}>; not run."
                )
                continue
        position = end
        source = text[start:end]
        if spec is None:
            known = ", ".join(sorted(SPECS))
            errors.append(
                f"{_line(text, start)}: <ctx:{name}> is not a command (known: {known})."
            )
            continue
        attrs = {
            m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
            for m in _ATTR_RE.finditer(tag.group("attrs"))
        }
        problem = _check(spec, attrs, body)
        if problem is not None:
            errors.append(f"{_line(text, start)}: <ctx:{name}> {problem}; not run.")
            continue
        commands.append(Command(name, attrs, body, _cut(source, 200)))
    return Parsed(tuple(commands), tuple(errors))


def _check(spec: CommandSpec, attrs: dict[str, str], body: str) -> str | None:
    """Says what is wrong with a command's attributes and body (None: nothing)."""
    unknown = sorted(set(attrs) - set(spec.required) - set(spec.optional))
    if unknown:
        allowed = ", ".join((*spec.required, *spec.optional)) or "none"
        return f"has unknown attribute {unknown[0]!r} (allowed: {allowed})"
    missing = [a for a in spec.required if not attrs.get(a, "").strip()]
    if missing:
        return f"needs the attribute {missing[0]!r}"
    if spec.body and not body:
        return "needs a text between its tags"
    return None


def _line(text: str, offset: int) -> str:
    return f"line {text.count(chr(10), 0, offset) + 1}"


def _excerpt(text: str, offset: int) -> str:
    return repr(_cut(text[offset:].split("\n", 1)[0], 60))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def wrap_context(text: str, source: str) -> str:
    """Returns ``text`` wrapped in the marker of injected context.

    Every spelling of the marker inside ``text`` is defused first, so the
    block ends only where it is closed here.

    Args:
        text: What a hook gives the agent.
        source: The hook that gives it (``session-start``, ...).
    """
    inner = defuse(text, marker_only=True)
    return f'<{MARKER} source="{source}">\n{inner}\n</{MARKER}>'


# Characters a reader takes for those of a tag, beyond what NFKD folds
# (written as escapes: they are meant to look alike). Brackets: single and
# double guillemets, CJK and mathematical angle brackets, ornaments, modifier
# arrowheads, Canadian syllabics PA and PO. Slashes: fraction and division
# slash, big solidus, box drawing. Colons: ratio, modifier colons, Armenian
# full stop, Hebrew sof pasuq. Letters of "ctx" and "context": Cyrillic,
# Greek and small capital look-alikes.
_LOOK_ALIKES = str.maketrans(
    {
        **dict.fromkeys("\u2039\u00ab\u3008\u27e8\u276c\u276e\u02c2\u1438", "<"),
        **dict.fromkeys("\u203a\u00bb\u3009\u27e9\u276d\u276f\u02c3\u1433", ">"),
        **dict.fromkeys("\u2044\u2215\u29f8\u2571", "/"),
        **dict.fromkeys("\u2236\ua789\u02f8\u0589\u05c3", ":"),
        **dict.fromkeys("\u0441\u03f2\u1d04", "c"),
        **dict.fromkeys("\u0442\u03c4\u1d1b", "t"),
        **dict.fromkeys("\u0445\u03c7", "x"),
        **dict.fromkeys("\u043e\u03bf\u1d0f", "o"),
        **dict.fromkeys("\u0435\u1d07", "e"),
        "\u0274": "n",
    }
)
_ESCAPE = (
    r"&(?:amp;)*(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]{0,31};?)"
    r"|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|%[0-9a-fA-F]{2}"
)
_ESCAPE_RE = re.compile(_ESCAPE)
_PIECE_RE = re.compile(
    rf"(?P<escape>{_ESCAPE})"
    r"|(?P<plain>[\x00-\x24\x27-\x5b\x5d-\x7f]+)"  # ASCII but & % \
    r"|(?P<other>[^\x00-\x7f]+|.)",
    re.DOTALL,
)
_AMP_RE = re.compile(r"^&(?:amp;)+")
_TAG_TAIL = r"(?P<rest>(?:[^<>\n]{0,200}?(?=>))?)(?P<end>>)?"
_ANY_TAG_RE = re.compile(r"<\s*(?P<slash>/?)\s*ctx\s*:\s*" + _TAG_TAIL)
_MARKER_TAG_RE = re.compile(
    r"<\s*(?P<slash>/?)\s*ctx\s*:\s*(?=context(?!\w))" + _TAG_TAIL
)


def defuse(text: str, *, marker_only: bool = False) -> str:
    r"""Returns ``text`` with its ``<ctx:...>`` tags, in any spelling, made inert.

    A tag is found in ``text`` as a reader would take it: with HTML entities
    (``&lt;``, ``&#60;``, ``&amp;lt;``), ``\u003c``, ``\x3c`` and ``%3C``
    decoded, invisible format characters dropped, compatibility forms and
    accents folded (NFKD), case folded, look-alike brackets and letters read
    as ASCII, and spaces around ``/`` and ``:``. Each is written back as
    ``[ctx:NAME ...]`` or ``[/ctx:NAME]`` (the rest of the tag as it was
    written), which neither the parser nor the marker's reader takes for a
    tag: an agent that repeats it writes no command. Everything else is kept
    as written; a text without tags comes back unchanged.

    Args:
        text: Recalled text, or anything a hook gives the agent.
        marker_only: Defuse only the marker's tags (``<ctx:context>``), and
            keep the commands (a report quoting the agent's own command).
    """
    reading = _Reading(text)
    for _ in range(2):  # an escape that decodes to another (``&#38;lt;``)
        if _ESCAPE_RE.search(reading.text) is None:
            break
        reading = _Reading(reading.text, below=reading)
    pattern = _MARKER_TAG_RE if marker_only else _ANY_TAG_RE
    out: list[str] = []
    last = 0
    for tag in pattern.finditer(reading.text):
        start = max(reading.start(tag.start()), last)
        end = reading.end(tag.end() - 1)
        rest_start = reading.end(tag.start("rest") - 1)
        rest_end = reading.start(tag.start("end")) if tag.group("end") else end
        close = "]" if tag.group("end") else ""
        slash = tag.group("slash")
        out += [text[last:start], f"[{slash}ctx:{text[rest_start:rest_end]}{close}"]
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


class _Reading:
    """A text as a reader takes it (see :func:`defuse`), and where it came from.

    The text is cut in pieces: runs of ASCII (only their case is folded, one
    character for one), runs of other characters that each fold to one, and
    single escapes or characters that fold to more or fewer. A character of
    the folded text comes from its piece's span of the original.

    Args:
        source: The text to read.
        below: The reading ``source`` is the folded text of, if any: spans
            are then given in that reading's original.
    """

    def __init__(self, source: str, *, below: _Reading | None = None) -> None:
        self._below = below
        self._size = 0
        self._firsts: list[int] = []  # where each piece starts in the text
        self._spans: list[tuple[int, int, bool]] = []  # source span, one for one
        pieces: list[str] = []
        for match in _PIECE_RE.finditer(source):
            raw = match.group()
            start, end = match.span()
            if match.lastgroup == "plain":
                pieces.append(self._piece(raw.lower(), start, end, aligned=True))
                continue
            if match.lastgroup == "escape":
                piece = "".join(map(_fold, _unescape(raw)))
                pieces.append(self._piece(piece, start, end, aligned=False))
                continue
            folds = list(map(_fold, raw))
            folded = "".join(folds)
            if len(folded) == len(raw) and "" not in folds:  # each gives one
                pieces.append(self._piece(folded, start, end, aligned=True))
                continue
            for offset, fold in enumerate(folds):
                at = start + offset
                pieces.append(self._piece(fold, at, at + 1, aligned=False))
        self.text = "".join(pieces)
        """The folded text."""

    def _piece(self, piece: str, start: int, end: int, *, aligned: bool) -> str:
        self._firsts.append(self._size)
        self._spans.append((start, end, aligned))
        self._size += len(piece)
        return piece

    def _span(self, index: int) -> tuple[int, int]:
        piece = bisect.bisect_right(self._firsts, index) - 1
        start, end, aligned = self._spans[piece]
        if aligned:
            start += index - self._firsts[piece]
            end = start + 1
        return start, end

    def start(self, index: int) -> int:
        """Returns where the folded character ``index`` starts in the original."""
        start = self._span(index)[0]
        return start if self._below is None else self._below.start(start)

    def end(self, index: int) -> int:
        """Returns where the folded character ``index`` ends in the original."""
        end = self._span(index)[1]
        return end if self._below is None else self._below.end(end - 1)


def _unescape(escape: str) -> str:
    r"""Returns the text an entity, ``\uXXXX``, ``\xXX`` or ``%XX`` stands for."""
    if escape.startswith("&"):
        return html.unescape(_AMP_RE.sub("&", escape))
    return chr(int(escape[2:] if escape[0] == "\\" else escape[1:], 16))


@functools.lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    """Returns one character as a reader takes it (see :func:`defuse`)."""
    if unicodedata.category(char) == "Cf":  # zero-width and bidi controls
        return ""
    folded = unicodedata.normalize("NFKD", char).casefold()
    kept = "".join(c for c in folded if not unicodedata.combining(c))
    return kept.translate(_LOOK_ALIKES)
