"""Working sessions, derived from the ``Ctx-Session`` trailers of history.

A session is not stored anywhere as such: every write an agent makes in a
hook or MCP session carries its id as a ``Ctx-Session`` trailer, and the
sessions of a branch are the ids its commits carry. Listing them reads the
history cache (what each commit changed) and each commit's message, never
a memory's blob; showing one reads the blobs of the memories it wrote.

What a session concluded is kept as memories under ``sessions/<id>/``::

    sessions/<id>/summary.json    kind summary: what the session did
    sessions/<id>/decisions.json  kind decision: what it decided (a list)
    sessions/<id>/details.json    kind session: anything else worth keeping

:func:`summarize_session` writes them in one commit; summarizing again
rewrites them as new versions of the same memories (same ids).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import msgspec
from dulwich.objects import Commit, ObjectID

from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.commits import CommitInfo
from ctx.engine.errors import CorruptStoreError, InvalidInputError, NotFoundError
from ctx.engine.history import CommitRecord, session_trailer
from ctx.engine.ids import CommitId, MemoryId, new_memory_id
from ctx.engine.layout import SESSIONS, is_memory_path
from ctx.engine.model import (
    Intent,
    Memory,
    Outcome,
    check_body,
    decode_memory,
    encode,
)
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store
from ctx.engine.wording import plural

__all__ = [
    "SessionDetail",
    "SessionInfo",
    "SessionMemory",
    "SessionSummaryResult",
    "check_session_id",
    "list_sessions",
    "session_detail",
    "session_path",
    "summarize_session",
]

_PARTS = ("summary", "decisions", "details")
_KINDS = {"summary": "summary", "decisions": "decision", "details": "session"}


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One session seen in a branch's history.

    Attributes:
        id: The session id (the ``Ctx-Session`` trailer).
        agent: The agent of its first commit (who worked in it).
        first: The time of its first commit (UTC).
        last: The time of its latest commit (UTC).
        commits: How many commits it made.
        writes: How many memory changes those commits made.
        summarized: Whether ``sessions/<id>/summary.json`` was written.
    """

    id: str
    agent: str
    first: datetime
    last: datetime
    commits: int
    writes: int
    summarized: bool = False


class SessionMemory(msgspec.Struct, frozen=True, kw_only=True):
    """A memory a session wrote, changed or removed.

    Attributes:
        id: The memory's id.
        path: Its path (its last one in the session).
        status: added, changed or removed.
        kind: Its kind (as last written; None when removed).
        title: Its headline (as last written; None when removed).
    """

    id: str
    path: str
    status: str
    kind: str | None = None
    title: str | None = None


class SessionDetail(Outcome, frozen=True, kw_only=True):
    """What one session did.

    Attributes:
        session: Its line of :func:`list_sessions`.
        commits: Its commits, newest first.
        memories: The memories it wrote, in the order first written.
        decisions: Those of ``memories`` that are decisions.
        summary: The body of ``sessions/<id>/summary.json``, if any.
        recalls: What it recalled (queries), where a hook recorded them;
            the engine leaves it empty.
    """

    session: SessionInfo
    commits: tuple[CommitInfo, ...]
    memories: tuple[SessionMemory, ...]
    decisions: tuple[SessionMemory, ...]
    summary: str | None = None
    recalls: tuple[str, ...] = ()


class SessionSummaryResult(Outcome, frozen=True, kw_only=True):
    """What :func:`summarize_session` wrote.

    Attributes:
        session: The session id.
        commit: The commit, or None when nothing changed.
        paths: The memories' paths under ``sessions/<id>/``.
        ids: Their ids, in the order of ``paths``.
    """

    session: str
    commit: CommitId | None
    paths: tuple[str, ...]
    ids: tuple[MemoryId, ...]


def check_session_id(session_id: str) -> str:
    """Returns ``session_id`` if it can name a session, else raises."""
    Intent(agent="x", intent="x", session=session_id)  # the trailer's own check
    return session_id


def session_path(session_id: str, part: str) -> str:
    """Returns the path of a session's ``summary``, ``decisions`` or ``details``."""
    return f"{SESSIONS}/{session_id}/{part}.json"


def _session_of(store: Store, rec: CommitRecord) -> str | None:
    """Returns the session of a commit: from the history cache, else its message."""
    if rec.session is not None:
        return rec.session or None
    obj = store.repo.object_store[ObjectID(rec.commit.encode("ascii"))]
    assert isinstance(obj, Commit)
    return session_trailer(obj.message) or None


@dataclass
class _Tally:
    """A session's commits counted so far, newest first."""

    first: int
    last: int
    agent: str = ""
    commits: int = 0
    writes: int = 0


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def list_sessions(store: Store, rev: str | None = None) -> list[SessionInfo]:
    """Returns the sessions of a branch's history, latest activity first.

    Reads the history cache (a commit's message only where its cached line
    predates sessions), never a blob.
    """
    tip = resolve_revision(store, rev)
    snap = store.snapshot(tip)
    summarized = {
        path.split("/")[1]
        for path, _ in snap.files(SESSIONS)
        if path.endswith("/summary.json")
    }
    seen: dict[str, _Tally] = {}
    for rec in store.history.records(tip):  # newest first
        session = _session_of(store, rec)
        if session is None:
            continue
        tally = seen.setdefault(session, _Tally(first=rec.time, last=rec.time))
        tally.agent = rec.agent  # the oldest commit's agent stays
        tally.first = min(tally.first, rec.time)
        tally.last = max(tally.last, rec.time)
        tally.commits += 1
        tally.writes += sum(1 for c in rec.changes if is_memory_path(c.path))
    sessions = [
        SessionInfo(
            id=sid,
            agent=t.agent,
            first=_utc(t.first),
            last=_utc(t.last),
            commits=t.commits,
            writes=t.writes,
            summarized=sid in summarized,
        )
        for sid, t in seen.items()
    ]
    sessions.sort(key=lambda s: (s.last, s.id), reverse=True)
    return sessions


def session_detail(
    store: Store, session_id: str, rev: str | None = None
) -> SessionDetail:
    """Returns what session ``session_id`` did on a branch.

    Raises:
        NotFoundError: no commit of the branch carries that session.
    """
    tip = resolve_revision(store, rev)
    info = next((s for s in list_sessions(store, rev) if s.id == session_id), None)
    if info is None:
        raise NotFoundError(
            f"No session {session_id!r} in this history.",
            hint="`ctx session ls` lists them.",
        )
    commits: list[CommitInfo] = []
    latest: dict[str, tuple[str, str | None, str | None]] = {}
    order: list[str] = []
    for rec in reversed(store.history.records(tip)):  # oldest first
        if _session_of(store, rec) != session_id:
            continue
        commits.append(store.commit(CommitId(rec.commit)))
        for c in rec.changes:
            if c.id is None or not is_memory_path(c.path):
                continue
            if c.id not in latest:
                order.append(c.id)
                added = c.old is None
            else:
                added = latest[c.id][0] == "added"
            status = "removed" if c.new is None else ("added" if added else "changed")
            latest[c.id] = (status, c.path, c.new)
    snap = store.snapshot(tip)
    memories: list[SessionMemory] = []
    for mid in order:
        status, path, blob = latest[mid]
        assert path is not None
        kind = title = None
        if blob is not None:
            try:
                memory = decode_memory(snap.read_blob(blob), path)
            except CorruptStoreError:
                memory = None
            if memory is not None:
                kind = memory.kind
                title = memory.title or memory.body.split("\n", 1)[0][:70]
        memories.append(
            SessionMemory(id=mid, path=path, status=status, kind=kind, title=title)
        )
    raw = snap.read(session_path(session_id, "summary"))
    summary = decode_memory(raw).body if raw is not None else None
    return SessionDetail(
        session=info,
        commits=tuple(reversed(commits)),
        memories=tuple(memories),
        decisions=tuple(m for m in memories if m.kind == "decision"),
        summary=summary,
    )


def summarize_session(
    store: Store,
    session_id: str,
    intent: Intent,
    *,
    summary: str,
    decisions: Sequence[str] = (),
    details: str | None = None,
    branch: str | None = None,
) -> SessionSummaryResult:
    """Writes what a session concluded under ``sessions/<id>/``, in one commit.

    ``summary`` goes to ``summary.json``; ``decisions`` (one line each) to
    ``decisions.json`` as a list; ``details`` to ``details.json``. A part
    left empty is left as it was. Writing again makes new versions of the
    same memories.

    Raises:
        InvalidInputError: the session id or a text is not allowed.
    """
    check_session_id(session_id)
    texts: dict[str, str] = {"summary": summary.strip()}
    lines = [d.strip() for d in decisions if d.strip()]
    if lines:
        texts["decisions"] = "\n".join(f"- {line}" for line in lines)
    if details and details.strip():
        texts["details"] = details.strip()
    if not texts["summary"]:
        raise InvalidInputError("A session's summary may not be empty.")
    for text in texts.values():
        check_body(text)
    now = store.clock()
    titles = {
        "summary": f"Session {session_id}",
        "decisions": f"Decisions of session {session_id}",
        "details": f"Details of session {session_id}",
    }
    ids: dict[str, MemoryId] = {}

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {}
        for part in _PARTS:
            if part not in texts:
                continue
            path = session_path(session_id, part)
            raw = snap.read(path)
            old: Memory | None = decode_memory(raw, path) if raw is not None else None
            memory = Memory(
                version=1,
                id=old.id if old else new_memory_id(now),
                kind=_KINDS[part],
                title=titles[part],
                body=texts[part],
                created_at=old.created_at if old else now,
                tags=old.tags if old else (),
                meta={"session": session_id},
            )
            ids[part] = memory.id
            out[path] = encode(memory)
        return out

    commit = store.write(
        target_branch(store, branch),
        intent,
        f"Summarize session {session_id} ({plural(len(texts), 'part')})",
        build,
    )
    parts = [p for p in _PARTS if p in texts]
    return SessionSummaryResult(
        session=session_id,
        commit=commit.id if commit else None,
        paths=tuple(session_path(session_id, p) for p in parts),
        ids=tuple(ids[p] for p in parts),
    )
