"""What index status and reindex report: plain structs, cheap to import.

A caller decodes a running hub's answers into these without loading the
indexes (numpy, Tantivy, onnxruntime), so this module imports only msgspec.
"""

from __future__ import annotations

import msgspec

from ctx.engine import Outcome

__all__ = ["BranchIndex", "IndexStatus", "ReindexReport"]


class BranchIndex(msgspec.Struct, frozen=True, kw_only=True):
    """How far one branch is indexed."""

    branch: str
    tip: str
    indexed_commit: str | None
    current: bool
    memories: int


class IndexStatus(Outcome, frozen=True, kw_only=True):
    """What the index holds (``ctx index status``).

    ``notices``: what happened to the index on the way (it was unreadable and
    rebuilt; it lives in memory because the store cannot be written).
    ``unembedded``: indexed documents with no vector yet (the embedding
    backlog, which the hub works through in the background).
    """

    folder: str | None
    embedder: str
    documents: int
    vectors: int
    vector_index: str
    size_bytes: int
    branches: tuple[BranchIndex, ...]
    notices: tuple[str, ...] = ()
    unembedded: int = 0


class ReindexReport(Outcome, frozen=True, kw_only=True):
    """What ``ctx reindex`` built.

    ``warnings``: why vectors are missing (recall is lexical only);
    ``notices``: what happened to the index on the way.
    """

    branches: tuple[str, ...]
    documents: int
    vectors: int
    embedder: str
    seconds: float
    size_bytes: int
    warnings: tuple[str, ...]
    embedded: int = 0
    reused: int = 0
    notices: tuple[str, ...] = ()
