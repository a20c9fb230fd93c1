"""Sessions as a person sees them: ``ctx session show`` and ``end``.

The engine derives a session from history (:mod:`ctx.engine.sessions`);
here its report is completed with what only this machine knows: the
memories a hook session was given (its recalls), kept in the hooks'
private state while the session lasts (docs/hooks.md), and those the
record of what each session was shown holds (:mod:`ctx.hub.shown`, MCP
and HTTP recalls too). A session that wrote nothing but was shown
memories is reported from that record alone. Ending a session writes its
summary and drops the hooks' state.
"""

from __future__ import annotations

from datetime import UTC

import msgspec

from ctx import engine
from ctx.engine import NotFoundError, SessionDetail, SessionInfo, SessionSummaryResult
from ctx.hub.shown import Shown
from ctx.hub.workspace import Workspace

__all__ = ["SessionReport", "end_session", "session_report"]


class SessionReport(SessionDetail, frozen=True, kw_only=True):
    """What a session did (:class:`~ctx.engine.SessionDetail`), and was shown.

    Attributes:
        shown: Each injection of memories into it (a hook's context, an MCP
            or HTTP recall or composition), oldest first, from the store's
            private record (:mod:`ctx.hub.shown`).
    """

    shown: tuple[Shown, ...] = ()


def session_report(
    ws: Workspace, session_id: str, rev: str | None = None
) -> SessionReport:
    """Returns what a session wrote and decided, and what it was given.

    Raises:
        NotFoundError: no commit carries the session, and it was shown nothing.
    """
    from ctx.hub.session_state import read_session, unique_latest
    from ctx.hub.shown import session_shown

    shown = session_shown(ws, session_id)
    try:
        with ws.lock:
            detail = engine.session_detail(ws.store(), session_id, rev)
    except NotFoundError:
        if not shown:
            raise
        detail = _shown_only(session_id, shown)
    state = read_session(ws.path, session_id) if ws.on_disk else None
    given = [m for entry in shown for m in entry.memories]
    given += state.shown if state is not None else []
    fields = msgspec.structs.asdict(detail)
    if given:
        fields["recalls"] = tuple(unique_latest(given))
    return SessionReport(**fields, shown=tuple(shown))


def _shown_only(session_id: str, shown: tuple[Shown, ...]) -> SessionDetail:
    """Returns the report of a session that wrote nothing but was shown memories."""
    times = [entry.when.astimezone(UTC) for entry in shown]
    agent = next((e.agent for e in shown if e.agent), None) or "unknown"
    info = SessionInfo(
        id=session_id,
        agent=agent,
        first=min(times),
        last=max(times),
        commits=0,
        writes=0,
    )
    return SessionDetail(session=info, commits=(), memories=(), decisions=())


def end_session(
    ws: Workspace,
    session_id: str,
    *,
    summary: str | None = None,
    branch: str | None = None,
) -> SessionSummaryResult:
    """Writes a session's summary and drops its hook state.

    Without ``summary``, the summary says what its history shows: how many
    commits, the memories written and the decisions among them.

    Raises:
        NotFoundError: no summary is given and no commit carries the session.
    """
    from ctx.hub.session_state import remove_session

    with ws.lock:
        store = ws.store(write=True)
        if summary is None:
            summary = _derived_summary(engine.session_detail(store, session_id))
        result = engine.summarize_session(
            store,
            session_id,
            ws.intent("summarize", session=session_id),
            summary=summary,
            branch=branch,
        )
    if ws.on_disk:
        remove_session(ws.path, session_id)
    return result


def _derived_summary(detail: SessionDetail) -> str:
    info = detail.session
    written = [m for m in detail.memories if m.status != "removed"]
    lines = [
        f"Session {info.id} ({info.agent}) made "
        f"{engine.plural(info.commits, 'commit')} from "
        f"{info.first:%Y-%m-%d %H:%M} to {info.last:%Y-%m-%d %H:%M} UTC and "
        f"wrote {engine.plural(len(written), 'memory')}."
    ]
    lines += [f"- {m.kind} {m.id}: {m.title}" for m in written[:20]]
    return "\n".join(lines)
