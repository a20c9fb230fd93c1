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

import msgspec

from ctx.engine import Store, last_commits
from ctx.hub.retrieval.results import Hit, Written

__all__ = ["with_written"]


def with_written(
    store: Store, tips: Mapping[str, str], hits: Sequence[Hit]
) -> list[Hit]:
    """Returns ``hits``, each with the write that last changed it.

    Args:
        store: The store.
        tips: The commit each hit's branch was read at, by branch.
        hits: The hits; one whose branch is not in ``tips`` is left as it is.
    """
    wanted: dict[str, list[str]] = {}
    for hit in hits:
        if hit.branch in tips:
            wanted.setdefault(hit.branch, []).append(hit.id)
    lasts = {
        branch: last_commits(store, ids, rev=tips[branch])
        for branch, ids in wanted.items()
    }
    out = []
    for hit in hits:
        commit = lasts.get(hit.branch, {}).get(hit.id)
        if commit is not None:
            written = Written(commit=commit.id, agent=commit.author, at=commit.time)
            hit = msgspec.structs.replace(hit, written=written)
            if hit.explain is not None:
                why = msgspec.structs.replace(
                    hit.explain,
                    last_commit=commit.id,
                    last_agent=commit.author,
                    last_summary=commit.summary,
                )
                hit = msgspec.structs.replace(hit, explain=why)
        out.append(hit)
    return out
