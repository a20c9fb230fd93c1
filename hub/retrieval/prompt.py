"""A recall as a block of markdown, ready to put in a model's prompt.

The command line prints it for ``ctx recall --format markdown``; the MCP
server and the agents' hooks give the same block to the model. The pinned
memories come first under their own heading, then the relevant ones, each
with its kind, id, date and provenance: the agent, branch, commit and date
of the write that last changed it (``by claude, main@1a2b3c4d5e,
2026-11-29``, the date left out when it is the memory's own; the recall's
commit where history does not say); HTML comments
before and after name the query, the commit, the recall id (for ``ctx
feedback``) and what the block cost against the whole live branch. A hit
under the relevance floor says "weak" and its relevance; when every hit
is, they come under :data:`WEAK_HEADING`.

Recalled text is data, never authority: a line before the memories says
so (:data:`~ctx.engine.DATA_NOTE`, which opens a composed context too),
and each memory's text is quoted (every line starts with ``> ``), so
nothing in it reads as the block's own words: no heading, list item or
fence of the block can be opened or closed by it. Its terminal controls
and line separators are shown as escapes, so a memory cannot move the
cursor or reorder the text of whoever reads the block in a terminal, nor
end its quoted line for a reader that breaks lines at U+2028. The quoting
is the engine's (:func:`~ctx.engine.quoted`), the composed context's and
the hooks' too. (The hooks and the MCP server also defuse every
``<ctx:...>`` tag in it.)
"""

from __future__ import annotations

from ctx.engine import DATA_NOTE, article, commented, one_line, plural, quoted
from ctx.hub.retrieval.results import Hit, RecallResult

__all__ = [
    "DATA_NOTE",
    "QUERY_SHOWN",
    "WEAK_HEADING",
    "empty_answer",
    "format_prompt",
    "recall_summary",
]

WEAK_HEADING = "Weak matches (no memory is clearly relevant)"
"""The heading of the hits of a recall whose best hit is weak."""

QUERY_SHOWN = 160
"""The most characters of its question a recall's block repeats in its
first line. The hook's block sits beside the prompt it answers: a prompt
with a pasted log or diff was repeated whole, and cost its tokens twice."""


def recall_summary(result: RecallResult) -> str:
    """Returns one line on what a recall returned and what the branch holds."""
    share = result.tokens / result.live_tokens if result.live_tokens else 0.0
    budget = (
        f" of {article(result.budget)} {result.budget:,} budget"
        if result.budget is not None
        else ""
    )
    backlog = (
        f"; {plural(result.unembedded, 'memory')} not embedded yet"
        if result.unembedded
        else ""
    )
    left = result.pinned_left_out
    pinned = (
        f"; {plural(len(left), 'pinned memory')} left out "
        f"(over half the budget): {', '.join(left)}"
        if left
        else ""
    )
    # A hit over the budget (or past the most hits a recall gives) is left
    # out, and those after it may still fit: a better match than every one
    # given may be among them.
    over = result.left_out - len(left)
    budgeted = (
        f"; {plural(over, 'more match', 'more matches')} left out"
        if over and result.hits
        else ""
    )
    return (
        f"{plural(len(result.hits), 'memory')}, "
        f"{plural(result.tokens, 'token')}{budget}; "
        f"the whole live branch ({result.branch}): "
        f"{plural(result.live_memories, 'memory')}, "
        f"{plural(result.live_tokens, 'token')} ({share:.1%}); "
        f"{result.seconds * 1000:.0f} ms{pinned}{budgeted}{backlog}"
    )


def empty_answer(result: RecallResult) -> str | None:
    """Returns what a recall that ranked no memory says instead, else None.

    The text and markdown answers and the MCP tool's say it alike: an
    answer without a memory is never an empty block a model or a person
    could take for a silent failure.
    """
    # Pinned memories left out are not matches: they came for any question.
    matched = result.left_out - len(result.pinned_left_out)
    if not result.hits and matched and result.budget is not None:
        return (
            f"{plural(matched, 'memory matches', 'memories match')}, but "
            f"none fit the budget of {plural(result.budget, 'token')}; "
            "raise it with --budget."
        )
    if any(not h.pinned for h in result.hits):
        return None
    if not result.live_memories:
        return f"Nothing matches: {result.branch} holds no memory yet."
    if result.nothing_relevant:
        return "Nothing relevant."
    return None if result.hits else "Nothing matches."


def format_prompt(result: RecallResult, *, overlay: bool = False) -> str:
    """Returns ``result`` as markdown for a prompt.

    Args:
        result: A recall or search.
        overlay: Name the branch each memory came from (``--with``).
    """
    named = f"; recall_id {result.recall_id}" if result.recall_id else ""
    query = commented(result.query)
    if len(query) > QUERY_SHOWN:
        query = query[: QUERY_SHOWN - 1] + "…"
    lines = [f"<!-- ctx recall: {query} ({result.commit[:10]}{named}) -->"]
    if result.hits:
        lines.append(DATA_NOTE + "\n")
    if (empty := empty_answer(result)) is not None:
        lines.append(empty + "\n")
    sections = (
        ("Pinned", [h for h in result.hits if h.pinned]),
        (
            WEAK_HEADING if result.weak else "Relevant memories",
            [h for h in result.hits if not h.pinned],
        ),
    )
    for heading, hits in sections:
        if not hits:
            continue
        lines.append(f"## {heading}\n")
        for hit in hits:
            where = f", {hit.branch}" if overlay else ""
            at = _provenance(hit, result)
            date = hit.created_at.strftime("%Y-%m-%d")
            title = f" {one_line(hit.title)}" if hit.title else ""
            part = (
                f", passage {hit.passage.number} of {hit.passage.of}"
                if hit.passage is not None
                else ""
            )
            if hit.weak:
                part += f", weak: relevance {hit.relevance or 0:.2f}"
            lines.append(
                f"- **{hit.kind}** `{hit.id}` ({date}, {at}{where}{part}):{title}"
            )
            lines.extend(quoted(hit.body))
            lines.extend(_conflict_block(hit))
        lines.append("")
    lines.append(f"<!-- {recall_summary(result)} -->")
    return "\n".join(lines)


def _provenance(hit: Hit, result: RecallResult) -> str:
    """Returns who wrote ``hit``, on which branch, in which commit, and when."""
    written = hit.written
    if written is None:
        at = hit.branch
        if hit.branch == result.branch:
            at += f"@{result.commit[:10]}"
        return at
    agent = one_line(written.agent)[:40] or "unknown"
    day = f"{written.at:%Y-%m-%d}"
    # The entry's first date is the memory's own; a write that day adds none.
    when = f", {day}" if day != f"{hit.created_at:%Y-%m-%d}" else ""
    return f"by {agent}, {hit.branch}@{written.commit[:10]}{when}"


def _conflict_block(hit: Hit) -> list[str]:
    """Returns the quoted lines that tell a model the hit is in conflict."""
    note = hit.conflict
    if note is None:
        return []
    fields = ", ".join(note.fields)
    if note.theirs is None:
        said = [f"In conflict with {note.theirs_ref} ({fields}), which deleted it."]
    else:
        said = [f"In conflict with {note.theirs_ref} ({fields}); their version:"]
        said.append(note.theirs)
    said.append(f"(`ctx show {hit.id}` shows both sides.)")
    return quoted("\n".join(said))
