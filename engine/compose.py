"""Composing a context of known size from a precise selection of memories.

Memories are taken in tier order (pinned, reference, working; off-context
never), then most recently changed first, and included while they fit the
token budget; one too large is skipped and the next one tried. The result is
grouped by kind, with each memory's id and what it depends on, between a
header and a footer that give the counts. Tokens are counted with the
project's one estimator (``estimate_tokens``: characters / 4, rounded up)
on the exact text returned, and the total never exceeds the budget.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from ctx.engine.adjacency import Adjacency, adjacency
from ctx.engine.branches import resolve_revision
from ctx.engine.catalog import Catalog, catalog
from ctx.engine.conflicts import ConflictNote
from ctx.engine.errors import InvalidInputError
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
    if fmt == "markdown":
        head = f"- **{item.title}** `{item.id}`" if item.title else f"- `{item.id}`"
        lines = [f"{head} ({day}, {item.tier}{_written(item)})"]
        lines += ["  " + line if line else "" for line in item.body.splitlines()]
        lines += [f"  depends on: `{d.id}` {d.headline}" for d in deps]
        lines += _conflict_lines(item, "`")
    else:
        lines = [f"[{item.kind}] {item.title or ''} ({item.id}, {day}, {item.tier})"]
        lines += ["  " + line if line else "" for line in item.body.splitlines()]
        lines += [f"  depends on: {d.id} {d.headline}" for d in deps]
        lines += _conflict_lines(item, "")
    return "\n".join(lines) + "\n"


def _written(item: ComposedMemory) -> str:
    """Returns the provenance of an entry: ``; by AGENT, COMMIT, DATE``."""
    if item.commit is None:
        return ""
    agent = " ".join((item.agent or "unknown").split())[:40]
    return f"; by {agent}, {item.commit[:10]}, {item.updated_at:%Y-%m-%d}"


def _conflict_lines(item: ComposedMemory, quote: str) -> list[str]:
    note = item.conflict
    if note is None:
        return []
    fields = ", ".join(note.fields)
    show = f"{quote}ctx show {item.id}{quote}"
    return [f"  in conflict with {note.theirs_ref} ({fields}): {show} shows both sides"]


def _group_heading(kind: str, fmt: str) -> str:
    return {"markdown": f"\n### {kind}\n", "text": f"\n== {kind} ==\n", "json": ""}[fmt]


def _frame(
    fmt: str,
    where: str | None,
    budget: int,
    counts: tuple[int, int, int, int, int],
) -> tuple[str, str]:
    included, selected, tokens, over, off = counts
    what = f"where {where}" if where else "all memories"
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
    parts = []
    for kind, group in kinds.items():
        parts.append(_group_heading(kind, fmt))
        parts.extend(_entry(item, fmt) for item in group)
    return "".join(parts)
