"""Which store is the code's: the one its remote carries, and where a clone goes.

Memory travels on the code's own remote only from the code's own store
(:func:`ctx.engine.add_code_remote`). The user store is never it, wherever
it lies: every folder without a ``.ctx/`` writes there, so it holds other
projects' memory, and a push would publish that to the team, even when
``$HOME`` itself is a git work tree (a dotfiles checkout).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ctx import engine
from ctx.engine import InvalidInputError

if TYPE_CHECKING:
    from ctx.engine import RemoteInfo
    from ctx.hub.workspace import Workspace

__all__ = ["add_code_remote", "code_store_path", "new_store_path"]


def add_code_remote(
    ws: Workspace, name: str, start: Path, url: str | None = None
) -> RemoteInfo:
    """Adds the code's remote ``name`` to the workspace's store, under ``ctx/``.

    Everything is checked before a store is opened for writing, so a refusal
    makes nothing (not even the user store, which its first write makes).

    Raises:
        InvalidInputError: the workspace's store is the user store, or lies
            outside the code's work tree; a name or address not valid.
        RemoteNotFoundError: no code remote of that name (``url`` not given).
        ConflictError: a remote of that name exists.
    """
    if ws.user_store:
        raise InvalidInputError(
            f"The user store {ws.path} holds the memory of every folder "
            "without a .ctx/: on the code's remote, a push would publish it.",
            hint="`ctx init` at the top of the code's work tree makes the "
            "code's own store; run this there.",
        )
    engine.check_code_store(ws.path, start)
    if url is None:
        engine.code_remote_url(start, name)
    with ws.lock:
        return engine.add_code_remote(ws.store(write=True), name, start, url)


def code_store_path(start: Path) -> Path:
    """Returns the store of the code around ``start``, or where one goes.

    The project store a command there finds (``.ctx/`` above, or a linked
    worktree's main work tree's), else ``.ctx/`` at the top of the project's
    checkout (:func:`~ctx.engine.project_top`): a clone made in a linked
    worktree is found by every worktree of the checkout, and one made in a
    submodule is the submodule's.
    """
    from ctx.hub.workspace import Workspace

    found, user = Workspace.locate(None, cwd=start.absolute(), environ={})
    if not user:
        return found
    top = engine.project_top(start) or start
    return top.absolute() / ".ctx"


def new_store_path(folder: Path) -> Path:
    """Returns where ``ctx init FOLDER`` makes its store.

    ``.ctx/`` in ``folder``; but in a linked worktree, at the top of its main
    work tree, the store every worktree of the checkout finds (a ``.ctx/``
    in the worktree would hide it there, and no other worktree would see it).

    Raises:
        InvalidInputError: ``folder`` is inside a work tree's ``.git``, where
            no command in the work tree would find the store.
    """
    top = engine.code_work_tree(folder)
    if top is not None and _inside_git_folder(folder, top):
        raise InvalidInputError(
            f"{folder.absolute()} is inside the repository's .git folder: no "
            "command in the work tree would find a store made there.",
            hint=f"Run it at the top of the work tree, {top}.",
        )
    main = engine.project_top(folder)
    if top is not None and main is not None and main != top:
        return main.absolute() / ".ctx"
    return folder / ".ctx"


def _inside_git_folder(folder: Path, top: Path) -> bool:
    """Returns whether ``folder`` is ``top``'s ``.git`` folder or in it."""
    git = top / ".git"
    return git.is_dir() and folder.resolve().is_relative_to(git.resolve())
