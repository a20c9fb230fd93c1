"""Memory-level differences between two revisions."""

from __future__ import annotations

import difflib

import msgspec
from dulwich.diff_tree import tree_changes
from dulwich.graph import find_merge_base
from dulwich.objects import ObjectID

from ctx.engine.branches import resolve_revision
from ctx.engine.errors import CommitNotFoundError, InvalidInputError
from ctx.engine.ids import CommitId
from ctx.engine.layout import is_memory_path, parse_link_path
from ctx.engine.model import Memory, Outcome, decode_link, decode_memory
from ctx.engine.snapshot import LinkRecord
from ctx.engine.store import Store

__all__ = ["ChangedMemory", "Diff", "body_diff", "diff", "diff_range"]


class ChangedMemory(msgspec.Struct, frozen=True, kw_only=True):
    """A memory present on both sides with different content."""

    old: Memory
    new: Memory
    old_path: str
    new_path: str
    fields: tuple[str, ...]
    body_diff: str


class Diff(Outcome, frozen=True, kw_only=True):
    """What changed from ``base`` to ``target``.

    ``from_merge_base`` says that ``base`` is the merge base of the two
    revisions asked for (``A...B``): the diff holds only what ``B`` changed
    since it split from ``A``.
    """

    base: CommitId
    target: CommitId
    added: tuple[Memory, ...]
    removed: tuple[Memory, ...]
    changed: tuple[ChangedMemory, ...]
    links_added: tuple[LinkRecord, ...]
    links_removed: tuple[LinkRecord, ...]
    from_merge_base: bool = False


def body_diff(old: str, new: str) -> str:
    """Returns a unified diff of two bodies (empty when equal)."""
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), "before", "after", lineterm="", n=2
    )
    return "\n".join(lines)


_FIELDS = ("kind", "title", "body", "tags", "created_at", "source", "meta")


def diff_range(store: Store, spec: str, target: str | None = None) -> Diff:
    """Compares the revisions a range names, as ``git diff`` reads it.

    ``A B`` and ``A..B`` compare A with B; ``A`` alone compares A with HEAD.
    ``A...B`` compares the merge base of A and B with B: what B changed
    since it split from A, leaving out what A changed meanwhile. An empty
    side of ``..`` or ``...`` is HEAD.

    Raises:
        InvalidInputError: a range and a second revision are both given.
        CommitNotFoundError: a revision names nothing, or A and B share no
            history (``A...B``).
    """
    dots = "..." if "..." in spec else ".." if ".." in spec else None
    if dots is None:
        return diff(store, spec, target or "HEAD")
    if target is not None:
        raise InvalidInputError(
            f"Give either a range ({spec}) or two revisions, not both.",
            hint=f"Use `ctx diff {spec}`.",
        )
    left, right = (side or "HEAD" for side in spec.split(dots, 1))
    if dots == "..":
        return diff(store, left, right)
    a, b = resolve_revision(store, left), resolve_revision(store, right)
    bases = find_merge_base(store.repo, [ObjectID(a.encode()), ObjectID(b.encode())])
    if not bases:
        raise CommitNotFoundError(f"Revisions {left!r} and {right!r} share no history.")
    since = diff(store, bases[0].decode("ascii"), b)
    return msgspec.structs.replace(since, from_merge_base=True)


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
