"""Which commits a recall reads: a branch, overlaid branches, a past moment."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import msgspec

from ctx.engine import CommitId, CommitNotFoundError, Store, commit_at, resolve_revision
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.view import LiveView

__all__ = ["Source", "open_sources"]


class Source(msgspec.Struct, frozen=True):
    """A branch to recall from, with its commit and live view."""

    branch: str
    commit: CommitId
    view: LiveView


def open_sources(
    projection: Projection,
    *,
    branch: str | None = None,
    overlay: Sequence[str] = (),
    at: str | datetime | None = None,
) -> list[Source]:
    """Returns the branch to read (and any to overlay), caught up in the index.

    Args:
        projection: The store's indexes.
        branch: The branch; the store's HEAD branch when ``None``.
        overlay: Branches whose memories the branch lacks are added.
        at: Read as things stood at this revision (a commit, ``main~3``) or
            moment (the branch's last commit made by then); overlays too.

    Raises:
        RefNotFoundError: A branch does not exist.
        CommitNotFoundError: ``at`` names no commit.
    """
    store = projection.store
    name = branch or store.head_branch()
    sources = []
    for each in (name, *[b for b in overlay if b != name]):
        tip = store.branch_tip(each)
        if at is None:
            commit, moving = tip, each
        elif isinstance(at, datetime):
            commit, moving = commit_at(store, each, at), None
        elif each == name:
            commit, moving = _revision(store, at), None
        else:
            commit, moving = tip, each
        sources.append(Source(each, commit, projection.view(commit, branch=moving)))
    return sources


def _revision(store: Store, at: str) -> CommitId:
    """Returns the commit ``at`` names; an unknown one says a time would do too."""
    try:
        return resolve_revision(store, at)
    except CommitNotFoundError as error:
        raise CommitNotFoundError(
            error.message,
            hint="A point in history is a revision (a branch, a commit id, main~2)"
            " or a time (2023-05-08, 2023-05-08T13:56, yesterday).",
        ) from None
