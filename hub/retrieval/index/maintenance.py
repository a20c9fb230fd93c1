"""Index maintenance: rebuild everything, and report what is indexed."""

from __future__ import annotations

import time

from ctx.engine import CommitId, live_catalog
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.reports import BranchIndex, IndexStatus, ReindexReport

__all__ = ["index_status", "reindex"]


def index_status(projection: Projection) -> IndexStatus:
    """Returns what is indexed, per branch, without catching anything up."""
    store = projection.store
    marks = projection.watermarks()
    branches = []
    for name in store.branches():
        tip = store.branch_tip(name)
        commit = marks.get(name, ("", ""))[0] or None
        memories = len(live_catalog(store, CommitId(commit)).entries) if commit else 0
        branches.append(
            BranchIndex(
                branch=name,
                tip=tip,
                indexed_commit=commit,
                current=commit == tip,
                memories=memories,
            )
        )
    documents = projection.lexical.count()
    vectors = projection.vectors
    return IndexStatus(
        folder=None if projection.folder is None else str(projection.folder),
        embedder=projection.embedder_name,
        documents=documents,
        vectors=0 if vectors is None else len(vectors),
        vector_index="none" if vectors is None else vectors.kind,
        size_bytes=projection.size_bytes(),
        branches=tuple(branches),
        notices=tuple(projection.notices),
        unembedded=projection.unembedded(),
    )


def reindex(projection: Projection, *, re_embed: bool = False) -> ReindexReport:
    """Drops every index and rebuilds it from the tip of every branch.

    Vectors of the dropped index made by the same embedder are copied, not
    embedded again, unless ``re_embed``. The index lock is held throughout,
    so the report counts all the work of the rebuild; one that is killed
    leaves the vectors it copies from for the next (docs/recall.md).
    """
    started = time.perf_counter()
    store = projection.store
    embedded = reused = 0
    with projection.rebuilding(reuse_vectors=not re_embed):
        names = store.branches()
        head = store.head_branch()
        for name in sorted(names, key=lambda n: n != head):  # HEAD first
            before = projection.last_catch_up
            projection.view(store.branch_tip(name), branch=name)
            done = projection.last_catch_up
            if done is not None and done is not before:
                embedded += done.embedded
                reused += done.reused
    vectors = projection.vectors
    return ReindexReport(
        branches=tuple(names),
        documents=projection.lexical.count(),
        vectors=0 if vectors is None else len(vectors),
        embedder=projection.embedder_name,
        seconds=time.perf_counter() - started,
        size_bytes=projection.size_bytes(),
        warnings=tuple(projection.warnings),
        notices=tuple(projection.notices),
        embedded=embedded,
        reused=reused,
    )
