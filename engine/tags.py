"""Tags and tiers: tag, untag, count tags; the tier a memory belongs to.

Tiers are tags (``tier:pinned``, ``tier:reference``, ``tier:working``,
``tier:off-context``); a memory has at most one, so setting a tier replaces
the previous one. A memory under ``pinned/`` is in the pinned tier whatever
its tags say, and a memory with no tier tag is in the working tier.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from ctx.engine.abbreviation import resolve_memory_id
from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.errors import InvalidInputError
from ctx.engine.memories import EditResult, edit_result, normalize_tags
from ctx.engine.model import TIERS, Intent, check_tag, check_tier_tags, encode
from ctx.engine.snapshot import MemoryRecord, Snapshot
from ctx.engine.store import Store

__all__ = [
    "DEFAULT_TIER",
    "OFF_CONTEXT",
    "TIERS",
    "TagCount",
    "count_tags",
    "is_archived",
    "tag",
    "tier_of",
    "untag",
    "with_tier",
]

OFF_CONTEXT = "off-context"
DEFAULT_TIER = "working"
_PREFIX = "tier:"


class TagCount(msgspec.Struct, frozen=True, kw_only=True):
    """A tag and how many memories carry it."""

    tag: str
    count: int


def is_archived(tags: Sequence[str]) -> bool:
    """Returns whether ``tags`` put a memory off-context (archived).

    ``summarize --archive-sources`` and a task's end archive memories: they
    leave the context, so ``compose`` and recall leave them out.
    """
    return _PREFIX + OFF_CONTEXT in tags


def with_tier(tags: Sequence[str], tier: str) -> tuple[str, ...]:
    """Returns ``tags`` with ``tier`` as the only tier tag."""
    kept = [t for t in tags if not t.startswith(_PREFIX)]
    return normalize_tags([*kept, _PREFIX + tier])


def tier_of(record: MemoryRecord) -> str:
    """Returns the tier of a memory."""
    if record.pinned:
        return "pinned"
    for value in record.memory.tags:
        if value.startswith(_PREFIX) and value[len(_PREFIX) :] in TIERS:
            return value[len(_PREFIX) :]
    return DEFAULT_TIER


def tag(
    store: Store,
    memory_id: str,
    tags: Sequence[str],
    intent: Intent,
    *,
    branch: str | None = None,
) -> EditResult:
    """Adds tags to a memory; a tier tag replaces the memory's tier.

    Tags it already has change nothing: tagging twice writes no commit.
    """
    mid = resolve_memory_id(store, memory_id, branch)
    if not tags:
        raise InvalidInputError("Name at least one tag.")
    wanted = normalize_tags(tags)
    check_tier_tags(wanted)

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        rec = snap.find(mid)
        current = list(rec.memory.tags)
        tier = next((t for t in wanted if t.startswith(_PREFIX)), None)
        if tier is not None:
            current = [t for t in current if not t.startswith(_PREFIX)]
        new = normalize_tags([*current, *wanted])
        if new == rec.memory.tags:
            return {}
        return {rec.path: encode(msgspec.structs.replace(rec.memory, tags=new))}

    commit = store.write(
        target_branch(store, branch), intent, f"Tag {mid} {' '.join(wanted)}", build
    )
    return edit_result(mid, commit)


def untag(
    store: Store,
    memory_id: str,
    tags: Sequence[str],
    intent: Intent,
    *,
    branch: str | None = None,
) -> EditResult:
    """Removes tags from a memory.

    Raises:
        InvalidInputError: the memory carries none of them.
    """
    mid = resolve_memory_id(store, memory_id, branch)
    unwanted = {check_tag(t) for t in tags}
    if not unwanted:
        raise InvalidInputError("Name at least one tag.")

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        rec = snap.find(mid)
        if not unwanted & set(rec.memory.tags):
            raise InvalidInputError(
                f"Memory {mid} has no tag {' or '.join(sorted(unwanted))}."
            )
        kept = tuple(t for t in rec.memory.tags if t not in unwanted)
        return {rec.path: encode(msgspec.structs.replace(rec.memory, tags=kept))}

    commit = store.write(
        target_branch(store, branch),
        intent,
        f"Untag {mid} {' '.join(sorted(unwanted))}",
        build,
    )
    return edit_result(mid, commit)


def count_tags(
    store: Store, *, prefix: str = "", rev: str | None = None
) -> list[TagCount]:
    """Returns each tag (starting with ``prefix``) and its count, most used first."""
    snap = store.snapshot(resolve_revision(store, rev))
    counts: Counter[str] = Counter()
    for rec in snap.memories():
        counts.update(t for t in rec.memory.tags if t.startswith(prefix))
    return [
        TagCount(tag=t, count=n)
        for t, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
