"""Branches a call names, made by their first write.

An agent's own branch (``[agents] branch_per_agent``, ``review_writes``)
and a code branch's memory (``[branches] follow_code``) are named before a
call knows whether it will write. Made then, a call refused before it
wrote (an empty text, a remote that does not answer) left an empty branch
behind, and rule 4 of the house is that bad input changes nothing. A
workspace opens its store as :class:`LazyBranches`: a branch named with
:meth:`~LazyBranches.await_branch` reads as the branch it will start from
until the first move of it (a write, a merge, a fast-forward) makes it
there, under the store's lock.
"""

from __future__ import annotations

from ctx.engine import (
    CREATED_FROM,
    CommitId,
    ConflictError,
    RefNotFoundError,
    Store,
)

__all__ = ["LazyBranches"]


class LazyBranches(Store):
    """A store whose awaited branches are made by their first move."""

    _awaited: dict[str, str] | None = None

    def await_branch(self, branch: str, source: str) -> None:
        """Names ``branch``, to be made at ``source``'s tip when first moved.

        Until then, its tip is ``source``'s (which may be awaited too). A
        branch that exists is left as it is.
        """
        if branch in self.branches():
            return
        if self._awaited is None:
            self._awaited = {}
        self._awaited[branch] = source

    def branch_tip(self, branch: str, *, checked: bool = True) -> CommitId:
        """Returns ``branch``'s commit; an awaited one's is its source's."""
        source = self._source(branch)
        if source is None:
            return super().branch_tip(branch, checked=checked)
        return self.branch_tip(source, checked=checked)  # awaited too, maybe

    def move_branch(
        self, branch: str, old: CommitId | None, new: CommitId | None, message: str
    ) -> None:
        """Moves ``branch``; an awaited one is made first, where it starts.

        Raises:
            RefNotFoundError: ``branch`` is awaited and asked to be deleted:
                it is not there yet.
        """
        source = self._source(branch)
        if source is not None and new is None:
            raise RefNotFoundError(
                f"No branch named {branch!r}.", hint="`ctx branches` lists them."
            )
        if source is not None and old is not None:
            self._make(branch, source)
        super().move_branch(branch, old, new, message)

    def set_head(self, branch: str) -> None:
        """Makes ``branch`` the default; an awaited one is made first."""
        source = self._source(branch)
        if source is not None:
            self._make(branch, source)
        super().set_head(branch)

    def drop_awaited(self, branch: str) -> None:
        """Forgets ``branch`` if still awaited: the call that named it is done."""
        if self._awaited:
            self._awaited.pop(branch, None)

    def _make(self, branch: str, source: str) -> None:
        """Makes awaited ``branch`` at ``source``'s tip, unless a racer did."""
        with self.locked():
            if branch not in self.branches():
                try:
                    super().move_branch(
                        branch,
                        None,
                        self.branch_tip(source),
                        CREATED_FROM + source,
                    )
                except ConflictError:
                    if branch not in self.branches():
                        raise
        self.drop_awaited(branch)

    def _source(self, branch: str) -> str | None:
        """Returns the source of ``branch`` while it is awaited, else ``None``.

        Readers share the store on threads: a read may find the entry gone.
        """
        awaited = self._awaited
        source = awaited.get(branch) if awaited else None
        if source is None:
            return None
        if branch in super().branches():
            self.drop_awaited(branch)  # made (by another process too)
            return None
        return source
