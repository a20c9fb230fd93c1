"""Memory that follows the code's branches: one memory branch per code branch.

A store that follows the code (``[branches] follow_code``) works, when a
call names no branch, on the memory branch named as the code's current
branch: the one checked out in the git work tree the command runs in (a
linked worktree has its own; during a rebase or a bisect, the branch it
works through). Detached HEAD otherwise, or no work tree at all: the
store's own HEAD branch, as without following.

A code branch without a memory branch yet reads the memory of its nearest
code ancestor that has one: among the code branches with a memory branch of
the same name, the one whose merge base with it is newest (a base that
descends from another is newer; else the later commit). The first write
creates the memory branch there; nothing is written before. Each write
records the code commit its branch is at (``refs/ctx/code/<branch>``).

:mod:`ctx.engine.code_sync` brings memory back when code is merged.

The code repository is only read, never written.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

from dulwich.graph import can_fast_forward, find_merge_base
from dulwich.objects import Commit, ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from ctx.engine._code_record import note_code_tip
from ctx.engine.branches import check_new_branch_name
from ctx.engine.code_remotes import code_repository
from ctx.engine.errors import ConflictError, InvalidInputError
from ctx.engine.store import Store, symbolic_target

__all__ = [
    "code_branch",
    "code_memory_branch",
    "code_tip",
    "create_memory_branch",
    "default_code_branch",
    "followed_branch",
    "is_dream_branch",
    "make_code_branch",
    "nearest_memory_branch",
]

_HEADS = b"refs/heads/"


def code_branch(start: Path) -> str | None:
    """Returns the branch checked out in the git work tree around ``start``.

    ``None`` outside a work tree and at a detached HEAD (but for a rebase's
    or a bisect's: :func:`_checked_out`).
    """
    repo = code_repository(start)
    if repo is None:
        return None
    with closing(repo):
        return _checked_out(repo)


def followed_branch(
    store: Store, start: Path, default: str, *, write: bool, create: bool = True
) -> str:
    """Returns the memory branch a call that names none works on.

    That is the code's current branch (around ``start``) when it has a
    memory branch. When it has none yet, a read gets the memory branch of
    its nearest code ancestor that has one (else ``default``), and a write
    gets the new branch, created there first (unless not ``create``: its
    name alone, for a caller that makes it when it first moves it). Outside
    a work tree, at a detached HEAD (but for a rebase's or a bisect's, whose
    branch it is), or for a code branch name a memory branch cannot take:
    ``default``. A writer records the code commit the
    branch is at, for ``ctx sync`` to judge whether it is merged once the
    code branch is gone (:mod:`ctx.engine._code_record`).

    Args:
        store: The store.
        start: A folder in the code's work tree.
        default: The store's own default branch (its HEAD).
        write: Whether the caller writes: the branch is created if missing.
        create: Whether a writer's missing branch is created here.
    """
    repo = code_repository(start)
    if repo is None:
        return default
    with closing(repo):
        name = _checked_out(repo)
        if name is None or not _takes(name):
            return default
        tip = code_tip(repo, name)
        if name in store.branches():
            if write and tip is not None:
                note_code_tip(store, repo, name, tip)
            return name
        source = nearest_memory_branch(repo, store, name, default)
        if not write:
            return source
        if not create:
            return name
        _make(store, repo, name, source)
    return name


def code_memory_branch(start: Path, default: str) -> str:
    """Returns the name of the code's current branch's memory branch, made or not.

    That is the branch checked out around ``start``, where a memory branch
    can be named so; else (a detached HEAD but for a rebase's or a
    bisect's, no work tree, a name such as
    ``dream/...``) ``default``. Unlike :func:`followed_branch`, whether it
    holds memory yet makes no difference: a name for what belongs to that
    code branch (an agent's branch for it), the same to a reader and a writer.
    """
    name = code_branch(start)
    return name if name is not None and _takes(name) else default


def make_code_branch(store: Store, start: Path, name: str, source: str) -> None:
    """Makes code branch ``name``'s memory branch at ``source``'s tip.

    For a writer that named it (:func:`followed_branch` with ``create``
    off) and writes now: the code's tip is recorded as when
    :func:`followed_branch` makes it, whichever branch is checked out now.
    """
    repo = code_repository(start)
    if repo is None:
        create_memory_branch(store, name, source)
        return
    with closing(repo):
        _make(store, repo, name, source)


def _make(store: Store, repo: Repo, name: str, source: str) -> None:
    create_memory_branch(store, name, source)
    tip = code_tip(repo, name)
    if tip is not None:
        note_code_tip(store, repo, name, tip, fresh=True)


def create_memory_branch(store: Store, name: str, source: str) -> None:
    """Creates memory branch ``name`` at ``source``'s tip, unless a racer did."""
    with store.locked():
        if name in store.branches():
            return
        message = f"ctx: created for code branch {name} from {source}"
        try:
            store.move_branch(name, None, store.branch_tip(source), message)
        except ConflictError:
            # Two readers of one server on threads, both making it: the
            # store's lock is taken once per Store, not per thread.
            if name not in store.branches():
                raise


def _checked_out(repo: Repo) -> str | None:
    """Returns the code branch being worked on, or ``None`` at a detached HEAD.

    A rebase detaches HEAD while it replays a branch's commits, and a bisect
    while it tries commits of one: the branch is still the one worked on (as
    ``git status`` says, from the same files), and what is learnt then
    belongs to it, not to the store's default branch.
    """
    target = symbolic_target(repo.refs, Ref(b"HEAD"))
    if target is not None and target.startswith(_HEADS):
        return bytes(target[len(_HEADS) :]).decode("utf-8", "surrogateescape")
    own = Path(repo.controldir())  # a linked worktree's own, not the common one
    for marker in ("rebase-merge/head-name", "rebase-apply/head-name", "BISECT_START"):
        try:
            named = (own / marker).read_bytes().strip()
        except OSError:
            continue
        if marker == "BISECT_START":  # a branch's short name, or a commit id
            named = _HEADS + named
        if named.startswith(_HEADS) and Ref(named) in repo.refs:
            return bytes(named[len(_HEADS) :]).decode("utf-8", "surrogateescape")
    return None


def is_dream_branch(name: str) -> bool:
    """Returns whether ``name`` is one of Dream's branches (merged only by it)."""
    from ctx.engine.merge import DREAM_PREFIX  # the merge machinery, on demand

    return name.startswith(DREAM_PREFIX)


def _takes(name: str) -> bool:
    """Returns whether a memory branch may be named ``name``."""
    if is_dream_branch(name):
        return False
    try:
        check_new_branch_name(name)
    except InvalidInputError:
        return False
    return True


def code_tip(repo: Repo, branch: str) -> ObjectID | None:
    """Returns the tip of code branch ``branch``, or ``None`` without one."""
    try:
        return repo.refs[Ref(_HEADS + branch.encode("utf-8", "surrogateescape"))]
    except KeyError:
        return None


def default_code_branch(repo: Repo) -> str:
    """Returns the code's default branch: origin's HEAD, else main, else master."""
    origin = symbolic_target(repo.refs, Ref(b"refs/remotes/origin/HEAD"))
    prefix = b"refs/remotes/origin/"
    if origin is not None and origin.startswith(prefix):
        return bytes(origin[len(prefix) :]).decode("utf-8", "surrogateescape")
    for name in ("main", "master"):
        if code_tip(repo, name) is not None:
            return name
    raise InvalidInputError(
        "Cannot tell the code's default branch (no origin/HEAD, main or master).",
        hint="Name the branch to merge into with --into.",
    )


def nearest_memory_branch(
    repo: Repo, store: Store, branch: str, default: str, skip: Iterable[str] = ()
) -> str:
    """Returns the memory branch of ``branch``'s nearest code ancestor.

    Among the code branches with a memory branch of the same name, the one
    whose merge base with ``branch`` is newest: a base that descends from
    another is newer; bases that do not are compared by commit time, then
    the store's default branch first, then by name; the branches in
    ``skip`` are not candidates. None: ``default``.
    """
    tip = code_tip(repo, branch)
    if tip is None:
        return default
    best: tuple[str, ObjectID] | None = None
    for name in _candidates(store.branches(), {branch, *skip}):
        other = code_tip(repo, name)
        bases = find_merge_base(repo, [tip, other]) if other is not None else []
        if not bases:
            continue
        if best is None or _newer(repo, bases[0], best[1], name, best[0], default):
            best = (name, bases[0])
    return default if best is None else best[0]


def _candidates(names: Iterable[str], skip: set[str]) -> list[str]:
    return [n for n in names if n not in skip and not is_dream_branch(n)]


def _newer(
    repo: Repo, base: ObjectID, best: ObjectID, name: str, held: str, default: str
) -> bool:
    """Returns whether ``base`` (of ``name``) beats ``best`` (of ``held``)."""
    if base != best:
        if can_fast_forward(repo, best, base):
            return True
        if can_fast_forward(repo, base, best):
            return False
        times = (_time(repo, base), _time(repo, best))
        if times[0] != times[1]:
            return times[0] > times[1]
    if (name == default) != (held == default):
        return name == default
    return False  # names come sorted: the first one stays


def _time(repo: Repo, commit: ObjectID) -> int:
    obj = repo[commit]
    assert isinstance(obj, Commit)
    return int(obj.commit_time)
