"""Memory that follows the code's branches, for every door at once.

With ``[branches] follow_code`` a workspace opens its store as a
:class:`FollowingStore`, whose default branch (:meth:`Store.head_branch`,
what every call that names no branch works on, from the command line, MCP,
the HTTP API, hooks and the lens alike) is the code's current branch,
resolved on each call by :func:`ctx.engine.followed_branch`: a code branch
with no memory yet reads its nearest ancestor's, and a workspace that
writes creates it there. A branch named by the call (``--branch``,
``CTX_BRANCH``) is used as given.

:func:`sync_branches` merges the memory of merged code branches (``ctx sync``), and
:func:`follow_code` turns following on in a store's ``config.toml``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.engine import (
    Intent,
    Store,
    SyncResult,
    followed_branch,
    sync_code_branches,
)
from ctx.hub.config import CONFIG_FILE, load_config

if TYPE_CHECKING:
    from ctx.hub.workspace import Workspace

__all__ = ["FollowingStore", "follow_code", "sync_branches"]

_TABLE_RE = re.compile(r"^\[branches\][ \t]*(#.*)?$", re.MULTILINE)
_KEY_RE = re.compile(r"^follow_code[ \t]*=.*$", re.MULTILINE)


class FollowingStore(Store):
    """A store whose default branch is the code's current branch.

    Attributes:
        code: A folder in the code's work tree (where the command runs);
            ``None`` follows nothing.
        writing: Whether its workspace writes: a missing memory branch is
            then created, rather than its ancestor's read.
    """

    code: Path | None = None
    writing: bool = False

    def head_branch(self) -> str:
        """Returns the memory branch of the code's current branch (see module)."""
        own = super().head_branch()
        if self.code is None:
            return own
        return followed_branch(self, self.code, own, write=self.writing)


def sync_branches(
    ws: Workspace, intent: Intent, *, into: str | None = None, dry_run: bool = False
) -> SyncResult:
    """Merges the memory of the merged code branches (:func:`sync_code_branches`).

    The code is the work tree the workspace runs in.

    Raises:
        InvalidInputError: Not in a work tree; no such code branch.
    """
    start = ws.code or Path.cwd()
    with ws.lock:
        store = ws.store(write=not dry_run)
        return sync_code_branches(store, start, intent, into=into, dry_run=dry_run)


def follow_code(store_path: Path) -> None:
    """Sets ``[branches] follow_code = true`` in the store's ``config.toml``.

    The rest of the file is kept as it is; a file already saying so is left
    unchanged.

    Raises:
        InvalidInputError: The file is not valid (before or after).
    """
    if load_config(store_path).branches.follow_code:
        return
    path = store_path / CONFIG_FILE
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    table = _TABLE_RE.search(text)
    if table is None:
        if text and not text.endswith("\n"):
            text += "\n"
        text += ("\n" if text else "") + "[branches]\nfollow_code = true\n"
    else:
        rest = text[table.end() :]
        nxt = re.search(r"^\[", rest, re.MULTILINE)
        end = table.end() + (nxt.start() if nxt else len(rest))
        body = _KEY_RE.sub("follow_code = true", text[table.end() : end], count=1)
        if body == text[table.end() : end]:
            body = "\nfollow_code = true" + body
        text = text[: table.end()] + body + text[end:]
    path.write_text(text, encoding="utf-8")
    load_config(store_path)  # what was written is valid
