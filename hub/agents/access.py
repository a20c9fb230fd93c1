"""Who calls, and which branches they may read and write.

A call from the MCP server or the HTTP API carries a :class:`Caller`: the
agent and session its writes are signed with, and its scope (the key it
presented, or none: the store's owner on loopback). Every branch and
revision a call names is checked against the scope before the store is
touched. A branch the caller may not read fails exactly as one that does
not exist, with the engine's own error, so nothing tells the two apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from ctx.engine import CommitNotFoundError, CtxError, RefNotFoundError, Store

__all__ = ["Caller", "ForbiddenError", "Scope", "revision_base"]

_SUFFIX_RE = re.compile(r"(?:~\d*|\^\d*)+$")


class ForbiddenError(CtxError):
    """The caller's key may not do this (an HTTP 403)."""


class Scope(Protocol):
    """What a key allows: reading and writing branches by name."""

    def can_read(self, branch: str) -> bool:
        """Returns whether the branch may be read."""
        ...

    def can_write(self, branch: str) -> bool:
        """Returns whether the branch may be written."""
        ...


def revision_base(rev: str) -> str:
    """Returns the branch or commit a revision starts from (``main~2``: main)."""
    match = _SUFFIX_RE.search(rev)
    return rev[: match.start()] if match else rev


@dataclass(frozen=True)
class Caller:
    """Who makes a call.

    Attributes:
        agent: Who writes, when the call names nobody (a client's name).
        session: The session writes belong to (an MCP session id).
        scope: The key presented, or None for the store's owner.
        branch: The branch a call that names none works on (None: HEAD).
    """

    agent: str | None = None
    session: str | None = None
    scope: Scope | None = None
    branch: str | None = None

    def target(self, store: Store, branch: str | None) -> str:
        """Returns the branch a call works on: the one named, else the default."""
        return branch or self.branch or store.head_branch()

    def read_branch(self, store: Store, branch: str | None) -> str:
        """Returns the branch to read, if the caller may read it.

        Raises:
            RefNotFoundError: The caller may not read it (as if missing).
        """
        name = self.target(store, branch)
        if self.scope is not None and not self.scope.can_read(name):
            raise _missing_branch(name)
        return name

    def write_branch(self, store: Store, branch: str | None) -> str:
        """Returns the branch to write, if the caller may write it.

        A branch the caller may not even read is missing, as for reads; one
        it may read but not write is refused as read-only.

        Raises:
            RefNotFoundError: The caller may not read it (as if missing).
            ReadOnlyStoreError: The caller may read it but not write it.
        """
        from ctx.engine import ReadOnlyStoreError

        name = self.read_branch(store, branch)
        if self.scope is not None and not self.scope.can_write(name):
            raise ReadOnlyStoreError(
                f"This key may not write branch {name!r}.",
                hint="Write to a branch the key's write patterns allow.",
            )
        return name

    def read_revision(self, store: Store, rev: str | None) -> str:
        """Returns the revision to read (a branch by default), if allowed.

        A revision starting from a commit id is allowed only to a caller
        who may read every branch (the commit could be on any of them).

        Raises:
            CommitNotFoundError: The caller may not read it (as if missing).
        """
        if rev is None or rev in ("HEAD", "@"):
            return self.read_branch(store, None)
        base = revision_base(rev)
        if base in ("HEAD", "@"):
            base = self.target(store, None)
        if self.scope is not None and not self.scope.can_read(base):
            raise CommitNotFoundError(
                f"Unknown revision {rev!r}.",
                hint="Use a branch name, a commit id, or forms like main~2.",
            )
        return rev

    def visible(self, branch: str) -> bool:
        """Returns whether the caller may see that ``branch`` exists."""
        return self.scope is None or self.scope.can_read(branch)


def _missing_branch(name: str) -> RefNotFoundError:
    return RefNotFoundError(
        f"No branch named {name!r}.", hint="`ctx branches` lists them."
    )
