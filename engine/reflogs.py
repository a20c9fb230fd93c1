"""The reflogs: where git logs each move of a branch, read back.

``logs/refs/heads/<branch>`` in the git folder (a memory store keeps them
in memory): one line a move, its old and new commit, when, and why. The op
log and undo (:mod:`ctx.engine.operations`) read them through here, and a
move the disk refused has its line cut off here (:func:`drop_unfinished_line`).
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from dulwich.refs import Ref
from dulwich.repo import BaseRepo, MemoryRepo, Repo

from ctx.engine.ids import CommitId

if TYPE_CHECKING:
    from ctx.engine.store import Store

__all__ = ["ReflogEntry", "drop_unfinished_line", "logged_branches", "reflog"]

_HEADS = b"refs/heads/"


class ReflogEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One move of a branch, oldest first in :func:`reflog`."""

    old: CommitId | None
    new: CommitId | None
    time: datetime
    message: str


def logged_branches(store: Store) -> list[str]:
    """Returns every branch with a logged move, deleted ones too, sorted."""
    repo = store.repo
    if isinstance(repo, MemoryRepo):
        names = {entry[0] for entry in repo._reflog}
        return sorted(
            name[len(_HEADS) :].decode("utf-8")
            for name in names
            if name.startswith(_HEADS)
        )
    assert isinstance(repo, Repo)
    logs = _logs(repo)
    if not logs.is_dir():
        return []
    return sorted(
        path.relative_to(logs).as_posix() for path in logs.rglob("*") if path.is_file()
    )


def reflog(store: Store, branch: str) -> list[ReflogEntry]:
    """Returns every logged move of ``branch``, oldest first.

    A torn last line (a writer killed mid-append) is skipped.
    """
    from dulwich.reflog import parse_reflog_line

    repo = store.repo
    ref = _HEADS + branch.encode()
    raw: list[tuple[bytes, bytes, int, int, bytes]] = []
    if isinstance(repo, MemoryRepo):
        for entry in repo._reflog:
            if entry[0] == ref:
                raw.append(
                    (
                        entry[1] or b"0" * 40,
                        entry[2] or b"0" * 40,
                        entry[4],
                        entry[5],
                        entry[6],
                    )
                )
    else:
        assert isinstance(repo, Repo)
        try:
            lines = (_logs(repo) / branch).read_bytes().split(b"\n")
        except FileNotFoundError:
            lines = []
        for line in lines:
            try:
                e = parse_reflog_line(line)
            except (ValueError, IndexError):
                continue
            raw.append((e.old_sha, e.new_sha, e.timestamp, e.timezone, e.message))
    out = []
    for old, new, ts, tz, msg in raw:
        out.append(
            ReflogEntry(
                old=None if old.strip(b"0") == b"" else CommitId(old.decode()),
                new=None if new.strip(b"0") == b"" else CommitId(new.decode()),
                time=datetime.fromtimestamp(ts, timezone(timedelta(seconds=tz))),
                message=msg.decode("utf-8", "replace"),
            )
        )
    return out


def drop_unfinished_line(repo: BaseRepo, branch: str, new: CommitId) -> None:
    """Cuts off the line of a move of ``branch`` to ``new`` the disk refused.

    dulwich appends the reflog line before renaming the ref's lock into
    place: a move the disk refused may leave that line torn (which would
    swallow the next move's line) or whole though the branch did not move.
    Either is cut off; nothing is written, only truncated.
    """
    if not isinstance(repo, Repo):
        return
    path = _logs(repo) / branch
    with contextlib.suppress(OSError):
        tip = repo.refs.read_ref(Ref(_HEADS + branch.encode()))
        with path.open("r+b") as log:
            data = log.read()
            keep = data.rfind(b"\n") + 1  # a torn line goes
            last = data.rfind(b"\n", 0, max(keep - 1, 0)) + 1
            fields = data[last:keep].split(b" ", 2)
            if keep and fields[1:2] == [new.encode()] and tip != new.encode():
                keep = last  # so does a whole one for a move not made
            if keep < len(data):
                log.truncate(keep)


def _logs(repo: Repo) -> Path:
    """Returns the folder of the branches' reflogs."""
    return Path(repo.controldir()) / "logs" / "refs" / "heads"
