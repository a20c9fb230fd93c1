"""Settling the clashes a merge stored as conflicts."""

from __future__ import annotations

from typing import Literal

import msgspec

from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.errors import InvalidInputError, NotFoundError
from ctx.engine.ids import CommitId, MemoryId, parse_memory_id
from ctx.engine.layout import conflict_path
from ctx.engine.model import Conflict, Intent, check_body, decode_memory, encode
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store

__all__ = ["ResolveResult", "list_conflicts", "resolve"]

Take = Literal["ours", "theirs", "both"]
_SEPARATOR = "\n\n-----\n\n"


class ResolveResult(msgspec.Struct, frozen=True, kw_only=True):
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
            ``both`` joins the two bodies.
        body: Alternatively, the settled body text.
        branch: The branch holding the conflict.
    """
    mid = parse_memory_id(memory_id)
    if (take is None) == (body is None):
        raise InvalidInputError("Give either --take or --body.")
    if take is not None and take not in ("ours", "theirs", "both"):
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
        bodies = [m.body for m in (conflict.ours, conflict.theirs) if m is not None]
        text = bodies[0] if len(set(bodies)) == 1 else _SEPARATOR.join(bodies)
        tags = set(base.tags)
        for m in (conflict.ours, conflict.theirs):
            if m is not None:
                tags |= set(m.tags)
        return encode(
            msgspec.structs.replace(base, body=text, tags=tuple(sorted(tags)))
        )
    assert body is not None
    return encode(msgspec.structs.replace(base, body=body))
