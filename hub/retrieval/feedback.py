"""The recall log: every recall's id and hits, and which hits were used.

Every recall gets an id (``r`` and a ULID: it sorts by time and tells its
age). The hub appends what it returned (the caller, branch, query, moment,
budget, and each hit's id and tokens) to ``<store>/private/recall-log.jsonl``,
the store's private state (:mod:`ctx.hub.state`: never committed, survives
restarts); ``ctx feedback`` and the MCP tool ``feedback`` append which of
those hits the caller used. The learning step (:mod:`ctx.hub.retrieval.
learning`) reads both. Lines are appended under an exclusive ``flock``, one
``write`` each, so concurrent processes never interleave them; a feedback
line is synced before it is acknowledged.

Feedback is refused, changing nothing, for an id that is not a recall id,
one this store never gave, a recall older than :data:`FEEDBACK_DAYS`, and a
memory id the recall did not return. The log is bounded: when it grows
past :data:`MAX_LOG_BYTES`, the lines older than :data:`FEEDBACK_DAYS` days
go, and if the week alone is over half the bound, its oldest lines too,
keeping the newest half (a store recalled thousands of times a week kept
every line, and each recall then read the whole log again).
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

from ctx.engine import InvalidInputError, NotFoundError, Outcome, new_memory_id, plural
from ctx.hub.state import private_folder, write_atomically

__all__ = [
    "FEEDBACK_DAYS",
    "MAX_LOG_BYTES",
    "Feedback",
    "FeedbackResult",
    "LoggedHit",
    "LoggedRecall",
    "RecallLog",
    "log_recall",
    "new_recall_id",
    "read_log",
    "record_feedback",
]

FEEDBACK_DAYS = 7
"""How long a recall takes feedback: a week covers a long working session
and its review; older feedback would rate a ranking since learned away."""

MAX_LOG_BYTES = 8_000_000
"""When the log passes this size, it is cut to the last week, and to at most
half this size (the newest lines)."""

LOG_FILE = "recall-log.jsonl"
_ID_RE = re.compile(r"^r[0-7][0-9A-HJKMNP-TV-Z]{25}$")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class LoggedHit(msgspec.Struct, frozen=True):
    """One hit a recall returned: its memory id and tokens."""

    id: str
    tokens: int


class LoggedRecall(msgspec.Struct, frozen=True, kw_only=True, tag="recall"):
    """What one recall returned, as the log keeps it."""

    id: str
    agent: str
    branch: str
    query: str
    now: datetime
    budget: int | None
    hits: tuple[LoggedHit, ...]


class Feedback(msgspec.Struct, frozen=True, kw_only=True, tag="feedback"):
    """Which hits of a recall were used."""

    recall: str
    used: tuple[str, ...]
    at: datetime


_Line = LoggedRecall | Feedback
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(_Line)


class FeedbackResult(Outcome, frozen=True, kw_only=True):
    """What ``ctx feedback`` recorded."""

    recall: str
    agent: str
    used: tuple[str, ...]
    returned: int


class RecallLog(msgspec.Struct, frozen=True):
    """The log as read: recalls by id, and every feedback in order."""

    recalls: dict[str, LoggedRecall]
    feedback: list[Feedback]


def new_recall_id(now: datetime) -> str:
    """Returns a new recall id: ``r`` and a ULID of ``now``."""
    return f"r{new_memory_id(now)}"


def _made_at(recall_id: str) -> datetime:
    """Returns the moment a (well-formed) recall id was made."""
    millis = 0
    for char in recall_id[1:11]:
        millis = millis * 32 + _CROCKFORD.index(char)
    return datetime.fromtimestamp(millis / 1000, UTC)


@contextmanager
def _appending(store_path: Path) -> Iterator[int]:
    """Yields the log open for appending, under an exclusive lock.

    A file a trim replaced while this process waited for the lock is opened
    again: a line written to the file it replaced would be lost.
    """
    path = private_folder(store_path) / LOG_FILE
    while True:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fd = os.open(path, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _same_file(fd, path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path``."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (opened.st_dev, opened.st_ino) == (now.st_dev, now.st_ino)


def log_recall(store_path: Path, recall: LoggedRecall) -> None:
    """Appends ``recall`` to the log (not synced: a lost line loses a rating)."""
    with _appending(store_path) as fd:
        os.write(fd, _ENCODER.encode(recall) + b"\n")
        if os.fstat(fd).st_size > MAX_LOG_BYTES:
            _trim(store_path, _logged_at(recall))


def _trim(store_path: Path, now: datetime) -> None:
    """Rewrites the log without its lines older than :data:`FEEDBACK_DAYS`.

    What is left is cut to its newest lines within half of
    :data:`MAX_LOG_BYTES`, so that the next trim is that far away. The
    recall of each feedback kept stays too, whatever its age (feedback on a
    recall six days old is taken): the learning step reads the two together.
    """
    oldest = now - timedelta(days=FEEDBACK_DAYS)
    path = private_folder(store_path) / LOG_FILE
    lines = [
        (line, item)
        for line in path.read_bytes().splitlines(keepends=True)
        if (item := _item(line)) is not None  # a torn line is dropped
    ]
    week = [
        n
        for n, (_, item) in enumerate(lines)
        if (_logged_at(item) if isinstance(item, LoggedRecall) else item.at) >= oldest
    ]
    room = MAX_LOG_BYTES // 2
    start = len(week)
    while start > 0 and room >= len(lines[week[start - 1]][0]):
        start -= 1
        room -= len(lines[week[start]][0])
    newest = set(week[start:])
    used = {item.recall for n in newest if isinstance(item := lines[n][1], Feedback)}
    kept = [
        line
        for n, (line, item) in enumerate(lines)
        if n in newest or (isinstance(item, LoggedRecall) and item.id in used)
    ]
    write_atomically(path, b"".join(kept))


def _logged_at(recall: LoggedRecall) -> datetime:
    """Returns when a recall was made, as its id says (feedback judges it so).

    Not the moment it asked about: ``ctx recall --now 2030-01-01`` would
    otherwise date it in 2030, and a trim it set off dropped every line.
    """
    if _ID_RE.match(recall.id):
        return _made_at(recall.id)
    return recall.now


def _item(line: bytes) -> _Line | None:
    """Returns a line of the log as read; None for a torn one (it is dropped)."""
    try:
        return _DECODER.decode(line)
    except msgspec.DecodeError:
        return None


def read_log(store_path: Path) -> RecallLog:
    """Returns every recall and feedback of the log (torn lines skipped)."""
    path = store_path / "private" / LOG_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return RecallLog({}, [])
    recalls: dict[str, LoggedRecall] = {}
    feedback: list[Feedback] = []
    for line in data.splitlines():
        try:
            item = _DECODER.decode(line)
        except msgspec.DecodeError:
            continue  # a line cut by a crash while it was appended
        if isinstance(item, LoggedRecall):
            recalls[item.id] = item
        else:
            feedback.append(item)
    return RecallLog(recalls, feedback)


def record_feedback(
    store_path: Path,
    recall_id: str,
    used: Sequence[str],
    now: datetime,
    *,
    readable: Callable[[str], bool] | None = None,
) -> FeedbackResult:
    """Records that the hits ``used`` of recall ``recall_id`` were used.

    ``readable`` tells whether the caller may read a branch (an API key's
    scope): a recall of a branch it may not read is refused exactly as one
    the store never gave, so a key learns nothing of other branches' recalls.

    Raises:
        InvalidInputError: ``recall_id`` is not a recall id, the recall is
            older than :data:`FEEDBACK_DAYS`, no id is given, or an id is
            not one of the recall's hits.
        NotFoundError: This store gave no recall with that id.
    """
    wanted = recall_id.strip()
    if not _ID_RE.match(wanted[:1].lower() + wanted[1:].upper()):
        raise InvalidInputError(
            f"{recall_id!r} is not a recall id.",
            hint="A recall id is r and 26 characters, e.g. r01JD2X9K7M3Q4R5S6T7V8W9XYZ;"
            " `ctx recall --json` gives it as recall_id.",
        )
    wanted = "r" + wanted[1:].upper()
    if _made_at(wanted) < now - timedelta(days=FEEDBACK_DAYS):
        raise InvalidInputError(
            f"Recall {wanted} is older than {plural(FEEDBACK_DAYS, 'day')}; "
            "its feedback is no longer taken.",
            hint="Give feedback on a recent recall.",
        )
    if not used:
        raise InvalidInputError(
            "No memory was named as used.",
            hint="Name each one with --used ID (can be repeated).",
        )
    recall = read_log(store_path).recalls.get(wanted)
    if recall is not None and readable is not None and not readable(recall.branch):
        recall = None
    if recall is None:
        raise NotFoundError(
            f"This store gave no recall {wanted}.",
            hint="Recall ids come from `ctx recall --json` (recall_id); the "
            "recall log of a store recalled thousands of times a week keeps "
            "its newest 4 MB.",
        )
    returned = {hit.id for hit in recall.hits}
    ids = tuple(dict.fromkeys(u.strip().upper() for u in used))
    strange = [u for u in ids if u not in returned]
    if strange:
        raise InvalidInputError(
            f"Recall {wanted} did not return {', '.join(strange)}.",
            hint=f"It returned {plural(len(returned), 'memory')}; "
            f"`--used` names some of them.",
        )
    line = Feedback(recall=wanted, used=ids, at=now)
    with _appending(store_path) as fd:
        os.write(fd, _ENCODER.encode(line) + b"\n")
        os.fsync(fd)
    return FeedbackResult(
        recall=wanted, agent=recall.agent, used=ids, returned=len(returned)
    )
