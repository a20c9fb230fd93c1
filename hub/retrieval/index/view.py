"""A commit's live view: what one commit holds, as the indexes see it.

The projection (:mod:`ctx.hub.retrieval.index.projection`) makes a view for a commit
and catches the indexes up to it; a searcher (:mod:`ctx.hub.retrieval.index.searcher`)
searches within one. A view's blobs are the filter every search applies.
Blobs the shared indexes lack, because another process held the index lock,
are indexed in memory by the process that asked (:class:`PendingIndexes`)
and travel with the view.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ctx.engine import Catalog, CommitId, ConflictNote, MemoryId, is_pinned
from ctx.hub.retrieval.index.lexical import LexicalIndex
from ctx.hub.retrieval.index.rows import FlatVectors

__all__ = ["LiveView", "PendingIndexes"]


@dataclass(frozen=True)
class PendingIndexes:
    """Live blobs missing from the shared indexes, indexed in memory.

    Attributes:
        lexical: Their documents.
        vectors: Their vectors (``None`` if the embedder failed).
    """

    lexical: LexicalIndex
    vectors: FlatVectors | None


@dataclass
class LiveView:
    """What one commit holds, as the indexes see it.

    Attributes:
        commit: The commit.
        catalog: Every live memory by id (path, blob, kind, headline, tokens).
        by_blob: Memory id of every live blob.
        blobs: The live blob ids (the filter every search applies).
        complete: Whether the indexes hold exactly these blobs (no filter needed).
        pending: Live blobs not in the shared indexes, scored in memory.
        pending_indexes: The in-memory indexes that hold them.
        conflicts: Notes on the memories in conflict at the commit, by id,
            once a recall has read them (``None`` before).
    """

    commit: CommitId
    catalog: Catalog
    by_blob: dict[str, str]
    blobs: frozenset[str]
    complete: bool = False
    pending: list[str] = field(default_factory=list)
    pending_indexes: list[PendingIndexes] = field(default_factory=list)
    conflicts: dict[MemoryId, ConflictNote] | None = None

    @functools.cached_property
    def pinned(self) -> list[str]:
        """Returns the ids of the pinned memories, in path order."""
        entries = self.catalog.entries
        found = [m for m, e in entries.items() if is_pinned(e.path)]
        return sorted(found, key=lambda memory_id: entries[memory_id].path)

    @functools.cached_property
    def tokens(self) -> int:
        """Returns the tokens of every live memory (``memory_tokens`` summed)."""
        return sum(entry.tokens for entry in self.catalog.entries.values())
