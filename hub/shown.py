"""The record of what each session was shown: which memories, at which commit.

Every injection of memories into an agent's context (a hook's context, an
MCP or HTTP recall or composition) appends one line to
``<store>/private/shown.jsonl``: when, the session and agent, how
(``hook``, or ``recall`` and ``compose`` for MCP and HTTP), the branch and
commit read, and the memories' ids. With ``ctx blame``
this answers "which agent acted on the poisoned memory, and who wrote it":
``ctx session show SID`` lists what a session was shown, ``ctx blame ID
--shown`` the sessions a memory was shown to.

The file is private state (never committed, mode 0600) and bounded: past
:data:`MAX_BYTES` the oldest lines go, keeping the newest half, in one
atomic replacement. Appends take a lock (``shown.lock``, ``flock``), so
concurrent hooks and servers never interleave or lose a line; a torn line (a
writer killed mid-append) is skipped on reading.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ctx.engine import StoreError
from ctx.hub.state import PRIVATE_FOLDER, private_folder, write_atomically

if TYPE_CHECKING:
    from ctx.engine import Composition, Store
    from ctx.hub.access import Caller
    from ctx.hub.retrieval.results import RecallResult
    from ctx.hub.workspace import Workspace

__all__ = [
    "MAX_BYTES",
    "SHOWN_FILE",
    "Shown",
    "memory_shown",
    "note_composed",
    "note_recall",
    "note_shown",
    "read_shown",
    "record_shown",
    "session_shown",
    "shown_during",
]

SHOWN_FILE = "shown.jsonl"
"""The record's file, in the store's private folder."""
MAX_BYTES = 4_000_000
"""The record's bound; past it the oldest lines go, the newest half kept."""


class Shown(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One injection: memories a session was shown.

    Attributes:
        version: The line's format (1).
        when: When (UTC).
        via: ``hook`` (a hook's context), ``recall`` or ``compose`` (MCP
            or HTTP).
        session: The agent's session, when known.
        agent: The agent, when known.
        branch: The branch read.
        commit: Its tip when read.
        memories: The ids shown, in the order given.
    """

    version: int = 1
    when: datetime
    via: str
    session: str | None = None
    agent: str | None = None
    branch: str | None = None
    commit: str | None = None
    memories: tuple[str, ...] = ()


_DECODER = msgspec.json.Decoder(Shown)


def record_shown(store_path: Path, entry: Shown) -> None:
    """Appends ``entry`` to the store's record, trimming the oldest if too big.

    Nothing is written for an entry without memories.

    Raises:
        StoreError: The private folder is not the user's.
        OSError: The file cannot be written.
    """
    if not entry.memories:
        return
    folder = private_folder(store_path)
    path = folder / SHOWN_FILE
    line = msgspec.json.encode(entry) + b"\n"
    with _locked(folder):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "ab") as file:
            file.write(line)
            size = file.tell()
        if size > MAX_BYTES:
            _trim(path)


def note_shown(
    ws: Workspace,
    via: str,
    memories: tuple[str, ...],
    *,
    branch: str | None,
    commit: str | None,
    session: str | None,
    agent: str | None,
) -> None:
    """Records ``memories``, given by an MCP or HTTP call, as shown to ``session``.

    A store that cannot be written (read-only) keeps no record; the call is
    answered all the same.
    """
    if not ws.on_disk:
        return
    entry = Shown(
        when=ws.clock(),
        via=via,
        session=session,
        agent=agent,
        branch=branch,
        commit=commit,
        memories=memories,
    )
    with contextlib.suppress(OSError, StoreError):
        record_shown(ws.path, entry)


def note_recall(
    ws: Workspace, result: RecallResult, *, session: str | None, agent: str | None
) -> None:
    """Records the hits of an MCP or HTTP recall as shown to ``session``."""
    note_shown(
        ws,
        "recall",
        tuple(hit.id for hit in result.hits),
        branch=result.branch,
        commit=result.commit,
        session=session,
        agent=agent,
    )


def note_composed(
    ws: Workspace,
    caller: Caller,
    store: Store,
    rev: str | None,
    composition: Composition,
) -> None:
    """Records a composition read at ``rev`` (MCP or HTTP) as shown to the caller.

    The session and agent are the caller's, unless the server names them.

    Call it while the store is read, so that the commit is the one read
    (``rev`` None: HEAD's branch).
    """
    from ctx.engine import resolve_revision

    branch = store.head_branch() if rev is None else rev
    note_shown(
        ws,
        "compose",
        tuple(str(m.id) for m in composition.included),
        branch=branch if branch in store.branches() else None,
        commit=resolve_revision(store, rev),
        session=caller.session or ws.session,
        agent=caller.signed_by(ws.agent),
    )


@contextlib.contextmanager
def shown_during(
    ws: Workspace,
    session: str,
    agent: str | None,
    read_at: Sequence[tuple[str, str]] = (),
) -> Iterator[None]:
    """Records what a hook's block newly gave the session (its state's ``shown``).

    The memories given are those the session's hook state gained; they are
    recorded at the last (branch, commit) of ``read_at``, where the handler
    read them (a recall says where it read), else at the tip of the store's
    HEAD branch. A hook answered by a running hub thus opens no store here.
    """
    from ctx.hub.session_state import read_session

    if not ws.on_disk:
        yield
        return
    before = read_session(ws.path, session)
    yield
    after = read_session(ws.path, session)
    had = set(before.shown) if before is not None else set()
    new = tuple(i for i in (after.shown if after else ()) if i not in had)
    if not new:
        return
    if read_at:
        branch, commit = read_at[-1]
    else:
        with ws.lock:
            store = ws.store()
            branch = store.head_branch()
            commit = store.branch_tip(branch)
    entry = Shown(
        when=ws.clock(),
        via="hook",
        session=session,
        agent=agent,
        branch=branch,
        commit=commit,
        memories=new,
    )
    with contextlib.suppress(OSError, StoreError):
        record_shown(ws.path, entry)


def session_shown(ws: Workspace, session: str) -> tuple[Shown, ...]:
    """Returns what ``session`` was shown, oldest first."""
    if not ws.on_disk:
        return ()
    return tuple(e for e in read_shown(ws.path) if e.session == session)


def memory_shown(ws: Workspace, memory: str) -> tuple[Shown, ...]:
    """Returns every injection that showed memory ``memory`` (a full or short id).

    Raises:
        InvalidInputError: ``memory`` is not an id, or names several.
        MemoryNotFoundError: no memory has it.
    """
    from ctx.engine import resolve_memory_id

    with ws.lock:
        memory_id = resolve_memory_id(ws.store(), memory, removed=True)
    if not ws.on_disk:
        return ()
    return tuple(e for e in read_shown(ws.path) if memory_id in e.memories)


def read_shown(store_path: Path) -> list[Shown]:
    """Returns every recorded injection, oldest first (torn lines skipped)."""
    try:
        data = (store_path / PRIVATE_FOLDER / SHOWN_FILE).read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for line in data.splitlines():
        with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
            out.append(_DECODER.decode(line))
    return out


def _trim(path: Path) -> None:
    """Keeps the newest lines that fit in half of :data:`MAX_BYTES`."""
    lines = path.read_bytes().splitlines(keepends=True)
    kept: list[bytes] = []
    size = 0
    for line in reversed(lines):
        size += len(line)
        if size > MAX_BYTES // 2:
            break
        kept.append(line)
    write_atomically(path, b"".join(reversed(kept)), durable=False)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder / "shown.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
