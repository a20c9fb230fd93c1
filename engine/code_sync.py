"""``ctx sync``: the memory of merged code branches, merged into the target's.

A memory branch follows the code branch of the same name
(:mod:`ctx.engine.code_branches`). Once that code branch is merged (its tip
is in the target code branch's history: the code's default branch, or the
one named), its memory is merged into the target's memory branch with
ctx's own merge, conflicts kept as data. A memory branch already merged is
left alone, so a second run merges nothing; a dry run previews each merge.

Limits: a code branch deleted after its merge is not seen (its memory
branch waits for a merge by hand), and a code branch with no commit of its
own since it split off counts as merged, as ``git branch --merged`` lists
it.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from dulwich.graph import can_fast_forward
from dulwich.objects import ObjectID

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
    """

    into: str
    dry_run: bool = False
    merges: tuple[MergeResult, ...] = ()
    waiting: tuple[str, ...] = ()


def sync_code_branches(
    store: Store,
    start: Path,
    intent: Intent,
    *,
    into: str | None = None,
    dry_run: bool = False,
) -> SyncResult:
    """Merges the memory of every merged code branch into the target's memory.

    A memory branch is merged when a code branch of the same name has its
    tip in the target code branch's history (``into``, default: the code's
    default branch) and its memory is not in the target memory branch yet;
    so a second run merges nothing. Conflicts are kept as data, as
    ``ctx merge`` keeps them.

    Raises:
        InvalidInputError: ``start`` is in no work tree, or the code has no
            such branch (or no default branch to be found).
    """
    repo = code_repository(start)
    if repo is None:
        raise InvalidInputError(
            f"{start.absolute()} is not inside a git work tree.",
            hint="Run `ctx sync` in a checkout of the code.",
        )
    with closing(repo):
        target = into or default_code_branch(repo)
        target_tip = code_tip(repo, target)
        if target_tip is None:
            raise InvalidInputError(
                f"The code has no branch {target!r}.", hint="Name one with --into."
            )
        memory = set(store.branches())
        merged: list[str] = []
        waiting: list[str] = []
        for name in sorted(memory - {target}):
            tip = code_tip(repo, name)
            if tip is None or is_dream_branch(name):
                continue
            contained = can_fast_forward(repo, tip, target_tip)
            (merged if contained else waiting).append(name)
        # A target with no memory yet starts where its first write would,
        # but from none of the branches it merges: those it then merges. The
        # store's own HEAD is the fallback, not the one a follower reports.
        base = target
        if target not in memory:
            own = Store.head_branch(store)
            base = nearest_memory_branch(repo, store, target, own, merged)
    if not dry_run and target not in memory:
        create_memory_branch(store, target, base)
        base = target
    pending = [name for name in merged if not _contains(store, base, name)]
    merges = tuple(
        merge(store, name, intent, into=base, preview=dry_run) for name in pending
    )
    return SyncResult(
        into=target, dry_run=dry_run, merges=merges, waiting=tuple(waiting)
    )


def _contains(store: Store, branch: str, other: str) -> bool:
    """Returns whether ``branch``'s memory already holds ``other``'s tip."""
    theirs = ObjectID(store.branch_tip(other).encode())
    ours = ObjectID(store.branch_tip(branch).encode())
    return can_fast_forward(store.repo, theirs, ours)
