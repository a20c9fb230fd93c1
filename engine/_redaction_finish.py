"""A redaction's last steps, and finishing one that a crash cut short.

A redaction (:mod:`ctx.engine.redaction`) rewrites the history into new
objects, then writes what is left to do to ``redaction.pending``
(:data:`PENDING_REDACTION`: the record to put on the redactions ref, the
old commit ids and their new ones, the texts to take out of reflog
messages) before it moves any ref. The steps after it are here: every
rewritten ref moved at once (3), every reflog line mapped and its message
redacted (4), every object no ref or reflog line reaches deleted (5), and
the note removed. :meth:`Store.open <ctx.engine.store.Store.open>` calls
:func:`finish_redaction` when it finds the note, so nothing reads a
half-rewritten history; this module imports the store only for its type,
and what only the steps need when they run, so that opening a store costs
no more than reading this module.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from dulwich.objects import Commit, ObjectID, Tree
from dulwich.reflog import format_reflog_line, parse_reflog_line
from dulwich.refs import Ref
from dulwich.repo import Repo

from ctx.engine.errors import InvalidInputError

if TYPE_CHECKING:
    from ctx.engine.store import Store

__all__ = [
    "HEADS",
    "PENDING_REDACTION",
    "REDACTED",
    "REMOTES",
    "Pending",
    "finish_redaction",
    "finish_steps",
    "move_refs",
    "needles_of",
    "prune",
    "reachable",
    "reflog_commits",
    "reflog_shas",
    "refs_to_rewrite",
    "replaced",
    "replaced_in_text",
    "replaced_message",
    "rewrite_reflogs",
    "write_pending",
]

PENDING_REDACTION = "redaction.pending"
"""The note a redaction under way leaves in the store's folder."""

REDACTED = "[REDACTED]"
"""What replaces a redacted text."""

HEADS = b"refs/heads/"
REMOTES = b"refs/remotes/"


class Pending(msgspec.Struct, frozen=True, kw_only=True):
    """What ``redaction.pending`` holds while a redaction is under way.

    Attributes:
        record: The record commit to put on :data:`REDACTIONS_REF`, if any.
        commits: Old commit id to new one.
        texts: The texts redacted from reflog messages.
        subjects: Per old commit id, its first line and its new version's,
            where they differ: a reflog line naming the commit quotes it (a
            clone applying another's redaction knows no text).
    """

    record: str | None = None
    commits: dict[str, str] = {}
    texts: tuple[str, ...] = ()
    subjects: dict[str, tuple[str, str]] = {}


def finish_redaction(store: Store) -> None:
    """Finishes a redaction that was killed after its record was stored."""
    assert store.path is not None
    path = store.path / PENDING_REDACTION
    try:
        pending = msgspec.json.decode(path.read_bytes(), type=Pending)
    except FileNotFoundError:
        return
    except msgspec.DecodeError:
        # Torn while being written: the refs never moved (step 3 follows it).
        path.unlink(missing_ok=True)
        return
    with store.locked():
        record = pending.record
        if (
            record is not None
            and ObjectID(record.encode()) not in store.repo.object_store
        ):
            path.unlink(missing_ok=True)  # never stored: the refs never moved
            return
        finish_steps(store, pending)


def finish_steps(store: Store, pending: Pending) -> tuple[tuple[str, ...], int]:
    """Steps 3 to 5: refs, reflogs, prune; then the pending note goes.

    Returns:
        The branches moved, and how many objects were pruned.
    """
    from ctx.engine._redaction_record import REDACTIONS_REF, record_tip

    assert store.path is not None
    commits = {
        ObjectID(o.encode()): ObjectID(n.encode()) for o, n in pending.commits.items()
    }
    refs = refs_to_rewrite(store)
    moves: dict[Ref, ObjectID | None] = {
        ref: commits[sha] for ref, sha in refs.items() if sha in commits
    }
    if pending.record is not None:
        record = ObjectID(pending.record.encode())
        if record_tip(store) != record:
            moves[REDACTIONS_REF] = record
    move_refs(store, moves)
    subjects = {
        ObjectID(sha.encode()): (was.encode(), now.encode())
        for sha, (was, now) in pending.subjects.items()
    }
    rewrite_reflogs(store, commits, needles_of(pending.texts), subjects)
    pruned = prune(store)
    store.drop_caches()
    (store.path / PENDING_REDACTION).unlink(missing_ok=True)
    moved = sorted(
        bytes(ref[len(HEADS) :]).decode("utf-8", "replace")
        for ref in moves
        if ref.startswith(HEADS)
    )
    return tuple(moved), pruned


def move_refs(store: Store, moves: Mapping[Ref, ObjectID | None]) -> None:
    """Step 3: moves every rewritten ref at once."""
    from ctx.engine.remotes import write_refs

    write_refs(store, moves)


def rewrite_reflogs(
    store: Store,
    commits: Mapping[ObjectID, ObjectID],
    needles: tuple[bytes, ...],
    subjects: Mapping[ObjectID, tuple[bytes, bytes]] | None = None,
) -> None:
    """Step 4: maps every reflog line's ids and redacts its message.

    ``subjects``: per old commit, its first line and its new version's; a
    line that moved a ref to that commit, or undid that move, quotes the
    first, which becomes the second.
    """
    assert isinstance(store.repo, Repo)
    logs = Path(store.repo.controldir()) / "logs"
    if not logs.is_dir():
        return
    quoted = subjects or {}
    for path in sorted(p for p in logs.rglob("*") if p.is_file()):
        data = path.read_bytes()
        lines = []
        for line in data.split(b"\n"):
            if not line:
                continue
            try:
                e = parse_reflog_line(line)
            except (ValueError, IndexError):
                continue  # a torn line
            old = commits.get(e.old_sha, e.old_sha)
            new = commits.get(e.new_sha, e.new_sha)
            message = replaced(e.message, needles) or e.message
            for sha in (e.new_sha, e.old_sha):
                if sha in quoted:  # a move to it, or an undo of it, quotes it
                    was, now = quoted[sha]
                    message = message.replace(was, now)
            lines.append(
                format_reflog_line(
                    old, new, e.committer, e.timestamp, e.timezone, message
                )
            )
        out = b"".join(line + b"\n" for line in lines)
        if out != data:
            temp = path.with_name(path.name + ".redact")
            temp.write_bytes(out)
            os.replace(temp, path)


def prune(store: Store) -> int:
    """Step 5: deletes every object no ref and no reflog line reaches.

    Returns:
        How many objects were deleted.
    """
    repo = store.repo
    assert isinstance(repo, Repo)
    objects = repo.object_store
    reached = reachable(store, [*_all_ref_values(store), *reflog_commits(store)])
    unreachable = {sha for sha in objects if sha not in reached}
    if not unreachable:
        return 0
    for sha in unreachable:
        if objects.contains_loose(sha):
            with contextlib.suppress(OSError):
                objects.delete_loose_object(sha)
    # Rewriting every pack costs seconds per thousand objects; only a pack
    # that holds a pruned object needs it (single writes are loose objects).
    packs = objects.packs
    if any(sha in pack for sha in unreachable for pack in packs):
        objects.repack(exclude=unreachable)
    return len(unreachable)


def needles_of(texts: Iterable[str]) -> tuple[bytes, ...]:
    """Returns each text as bytes, raw and as it is written inside JSON."""
    out: list[bytes] = []
    for text in texts:
        raw = text.encode("utf-8")
        escaped = msgspec.json.encode(text)[1:-1]
        for needle in (raw, escaped):
            if needle and needle not in out:
                out.append(needle)
    return tuple(out)


def replaced(data: bytes, needles: tuple[bytes, ...]) -> bytes | None:
    """Returns ``data`` with each needle replaced, or None if none is there."""
    out = data
    for needle in needles:
        out = out.replace(needle, REDACTED.encode())
    return None if out == data else out


_TRAILER_KEY = re.compile(rb"^(Ctx-[A-Za-z-]+: )", re.MULTILINE)


def replaced_message(message: bytes, needles: tuple[bytes, ...]) -> bytes | None:
    """Returns a commit message with each needle replaced, or None if none is.

    Not in its trailers' names (``Ctx-Agent:``): they say what follows.
    """
    parts = _TRAILER_KEY.split(message)
    out = [
        part if i % 2 else replaced(part, needles) or part
        for i, part in enumerate(parts)
    ]
    new = b"".join(out)
    return None if new == message else new


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]', re.DOTALL)
"""A JSON string (quotes and escapes included), or a structural character."""
_TEXT_FIELDS = frozenset(
    [
        b"title",
        b"body",
        b"tags",
        b"reason",
        b"note",
        b"file",
        b"section",
        b"agent",
        b"reviewer",
        b"where",
        b"description",
    ]
)
"""The fields, at any depth, whose strings are what someone wrote: a
memory's (also as a conflict's side), a link's, a proposal's, a view's."""
_META = b"meta"
"""The field whose names and values are all a writer's own (a memory's)."""


class _Frame:
    """An object or array :func:`replaced_in_text` is inside."""

    __slots__ = ("field", "is_object", "meta", "names")

    def __init__(self, is_object: bool, field: bytes | None, meta: bool) -> None:
        self.is_object = is_object
        self.field = field
        """An object's field being read (None while a name is awaited); an
        array's: the field it is the value of."""
        self.meta = meta
        """It is a memory's meta, or inside one."""
        self.names: set[bytes] = set()
        """An object's field names, as written out."""


_NAMESPACE = re.compile(r"[^\W_][\w.\-]*:")


def _still_a_tag(tag: bytes) -> bytes:
    """Returns a redacted tag in the ``namespace:value`` form tags keep.

    ``proj:SECRET`` redacted whole is ``redacted:[REDACTED]``, not a tag
    no edit of its memory would take again.
    """
    if _NAMESPACE.match(tag.decode("utf-8", "replace")):
        return tag
    return b"redacted:" + tag


def replaced_in_text(data: bytes, texts: Iterable[str]) -> bytes | None:
    """Returns a stored file with ``texts`` replaced where it holds text.

    In a JSON file (every memory, link, proposal, view, conflict), only in
    the strings someone wrote: the fields of :data:`_TEXT_FIELDS` at any
    depth, and a memory's meta, names and values; never a field's name or
    a field that names, dates or classifies what the file is about
    (``id``, ``kind``, ``path``, ``fields``, ...): ``redact --text "body"``,
    ``"fact"`` or ``"section"`` must not unmake the store's files. Any
    other file, as bytes.

    Raises:
        InvalidInputError: the result would not read as JSON, or would make
            two meta names, or two tags, one.
    """
    try:
        msgspec.json.decode(data)
    except msgspec.DecodeError:
        return replaced(data, needles_of(texts))
    escaped = tuple(n for t in texts if (n := msgspec.json.encode(t)[1:-1]))
    out: list[bytes] = []
    at = 0
    frames: list[_Frame] = []
    for found in _TOKEN.finditer(data):
        token = found.group()
        out.append(data[at : found.start()])
        at = found.end()
        if token[:1] != b'"':
            if token in (b"{", b"["):
                parent = frames[-1] if frames else None
                holder = parent.field if parent else None
                meta = parent is not None and (parent.meta or holder == _META)
                is_object = token == b"{"
                frames.append(_Frame(is_object, None if is_object else holder, meta))
            elif token in (b"}", b"]"):
                frames.pop()
            elif token == b"," and frames and frames[-1].is_object:
                frames[-1].field = None  # a name comes next
            out.append(token)
            continue
        frame = frames[-1] if frames else None
        name = frame is not None and frame.is_object and frame.field is None
        text = frame is not None and (frame.meta or frame.field in _TEXT_FIELDS)
        inner = token[1:-1]
        if (name and frame is not None and frame.meta) or (not name and text):
            for needle in escaped:
                inner = inner.replace(needle, REDACTED.encode())
            if frame is not None and frame.field == b"tags" and inner != token[1:-1]:
                inner = _still_a_tag(inner)
        if frame is not None and not frame.is_object and frame.field == b"tags":
            if inner in frame.names:
                raise InvalidInputError(
                    "Redacting that text would make two of a memory's tags one.",
                    hint="Redact the whole secret, not a part two tags share.",
                )
            frame.names.add(inner)
        if name and frame is not None:
            frame.field = token[1:-1]
            if frame.meta and inner in frame.names:
                raise InvalidInputError(
                    "Redacting that text would make two of a memory's meta names one.",
                    hint="Redact the whole secret, not a part two names share.",
                )
            frame.names.add(inner)
        out.append(b'"' + inner + b'"')
    out.append(data[at:])
    new = b"".join(out)
    if new == data:
        return None
    try:
        msgspec.json.decode(new)
    except msgspec.DecodeError:
        raise InvalidInputError(
            "Redacting that text would break a stored file.",
            hint="Give the whole secret, not a piece of an escape sequence.",
        ) from None
    return new


def refs_to_rewrite(store: Store) -> dict[Ref, ObjectID]:
    """Returns every branch and fetched branch, with its tip."""
    out = {}
    for ref, sha in store.repo.get_refs().items():
        if ref.startswith((HEADS, REMOTES)):
            out[ref] = sha
    return out


def _all_ref_values(store: Store) -> list[ObjectID]:
    return [sha for ref, sha in store.repo.get_refs().items() if ref != Ref(b"HEAD")]


def reflog_shas(
    store: Store, which: Callable[[bytes], bool] | None = None
) -> set[ObjectID]:
    """Returns every commit id a reflog line names, held here or not.

    ``which``: only the reflogs of the refs it accepts (by name).
    """
    assert isinstance(store.repo, Repo)
    logs = Path(store.repo.controldir()) / "logs"
    found: set[ObjectID] = set()
    for path in logs.rglob("*") if logs.is_dir() else ():
        if not path.is_file():
            continue
        if which is not None and not which(path.relative_to(logs).as_posix().encode()):
            continue
        for line in path.read_bytes().split(b"\n"):
            try:
                e = parse_reflog_line(line)
            except (ValueError, IndexError):
                continue
            found.update(sha for sha in (e.old_sha, e.new_sha) if sha.strip(b"0"))
    return found


def reflog_commits(
    store: Store, which: Callable[[bytes], bool] | None = None
) -> list[ObjectID]:
    """Returns every commit a reflog line names that the store holds.

    ``which``: only the reflogs of the refs it accepts (by name).
    """
    objects = store.repo.object_store
    return sorted(sha for sha in reflog_shas(store, which) if sha in objects)


def reachable(store: Store, roots: Iterable[ObjectID]) -> set[ObjectID]:
    """Returns every object ``roots`` reach (what the store lacks left out)."""
    objects = store.repo.object_store
    seen: set[ObjectID] = set()
    stack = [sha for sha in roots if sha in objects]
    while stack:
        sha = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        obj = objects[sha]
        if isinstance(obj, Commit):
            stack.append(obj.tree)
            stack.extend(p for p in obj.parents if p in objects)
        elif isinstance(obj, Tree):
            stack.extend(e.sha for e in obj.iteritems() if e.mode != 0o160000)
    return seen


def write_pending(store: Store, pending: Pending) -> None:
    assert store.path is not None
    path = store.path / PENDING_REDACTION
    temp = path.with_name(path.name + ".new")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(msgspec.json.encode(pending))
        file.flush()
        os.fsync(file.fileno())
    os.replace(temp, path)
