"""Where the code's git work tree is, around a folder: its top, and the main one.

Read as git finds its repository: the nearest folder with a ``.git`` (a
folder, or the file of a linked worktree or a submodule that names its git
folder). The code is only read.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

__all__ = ["code_work_tree", "main_work_tree", "project_top"]


def code_work_tree(start: Path) -> Path | None:
    """Returns the top of the git work tree ``start`` lies in, or ``None``."""
    start = start.absolute()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def main_work_tree(start: Path) -> Path | None:
    """Returns the main work tree of the linked worktree ``start`` lies in.

    A linked worktree (``git worktree add``) is a checkout of its own whose
    ``.git`` is a file; its repository's common folder is the main work
    tree's ``.git``. A submodule's ``.git`` is a file too, naming a folder of
    its own: the checkout around it is looked at then (a submodule of a
    linked worktree belongs to its main work tree too). ``None`` in a main
    checkout, outside any, or for a repository whose common folder is not a
    checkout's ``.git`` (a bare one).
    """
    top = code_work_tree(start)
    while top is not None and (top / ".git").is_file():
        common = _common_folder(top)
        if common is not None and common.name == ".git":
            return common.parent if common.parent != top.resolve() else None
        top = code_work_tree(top.parent)
    return None


def project_top(start: Path) -> Path | None:
    """Returns the top of the checkout whose project ``start`` belongs to.

    A linked worktree's is its main work tree's (one project, several
    checkouts); any other work tree's, a submodule's too, is its own (a
    submodule's code has a remote of its own). ``None`` outside any.
    """
    top = code_work_tree(start)
    if top is None or not (top / ".git").is_file():
        return top
    common = _common_folder(top)
    if common is not None and common.name == ".git" and common.parent != top.resolve():
        return common.parent
    return top


def _common_folder(top: Path) -> Path | None:
    """Returns the common git folder of the checkout at ``top`` (dulwich reads it)."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        with closing(Repo(str(top))) as repo:
            return Path(repo.commondir()).resolve()
    except (NotGitRepository, OSError, ValueError):
        return None
