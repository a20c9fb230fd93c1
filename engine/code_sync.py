"""``ctx sync``: the memory of merged code branches, merged into the target's.

A memory branch follows the code branch of the same name
(:mod:`ctx.engine.code_branches`). Once that code branch is merged into the
target code branch (the code's default branch, or the one named), its memory
is merged into the target's memory branch with ctx's own merge, conflicts
kept as data. A memory branch already merged is left alone, so a second run
merges nothing; a dry run previews each merge.

When is a code branch merged? Its code tip must be in the target's history,
and must have moved beyond where the branch forked:

- The code tip is the code branch's tip, or, once the branch is deleted
  (``git branch -d`` after its merge), the last one its memory branch
  recorded (:mod:`ctx.engine._code_record`: at each write on it, and at each
  sync).
- The fork is where the code branch stood when its memory first saw it with
  no commit of its own (a fresh ``git switch -c feature``). While its tip is
  still in the fork's history it has no commit of its own, and is not
  merged, however far the target moved on: so the memory written on a
  branch whose code is not written yet waits for that code.
- A memory branch with no record (made by hand, or before records were
  kept) falls back on git's rule, as ``git branch --merged`` lists it; a
  deleted code branch without one is not seen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import closing
from pathlib import Path

import msgspec
from dulwich.graph import can_fast_forward
from dulwich.objects import ObjectID
from dulwich.repo import Repo

from ctx.engine._code_record import CodeRecord, note_code_tip, read_code_record
from ctx.engine.branches import check_new_branch_name
from ctx.engine.code_branches import (
    code_tip,
    create_memory_branch,
    default_code_branch,
    is_dream_branch,
    nearest_memory_branch,
)
from ctx.engine.code_remotes import code_repository
from ctx.engine.errors import InvalidInputError
from ctx.engine.merge import MergeResult, merge
from ctx.engine.model import Intent, Outcome
from ctx.engine.store import Store

__all__ = ["SyncResult", "sync_code_branches"]


class SyncResult(Outcome, frozen=True, kw_only=True):
    """What ``ctx sync`` did, or would do with ``dry_run``.

    Attributes:
        into: The memory branch merged into: the target code branch's name.
        dry_run: Nothing was written; each merge says what it would do.
        merges: One merge per memory branch whose code branch is merged
            into the target's and whose memory was not merged yet, by name.
        waiting: Memory branches whose code branch is not merged yet.
        gone: Memory branches whose code branch was deleted without being
            merged into the target's history, as a squash or a rebase merge
            leaves it: nothing tells that its memory belongs in the target,
            so it is not merged; ``ctx merge NAME --into TARGET`` does it.
        left: Memory branches left for a later sync because the caller's
            time ran out: merges not begun, then branches not examined.
    """

    into: str
    dry_run: bool = False
    merges: tuple[MergeResult, ...] = ()
    waiting: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    left: tuple[str, ...] = ()


def sync_code_branches(
    store: Store,
    start: Path,
    intent: Intent,
    *,
    into: str | None = None,
    dry_run: bool = False,
    stop: Callable[[], bool] | None = None,
) -> SyncResult:
    """Merges the memory of every merged code branch into the target's memory.

    A memory branch is merged when its code branch is merged into the target
    code branch (``into``, default: the code's default branch; see the
    module for the rule) and its memory is not in the target memory branch
    yet; so a second run merges nothing. Conflicts are kept as data, as
    ``ctx merge`` keeps them. A target with no memory branch yet gets one
    when there is something to merge into it. Unless ``dry_run``, each code
    branch's tip is recorded for its memory branch.

    Args:
        store: The store.
        start: A folder in the code's work tree.
        intent: Why the merges are made.
        into: The target code branch.
        dry_run: Write nothing; preview each merge.
        stop: Asked before each branch is examined and each merge: true
            leaves the rest in ``left``.

    Raises:
        InvalidInputError: ``start`` is in no work tree, or the code has no
            such branch (or no default branch to be found).
    """
    out = stop or _never
    repo = code_repository(start)
    if repo is None:
        raise InvalidInputError(
            f"{start.absolute()} is not inside a git work tree.",
            hint="Run `ctx sync` in a checkout of the code.",
        )
    if into is not None and not into.strip():
        raise InvalidInputError(
            "The code branch to merge into is empty.",
            hint="Name one with --into, or leave it out for the default branch.",
        )
    with closing(repo):
        target = into or default_code_branch(repo)
        target_tip = code_tip(repo, target)
        if target_tip is None:
            raise InvalidInputError(
                f"The code has no branch {target!r}.", hint="Name one with --into."
            )
        memory = set(store.branches())
        records = {
            name: read_code_record(store, name)
            for name in memory
            if not is_dream_branch(name)
        }
        merged: list[str] = []
        waiting: list[str] = []
        gone: list[str] = []
        unseen: list[str] = []
        names = sorted(records.keys() - {target})
        for at, name in enumerate(names):
            if out():
                unseen = names[at:]
                break
            found = _is_merged(repo, name, records[name], target_tip)
            if found:
                merged.append(name)
            elif found is not None:
                (waiting if code_tip(repo, name) is not None else gone).append(name)
        # A target with no memory yet starts where its first write would,
        # but from none of the branches it merges: those it then merges. The
        # store's own HEAD is the fallback, not the one a follower reports.
        base = target
        if target not in memory:
            own = Store.head_branch(store)
            base = nearest_memory_branch(repo, store, target, own, merged)
        pending = [name for name in merged if not _contains(store, base, name)]
        # One whose memory is in the target's already (merged by hand) is done.
        gone = [name for name in gone if not _contains(store, base, name)]
        if pending and target not in memory:
            _check_target(target)
            if not dry_run:
                create_memory_branch(store, target, base)
                base = target
        if not dry_run:  # once nothing was refused
            _note_tips(store, repo, records, out)
    merges: list[MergeResult] = []
    # A dry run previews each merge against the target as the ones before it
    # would leave it: after a fast-forward to a branch, against that branch,
    # whose tip the target would then have. A merge commit a preview does not
    # make cannot be previewed against: the previews after it are against the
    # last tip there is (docs/branches.md).
    against = base
    for name in pending:
        if out():
            break
        done = merge(store, name, intent, into=against, preview=dry_run)
        if dry_run:
            if done.fast_forward:
                against = name
            done = msgspec.structs.replace(done, target=base)
        merges.append(done)
    return SyncResult(
        into=target,
        dry_run=dry_run,
        merges=tuple(merges),
        waiting=tuple(waiting),
        gone=tuple(gone),
        left=(*pending[len(merges) :], *unseen),
    )


def _check_target(name: str) -> None:
    """Refuses a code branch whose memory branch could not take its name.

    Memory that follows the code would never read a branch of that name
    (:func:`~ctx.engine.code_branches.followed_branch`): what a sync merged
    there would be out of sight.

    Raises:
        InvalidInputError: Dream's own name, one git refuses, or one that
            looks like a commit id.
    """
    if is_dream_branch(name):
        raise InvalidInputError(
            f"Code branch {name!r} has the name of one of Dream's branches: its "
            "memory cannot follow it.",
            hint="Merge into a code branch of another name.",
        )
    try:
        check_new_branch_name(name)
    except InvalidInputError as exc:
        raise InvalidInputError(
            f"Code branch {name!r} cannot have memory of its own: {exc.message}",
            hint="Merge into a code branch of another name.",
        ) from None


def _is_merged(
    repo: Repo, name: str, record: CodeRecord | None, target_tip: ObjectID
) -> bool | None:
    """Returns whether code branch ``name`` is merged (see the module).

    ``None``: no code branch of that name, and no record of one.
    """
    tip = code_tip(repo, name)
    if tip is None and record is not None:
        tip = ObjectID(record.tip.encode())
    if tip is None or tip not in repo.object_store:
        return None
    if not can_fast_forward(repo, tip, target_tip):
        return False
    if record is None or record.fork is None:
        return True
    fork = ObjectID(record.fork.encode())
    if fork not in repo.object_store:
        return False  # no telling whether it moved beyond: it waits
    return not can_fast_forward(repo, tip, fork)


def _never() -> bool:
    return False


def _note_tips(
    store: Store,
    repo: Repo,
    records: Mapping[str, CodeRecord | None],
    stop: Callable[[], bool],
) -> None:
    """Records the code tip of each code branch named as a memory branch.

    Bookkeeping: what ``stop`` cuts short, the next sync records.
    """
    for name, record in records.items():
        if stop():
            return
        tip = code_tip(repo, name)
        if tip is not None and (record is None or record.tip != tip.decode()):
            note_code_tip(store, repo, name, tip)


def _contains(store: Store, branch: str, other: str) -> bool:
    """Returns whether ``branch``'s memory already holds ``other``'s tip."""
    theirs = ObjectID(store.branch_tip(other).encode())
    ours = ObjectID(store.branch_tip(branch).encode())
    return can_fast_forward(store.repo, theirs, ours)
