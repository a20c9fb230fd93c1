"""Text for the screens: commits, intent, memory-level diffs, memories.

Each function turns a Struct the engine or hub returned into Rich text; no
function here reads the store. Stored text (a memory's title, body and
tags, a commit's summary, an agent's name, a link's reason) is never read
as Rich markup, and its terminal controls are shown as escapes
(:func:`stored`), as on the command line: a memory cannot style, link,
run an action or move the cursor (tests/lens/test_hostile.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from ctx.engine import KINDS, CommitInfo, Diff, LinkRecord, Memory, headline, visible

__all__ = [
    "LINK_STYLE",
    "LINK_STYLES",
    "SHOWN",
    "confidence_text",
    "diff_text",
    "link_text",
    "memory_text",
    "short",
    "stored",
    "when",
]

LINK_STYLE = "cyan"
"""How a link of any other type is drawn."""
LINK_STYLES = {
    "SUPERSEDES": "bold yellow",
    "CONTRADICTS": "bold red",
}
"""The link types drawn apart: a superseded memory is outdated, and a
contradiction needs a person's eye; every other type is drawn plainly."""

_WIDTH = 70
SHOWN = 200
"""Memories (and links) a diff lists per section; the rest are counted:
a bulk import's diff would otherwise be a hundred thousand lines."""


def stored(text: str, style: str = "") -> Text:
    """Returns stored text as plain Rich text: no markup, controls as escapes.

    A table cell given a ``str`` reads it as markup (``[@click=...]`` runs an
    action); a :class:`~rich.text.Text` is shown as it is.
    """
    return Text(visible(text), style=style)


def short(commit_or_id: str) -> str:
    """Returns the first eight characters of a commit id, as ``git log`` shows."""
    return commit_or_id[:8]


def when(commit: CommitInfo) -> str:
    """Returns a commit's time to the minute, in its own offset."""
    return commit.time.strftime("%Y-%m-%d %H:%M")


def confidence_text(commit: CommitInfo) -> str:
    """Returns the confidence of a commit's intent, or an empty string."""
    if commit.intent is None or commit.intent.confidence is None:
        return ""
    return f"{commit.intent.confidence:.2f}"


def memory_text(memory: Memory, path: str) -> Text:
    """Returns a memory's page head and body."""
    out = Text()
    out.append(
        visible(memory.title or headline(None, memory.body, _WIDTH)), style="bold"
    )
    out.append(f"\n{memory.id}  {memory.kind}  {visible(path)}\n", style="dim")
    out.append(f"created {memory.created_at.isoformat()}\n", style="dim")
    if memory.tags:
        out.append("tags " + visible(" ".join(memory.tags)) + "\n", style="cyan")
    if memory.source is not None:
        source = f"{memory.source.file} § {memory.source.section}"
        out.append(f"from {visible(source)}\n")
    out.append("\n" + visible(memory.body))
    return out


def link_text(record: LinkRecord) -> Text:
    """Returns one link: its ends, type, confidence and reason."""
    out = Text(f"{record.source} ")
    out.append(f"{record.type}→", style=LINK_STYLES.get(record.type, LINK_STYLE))
    out.append(f" {record.target}")
    if record.link.confidence is not None:
        out.append(f"  {record.link.confidence:.2f}", style="dim")
    if record.link.reason:
        out.append(f"  {visible(record.link.reason)}", style="dim")
    return out


_KIND = max(map(len, KINDS))
"""The kind column's width: the longest kind (``open-question``) and a space
after it, where 12 ran it into the headline."""


def _more(out: Text, items: Sequence[object], what: str) -> None:
    if len(items) > SHOWN:
        out.append(f"  … and {len(items) - SHOWN} more {what}\n", style="dim")


def _memories(out: Text, sign: str, style: str, memories: Sequence[Memory]) -> None:
    for memory in memories[:SHOWN]:
        out.append(f"{sign} ", style=style)
        out.append(f"{memory.kind:<{_KIND}} ", style="dim")
        out.append(visible(headline(memory.title, memory.body, _WIDTH)))
        out.append(f"  {memory.id}\n", style="dim")
    _more(out, memories, "memories")


def _links(out: Text, sign: str, style: str, links: Sequence[LinkRecord]) -> None:
    for record in links[:SHOWN]:
        out.append(f"{sign} link ", style=style)
        out.append_text(link_text(record))
        out.append("\n")
    _more(out, links, "links")


def diff_text(diff: Diff) -> Text:
    """Returns a memory-level diff: added, changed (with body diff), removed, links."""
    out = Text()
    _memories(out, "+", "green", diff.added)
    for change in diff.changed[:SHOWN]:
        out.append("~ ", style="yellow")
        out.append(f"{change.new.kind:<{_KIND}} ", style="dim")
        out.append(visible(headline(change.new.title, change.new.body, _WIDTH)))
        out.append(f"  {change.new.id}  ({', '.join(change.fields)})\n", style="dim")
        for line in change.body_diff.splitlines()[2:]:
            style = "green" if line[:1] == "+" else "red" if line[:1] == "-" else ""
            out.append(f"    {visible(line)}\n", style=style or "dim")
    _more(out, diff.changed, "changed memories")
    _memories(out, "-", "red", diff.removed)
    _links(out, "+", "green", diff.links_added)
    _links(out, "-", "red", diff.links_removed)
    if not out:
        out.append("No memory changed.", style="dim")
    return out
