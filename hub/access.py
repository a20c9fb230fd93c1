"""Who calls, and which branches they may read and write.

Every call carries a :class:`Caller`: the agent and session its writes
are signed with, and its scope (the key it presented, or none: the store's
owner on loopback, or at the command line). Every branch and
revision a call names is checked against the scope before the store is
touched. A branch the caller may not read fails exactly as one that does
not exist, with the engine's own error, so nothing tells the two apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from ctx.engine import (
    CommitNotFoundError,
    CtxError,
    RefNotFoundError,
    Store,
    reachable,
    resolve_revision,
)

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

    def agent_name(self) -> str:
        """Returns who the key's writes are signed by when they name nobody."""
        ...

    def may_sign(self, agent: str) -> bool:
        """Returns whether the key's writes may be signed by ``agent``."""
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
        command_line: The store's owner at the command line, whose calls
            work on the branch they name or HEAD: an agent's own branch
            (``[agents] branch_per_agent``, ``review_writes``) is for the
            agents' doors (MCP, HTTP, hooks).
        records_shown: Whether a call that injects memories (recall,
            compose) records them as shown to the session
            (:mod:`ctx.hub.shown`); the hooks record what their block gave
            themselves, once, after the block is made.
    """

    agent: str | None = None
    session: str | None = None
    scope: Scope | None = None
    branch: str | None = None
    command_line: bool = False
    records_shown: bool = True

    def signed_by(self, default: str | None, named: str | None = None) -> str | None:
        """Returns who this caller's write (or read, as logged) is signed by.

        Without a key: the agent the request names, else ``default`` (the
        workspace's agent), else the caller's (a client's name). With a
        key, the key says who may sign (:meth:`Scope.may_sign`): a name the
        request gives that the key may not sign as is refused; a client's
        name it may not, or none, gives the key's own
        (:meth:`Scope.agent_name`), never the server's login.

        Raises:
            ReadOnlyStoreError: the request names an agent the key may not
                sign as.
        """
        from ctx.engine import ReadOnlyStoreError

        scope = self.scope
        if scope is None:
            return named or default or self.agent
        if named is not None:
            if not scope.may_sign(named):
                raise ReadOnlyStoreError(
                    f"This key may not sign writes as {named!r}.",
                    hint="Name no agent (the key's own name signs), or one whose "
                    "agent/<name> branch the key may write.",
                )
            return named
        if self.agent is not None and scope.may_sign(self.agent):
            return self.agent
        return scope.agent_name()

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
        """Returns the revision to read, if allowed, naming what was checked.

        The revision is resolved once, and what it returns is what was
        checked, so the engine cannot read anything else: ``HEAD`` and
        ``@`` become the caller's branch (``HEAD~1``: ``agent/x~1``), and a
        commit id becomes the full id of a commit that a branch the caller
        may read reaches (a key is never asked whether it may read a commit
        id as though it were a branch name: ``b*`` would match ``b3e1``).
        The command line's revision is returned as given (no key limits it),
        so the engine's errors name it as the user wrote it.

        Raises:
            RefNotFoundError: ``rev`` is empty or HEAD, and the caller may not
                read its branch (as if missing).
            CommitNotFoundError: The caller may not read it (as if missing).
        """
        if rev is None or rev in ("HEAD", "@"):
            return self.read_branch(store, None)
        if self.command_line and self.scope is None:  # nothing to check
            return rev
        base = revision_base(rev)
        steps = rev[len(base) :]
        if base in ("HEAD", "@"):
            return self.read_branch(store, None) + steps
        if self.scope is None:
            return rev
        if base in store.branches() or _fetched(store, base):
            if self.scope.can_read(base):
                return rev
            raise _unknown_revision(rev)
        try:
            commit = resolve_revision(store, base)
        except CommitNotFoundError:
            raise _unknown_revision(rev) from None
        readable = [b for b in store.branches() if self.scope.can_read(b)]
        if not reachable(store, commit, readable):
            raise _unknown_revision(rev)
        return commit + steps

    def visible(self, branch: str) -> bool:
        """Returns whether the caller may see that ``branch`` exists."""
        return self.scope is None or self.scope.can_read(branch)


def _fetched(store: Store, name: str) -> bool:
    """Returns whether ``name`` is a fetched branch (``origin/main``)."""
    if "/" not in name:
        return False
    try:
        resolve_revision(store, name)
    except CommitNotFoundError:
        return False
    return name not in store.branches()


def _unknown_revision(rev: str) -> CommitNotFoundError:
    """The error of a revision that names nothing, as the engine words it."""
    return CommitNotFoundError(
        f"Unknown revision {rev!r}.",
        hint="Use a branch name, a commit id, or forms like main~2.",
    )


def _missing_branch(name: str) -> RefNotFoundError:
    return RefNotFoundError(
        f"No branch named {name!r}.", hint="`ctx branches` lists them."
    )
