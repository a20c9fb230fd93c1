"""Room for a new branch: git keeps a ref as a file named by its path.

A branch ``main`` is the file ``refs/heads/main``, so no branch
``main/sub`` can sit beside it (that needs a folder of that name), nor can
``foo`` beside ``foo/bar``. git refuses such a name with "cannot lock ref";
dulwich fails on the disk with a bare "Not a directory", which reached the
user as a traceback or as a store that cannot be written. :func:`make_room`
refuses it first, in words.

A deleted branch's reflog is kept (the op log lists its moves, and its last
line brings it back: :mod:`ctx.engine.operations`), and it is a file by the
same rule, under ``logs/refs/heads``: after ``ctx branch -D foo/bar``,
``ctx branch foo`` failed for good. A new branch takes precedence: the logs
of deleted branches in its way go, as git drops a branch's log with the
branch. Names are compared without case, as the file systems of macOS and
Windows compare them: a clone there must be able to hold every branch.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from dulwich.repo import Repo

from ctx.engine.errors import InvalidInputError

if TYPE_CHECKING:
    from ctx.engine.store import Store

__all__ = ["make_room"]


def make_room(store: Store, branch: str) -> None:
    """Readies the disk for new branch ``branch``, or refuses it.

    Raises:
        InvalidInputError: a live branch's name is a folder of ``branch``, or
            ``branch`` is a folder of a live branch's name.
    """
    # Compared without case: a store travels to clones on file systems that
    # fold it (macOS, Windows), where "Foo" is "foo", and the folder of
    # "foo/bar". (``lower``, not ``casefold``: they do not fold "ß" to "ss".)
    folded = branch.lower()
    for other in store.branches():
        theirs = other.lower()
        if theirs == folded and other != branch:
            raise InvalidInputError(
                f"Branch {branch!r} cannot be made beside branch {other!r}: "
                "their names differ only in case, and on macOS and Windows they "
                "are one file.",
                hint=f"Choose another name, or delete {other!r} first.",
            )
        if theirs.startswith(folded + "/") or folded.startswith(theirs + "/"):
            raise InvalidInputError(
                f"Branch {branch!r} cannot be made beside branch {other!r}: as in "
                "git, a branch name cannot also be a folder of branch names.",
                hint=f"Choose another name{_example(branch)}, or delete "
                f"{other!r} first.",
            )
    repo = store.repo
    if not isinstance(repo, Repo):
        return  # in memory: refs and logs are keys, not files
    controldir = Path(repo.controldir())
    logs = controldir / "logs" / "refs" / "heads"
    _clear_logs(logs, logs / branch)
    _clear_empty(controldir / "refs" / "heads" / branch)


def _clear_logs(top: Path, path: Path) -> None:
    """Removes the logs of deleted branches in ``path``'s way under ``top``.

    A folder where the file goes (``foo/bar``'s log, for ``foo``), or a
    file where one of its folders goes (``zed``'s, for ``zed/one``). No
    live branch is there, whatever the case: those were refused above.
    """
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        for parent in path.parents:
            if parent == top or top not in parent.parents:
                break
            if parent.is_file() or parent.is_symlink():
                parent.unlink()


def _clear_empty(path: Path) -> None:
    """Removes the empty folders where a ref's file goes (a failed write's).

    Only empty ones: a ref's file is never removed here, nor the lock of a
    writer (stock git's) making one.
    """
    if not path.is_dir() or path.is_symlink():
        return
    for folder, _, _ in sorted(os.walk(path), key=lambda entry: -len(entry[0])):
        with contextlib.suppress(OSError):
            os.rmdir(folder)  # fails on one that holds anything


def _example(branch: str) -> str:
    """Returns a name beside ``branch`` to suggest, as `` (e.g. 'a-b')``.

    A name with a slash suggests its dashed form; one without (the name of
    a folder of branches, ``agent`` beside ``agent/claude``) suggests none
    that would only be refused again.
    """
    return f" (e.g. {branch.replace('/', '-')!r})" if "/" in branch else ""
