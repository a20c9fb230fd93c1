"""Composing a context of known size from a precise selection of memories.

Memories are taken in tier order (pinned, reference, working; off-context
never), then most recently changed first, and included while they fit the
token budget; one too large is skipped and the next one tried. The result is
grouped by kind, with each memory's id and what it depends on, between a
header and a footer that give the counts. Tokens are counted with the
project's one estimator (``estimate_tokens``: characters / 4, rounded up)
on the exact text returned, and the total never exceeds the budget.

What the memories say is data, never the context's own words, as in a
recall's markdown block: the markdown and text formats open the memories
with :data:`~ctx.engine.escapes.DATA_NOTE`, quote every line of each
memory's text (``  > ``, a blank line as ``  >``), and show terminal
controls, bidi characters and line separators as escapes: the one quoting of
every block of memories (:func:`~ctx.engine.escapes.quoted`).
Stored text on ctx's own lines (a title, kind, agent, a dependency's
headline, the ``where`` of a view) is put on one line, and in markdown its
punctuation is escaped, so it can neither close the bold or code span it
sits in nor open a heading, list item, fence or comment. The JSON format is
data already: every field as stored.
"""

from __future__ import annotations

import re
from datetime import datetime

import msgspec

from ctx.engine.adjacency import Adjacency, adjacency
from ctx.engine.branches import resolve_revision
from ctx.engine.catalog import Catalog, catalog
from ctx.engine.conflicts import ConflictNote
from ctx.engine.errors import InvalidInputError
from ctx.engine.escapes import DATA_NOTE, commented, one_line, quoted
from ctx.engine.ids import MemoryId
from ctx.engine.model import Outcome, headline
from ctx.engine.query import estimate_tokens
from ctx.engine.selection import Selected, select
from ctx.engine.store import Store
from ctx.engine.tags import OFF_CONTEXT, TIERS
from ctx.engine.wording import plural

__all__ = ["FORMATS", "ComposedMemory", "Composition", "LeftOut", "compose"]

FORMATS = ("markdown", "text", "json")
_DEPENDS = ("DEPENDS_ON", "DERIVED_FROM")
_MARKUP_RE = re.compile(r"([\\`*_\[\]<>&|~])")
"""Markdown's punctuation that could end a span or start markup mid-line."""


class Dependency(msgspec.Struct, frozen=True, kw_only=True):
    """A memory another one depends on or was derived from."""

    id: MemoryId
    headline: str


class ComposedMemory(msgspec.Struct, frozen=True, kw_only=True):
    """One memory as included in a composition.

    ``created_at`` is when the remembered thing happened (``--when``): the
    date each entry shows. ``updated_at``, the last commit that changed it,
    orders the entries; ``agent`` and ``commit`` name that write (None where
    history does not say). The markdown form, the one injected into an
    agent's context, names them after the tier: who wrote the memory, in
    which commit, and when, its provenance.
    """

    id: MemoryId
    kind: str
    title: str | None
    body: str
    path: str
    tier: str
    created_at: datetime
    updated_at: datetime
    tokens: int
    agent: str | None = None
    commit: str | None = None
    depends_on: tuple[Dependency, ...] = ()
    conflict: ConflictNote | None = None


class LeftOut(msgspec.Struct, frozen=True, kw_only=True):
    """A selected memory that is not in the composition, and why."""

    id: MemoryId
    headline: str
    tier: str
    tokens: int
    reason: str


class Composition(Outcome, frozen=True, kw_only=True):
    """A rendered context and an account of what went into it."""

    format: str
    where: str | None
    budget: int
    tokens: int
    selected: int
    included: tuple[ComposedMemory, ...]
    left_out: tuple[LeftOut, ...]
    text: str


def _entry(item: ComposedMemory, fmt: str) -> str:
    day = item.created_at.strftime("%Y-%m-%d")
    deps = item.depends_on
    if fmt == "json":
        return msgspec.json.encode(item).decode("utf-8") + "\n"
    title = _inline(item.title, fmt) if item.title else ""
    if fmt == "markdown":
        head = f"- **{title}** `{item.id}`" if title else f"- `{item.id}`"
        lines = [f"{head} ({day}, {item.tier}{_written(item)})"]
        lines += quoted(item.body)
        lines += [f"  depends on: `{d.id}` {_inline(d.headline, fmt)}" for d in deps]
        lines += _conflict_lines(item, fmt)
    else:
        named = f" {title}" if title else ""
        kind = _inline(item.kind, fmt)
        lines = [f"[{kind}]{named} ({item.id}, {day}, {item.tier})"]
        lines += quoted(item.body)
        lines += [f"  depends on: {d.id} {_inline(d.headline, fmt)}" for d in deps]
        lines += _conflict_lines(item, fmt)
    return "\n".join(lines) + "\n"


def _inline(text: str, fmt: str) -> str:
    """Returns stored text for a line of ctx's own: one line, controls shown.

    In markdown its punctuation is escaped too, so a title cannot close the
    bold span it sits in or open a code span, link or HTML comment.
    """
    line = one_line(text)
    return _MARKUP_RE.sub(r"\\\1", line) if fmt == "markdown" else line


def _written(item: ComposedMemory) -> str:
    """Returns the provenance of an entry: ``; by AGENT, COMMIT, DATE``."""
    if item.commit is None:
        return ""
    agent = _inline(" ".join((item.agent or "unknown").split())[:40], "markdown")
    return f"; by {agent}, {item.commit[:10]}, {item.updated_at:%Y-%m-%d}"


def _conflict_lines(item: ComposedMemory, fmt: str) -> list[str]:
    note = item.conflict
    if note is None:
        return []
    fields = ", ".join(note.fields)
    quote = "`" if fmt == "markdown" else ""
    show = f"{quote}ctx show {item.id}{quote}"
    theirs = _inline(note.theirs_ref, fmt)
    return [f"  in conflict with {theirs} ({fields}): {show} shows both sides"]


def _group_heading(kind: str, fmt: str) -> str:
    if fmt == "json":
        return ""
    shown = _inline(kind, fmt)
    return f"\n### {shown}\n" if fmt == "markdown" else f"\n== {shown} ==\n"


def _note(fmt: str) -> str:
    """Returns the line that opens the memories (none in JSON)."""
    return "" if fmt == "json" else DATA_NOTE + "\n"


def _frame(
    fmt: str,
    where: str | None,
    budget: int,
    counts: tuple[int, int, int, int, int],
) -> tuple[str, str]:
    included, selected, tokens, over, off = counts
    # A view's query is stored text: one line, and no "--" to end the comment.
    what = "all memories"
    if where:
        what = f"where {commented(where) if fmt == 'markdown' else one_line(where)}"
    head = (
        f"ctx compose ({what}): {included} of {plural(selected, 'memory')}, "
        f"budget {budget}"
    )
    foot = (
        f"ctx compose: {tokens} tokens; left out {over} over budget, {off} off-context"
    )
    if fmt == "markdown":
        return f"<!-- {head} -->\n", f"\n<!-- {foot} -->\n"
    if fmt == "text":
        return f"# {head}\n", f"\n# {foot}\n"
    return "", ""


def compose(
    store: Store,
    *,
    budget: int,
    now: datetime,
    where: str | None = None,
    fmt: str = "markdown",
    rev: str | None = None,
) -> Composition:
    """Composes the memories ``where`` selects into at most ``budget`` tokens.

    Raises:
        InvalidInputError: the budget is not positive, too small for the
            header and footer, or the format is unknown.
    """
    if budget <= 0:
        raise InvalidInputError(f"The budget must be positive, not {budget}.")
    if fmt not in FORMATS:
        raise InvalidInputError(
            f"Unknown format {fmt!r}.", hint="Use markdown, text or json."
        )
    chosen = select(store, where, now=now, rev=rev)
    snap = store.snapshot(resolve_revision(store, rev))
    adj = adjacency(store, snap)
    known = catalog(store, snap)
    notes = {c.id: ConflictNote.of(c) for c in snap.conflicts()}
    order = {tier: n for n, tier in enumerate(TIERS)}
    chosen.sort(
        key=lambda s: (
            order[s.tier],
            -s.facts.updated_at.timestamp(),
            s.record.memory.id,
        )
    )
    # Reserve room for the header and footer with the largest numbers they
    # can show, so that filling in the real ones never overflows.
    big = len(chosen)
    head, foot = _frame(fmt, where, budget, (big, big, budget, big, big))
    room = budget - estimate_tokens(head + foot) if head or foot else budget
    if room < 0:
        raise InvalidInputError(
            f"A budget of {plural(budget, 'token')} cannot hold the header and footer.",
            hint=f"Use a budget of at least {plural(budget - room, 'token')}.",
        )
    included: list[ComposedMemory] = []
    left_out: list[LeftOut] = []
    used = 0
    headings: set[str] = set()
    for chosen_one in chosen:
        item = _item(chosen_one, known, adj, fmt, notes)
        if chosen_one.tier == OFF_CONTEXT:
            left_out.append(_left(item, "off-context tier"))
            continue
        cost = item.tokens
        if not included:
            cost += estimate_tokens(_note(fmt))
        if item.kind not in headings:
            cost += estimate_tokens(_group_heading(item.kind, fmt))
        if used + cost > room:
            left_out.append(_left(item, "over budget"))
            continue
        used += cost
        headings.add(item.kind)
        included.append(item)
    body = _render_groups(included, fmt)
    text = body
    if fmt != "json":
        # The real numbers are no longer than the reserved ones, so the text
        # stays within the budget; the token count settles in a step or two.
        over = sum(1 for x in left_out if x.reason == "over budget")
        off = len(left_out) - over
        tokens = 0
        for _ in range(4):
            counts = (len(included), len(chosen), tokens, over, off)
            head, foot = _frame(fmt, where, budget, counts)
            text = head + body + foot
            if estimate_tokens(text) == tokens:
                break
            tokens = estimate_tokens(text)
    return Composition(
        format=fmt,
        where=where,
        budget=budget,
        tokens=estimate_tokens(text) if text else 0,
        selected=len(chosen),
        included=tuple(included),
        left_out=tuple(left_out),
        text=text,
    )


def _item(
    chosen: Selected,
    known: Catalog,
    adj: Adjacency,
    fmt: str,
    notes: dict[MemoryId, ConflictNote],
) -> ComposedMemory:
    memory = chosen.record.memory
    deps = []
    for link_type, target in sorted(adj.outgoing(memory.id)):
        if link_type not in _DEPENDS:
            continue
        entry = known.get(target)
        headline = entry.headline if entry else "(not on this branch)"
        deps.append(Dependency(id=MemoryId(target), headline=headline))
    draft = ComposedMemory(
        id=memory.id,
        kind=memory.kind,
        title=memory.title,
        body=memory.body,
        path=chosen.record.path,
        tier=chosen.tier,
        created_at=memory.created_at,
        updated_at=chosen.facts.updated_at,
        tokens=0,
        agent=chosen.facts.written_by,
        commit=chosen.facts.written_in,
        depends_on=tuple(deps),
        conflict=notes.get(memory.id),
    )
    return msgspec.structs.replace(draft, tokens=estimate_tokens(_entry(draft, fmt)))


def _left(item: ComposedMemory, reason: str) -> LeftOut:
    return LeftOut(
        id=item.id,
        headline=headline(item.title, item.body),
        tier=item.tier,
        tokens=item.tokens,
        reason=reason,
    )


def _render_groups(items: list[ComposedMemory], fmt: str) -> str:
    kinds: dict[str, list[ComposedMemory]] = {}
    for item in items:
        kinds.setdefault(item.kind, []).append(item)
    parts = [_note(fmt)] if items else []
    for kind, group in kinds.items():
        parts.append(_group_heading(kind, fmt))
        parts.extend(_entry(item, fmt) for item in group)
    return "".join(parts)
