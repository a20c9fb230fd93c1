"""Settling the clashes a merge stored as conflicts."""

from __future__ import annotations

from typing import Literal

import msgspec

from ctx.engine.abbreviation import resolve_memory_id
from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.errors import InvalidInputError, NotFoundError
from ctx.engine.ids import CommitId, MemoryId
from ctx.engine.layout import conflict_path
from ctx.engine.links import links_touching
from ctx.engine.model import (
    Conflict,
    Intent,
    Memory,
    Outcome,
    check_body,
    decode_memory,
    encode,
)
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store

__all__ = [
    "TAKES",
    "ConflictNote",
    "ResolveResult",
    "ShownMemory",
    "conflict_notes",
    "conflicted_ids",
    "list_conflicts",
    "resolve",
    "show_memory",
]

Take = Literal["ours", "theirs", "both"]
TAKES: tuple[Take, ...] = ("ours", "theirs", "both")
"""What :func:`resolve` may take: ours, theirs, or both joined."""
_SEPARATOR = "\n\n-----\n\n"


class ConflictNote(msgspec.Struct, frozen=True, kw_only=True):
    """What a reader of a memory in conflict needs: the other side, in short.

    Attributes:
        fields: The fields that clash.
        theirs_ref: The branch (or commit) merged in.
        theirs: That side's body, or None where that side deleted the memory.
    """

    fields: tuple[str, ...]
    theirs_ref: str
    theirs: str | None

    @classmethod
    def of(cls, conflict: Conflict) -> ConflictNote:
        """Returns the note on ``conflict``."""
        theirs = conflict.theirs.body if conflict.theirs is not None else None
        return cls(
            fields=conflict.fields, theirs_ref=conflict.theirs_ref, theirs=theirs
        )


class ShownMemory(Outcome, frozen=True, kw_only=True):
    """A memory as ``show`` prints it, with its unresolved conflict if any.

    Attributes:
        memory: The memory (our side, while in conflict).
        path: Its path.
        blob: Its blob id.
        conflict: The stored conflict, with both sides, or None.
    """

    memory: Memory
    path: str
    blob: str
    conflict: Conflict | None = None


def show_memory(store: Store, memory_id: str, rev: str | None = None) -> ShownMemory:
    """Returns a memory as :func:`~ctx.engine.show` does, with its conflict.

    ``memory_id`` is an id, never ``ID@REV`` (see :func:`~ctx.engine.show`).
    """
    snap = store.snapshot(resolve_revision(store, rev))
    record = snap.find(resolve_memory_id(store, memory_id, rev))
    return ShownMemory(
        memory=record.memory,
        path=record.path,
        blob=record.blob,
        conflict=snap.conflict(record.memory.id),
    )


def conflicted_ids(store: Store, rev: str | None = None) -> frozenset[MemoryId]:
    """Returns the ids of the memories in conflict at ``rev`` (default: HEAD)."""
    return frozenset(store.snapshot(resolve_revision(store, rev)).conflicted())


def conflict_notes(
    store: Store, rev: str | None = None
) -> dict[MemoryId, ConflictNote]:
    """Returns a note on each memory in conflict at ``rev``, by id."""
    return {c.id: ConflictNote.of(c) for c in list_conflicts(store, rev)}


class ResolveResult(Outcome, frozen=True, kw_only=True):
    """What ``resolve`` settled: the memory and the commit.

    Attributes:
        id: The memory whose conflict is settled.
        commit: The commit that settled it.
    """

    id: MemoryId
    commit: CommitId


def list_conflicts(store: Store, rev: str | None = None) -> list[Conflict]:
    """Returns the unresolved conflicts at ``rev`` (default: HEAD)."""
    return store.snapshot(resolve_revision(store, rev)).conflicts()


def resolve(
    store: Store,
    memory_id: str,
    intent: Intent,
    *,
    take: str | None = None,
    body: str | None = None,
    branch: str | None = None,
) -> ResolveResult:
    """Settles the conflict on one memory, in one commit.

    Args:
        store: The store.
        memory_id: The memory in conflict.
        intent: Who settles it and why.
        take: ``ours`` keeps the version at the path, ``theirs`` writes the
            other side's version (or deletes, if that side deleted it),
            ``both`` joins the two bodies, each under a line naming its
            side and branch (``ours (main):``, ``theirs (agent):``).
        body: Alternatively, the settled body text.
        branch: The branch holding the conflict.
    """
    mid = resolve_memory_id(store, memory_id, branch)
    if (take is None) == (body is None):
        raise InvalidInputError("Give either --take or --body.")
    if take is not None and take not in TAKES:
        raise InvalidInputError(
            f"Unknown choice {take!r}.", hint="Use ours, theirs or both."
        )
    if body is not None:
        check_body(body)

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        conflict = snap.conflict(mid)
        if conflict is None:
            raise NotFoundError(f"Memory {mid} has no conflict to resolve.")
        current = snap.read(conflict.path)
        out: dict[str, bytes | None] = {conflict_path(mid): None}
        out[conflict.path] = _settle(conflict, current, take, body)
        if out[conflict.path] is None and current is not None:
            # Settled by deleting it: its links go too, as with forget.
            out |= dict.fromkeys(links_touching(store, snap, mid))
        return out

    commit = store.write(
        target_branch(store, branch), intent, f"Resolve conflict on {mid}", build
    )
    assert commit is not None  # the conflict file is always deleted
    return ResolveResult(id=mid, commit=commit.id)


def _settle(
    conflict: Conflict, current: bytes | None, take: str | None, body: str | None
) -> bytes | None:
    kept = decode_memory(current, conflict.path) if current else conflict.ours
    if take == "ours":
        # Deleted here, changed there: the merge kept their version, so that
        # nothing was lost before a choice; taking ours deletes it.
        if conflict.ours is None and "deleted" in conflict.fields:
            return None
        return current
    if take == "theirs":
        if conflict.theirs is None:
            return None
        if kept is None:
            return encode(conflict.theirs)
        return encode(
            msgspec.structs.replace(
                kept,
                **{
                    f: getattr(conflict.theirs, f)
                    for f in conflict.fields
                    if f != "deleted"
                },
            )
            if "deleted" not in conflict.fields
            else conflict.theirs
        )
    assert kept is not None or conflict.theirs is not None
    base = kept or conflict.theirs
    assert base is not None
    if take == "both":
        # Ours is the memory as it is now: an edit made since the merge is
        # kept, as --take ours keeps it.
        ours = kept if conflict.ours is not None else None
        sides = [
            (f"{side} ({ref}):", m.body)
            for side, ref, m in (
                ("ours", conflict.ours_branch, ours),
                ("theirs", conflict.theirs_ref, conflict.theirs),
            )
            if m is not None
        ]
        bodies = {body for _, body in sides}
        text = (
            bodies.pop()
            if len(bodies) == 1
            else _SEPARATOR.join(f"{label}\n{body}" for label, body in sides)
        )
        tags = set(base.tags)
        for m in (ours, conflict.theirs):
            if m is not None:
                tags |= set(m.tags)
        return encode(
            msgspec.structs.replace(base, body=text, tags=tuple(sorted(tags)))
        )
    assert body is not None
    return encode(msgspec.structs.replace(base, body=body))
