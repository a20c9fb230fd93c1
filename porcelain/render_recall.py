"""Rendering of recall, search and index results for people.

The markdown for a prompt is the hub's (:func:`ctx.hub.format_prompt`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING

from ctx.engine import plural
from ctx.porcelain.output import byte_size, echo

if TYPE_CHECKING:
    from ctx.hub import Hit, IndexStatus, RecallResult, ReindexReport

__all__ = ["render_index_status", "render_recall", "render_reindex"]


def _explain_lines(hit: Hit) -> list[str]:
    why = hit.explain
    if why is None:
        return []
    parts = [
        f"{c.channel} #{c.rank} ({c.score:.3g}) +{c.contribution:.4f}"
        for c in why.channels
    ]
    if why.passage is not None:
        excerpt = textwrap.shorten(why.passage.text, 60, placeholder="...")
        parts.append(f'passage {why.passage.number}/{why.passage.of} "{excerpt}"')
    if why.via:
        parts.append(f"linked: {why.via}")
    if why.named_tags:
        parts.append(f"tag {', '.join(why.named_tags)} x{why.tag_boost:.2f}")
    if why.closeness:
        parts.append(f"time x{why.boost:.2f} (closeness {why.closeness:.2f})")
    lines = ["why: " + " | ".join(parts) + f" = {hit.score:.4f}"]
    if why.last_commit:
        lines.append(
            f"last: {why.last_commit[:10]} {why.last_agent}: {why.last_summary}"
        )
    return lines


def _passage_note(hit: Hit) -> str:
    part = hit.passage
    assert part is not None
    return (
        f"passage {part.number} of {part.of}: the whole memory is over the "
        f"budget; `ctx show {hit.id}` shows it"
    )


def _conflict_line(hit: Hit) -> str:
    note = hit.conflict
    assert note is not None
    theirs = (
        f'theirs says "{textwrap.shorten(note.theirs, 120)}"'
        if note.theirs is not None
        else "theirs deleted it"
    )
    return (
        f"in conflict with {note.theirs_ref} ({', '.join(note.fields)}): "
        f"{theirs}; `ctx show {hit.id}` shows both sides"
    )


def _text_hit(hit: Hit, overlay: bool, short: Callable[[str], str]) -> None:
    where = f" [{hit.branch}]" if overlay else ""
    date = hit.created_at.strftime("%Y-%m-%d")
    weak = f"  (weak: relevance {hit.relevance or 0:.2f})" if hit.weak else ""
    echo(f"{short(hit.id)}  {hit.kind}  {date}  {hit.path}{where}{weak}")
    text = f"{hit.title}\n{hit.body}" if hit.title else hit.body
    for line in text.splitlines() or [""]:
        echo(textwrap.indent(line, "    ") if line else "")
    if hit.passage is not None:
        echo(f"    ({_passage_note(hit)})")
    for line in _explain_lines(hit):
        echo("    " + line)
    if hit.conflict is not None:
        echo("    " + _conflict_line(hit))


def render_recall(
    result: RecallResult,
    *,
    fmt: str,
    overlay: bool,
    short: Callable[[str], str] = str,
) -> None:
    """Prints a recall or search as text or as a markdown block.

    ``short`` gives the form each hit's id is printed in (``--abbrev``).
    """
    if fmt == "markdown":
        from ctx.hub import format_prompt

        echo(format_prompt(result, overlay=overlay))
        return
    if result.temporal:
        echo(f"Time: {', '.join(result.temporal)}")
    if result.vector_question is not None:
        echo(f"Vectors asked: {result.vector_question}")
    from ctx.hub import empty_answer, recall_summary

    if (empty := empty_answer(result)) is not None:
        echo(empty)
        miss = result.near_miss
        if miss is not None:
            echo(f"Best near miss (relevance {miss.relevance or 0:.2f}):")
            _text_hit(miss, overlay, short)
    elif result.weak:
        echo("Only weak matches: no memory reached the relevance floor.")
    for hit in result.hits:
        _text_hit(hit, overlay, short)
    echo(f"-- {recall_summary(result)}")


def render_index_status(status: IndexStatus) -> None:
    """Prints what the index holds."""
    where = status.folder or "memory (not saved)"
    echo(f"Index:    {where}")
    echo(f"Embedder: {status.embedder}")
    echo(
        f"Holds:    {plural(status.documents, 'document')}, "
        f"{plural(status.vectors, 'vector')} "
        f"({status.vector_index}), {byte_size(status.size_bytes)}"
    )
    if status.unembedded:
        echo(
            f"Backlog:  {plural(status.unembedded, 'document')} not embedded yet "
            "(the hub embeds them in the background, newest first)"
        )
    for branch in status.branches:
        if branch.indexed_commit is None:
            state = "not indexed"
        elif branch.current:
            state = f"indexed at {branch.indexed_commit[:10]} (current)"
        else:
            state = f"indexed at {branch.indexed_commit[:10]}, tip {branch.tip[:10]}"
        echo(f"  {branch.branch}: {state}, {plural(branch.memories, 'memory')}")


def render_reindex(report: ReindexReport) -> None:
    """Prints what a reindex built."""
    echo(
        f"Reindexed {plural(len(report.branches), 'branch')}: "
        f"{plural(report.documents, 'document')}, "
        f"{plural(report.vectors, 'vector')} ({report.embedder}; {report.embedded:,} "
        f"embedded, {report.reused:,} kept) in {report.seconds:.1f} s; "
        f"{byte_size(report.size_bytes)} on disk."
    )
