"""Selecting memories with the query language (``ls --where``, ``query``).

For each memory the facts a query can ask about are gathered once per call:
its tokens, when it last changed and who touched it (one pass over the
history index), and its links (the adjacency index).
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from ctx.engine.adjacency import adjacency
from ctx.engine.branches import resolve_revision
from ctx.engine.ids import MemoryId
from ctx.engine.layout import is_conflict_path
from ctx.engine.memories import LISTING_WIDTH
from ctx.engine.model import headline
from ctx.engine.query import Facts, evaluate, memory_tokens, parse_query
from ctx.engine.snapshot import MemoryRecord
from ctx.engine.store import Store
from ctx.engine.tags import tier_of

__all__ = ["Selected", "SelectedMemory", "select"]


class Selected(msgspec.Struct, frozen=True, kw_only=True):
    """A memory a query selected, with the facts it was judged on."""

    record: MemoryRecord
    facts: Facts
    tier: str


class SelectedMemory(msgspec.Struct, frozen=True, kw_only=True):
    """One line of a query's answer (``query``): a memory, its tier and size.

    Attributes:
        id: The memory's id.
        kind: Its kind.
        title: Its title, if it has one.
        path: Where it is stored.
        tier: Its tier.
        tokens: Its estimated size in tokens.
        headline: The title, or the body's first line, cut to 70 characters.
    """

    id: MemoryId
    kind: str
    title: str | None
    path: str
    tier: str
    tokens: int
    headline: str

    @classmethod
    def of(cls, selected: Selected) -> SelectedMemory:
        """Returns the answer line of ``selected``."""
        memory = selected.record.memory
        return cls(
            id=memory.id,
            kind=memory.kind,
            title=memory.title,
            path=selected.record.path,
            tier=selected.tier,
            tokens=selected.facts.tokens,
            headline=headline(memory.title, memory.body, LISTING_WIDTH),
        )


def select(
    store: Store,
    where: str | None,
    *,
    now: datetime,
    rev: str | None = None,
    all: bool = False,
) -> list[Selected]:
    """Returns the memories at ``rev`` that match ``where`` (all if ``None``).

    Superseded memories are left out unless ``all`` is true. The order is
    the store's (by path).

    Raises:
        QuerySyntaxError: ``where`` does not parse (the column is given).
    """
    query = parse_query(where) if where is not None else None
    tip = resolve_revision(store, rev)
    snap = store.snapshot(tip)
    records = list(snap.memories())
    adj = adjacency(store, snap)
    hidden = set() if all else adj.superseded()
    kinds: dict[str, str] = {r.memory.id: r.memory.kind for r in records}
    updated: dict[str, int] = {}
    last: dict[str, tuple[str, str]] = {}
    agents: dict[str, set[str]] = {}
    for rec in store.history.records(tip):
        for change in rec.changes:
            if change.id is None or is_conflict_path(change.path):
                continue
            updated.setdefault(change.id, rec.time)
            last.setdefault(change.id, (rec.agent, rec.commit))
            if rec.agent:
                agents.setdefault(change.id, set()).add(rec.agent)
    out = []
    for record in records:
        mid = record.memory.id
        if mid in hidden:
            continue
        incoming = adj.incoming(mid)
        facts = Facts(
            memory=record.memory,
            path=record.path,
            area=record.area,
            context=record.context,
            tokens=memory_tokens(record.memory),
            updated_at=datetime.fromtimestamp(updated.get(mid, 0), UTC)
            if mid in updated
            else record.memory.created_at,
            agents=frozenset(agents.get(mid, ())),
            written_by=last[mid][0] if mid in last else None,
            written_in=last[mid][1] if mid in last else None,
            links_out=frozenset(o for _, o in adj.outgoing(mid)),
            links_in=frozenset(s for _, s in incoming),
            has_summary=any(
                t == "DERIVED_FROM" and kinds.get(s) == "summary" for t, s in incoming
            ),
        )
        if query is None or evaluate(query, facts, now):
            out.append(Selected(record=record, facts=facts, tier=tier_of(record)))
    return out
