"""What the lens works on: one workspace, the branch shown, who writes.

Screens read and write through a :class:`Source`, on worker threads: every
call holds the workspace's lock, so the one store object serves one call at
a time (as it does for the MCP server's worker threads). Writes carry the
intent ``review`` with the user as the agent; a write that an agent's door
makes too (merge, resolve) is the same typed call (:meth:`Source.call`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from ctx.engine import BranchInfo, Intent, NotAStoreError, list_branches

if TYPE_CHECKING:
    from ctx.engine import Store
    from ctx.hub import Workspace

__all__ = ["REVIEW_INTENT", "Source"]

REVIEW_INTENT = "review"
"""The intent of every write made from the lens."""

T = TypeVar("T")
Request = TypeVar("Request")


class Source:
    """The store the lens shows, the branch it shows, and who writes.

    Args:
        workspace: The workspace (store, agent, clock).
        branch: The branch shown first (default: the workspace's, then HEAD).
    """

    def __init__(self, workspace: Workspace, branch: str) -> None:
        self.workspace = workspace
        self.branch = branch

    @classmethod
    def open(cls, workspace: Workspace, branch: str | None = None) -> Source:
        """Returns the source of a workspace, its store and branch checked.

        The branch is the one given, else the workspace's (``CTX_BRANCH``),
        else the store's HEAD, read now: the lens shows the branch it
        opened on until another is picked.

        Raises:
            NotAStoreError: No store is at the path given, or none was found
                and the user store is not made yet.
            InvalidInputError: The name is not a branch name (``main~1``).
            RefNotFoundError: The branch does not exist.
        """
        if not workspace.on_disk:
            # The user store, not made yet: the lens would show a store made
            # up in memory, with a first commit nobody wrote.
            raise NotAStoreError(
                f"No store here or above, and the user store ({workspace.path}) "
                "is not made yet.",
                hint="`ctx init` makes one here; the first `ctx remember` makes "
                "the user store.",
            )
        store = workspace.store()
        name = branch or workspace.branch or store.head_branch()
        store.branch_tip(name)
        return cls(workspace, name)

    def store(self) -> Store:
        """Returns the store (read; the user store is not created by reading)."""
        return self.workspace.store()

    def now(self) -> datetime:
        """Returns the workspace clock's time."""
        return self.workspace.clock()

    def read(self, call: Callable[..., T], *args: object, **kwargs: object) -> T:
        """Returns ``call(store, *args, **kwargs)``, holding the store's lock."""
        with self.workspace.lock:
            return call(self.workspace.store(), *args, **kwargs)

    def write(self, call: Callable[..., T], *args: object, **kwargs: object) -> T:
        """Returns ``call(store, *args, intent, **kwargs)``: a write from the lens.

        The store is opened for writing (the user store is made on the first
        write, as the command line does); the intent is ``review`` and the
        agent is the user (``CTX_AGENT``, else the login name).
        """
        with self.workspace.lock:
            store = self.workspace.store(write=True)
            return call(store, *args, self.intent(), **kwargs)

    def call(
        self, function: Callable[[Workspace, Any, Request], T], request: Request
    ) -> T:
        """Makes one typed call (:mod:`ctx.hub.calls`) as the store's owner.

        As the command line makes it (``Caller.command_line``): on the branch
        the request names or HEAD. The call holds the workspace's lock
        itself. A write's request carries the lens's intent (:meth:`signed`).
        """
        from ctx.hub import Caller

        return function(self.workspace, Caller(command_line=True), request)

    def signed(self) -> dict[str, Any]:
        """Returns a write request's intent fields: ``review``, the user."""
        who = self.intent()
        return {"agent": who.agent, "intent": who.intent, "reason": who.reason}

    def hub(self, call: Callable[..., T], *args: object, **kwargs: object) -> T:
        """Returns ``call(workspace, *args, **kwargs)``, holding the lock.

        For the hub's calls that take the workspace (Dream's, as ``ctx
        dream`` makes them): they open the store themselves, and their
        writes carry the workspace's intent, the user as the agent.
        """
        with self.workspace.lock:
            return call(self.workspace, *args, **kwargs)

    def intent(self) -> Intent:
        """Returns the intent of a write from the lens."""
        return self.workspace.intent(REVIEW_INTENT, reason="reviewed in ctx lens")

    def branches(self) -> list[BranchInfo]:
        """Returns the branches with their tips."""
        return self.read(list_branches)
