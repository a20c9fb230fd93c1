"""Sessions as a person sees them: ``ctx session show`` and ``end``.

The engine derives a session from history (:mod:`ctx.engine.sessions`);
here its report is completed with what only this machine knows: the
memories a hook session was given (its recalls), kept in the hooks'
private state while the session lasts (docs/hooks.md). Ending a session
writes its summary and drops that state.
"""

from __future__ import annotations

import msgspec

from ctx import engine
from ctx.engine import SessionDetail, SessionSummaryResult
from ctx.hub.workspace import Workspace

__all__ = ["end_session", "session_report"]


def session_report(
    ws: Workspace, session_id: str, rev: str | None = None
) -> SessionDetail:
    """Returns what a session wrote and decided, and what it recalled.

    Raises:
        NotFoundError: no commit carries the session.
    """
    from ctx.hub.hooks.session import read_session

    with ws.lock:
        detail = engine.session_detail(ws.store(), session_id, rev)
    state = read_session(ws.path, session_id) if ws.on_disk else None
    if state is None or not state.shown:
        return detail
    return msgspec.structs.replace(detail, recalls=tuple(state.shown))


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
    from ctx.hub.hooks.session import remove_session

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
