"""What a commit holds, for the layers that index it: memories, links, dates.

The hub projects commits into search indexes; it needs, per commit, every
live memory (path, blob id, kind, headline, tokens) and the link graph,
without reading each blob. Both are the engine's derived indexes
(:mod:`ctx.engine.catalog`, :mod:`ctx.engine.adjacency`), caught up by
pruned tree diffs and cached on disk; these functions are their public face.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ctx.engine.adjacency import Adjacency, adjacency
from ctx.engine.catalog import Catalog, catalog
from ctx.engine.errors import CommitNotFoundError

if TYPE_CHECKING:
    from ctx.engine.ids import CommitId
    from ctx.engine.store import Store

__all__ = ["commit_at", "link_graph", "live_catalog"]


def live_catalog(store: Store, commit: CommitId) -> Catalog:
    """Returns every memory of ``commit``'s tree by id (see :class:`Catalog`)."""
    return catalog(store, store.snapshot(commit))


def link_graph(store: Store, commit: CommitId) -> Adjacency:
    """Returns the links of ``commit``'s tree, both ways, and what is superseded."""
    return adjacency(store, store.snapshot(commit))


def commit_at(store: Store, branch: str, when: datetime) -> CommitId:
    """Returns the last commit on ``branch``'s first-parent line made by ``when``.

    Raises:
        CommitNotFoundError: The branch's first commit is later than ``when``.
    """
    commit: CommitId | None = store.branch_tip(branch)
    while commit is not None:
        info = store.commit(commit)
        if info.time <= when:
            return commit
        commit = info.parents[0] if info.parents else None
    raise CommitNotFoundError(
        f"Branch {branch} has no commit made by {when.isoformat()}.",
        hint="`ctx log` lists the commits and their times.",
    )
