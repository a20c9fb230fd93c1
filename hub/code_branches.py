"""Memory that follows the code's branches, for every door at once.

With ``[branches] follow_code`` a workspace opens its store as a
:class:`FollowingStore`, whose default branch (:meth:`Store.head_branch`,
what every call that names no branch works on, from the command line, MCP,
the HTTP API, hooks and the lens alike) is the code's current branch,
resolved on each call by :func:`ctx.engine.followed_branch`: a code branch
with no memory yet reads its nearest ancestor's, and a workspace that
writes creates it there. A branch named by the call (``--branch``,
``CTX_BRANCH``) is used as given.

:func:`sync_branches` merges the memory of merged code branches (``ctx sync``),
:func:`sync_at_start` does it for the hooks at a session's start, within a
time limit, and :func:`follow_code` turns following on in a store's
``config.toml``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.engine import (
    CtxError,
    Intent,
    InvalidInputError,
    SyncResult,
    code_branch,
    followed_branch,
    make_code_branch,
    plural,
    sync_code_branches,
)
from ctx.hub.config import CONFIG_FILE, load_config
from ctx.hub.lazy_branches import LazyBranches

if TYPE_CHECKING:
    from ctx.hub.workspace import Workspace

__all__ = ["FollowingStore", "follow_code", "sync_at_start", "sync_branches"]

_TABLE_RE = re.compile(r"^\[branches\][ \t]*(#.*)?$", re.MULTILINE)
_KEY_RE = re.compile(r"^follow_code[ \t]*=.*$", re.MULTILINE)


class FollowingStore(LazyBranches):
    """A store whose default branch is the code's current branch.

    A writer's missing memory branch is awaited (:mod:`ctx.hub.lazy_branches`):
    made by its first write at its nearest code ancestor's memory, with the
    code's tip recorded, as :func:`ctx.engine.followed_branch` makes it.

    Attributes:
        code: A folder in the code's work tree (where the command runs);
            ``None`` follows nothing.
        writing: Whether its workspace writes: a missing memory branch is
            then named, and made when first moved, rather than its
            ancestor's read.
    """

    code: Path | None = None
    writing: bool = False
    _code_branches: frozenset[str] = frozenset()  # those awaited for the code

    def head_branch(self) -> str:
        """Returns the memory branch of the code's current branch (see module)."""
        own = super().head_branch()
        if self.code is None:
            return own
        name = followed_branch(self, self.code, own, write=self.writing, create=False)
        if self.writing and name not in self.branches():
            self.await_branch(name, followed_branch(self, self.code, own, write=False))
            self._code_branches |= {name}
        return name

    def _make(self, branch: str, source: str) -> None:
        if branch in self._code_branches and self.code is not None:
            make_code_branch(self, self.code, branch, source)
            self.drop_awaited(branch)
        else:
            super()._make(branch, source)


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


def sync_at_start(
    ws: Workspace,
    seconds: float,
    *,
    agent: str | None = None,
    session: str | None = None,
) -> str | None:
    """Merges the memory of the code branches merged into the current one.

    For a session's start (the hooks), before its context is composed: as
    ``ctx sync --into`` the code's current branch, in at most ``seconds``
    (the store's lock waited for included). What is not begun by then is
    left for ``ctx sync``. A store that does not follow the code, a
    detached HEAD (but for a rebase's or a bisect's, which work on their
    branch) or no work tree: nothing is done. The merges are made by
    ``agent`` (default: the workspace's) in ``session``.

    Returns:
        One line for the session's context: what was merged, the conflicts
        kept, what was left, or why nothing was merged; ``None`` when there
        was nothing to merge. Never raises a :class:`CtxError`.
    """
    until = time.monotonic() + seconds
    with ws.lock:
        store = ws.store()
        if not isinstance(store, FollowingStore) or store.code is None:
            return None
        into = code_branch(store.code)
        if into is None:
            return None
        waits = store.lock_timeout
        store.lock_timeout = min(waits, seconds)
        try:
            intent = ws.intent("merge", agent=agent, session=session)
            result = sync_code_branches(
                store,
                store.code,
                intent,
                into=into,
                stop=lambda: time.monotonic() >= until,
            )
        except InvalidInputError as exc:  # `ctx sync` would refuse it too
            return (
                "ctx: the memory of merged code branches was not merged "
                f"({exc.message.rstrip('.')}). {exc.hint or ''}".rstrip()
            )
        except CtxError as exc:  # busy, or another failure: another try may do
            return (
                "ctx: the memory of merged code branches was not merged "
                f"({exc.message.rstrip('.')}); `ctx sync` merges it."
            )
        finally:
            store.lock_timeout = waits
    return _started_line(result)


def _started_line(result: SyncResult) -> str | None:
    """Returns what :func:`sync_at_start` did, in one line, or ``None``."""
    said: list[str] = []
    if result.merges:
        names = ", ".join(m.source for m in result.merges)
        said.append(
            f"memory of merged code branches merged into {result.into}: {names}"
        )
        kept = sum(len(m.conflicts) for m in result.merges)
        if kept:
            said[-1] += (
                f" ({plural(kept, 'conflict')} kept: `ctx resolve` settles them)"
            )
    if result.left:
        names = ", ".join(result.left)
        said.append(f"out of time, left for `ctx sync`: {names}")
    return f"ctx: {'; '.join(said)}." if said else None


def follow_code(store_path: Path) -> bool:
    """Sets ``[branches] follow_code = true`` in the store's ``config.toml``.

    The rest of the file is kept as it is; a file already saying so is left
    unchanged. Returns whether the file changed (following was off).

    Raises:
        InvalidInputError: The file is not valid (before or after).
    """
    if load_config(store_path).branches.follow_code:
        return False
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
    return True
