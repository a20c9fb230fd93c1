"""A diff as a review summary in markdown: what a pull request of memory carries.

``ctx diff A...B --format markdown`` prints it: a heading with the range,
one table per kind of change (added, changed, removed) with each memory's
id, kind, title and the agents that made the change, what each changed
memory changed from and to, the bodies (added ones whole, changed ones as a
diff) folded under ``<details>``, and the link changes named by the titles
of both ends. GitHub, GitLab and Gitea render it as it is, in a pull
request's description or a comment.

Memory text is data written by agents: it must render as the literal text,
never as markup. Text in tables and lists is backslash-escaped
(:func:`_text`), text inside raw HTML (``<summary>``) is HTML-escaped, and
bodies go in code fences longer than any backtick run they hold.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ctx.engine import plural
from ctx.porcelain.render import headline

if TYPE_CHECKING:
    from ctx.engine import ChangedMemory, Diff, DiffReport, LinkRecord, Memory

__all__ = ["diff_markdown"]

_BODY_LINES = 30
"""Lines of an added memory's body shown; the rest is counted, not shown."""

_VALUE_WIDTH = 70
"""Characters of a changed value (a title, a source) shown in the table."""


def diff_markdown(result: DiffReport, spec: str) -> str:
    """Returns the review summary of ``result`` (asked as ``spec``) in markdown.

    Args:
        result: The diff, with its details: who changed each memory, by
            memory id, in order, each once; the headline of each memory a
            link change joins, by id (the memory a SUPERSEDES hides is
            seldom in the diff itself).
        spec: The range as asked (``main...agent/claude``), for the heading.
    """
    agents = result.agents or {}
    titles = result.link_titles or {}
    total = len(result.added) + len(result.removed) + len(result.changed)
    links = len(result.links_added) + len(result.links_removed)
    since = (
        f"since the merge base `{result.base[:10]}`"
        if result.from_merge_base
        else f"from `{result.base[:10]}`"
    )
    lines = [f"## Memory changes: {_code(spec)}", ""]
    if not total and not links:
        return (
            "\n".join(
                [
                    *lines,
                    f"Nothing to review: no memory and no link changed {since} "
                    f"to `{result.target[:10]}`.",
                ]
            )
            + "\n"
        )
    lines.append(
        f"{len(result.added)} added, {len(result.changed)} changed, "
        f"{len(result.removed)} removed ({plural(total, 'memory')}); "
        f"{plural(links, 'link change')}, {since} to `{result.target[:10]}`."
    )
    lines += _table("Added", result.added, agents)
    lines += [line for m in result.added for line in _added_body(m)]
    lines += _changed(result.changed, agents)
    lines += _table("Removed", result.removed, agents)
    lines += _links(result, titles)
    return "\n".join(lines) + "\n"


def _table(
    title: str, memories: Sequence[Memory], agents: Mapping[str, Sequence[str]]
) -> list[str]:
    if not memories:
        return []
    out = [
        "",
        f"### {title} ({len(memories)})",
        "",
        "| memory | kind | title | agents |",
        "| --- | --- | --- | --- |",
    ]
    for m in memories:
        out.append(
            f"| `{m.id}` | {_text(m.kind)} | {_text(headline(m))} "
            f"| {_agents(agents, m.id)} |"
        )
    return out


def _added_body(memory: Memory) -> list[str]:
    """Returns an added memory's body, folded: a reviewer reads what it says.

    Only its first :data:`_BODY_LINES` lines; the count of the rest says that
    the summary cut it, and ``ctx show`` prints it whole.
    """
    body = memory.body.splitlines()
    shown = "\n".join(body[:_BODY_LINES])
    fence = _fence(shown)
    out = [
        "",
        f"<details><summary>{_summary(memory)} body "
        f"({plural(len(body), 'line')})</summary>",
        "",
        f"{fence}text",
        shown,
        fence,
    ]
    if len(body) > _BODY_LINES:
        out += [
            "",
            f"({plural(len(body) - _BODY_LINES, 'more line')}: `ctx show {memory.id}`)",
        ]
    return [*out, "", "</details>"]


def _changed(
    changes: Sequence[ChangedMemory], agents: Mapping[str, Sequence[str]]
) -> list[str]:
    if not changes:
        return []
    out = [
        "",
        f"### Changed ({len(changes)})",
        "",
        "| memory | kind | title | changes | agents |",
        "| --- | --- | --- | --- | --- |",
    ]
    for ch in changes:
        m = ch.new
        what = "<br>".join(_field_changes(ch))
        out.append(
            f"| `{m.id}` | {_text(m.kind)} | {_text(headline(m))} | {what} "
            f"| {_agents(agents, m.id)} |"
        )
    for ch in changes:
        if not ch.body_diff:
            continue
        body = "\n".join(ch.body_diff.splitlines()[2:])
        fence = _fence(body)
        out += [
            "",
            f"<details><summary>{_summary(ch.new)} body</summary>",
            "",
            f"{fence}diff",
            body,
            fence,
            "",
            "</details>",
        ]
    return out


def _field_changes(ch: ChangedMemory) -> list[str]:
    """Returns what each changed field of ``ch`` changed from and to, escaped.

    Short fields as ``old → new``; tags as those added and removed (a
    ``tier:pinned`` puts a memory first in a composed context); the body as the
    count of lines its diff, below the table, adds and removes.
    """
    out: list[str] = []
    for name in ch.fields:
        match name:
            case "tags":
                out.append(_tags(ch.old.tags, ch.new.tags))
            case "body":
                out.append(_body_count(ch.body_diff))
            case "meta":
                out += _meta(ch.old.meta, ch.new.meta)
            case _:
                out.append(_arrow(_LABELS.get(name, name), *_sides(ch, name)))
    return out


_LABELS = {"created_at": "when"}
"""A field's name as the text format's readers know it, where they differ."""


def _sides(ch: ChangedMemory, name: str) -> tuple[str, str]:
    """Returns a short field's value before and after, as text ("" for none)."""
    if name == "path":
        return ch.old_path, ch.new_path
    if name == "source":
        return _source(ch.old), _source(ch.new)
    old, new = (getattr(m, name) for m in (ch.old, ch.new))
    return str(old or ""), str(new or "")


def _arrow(name: str, old: str, new: str) -> str:
    return f"{name}: {_value(old)} → {_value(new)}"


def _value(text: str) -> str:
    """Returns a field's value for a cell: escaped, cut, ``(none)`` if empty."""
    if not text:
        return "*(none)*"
    one = " ".join(text.split())
    cut = one if len(one) <= _VALUE_WIDTH else one[: _VALUE_WIDTH - 1] + "…"
    return _text(cut)


def _tags(old: Sequence[str], new: Sequence[str]) -> str:
    added = ", ".join(_text(t) for t in new if t not in old)
    removed = ", ".join(_text(t) for t in old if t not in new)
    parts = [f"added {added}"] * bool(added) + [f"removed {removed}"] * bool(removed)
    return "tags: " + "; ".join(parts)


def _meta(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    keys = sorted(old.keys() | new.keys())
    return [
        _arrow(f"meta {_text(k)}", old.get(k, ""), new.get(k, ""))
        for k in keys
        if old.get(k) != new.get(k)
    ]


def _source(memory: Memory) -> str:
    source = memory.source
    return "" if source is None else f"{source.file} § {source.section}"


def _body_count(body_diff: str) -> str:
    """Returns how many lines the body gained and lost, from its unified diff."""
    lines = body_diff.splitlines()[2:]
    added = sum(1 for line in lines if line.startswith("+"))
    removed = sum(1 for line in lines if line.startswith("-"))
    return f"body: {plural(added, 'line')} added, {removed} removed (diff below)"


def _links(result: Diff, titles: Mapping[str, str]) -> list[str]:
    if not result.links_added and not result.links_removed:
        return []
    count = len(result.links_added) + len(result.links_removed)
    out = ["", f"### Links ({count})", ""]
    for verb, records in (
        ("added", result.links_added),
        ("removed", result.links_removed),
    ):
        out += [f"- {verb} {_link(r, titles)}" for r in records]
    return out


def _link(record: LinkRecord, titles: Mapping[str, str]) -> str:
    """Returns a link with both ends named: ``id “title” TYPE id “title”``."""
    return (
        f"{_end(record.source, titles)} **{_text(record.type)}** "
        f"{_end(record.target, titles)}"
    )


def _end(memory_id: str, titles: Mapping[str, str]) -> str:
    title = titles.get(memory_id)
    named = f" “{_value(title)}”" if title else ""
    return f"`{memory_id}`{named}"


def _agents(agents: Mapping[str, Sequence[str]], memory_id: str) -> str:
    return ", ".join(_text(a) for a in agents.get(memory_id, ()))


def _summary(memory: Memory) -> str:
    """Returns a memory's id and title for a ``<summary>``: raw HTML, so escaped."""
    return f"<code>{memory.id}</code> {html.escape(headline(memory))}:"


_MARKUP = re.compile(r"[\\`*_\[\]<>|#!~&$@]|:(?=//)|(?<=[wW]{3})\.")
"""What makes text markup: markdown and HTML punctuation, and what starts
an autolink (``://``, ``www.``, ``@``), which GitHub links even unbracketed."""


def _text(text: str) -> str:
    """Returns ``text`` as one line that renders as itself, in a cell or a list.

    Every character that could start markup (emphasis, code, links, HTML,
    an entity, a table's pipe) is backslash-escaped: CommonMark renders an
    escaped punctuation character as itself, and GFM tables split a row
    only at an unescaped pipe.
    """
    return _MARKUP.sub(lambda m: "\\" + m.group(0), " ".join(text.split()))


def _code(text: str) -> str:
    """Returns ``text`` as a code span, its backticks longer than any run in it."""
    one = " ".join(text.split())
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", one)), default=0) + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{ticks}{pad}{one}{pad}{ticks}"


def _fence(text: str) -> str:
    """Returns a code fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)
