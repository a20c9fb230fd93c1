"""A diff as a review summary in markdown: what a pull request of memory carries.

``ctx diff A...B --format markdown`` prints it: a heading with the range,
one table per kind of change (added, changed, removed) with each memory's
id, kind, title and the agent that made the change, the body diffs folded
under ``<details>``, and the link changes. GitHub, GitLab and Gitea render
it as it is, in a pull request's description or a comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ctx.engine import plural
from ctx.porcelain.render import headline

if TYPE_CHECKING:
    from ctx.engine import ChangedMemory, Diff, Memory

__all__ = ["diff_markdown"]


def diff_markdown(result: Diff, spec: str, agents: Mapping[str, str]) -> str:
    """Returns the review summary of ``result`` (asked as ``spec``) in markdown.

    Args:
        result: The diff.
        spec: The range as asked (``main...agent/claude``), for the heading.
        agents: Who made each memory's change, by memory id.
    """
    total = len(result.added) + len(result.removed) + len(result.changed)
    links = len(result.links_added) + len(result.links_removed)
    since = (
        f"since the merge base `{result.base[:10]}`"
        if result.from_merge_base
        else f"from `{result.base[:10]}`"
    )
    lines = [
        f"## Memory changes: `{_cell(spec)}`",
        "",
        f"{len(result.added)} added, {len(result.changed)} changed, "
        f"{len(result.removed)} removed ({plural(total, 'memory')}); "
        f"{plural(links, 'link change')}, {since} to `{result.target[:10]}`.",
    ]
    lines += _table("Added", result.added, agents)
    lines += _changed(result.changed, agents)
    lines += _table("Removed", result.removed, agents)
    if links:
        lines += ["", "### Links", ""]
        lines += [
            f"- added `{r.source}` {r.type} `{r.target}`" for r in result.links_added
        ]
        lines += [
            f"- removed `{r.source}` {r.type} `{r.target}`"
            for r in result.links_removed
        ]
    return "\n".join(lines) + "\n"


def _table(
    title: str, memories: Sequence[Memory], agents: Mapping[str, str]
) -> list[str]:
    if not memories:
        return []
    out = [
        "",
        f"### {title} ({len(memories)})",
        "",
        "| memory | kind | title | agent |",
        "| --- | --- | --- | --- |",
    ]
    for m in memories:
        out.append(
            f"| `{m.id}` | {m.kind} | {_cell(headline(m))} "
            f"| {_cell(agents.get(m.id, ''))} |"
        )
    return out


def _changed(changes: Sequence[ChangedMemory], agents: Mapping[str, str]) -> list[str]:
    if not changes:
        return []
    out = [
        "",
        f"### Changed ({len(changes)})",
        "",
        "| memory | kind | title | fields | agent |",
        "| --- | --- | --- | --- | --- |",
    ]
    for ch in changes:
        m = ch.new
        out.append(
            f"| `{m.id}` | {m.kind} | {_cell(headline(m))} | {', '.join(ch.fields)} "
            f"| {_cell(agents.get(m.id, ''))} |"
        )
    for ch in changes:
        if not ch.body_diff:
            continue
        body = "\n".join(ch.body_diff.splitlines()[2:])
        fence = _fence(body)
        out += [
            "",
            f"<details><summary><code>{ch.new.id}</code> body</summary>",
            "",
            f"{fence}diff",
            body,
            fence,
            "",
            "</details>",
        ]
    return out


def _cell(text: str) -> str:
    """Returns ``text`` fit for a table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _fence(text: str) -> str:
    """Returns a code fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)
