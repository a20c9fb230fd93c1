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
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "MARKER",
    "SPECS",
    "Command",
    "CommandSpec",
    "Parsed",
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

    Args:
        text: What a hook gives the agent.
        source: The hook that gives it (``session-start``, ...).
    """
    return f'<{MARKER} source="{source}">\n{text}\n</{MARKER}>'
