"""A briefing on the project, for a person or a subagent: ``ctx brief``.

The composed context (pinned memories, reference decisions, working
memories, then open questions; :func:`~ctx.engine.compose.compose`) and,
after it, the latest sessions with the first line of each one's summary,
all within one token budget: the sessions take at most a fifth of it.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from ctx.engine.branches import resolve_revision
from ctx.engine.compose import compose
from ctx.engine.errors import CorruptStoreError, InvalidInputError
from ctx.engine.model import Outcome, decode_memory
from ctx.engine.sessions import SessionInfo, list_sessions, session_path
from ctx.engine.store import Store
from ctx.engine.tokens import estimate_tokens

__all__ = ["BriefSession", "Briefing", "brief"]

_SESSIONS_SHARE = 5
"""The sessions take at most 1/_SESSIONS_SHARE of the budget."""


class BriefSession(msgspec.Struct, frozen=True, kw_only=True):
    """A recent session in a briefing: its line, and its summary's first line."""

    session: SessionInfo
    summary: str | None = None


class Briefing(Outcome, frozen=True, kw_only=True):
    """A briefing and what went into it.

    Attributes:
        budget: The tokens it could take.
        tokens: The tokens it takes.
        memories: The ids of the memories in it, in order.
        sessions: The recent sessions in it, latest first.
        text: The briefing, as markdown.
    """

    budget: int
    tokens: int
    memories: tuple[str, ...]
    sessions: tuple[BriefSession, ...]
    text: str


def _summary_line(store: Store, rev: str, session_id: str) -> str | None:
    raw = store.snapshot(resolve_revision(store, rev)).read(
        session_path(session_id, "summary")
    )
    if raw is None:
        return None
    try:
        return decode_memory(raw).body.split("\n", 1)[0]
    except CorruptStoreError:
        return None


def brief(
    store: Store,
    *,
    budget: int,
    now: datetime,
    rev: str | None = None,
    sessions: int = 5,
) -> Briefing:
    """Returns a briefing on the project within ``budget`` tokens.

    Raises:
        InvalidInputError: the budget is too small for anything.
    """
    if budget < 50:
        raise InvalidInputError(f"The budget must be at least 50, not {budget}.")
    tip = resolve_revision(store, rev)
    lines: list[str] = []
    kept: list[BriefSession] = []
    room = budget // _SESSIONS_SHARE
    for info in list_sessions(store, tip)[:sessions]:
        summary = _summary_line(store, tip, info.id)
        what = summary or f"{info.commits} commits, {info.writes} writes"
        line = f"- `{info.id}` ({info.agent}, {info.last:%Y-%m-%d %H:%M}): {what}"
        if estimate_tokens("\n".join([*lines, line])) > room:
            break
        lines.append(line)
        kept.append(BriefSession(session=info, summary=summary))
    tail = "## Recent sessions\n\n" + "\n".join(lines) if lines else ""
    rest = budget - (estimate_tokens(tail) + 1 if tail else 0)
    try:
        composition = compose(store, budget=rest, now=now, rev=tip)
        head = composition.text.strip() if composition.included else ""
        ids = tuple(str(m.id) for m in composition.included)
    except InvalidInputError:  # too little room for the header: sessions alone
        head, ids = "", ()
    text = "\n\n".join(part for part in (head, tail) if part)
    return Briefing(
        budget=budget,
        tokens=estimate_tokens(text),
        memories=ids,
        sessions=tuple(kept),
        text=text,
    )
