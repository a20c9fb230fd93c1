"""Looking after a store: status, gc and fsck."""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from pathlib import Path

import msgspec
from dulwich.gc import garbage_collect
from dulwich.object_store import BaseObjectStore
from dulwich.objects import S_ISGITLINK, Commit, ObjectID, Tree
from dulwich.repo import Repo

from ctx.engine._builds import remove_abandoned_builds, write_gitignore
from ctx.engine._fetching import remove_abandoned_quarantines
from ctx.engine._incoming import entry_problem
from ctx.engine.adjacency import adjacency
from ctx.engine.branches import (
    check_new_branch_name,
    resolve_revision,
    target_branch,
)
from ctx.engine.commits import CommitInfo
from ctx.engine.errors import CorruptStoreError
from ctx.engine.layout import (
    LINKS,
    MEMORY,
    area_of,
    id_from_memory_path,
    is_memory_path,
    parse_link_path,
)
from ctx.engine.model import Conflict, Outcome, decode_memory
from ctx.engine.snapshot import UnreadableMemory
from ctx.engine.store import Clock, Store
from ctx.engine.tags import TIERS, TagCount, tier_of
from ctx.engine.tokens import recall_tokens

__all__ = [
    "FsckReport",
    "GcReport",
    "InitResult",
    "StoreStatus",
    "TierCount",
    "fsck",
    "gc",
    "init_store",
    "status",
]


class TierCount(msgspec.Struct, frozen=True, kw_only=True):
    """How many memories, and tokens, one tier holds."""

    memories: int
    tokens: int


class StoreStatus(msgspec.Struct, frozen=True, kw_only=True):
    """A summary of one branch of a store.

    Memories are counted as ``ls`` lists them: those another one supersedes
    are left out of every count but ``superseded``. Tokens are counted as a
    recall counts them (:func:`~ctx.engine.tokens.recall_tokens`), so
    ``tokens`` is the recall footer's "whole live branch". ``head`` is None
    where the store is not made yet (the user store before its first write:
    an in-memory stand-in whose commit the store will never have).
    """

    branch: str
    head: CommitInfo | None
    memories: int
    tokens: int
    superseded: int
    by_kind: dict[str, int]
    by_area: dict[str, int]
    by_tier: dict[str, TierCount]
    links: int
    links_by_type: dict[str, int]
    top_tags: tuple[TagCount, ...]
    conflicts: tuple[Conflict, ...]
    size_bytes: int
    path: str | None
    unreadable: tuple[UnreadableMemory, ...] = ()
    """Memory files left out of every count because they cannot be read."""


class GcReport(Outcome, frozen=True, kw_only=True):
    """What ``gc`` did to the object files."""

    loose_before: int
    loose_after: int
    packs_before: int
    packs_after: int
    pruned: int
    bytes_freed: int
    temp_files_removed: int


class FsckReport(Outcome, frozen=True, kw_only=True):
    """What ``fsck`` checked and every problem it found."""

    objects: int
    commits: int
    memories: int
    """Distinct memory versions at the branch tips."""
    problems: tuple[str, ...]
    ok: bool
    """Whether no problem was found."""


class InitResult(msgspec.Struct, frozen=True, kw_only=True):
    """What ``init`` did: where the store is and whether it was made now.

    Attributes:
        path: The store folder.
        created: False when a store was already there.
    """

    path: str
    created: bool


def init_store(path: Path, *, clock: Clock, branch: str = "main") -> InitResult:
    """Creates a store in folder ``path`` unless one is already there.

    Either way the folder gets its ``.gitignore`` (``write_gitignore``) if
    it has none.

    Raises:
        InvalidInputError: ``branch`` is not a valid name for a new branch.
        StoreError: the folder cannot be created.
    """
    existed = (path / "git").is_dir()
    if not existed:
        check_new_branch_name(branch)
    Store.init(path, clock=clock, branch=branch, exist_ok=True).close()
    remove_abandoned_builds(path)  # a clone killed here before
    write_gitignore(path)
    return InitResult(path=str(path), created=not existed)


def _remove_abandoned_builds(store: Store) -> int:
    """Removes what a clone or ``init`` killed midway left in the store folder."""
    return remove_abandoned_builds(store.path) if store.path else 0


def _folder_size(path: str) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def status(store: Store, branch: str | None = None) -> StoreStatus:
    """Returns counts, conflicts and size for a branch (default: HEAD).

    A memory file that cannot be read is left out of the counts and listed
    in ``unreadable``.
    """
    _remove_abandoned_builds(store)
    name = target_branch(store, branch)
    tip = resolve_revision(store, name)
    snap = store.snapshot(tip)
    kinds: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    tier_memories: Counter[str] = Counter()
    tier_tokens: Counter[str] = Counter()
    links = adjacency(store, snap)
    hidden = links.superseded()
    superseded = 0
    for rec in snap.memories():
        if rec.memory.id in hidden:
            superseded += 1
            continue
        kinds[rec.memory.kind] += 1
        key = rec.area if rec.area != MEMORY else f"{MEMORY}/{rec.context}"
        areas[key] += 1
        tags.update(rec.memory.tags)
        tier = tier_of(rec)
        tier_memories[tier] += 1
        tier_tokens[tier] += recall_tokens(rec.memory)
    by_type = links.count_by_type()
    top = sorted(tags.items(), key=lambda item: (-item[1], item[0]))[:10]
    return StoreStatus(
        branch=name,
        head=store.commit(tip),
        memories=sum(kinds.values()),
        tokens=sum(tier_tokens.values()),
        superseded=superseded,
        by_kind=dict(sorted(kinds.items())),
        by_area=dict(sorted(areas.items())),
        by_tier={
            t: TierCount(memories=tier_memories[t], tokens=tier_tokens[t])
            for t in TIERS
            if tier_memories[t]
        },
        links=sum(by_type.values()),
        links_by_type=by_type,
        top_tags=tuple(TagCount(tag=t, count=n) for t, n in top),
        conflicts=tuple(snap.conflicts()),
        size_bytes=_folder_size(str(store.path)) if store.path else 0,
        path=str(store.path) if store.path else None,
        unreadable=tuple(snap.unreadable.values()),
    )


_TEMP_GRACE = 3600.0
"""Seconds before a temporary object file counts as abandoned."""


def _remove_abandoned_temp_files(objects_dir: Path, now: float) -> int:
    # A writer killed mid-write leaves a temporary pack (tmp_ctx_*, dulwich's
    # tmp*.pack and tmp_pack_*) or a .pack without its .idx behind; nothing
    # ever reads them. ctx writers hold the store
    # lock while writing, so only a stock git command could still own one:
    # an hour's grace covers it.
    removed = 0
    for pattern in ("pack/tmp*", "tmp_pack_*", "pack/*.pack"):
        for path in objects_dir.glob(pattern):
            if path.suffix == ".pack" and path.with_suffix(".idx").exists():
                continue  # a published pack
            with contextlib.suppress(FileNotFoundError):
                if now - path.stat().st_mtime > _TEMP_GRACE:
                    path.unlink()
                    removed += 1
    return removed


def gc(store: Store) -> GcReport:
    """Packs loose objects and removes abandoned temporary files.

    Unreachable objects older than two weeks are pruned (dulwich's
    ``garbage_collect``, as ``git gc`` does).
    """
    repo = store.repo
    if not isinstance(repo, Repo):
        return GcReport(
            loose_before=0,
            loose_after=0,
            packs_before=0,
            packs_after=0,
            pruned=0,
            bytes_freed=0,
            temp_files_removed=0,
        )
    with store.locked():
        now = store.clock().timestamp()
        objects_dir = Path(repo.object_store.path)
        removed = _remove_abandoned_temp_files(objects_dir, now)
        removed += remove_abandoned_quarantines(objects_dir, now)
        removed += _remove_abandoned_builds(store)
        stats = garbage_collect(repo)
    return GcReport(
        temp_files_removed=removed,
        loose_before=stats.loose_objects_before,
        loose_after=stats.loose_objects_after,
        packs_before=stats.packs_before,
        packs_after=stats.packs_after,
        pruned=len(stats.pruned_objects),
        bytes_freed=stats.bytes_freed,
    )


def _walk(
    objects: BaseObjectStore, tip: ObjectID, seen: set[bytes], broken: set[bytes]
) -> tuple[list[str], list[str], int]:
    """Marks everything reachable from ``tip``.

    Returns:
        What is missing or unreadable; what a store's tree may not hold (a
        submodule link, a symbolic link, a name git refuses: see
        :mod:`ctx.engine._incoming`); and how many new commits were seen.
    """
    missing: list[str] = []
    disallowed: list[str] = []
    commits = 0
    stack: list[tuple[ObjectID, bytes]] = [(tip, b"")]
    while stack:
        sha, path = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        if sha in broken:
            missing.append(f"unreadable object {sha.decode()}")
            continue
        try:
            obj = objects[sha]
        except KeyError:
            missing.append(f"missing object {sha.decode()}")
            continue
        if isinstance(obj, Commit):
            commits += 1
            stack.extend((parent, b"") for parent in obj.parents)
            stack.append((obj.tree, b""))
        elif isinstance(obj, Tree):
            for entry in obj.iteritems():
                problem = entry_problem(path, entry.path, entry.mode)
                if problem is not None:
                    disallowed.append(f"tree {sha.decode()} holds {problem}")
                if not S_ISGITLINK(entry.mode):  # another repository's commit
                    child = path + b"/" + entry.path if path else entry.path
                    stack.append((entry.sha, child))
    return missing, disallowed, commits


def _check_memories(
    store: Store, branch: str, checked: set[str]
) -> tuple[int, list[str]]:
    snap = store.snapshot(store.branch_tip(branch))
    problems: list[str] = []
    count = 0
    for path, blob in snap.files():
        if area_of(path) == LINKS and parse_link_path(path) is None:
            problems.append(f"branch {branch}: malformed link path {path}")
        if not is_memory_path(path):
            continue
        if blob in checked:
            continue  # the same content on another branch: checked once
        checked.add(blob)
        count += 1
        try:
            memory = decode_memory(snap.read_blob(blob), path)
        except CorruptStoreError as exc:
            problems.append(f"branch {branch}: {exc.message}")
            continue
        except (KeyError, TypeError):  # a folder's id, or nothing, there
            problems.append(f"branch {branch}: {path} is not a file in the store.")
            continue
        expected = id_from_memory_path(path)
        if expected is not None and expected != memory.id:
            problems.append(f"branch {branch}: {path} holds memory {memory.id}")
    return count, problems


def fsck(store: Store) -> FsckReport:
    """Verifies every object, the reachability of every branch, and memories.

    Checks: each object parses and hashes to its id; every object reachable
    from a branch exists; no tree holds what a fetch refuses (a submodule
    link, a symbolic link, a name git refuses); each memory blob at a branch
    tip decodes, and a ``memory/`` path's file name matches the memory's id;
    link paths are well-formed.
    """
    _remove_abandoned_builds(store)
    objects = store.repo.object_store
    problems: list[str] = []
    broken: set[bytes] = set()
    count = 0
    for sha in objects:
        count += 1
        try:
            objects[sha].check()
        except Exception as exc:
            broken.add(sha)
            problems.append(f"object {sha.decode()}: {exc}")
    seen: set[bytes] = set()
    checked: set[str] = set()
    commits = memories = 0
    for branch in store.branches():
        try:
            tip = ObjectID(store.branch_tip(branch).encode())
        except CorruptStoreError as exc:  # a commit it lacks, or no id at all
            problems.append(f"branch {branch}: {exc.message}")
            continue
        missing, disallowed, new_commits = _walk(objects, tip, seen, broken)
        commits += new_commits
        problems.extend(f"branch {branch}: {m}" for m in missing + disallowed)
        if missing:
            continue  # the memories cannot all be read; the walk said why
        found, bad = _check_memories(store, branch, checked)
        memories += found
        problems.extend(bad)
    return FsckReport(
        objects=count,
        commits=commits,
        memories=memories,
        problems=tuple(problems),
        ok=not problems,
    )
