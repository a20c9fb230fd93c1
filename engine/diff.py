"""Memory-level differences between two revisions."""

from __future__ import annotations

import difflib

import msgspec
from dulwich.diff_tree import tree_changes
from dulwich.objects import ObjectID

from ctx.engine.branches import resolve_revision
from ctx.engine.ids import CommitId
from ctx.engine.layout import is_memory_path, parse_link_path
from ctx.engine.model import Memory, decode_link, decode_memory
from ctx.engine.snapshot import LinkRecord
from ctx.engine.store import Store

__all__ = ["ChangedMemory", "Diff", "body_diff", "diff"]


class ChangedMemory(msgspec.Struct, frozen=True, kw_only=True):
    """A memory present on both sides with different content."""

    old: Memory
    new: Memory
    old_path: str
    new_path: str
    fields: tuple[str, ...]
    body_diff: str


class Diff(msgspec.Struct, frozen=True, kw_only=True):
    """What changed from ``base`` to ``target``."""

    base: CommitId
    target: CommitId
    added: tuple[Memory, ...]
    removed: tuple[Memory, ...]
    changed: tuple[ChangedMemory, ...]
    links_added: tuple[LinkRecord, ...]
    links_removed: tuple[LinkRecord, ...]


def body_diff(old: str, new: str) -> str:
    """Returns a unified diff of two bodies (empty when equal)."""
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), "before", "after", lineterm="", n=2
    )
    return "\n".join(lines)


_FIELDS = ("kind", "title", "body", "tags", "created_at", "source", "meta")


def diff(store: Store, base: str, target: str) -> Diff:
    """Compares two revisions memory by memory.

    Only subtrees whose ids differ are read, so the cost follows the size of
    the change, not of the store. A memory that moved path (a new context,
    or primed to pinned) counts as changed, not removed and added.
    """
    a = resolve_revision(store, base)
    b = resolve_revision(store, target)
    objects = store.repo.object_store
    tree_a = store.snapshot(a).tree
    tree_b = store.snapshot(b).tree
    old_mem: dict[str, tuple[str, Memory]] = {}
    new_mem: dict[str, tuple[str, Memory]] = {}
    links_added: list[LinkRecord] = []
    links_removed: list[LinkRecord] = []
    for change in tree_changes(objects, tree_a, tree_b):
        for entry, bucket, links in (
            (change.old, old_mem, links_removed),
            (change.new, new_mem, links_added),
        ):
            if entry is None or entry.path is None:
                continue
            path = entry.path.decode("utf-8")
            data = objects[ObjectID(entry.sha)].as_raw_string()
            parsed = parse_link_path(path)
            if parsed is not None:
                links.append(
                    LinkRecord(
                        source=parsed[0],
                        type=parsed[1],
                        target=parsed[2],
                        link=decode_link(data, path),
                        path=path,
                    )
                )
            elif is_memory_path(path):
                memory = decode_memory(data, path)
                bucket[memory.id] = (path, memory)
    changed = []
    for mid in sorted(old_mem.keys() & new_mem.keys()):
        (op, om), (np, nm) = old_mem[mid], new_mem[mid]
        fields = tuple(f for f in _FIELDS if getattr(om, f) != getattr(nm, f))
        if op != np:
            fields = (*fields, "path")
        changed.append(
            ChangedMemory(
                old=om,
                new=nm,
                old_path=op,
                new_path=np,
                fields=fields,
                body_diff=body_diff(om.body, nm.body),
            )
        )
    return Diff(
        base=a,
        target=b,
        added=tuple(m for k, (_, m) in sorted(new_mem.items()) if k not in old_mem),
        removed=tuple(m for k, (_, m) in sorted(old_mem.items()) if k not in new_mem),
        changed=tuple(changed),
        links_added=tuple(links_added),
        links_removed=tuple(links_removed),
    )
