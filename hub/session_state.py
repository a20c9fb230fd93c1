"""What waits between one hook call and the next, per agent session.

A ``stop`` hook cannot speak to the agent (the turn is over), so what its
commands found (a recall, the status, a memory's sources) and what went
wrong waits in the session's state until the next ``prompt-submit`` or
``session-start`` gives it. The state also remembers which memories the
session was given (not to give them twice), which it wrote, and what
``pre-compact`` saved to give back after compaction.

Each session's state is one JSON file in the store's private folder,
``<store>/private/hooks/<session>.json``: never in the git history. A call
that changes it holds the session's lock (``flock`` on ``<session>.lock``,
dropped by the kernel if the holder dies) from reading to writing, and
writes it whole (:func:`~ctx.hub.state.write_atomically`, not synced to
disk: a state lost to a crash of the machine starts afresh), so two hooks of
one session (a subagent's stop beside the main one) never lose each other's
items. A state file that cannot be decoded starts afresh, with a report.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from ctx.hub.state import PRIVATE_FOLDER, private_folder, write_atomically

__all__ = [
    "HOOKS_FOLDER",
    "Block",
    "SessionState",
    "editing",
    "editing_if_writable",
    "prune_sessions",
    "read_session",
    "remove_session",
    "session_path",
    "unique_latest",
]

HOOKS_FOLDER = "hooks"
"""The sessions' folder, under the store's private folder."""

_SAFE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_KEEP = {"blocks": 20, "reports": 50, "shown": 500, "written": 200, "saved": 100}
"""How many items of each list a state keeps, the newest."""


class Block(msgspec.Struct, kw_only=True):
    """A block of context waiting for the agent (a recall, the status, ...).

    Attributes:
        title: What it is, one line.
        text: The block, ready for a prompt.
    """

    title: str
    text: str


class SessionState(msgspec.Struct, kw_only=True):
    """One session's state (mutable: a hook changes it, then it is written).

    Attributes:
        version: The file's format (1).
        session: The host's session id.
        blocks: Context waiting for the next prompt, oldest first.
        reports: One line each: what the stop's commands did or why not.
        shown: Memories the agent was given this session (not given again).
        written: Memories the session's commands wrote.
        saved: What ``pre-compact`` saved to give back after compaction.
        last_message: The hash of the last message whose commands were run
            (a message is never run twice).
        task: The task the agent is working on (``<ctx:task action="start">``),
            whose memories are tagged ``task:<name>``; None between tasks.
    """

    version: int = 1
    session: str = ""
    blocks: list[Block] = []
    reports: list[str] = []
    shown: list[str] = []
    written: list[str] = []
    saved: list[str] = []
    last_message: str = ""
    task: str | None = None

    def note_shown(self, ids: list[str]) -> None:
        """Records that the agent was given these memories."""
        self.shown = unique_latest([*self.shown, *ids])

    def take_waiting(self) -> tuple[list[Block], list[str]]:
        """Returns the blocks and reports waiting, and empties both."""
        waiting = (self.blocks, self.reports)
        self.blocks, self.reports = [], []
        return waiting

    def trimmed(self) -> SessionState:
        """Returns the state with each list cut to its newest items."""
        for name, keep in _KEEP.items():
            values = getattr(self, name)
            if len(values) > keep:
                setattr(self, name, values[-keep:])
        return self


_ENCODER = msgspec.json.Encoder(order="deterministic")


def unique_latest(values: list[str]) -> list[str]:
    """Returns ``values`` without repeats, each at its last place."""
    return list(reversed(dict.fromkeys(reversed(values))))


def _folder(store_path: Path) -> Path:
    folder = private_folder(store_path) / HOOKS_FOLDER
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    return folder


def _file_name(session: str) -> str:
    """Returns the session's file name: its id if safe, else a hash of it."""
    if _SAFE_RE.fullmatch(session):
        return session
    return (
        "session-" + hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:32]
    )


def session_path(store_path: Path, session: str) -> Path:
    """Returns the state file of ``session`` in the store at ``store_path``."""
    name = _file_name(session)
    return store_path / PRIVATE_FOLDER / HOOKS_FOLDER / f"{name}.json"


def _read(path: Path, session: str, *, kept: bool = True) -> SessionState:
    """Returns the state in ``path``; an unreadable one starts afresh.

    ``kept``: the state will be written back, so a report of the unreadable
    one is said once (a state never kept would say it at every prompt).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return SessionState(session=session)
    try:
        return msgspec.json.decode(data, type=SessionState)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return SessionState(
            session=session,
            reports=["ctx: this session's hook state was unreadable; it starts afresh."]
            if kept
            else [],
        )


@contextlib.contextmanager
def editing(store_path: Path, session: str) -> Iterator[SessionState]:
    """Holds the session's lock; yields its state, written back after the block.

    The state is written only if the block changed it, and not at all if
    the block raises.

    Raises:
        StoreError: The private folder is not the user's.
        OSError: The folder or the file cannot be read or written.
    """
    folder = _folder(store_path)
    name = _file_name(session)
    path = folder / f"{name}.json"
    fd = os.open(folder / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        state = _read(path, session)
        before = _ENCODER.encode(state)
        yield state
        after = _ENCODER.encode(state.trimmed())
        if after != before:
            # Not synced: a prompt should not wait for the disk, and a state
            # lost to a crash of the machine is a report lost, not a memory.
            write_atomically(path, after + b"\n", durable=False)
    finally:
        os.close(fd)


@contextlib.contextmanager
def editing_if_writable(store_path: Path, session: str) -> Iterator[SessionState]:
    """Yields the session's state as :func:`editing` does, if it can be kept.

    In a store that cannot be written (a read-only mount), its hooks still
    give memory: the state is read as it stands (or fresh) and not written
    back, so what was shown may be shown again and what waits waits on.

    Raises:
        StoreError: The private folder is not the user's.
    """
    with contextlib.ExitStack() as stack:
        try:
            state = stack.enter_context(editing(store_path, session))
        except OSError:
            try:
                state = _read(session_path(store_path, session), session, kept=False)
            except OSError:
                state = SessionState(session=session)
        yield state


def read_session(store_path: Path, session: str) -> SessionState | None:
    """Returns the session's state as it stands (no lock), or ``None``."""
    path = session_path(store_path, session)
    if not path.exists():
        return None
    return _read(path, session)


def remove_session(store_path: Path, session: str) -> None:
    """Removes the session's state and lock files, if any."""
    path = session_path(store_path, session)
    path.unlink(missing_ok=True)
    path.with_suffix(".lock").unlink(missing_ok=True)


def prune_sessions(
    store_path: Path, *, older_than: float, keep: str | None = None
) -> int:
    """Removes the files of sessions untouched for ``older_than`` seconds.

    A session's state is judged by its state file alone: its lock file is
    created once and never touched again, so a lock goes with its state (or
    without one), never while the state is in use. ``keep``: a session whose
    files stay whatever their age (the one a hook is answering: its state is
    written only when it changes). Returns how many files were removed.
    """
    folder = store_path / PRIVATE_FOLDER / HOOKS_FOLDER
    limit = time.time() - older_than
    kept = None if keep is None else _file_name(keep)
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return 0
    for entry in entries:
        name, dot, suffix = entry.name.rpartition(".")
        if not dot or suffix not in ("json", "lock") or name == kept:
            continue
        state = os.path.join(folder, f"{name}.json")
        with contextlib.suppress(FileNotFoundError):
            if os.stat(state, follow_symlinks=False).st_mtime >= limit:
                continue  # in use within the period: its lock too
        # The state is stale or gone: it goes, and a lock too unless it was
        # made within the period (before its session first wrote its state).
        with contextlib.suppress(FileNotFoundError):
            if suffix == "json" or entry.stat(follow_symlinks=False).st_mtime < limit:
                os.unlink(entry.path)
                removed += 1
    return removed
