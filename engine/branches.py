"""Revisions and branches: resolving ``main~2``, creating, deleting."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable

import msgspec
from dulwich.objects import Commit, ObjectID
from dulwich.refs import Ref

from ctx.engine.errors import (
    CommitNotFoundError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    RefNotFoundError,
)
from ctx.engine.ids import CommitId, is_object_id
from ctx.engine.model import Outcome
from ctx.engine.store import Store, check_branch_name

__all__ = [
    "CREATED_FROM",
    "BranchInfo",
    "BranchResult",
    "check_new_branch_name",
    "create_branch",
    "delete_branch",
    "list_branches",
    "reachable",
    "resolve_revision",
    "switch_branch",
    "target_branch",
]

_SUFFIX_RE = re.compile(r"(~\d*|\^\d*)")
_HEX_RE = re.compile(r"^[0-9a-f]{4,40}$")
_COMMIT_LIKE_RE = re.compile(r"[0-9a-f]{7,}", re.IGNORECASE)
"""New branch names refused: they read like a commit id (git abbreviates to 7)."""


class BranchInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A branch, its tip, and whether it is the default (HEAD)."""

    name: str
    tip: CommitId
    current: bool


class BranchResult(Outcome, frozen=True, kw_only=True):
    """What ``branch`` did: the branch created or deleted, and its tip.

    Attributes:
        name: The branch.
        tip: Where it starts (or, deleted, where it was).
        deleted: Whether it was deleted rather than created.
    """

    name: str
    tip: CommitId
    deleted: bool


CREATED_FROM = "ctx: created from "
"""The log line of a branch a call named and its first write made, before
the branch it was made from (``ctx.hub.lazy_branches``)."""


def target_branch(store: Store, branch: str | None) -> str:
    """Returns ``branch`` (validated) or the HEAD branch."""
    return check_branch_name(branch) if branch else store.head_branch()


def resolve_revision(store: Store, rev: str | None) -> CommitId:
    """Returns the commit a revision names.

    Accepted: ``HEAD`` / ``@``, a branch name, a fetched branch
    (``origin/main``), a full or abbreviated commit
    id, each optionally followed by ``~N``, ``^`` or ``^N`` steps.

    Raises:
        CommitNotFoundError: nothing matches.
    """
    if rev is None or rev in ("HEAD", "@"):
        return store.branch_tip(store.head_branch())
    match = re.search(r"(?:~\d*|\^\d*)+$", rev)
    base, steps = (rev[: match.start()], match.group()) if match else (rev, "")
    commit = _resolve_base(store, base, rev)
    for step in _SUFFIX_RE.findall(steps):
        count = int(step[1:]) if len(step) > 1 else 1
        info = store.commit(commit)
        if step[0] == "~":
            for _ in range(count):
                if not info.parents:
                    raise CommitNotFoundError(
                        f"Revision {rev!r} goes past the first commit."
                    )
                info = store.commit(info.parents[0])
            commit = info.id
        else:
            if count == 0:
                continue
            if len(info.parents) < count:
                raise CommitNotFoundError(f"Revision {rev!r} names a missing parent.")
            commit = info.parents[count - 1]
    return commit


def _resolve_base(store: Store, base: str, rev: str) -> CommitId:
    if base in ("HEAD", "@"):
        return store.branch_tip(store.head_branch())
    # Asked of the store, not its list of branches: a store that follows
    # the code names a writer's branch before its first write makes it.
    with contextlib.suppress(RefNotFoundError, InvalidInputError, UnicodeError):
        return store.branch_tip(base)
    if "/" in base:  # a fetched branch, as ``origin/main``
        with contextlib.suppress(KeyError):
            fetched = store.repo.refs[Ref(b"refs/remotes/" + base.encode())]
            return CommitId(fetched.decode("ascii"))
    if _HEX_RE.fullmatch(base):
        if len(base) == 40:
            store.commit(CommitId(base))
            return CommitId(base)
        # Here, not at the top: every write resolves its branch through this
        # module, and dulwich.objectspec loads more than a write uses.
        from dulwich.objectspec import scan_for_short_id

        try:
            obj = scan_for_short_id(store.repo.object_store, base.encode(), Commit)
        except KeyError:
            pass
        else:
            return CommitId(obj.id.decode("ascii"))
    raise CommitNotFoundError(
        f"Unknown revision {rev!r}.",
        hint="Use a branch name, a commit id, or forms like main~2.",
    )


def list_branches(store: Store) -> list[BranchInfo]:
    """Returns every branch with its tip.

    As its file says: a damaged branch is listed too, to be seen and deleted.
    """
    head = store.head_branch()
    return [
        BranchInfo(
            name=name, tip=store.branch_tip(name, checked=False), current=name == head
        )
        for name in store.branches()
    ]


def check_new_branch_name(name: str) -> str:
    """Returns ``name`` if a new branch may take it, else raises.

    Besides git's rules, a name of 7 or more hex digits is refused: a
    revision is read as a branch first, so such a branch would hide the
    commit it looks like from ``--at``, ``--branch``, ``ls`` and ``log``.

    Raises:
        InvalidInputError: git refuses the name, or it looks like a commit id.
    """
    check_branch_name(name)
    if _COMMIT_LIKE_RE.fullmatch(name):
        raise InvalidInputError(
            f"Branch name {name!r} looks like a commit id.",
            hint="Use a name that is not 7 or more hex digits, e.g. 'b-" + name + "'.",
        )
    return name


def create_branch(store: Store, name: str, start: str | None = None) -> BranchResult:
    """Creates branch ``name`` at revision ``start`` (default: HEAD).

    Raises:
        InvalidInputError: the name is not allowed (:func:`check_new_branch_name`).
        ConflictError: the branch exists.
    """
    check_new_branch_name(name)
    commit = resolve_revision(store, start)
    with store.locked():
        if name in store.branches():
            raise ConflictError(f"Branch {name!r} already exists.")
        store.move_branch(
            name, None, commit, f"ctx branch: created from {start or 'HEAD'}"
        )
    return BranchResult(name=name, tip=commit, deleted=False)


def delete_branch(store: Store, name: str, *, force: bool = False) -> BranchResult:
    """Deletes branch ``name``; its commits stay until ``gc``.

    As ``git branch -d``, a branch whose tip no other branch contains is
    kept unless ``force``: deleting it would leave its work reachable only
    by commit id (the result's ``tip``).

    With ``force``, a damaged branch (holding no commit id, or one the
    store lacks) is deleted too: that is how it is repaired.

    Raises:
        ConflictError: it is the default (HEAD) branch, or its work is not
            merged into any other branch and ``force`` is not set.
        CorruptStoreError: it is damaged and ``force`` is not set.
    """
    store.branch_tip(name, checked=not force)
    if name == store.head_branch():
        raise ConflictError(
            f"Branch {name!r} is the current branch.",
            hint="`ctx switch` to another branch first.",
        )
    with store.locked():
        tip = store.branch_tip(name, checked=not force)
        if not force and not _merged(store, name, tip):
            raise ConflictError(
                f"Branch {name!r} has work not merged into any branch.",
                hint=f"`ctx merge {name}` keeps it; `ctx branch -D {name}` "
                "deletes it anyway.",
            )
        # Compared with the id its file holds, unless it holds none.
        old = tip if is_object_id(tip) else None
        store.move_branch(name, old, None, "ctx branch: deleted")
    return BranchResult(name=name, tip=tip, deleted=True)


def reachable(store: Store, commit: CommitId, branches: Iterable[str]) -> bool:
    """Returns whether ``commit`` is one of the branches' tips or their ancestors.

    One walk from all the tips together, which stops at ``commit``: a commit
    no tip reaches costs a walk of their whole history.
    """
    tips = [ObjectID(store.branch_tip(b).encode()) for b in branches]
    if not tips:
        return False
    wanted = ObjectID(commit.encode())
    return any(entry.commit.id == wanted for entry in store.repo.get_walker(tips))


def _merged(store: Store, name: str, tip: CommitId) -> bool:
    """Returns whether another branch's tip has ``tip`` as an ancestor (or is it)."""
    from dulwich.graph import can_fast_forward  # only deleting a branch needs it

    commit = ObjectID(tip.encode())
    for other in store.branches():
        if other == name:
            continue
        try:
            other_tip = store.branch_tip(other)
        except CorruptStoreError:
            continue  # a damaged branch contains nothing to keep
        if can_fast_forward(store.repo, commit, ObjectID(other_tip.encode())):
            return True
    return False


def switch_branch(store: Store, name: str) -> BranchInfo:
    """Makes ``name`` the default branch of every command."""
    store.set_head(name)
    return BranchInfo(name=name, tip=store.branch_tip(name), current=True)
