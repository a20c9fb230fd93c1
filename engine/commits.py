"""Commits as the engine reads and writes them: the intent in their trailers.

Every write is a commit whose ``Ctx-*`` trailers say which agent made it,
why and how sure (:class:`~ctx.engine.model.Intent`); :func:`commit_info`
reads them back, with the parents, time and summary, into a
:class:`CommitInfo`. The author of a commit is its agent, as
:func:`git_identity` writes it, at :func:`git_time`.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import msgspec
from dulwich.objects import Commit
from dulwich.trailers import parse_trailers

from ctx.engine.errors import InvalidInputError
from ctx.engine.ids import CommitId
from ctx.engine.model import Intent

__all__ = ["CommitInfo", "commit_info", "git_identity", "git_time"]


class CommitInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One commit as the engine reports it.

    Attributes:
        id: The commit id.
        parents: Parent commit ids, first parent first.
        time: Commit time, with the committer's offset.
        author: The writing agent (git author name).
        summary: The first line of the message.
        intent: The ``Ctx-*`` trailers, when the commit has them.
    """

    id: CommitId
    parents: tuple[CommitId, ...]
    time: datetime
    author: str
    summary: str
    intent: Intent | None = None


def git_time(when: datetime) -> tuple[int, int]:
    """Returns ``when`` as git stores a time: seconds, and the offset's."""
    offset = when.utcoffset() or timedelta(0)
    return int(when.timestamp()), int(offset.total_seconds())


def git_identity(agent: str) -> bytes:
    """Returns the author line of an agent's commits."""
    return f"{agent} <{agent}@ctx>".encode()


def commit_info(commit: Commit) -> CommitInfo:
    """Returns the engine's view of a dulwich commit."""
    message = commit.message.decode("utf-8", "replace")
    _, trailers = parse_trailers(commit.message)
    fields = {t.key: t.value for t in trailers}
    intent: Intent | None = None
    if "Ctx-Agent" in fields and "Ctx-Intent" in fields:
        try:
            confidence = fields.get("Ctx-Confidence")
            intent = Intent(
                agent=fields["Ctx-Agent"],
                intent=fields["Ctx-Intent"],
                confidence=float(confidence) if confidence else None,
                reason=fields.get("Ctx-Reason"),
                session=fields.get("Ctx-Session"),
            )
        except (InvalidInputError, ValueError):
            intent = None
    tz = timezone(timedelta(seconds=commit.commit_timezone))
    author = commit.author.decode("utf-8", "replace").split(" <", 1)[0]
    return CommitInfo(
        id=CommitId(commit.id.decode("ascii")),
        parents=tuple(CommitId(p.decode("ascii")) for p in commit.parents),
        time=datetime.fromtimestamp(commit.commit_time, tz),
        author=author,
        summary=message.split("\n", 1)[0],
        intent=intent,
    )
