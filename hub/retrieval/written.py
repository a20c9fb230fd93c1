"""Who wrote each recalled memory, where and when: a hit's provenance.

Every block of memories injected into a model's context names, for each
memory, the agent that last wrote it, the branch and commit of that write,
and its date (:class:`~ctx.hub.retrieval.results.Written`), so that a model
and whoever audits it can tell where a recalled text came from. The writes
are found in one walk of each branch's history for all the hits
(:func:`~ctx.engine.last_commits`), the way ``--explain`` finds a hit's last
commit; an explanation asked for gets the same commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import msgspec

from ctx.engine import Catalog, CommitId, Snapshot, Store, last_commits
from ctx.hub.retrieval.results import Hit, Written

__all__ = ["with_written"]

_CACHE = "hub.written"


def with_written(
    store: Store,
    tips: Mapping[str, str],
    hits: Sequence[Hit],
    catalogs: Mapping[str, Catalog] | None = None,
) -> list[Hit]:
    """Returns ``hits``, each with the write that last changed it.

    A memory's last write on a branch stays the same while its blob does,
    so it is kept (in the store's caches, which a rewrite of history
    drops) by branch, memory and blob: a long-running hub walks history
    once per changed memory, not once per recall (at 2,000 commits the
    walk to the oldest memory costs tens of milliseconds).

    Args:
        store: The store.
        tips: The commit each hit's branch was read at, by branch.
        hits: The hits; one whose branch is not in ``tips`` is left as it is.
        catalogs: The catalog of a branch's memories at its tip, by branch,
            where the caller has one: a hit's blob is read from it instead of
            from the tip's trees.
    """
    memo = cast(
        "dict[tuple[str, str, str | None], _Last]",
        store.caches.setdefault(_CACHE, {}),
    )
    keys: dict[str, tuple[str, str, str | None]] = {}
    wanted: dict[str, list[str]] = {}
    catalogs = catalogs or {}
    snapshots: dict[str, Snapshot] = {}
    for hit in hits:
        if hit.branch not in tips:
            continue
        catalog = catalogs.get(hit.branch)
        entry = catalog.entries.get(hit.id) if catalog is not None else None
        if entry is not None and entry.path == hit.path:
            blob: str | None = entry.blob
        else:
            snapshot = snapshots.get(hit.branch)
            if snapshot is None:
                snapshot = store.snapshot(CommitId(tips[hit.branch]))
                snapshots[hit.branch] = snapshot
            blob = snapshot.blob_id(hit.path)
        key = (hit.branch, hit.id, blob)
        keys[hit.id] = key
        if key not in memo:
            wanted.setdefault(hit.branch, []).append(hit.id)
    for branch, ids in wanted.items():
        for memory_id, commit in last_commits(store, ids, rev=tips[branch]).items():
            written = Written(commit=commit.id, agent=commit.author, at=commit.time)
            memo[keys[memory_id]] = _Last(written=written, summary=commit.summary)
    out = []
    for hit in hits:
        last = memo.get(keys[hit.id]) if hit.id in keys else None
        if last is not None:
            hit = msgspec.structs.replace(hit, written=last.written)
            if hit.explain is not None:
                why = msgspec.structs.replace(
                    hit.explain,
                    last_commit=last.written.commit,
                    last_agent=last.written.agent,
                    last_summary=last.summary,
                )
                hit = msgspec.structs.replace(hit, explain=why)
        out.append(hit)
    return out


class _Last(msgspec.Struct, frozen=True):
    """A memory's last write, and its commit's summary (for ``--explain``)."""

    written: Written
    summary: str
