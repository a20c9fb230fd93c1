"""The ctx engine: memories as commits in a git object store.

Everything the command line does is a call to one of these names. The engine
never prints and never reads the environment or the wall clock: the clock is
given to :class:`Store`, identity to each write as an :class:`Intent`.

Submodules load on first use (PEP 562), so a command pays only for the
parts it touches: ``ctx remember`` never imports the merge machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctx.engine.annotate import BlameLine, blame_lines
    from ctx.engine.batch import ImportLine, import_lines, parse_lines
    from ctx.engine.changes import ChangedMemory, Diff, body_diff, diff
    from ctx.engine.conflicts import list_conflicts, resolve
    from ctx.engine.errors import (
        CommitNotFoundError,
        ConflictError,
        CorruptStoreError,
        CtxError,
        InvalidInputError,
        LinkNotFoundError,
        MemoryNotFoundError,
        NotAStoreError,
        NotFoundError,
        ReadOnlyStoreError,
        RefNotFoundError,
        StoreBusyError,
        StoreError,
    )
    from ctx.engine.ids import CommitId, MemoryId, new_memory_id, parse_memory_id
    from ctx.engine.layout import slugify
    from ctx.engine.links import link, list_links, unlink
    from ctx.engine.maintenance import (
        FsckReport,
        GcReport,
        StoreStatus,
        fsck,
        gc,
        status,
    )
    from ctx.engine.memories import (
        Draft,
        WriteResult,
        edit,
        forget,
        list_memories,
        remember,
        remember_many,
        show,
    )
    from ctx.engine.model import (
        KINDS,
        LINK_TYPES,
        MAX_BODY_BYTES,
        PREFERENCES,
        Conflict,
        Intent,
        Link,
        Memory,
        Source,
    )
    from ctx.engine.revisions import (
        BranchInfo,
        UndoResult,
        create_branch,
        delete_branch,
        list_branches,
        resolve_revision,
        switch_branch,
        undo,
    )
    from ctx.engine.sections import prime, split_sections
    from ctx.engine.snapshot import LinkRecord, MemoryRecord, Snapshot
    from ctx.engine.store import Clock, CommitInfo, ReflogEntry, Store
    from ctx.engine.threeway import MergeResult, merge
    from ctx.engine.timeline import LogEntry, PathChange, blame, log

__all__ = [
    "KINDS",
    "LINK_TYPES",
    "MAX_BODY_BYTES",
    "PREFERENCES",
    "BlameLine",
    "BranchInfo",
    "ChangedMemory",
    "Clock",
    "CommitId",
    "CommitInfo",
    "CommitNotFoundError",
    "Conflict",
    "ConflictError",
    "CorruptStoreError",
    "CtxError",
    "Diff",
    "Draft",
    "FsckReport",
    "GcReport",
    "ImportLine",
    "Intent",
    "InvalidInputError",
    "Link",
    "LinkNotFoundError",
    "LinkRecord",
    "LogEntry",
    "Memory",
    "MemoryId",
    "MemoryNotFoundError",
    "MemoryRecord",
    "MergeResult",
    "NotAStoreError",
    "NotFoundError",
    "PathChange",
    "ReadOnlyStoreError",
    "RefNotFoundError",
    "ReflogEntry",
    "Snapshot",
    "Source",
    "Store",
    "StoreBusyError",
    "StoreError",
    "StoreStatus",
    "UndoResult",
    "WriteResult",
    "blame",
    "blame_lines",
    "body_diff",
    "create_branch",
    "delete_branch",
    "diff",
    "edit",
    "forget",
    "fsck",
    "gc",
    "import_lines",
    "link",
    "list_branches",
    "list_conflicts",
    "list_links",
    "list_memories",
    "log",
    "merge",
    "new_memory_id",
    "parse_lines",
    "parse_memory_id",
    "prime",
    "remember",
    "remember_many",
    "resolve",
    "resolve_revision",
    "show",
    "slugify",
    "split_sections",
    "status",
    "switch_branch",
    "undo",
    "unlink",
]

_LAZY = {
    "BlameLine": "ctx.engine.annotate",
    "BranchInfo": "ctx.engine.revisions",
    "ChangedMemory": "ctx.engine.changes",
    "Clock": "ctx.engine.store",
    "CommitId": "ctx.engine.ids",
    "CommitInfo": "ctx.engine.store",
    "CommitNotFoundError": "ctx.engine.errors",
    "Conflict": "ctx.engine.model",
    "ConflictError": "ctx.engine.errors",
    "CorruptStoreError": "ctx.engine.errors",
    "CtxError": "ctx.engine.errors",
    "Diff": "ctx.engine.changes",
    "Draft": "ctx.engine.memories",
    "FsckReport": "ctx.engine.maintenance",
    "GcReport": "ctx.engine.maintenance",
    "ImportLine": "ctx.engine.batch",
    "Intent": "ctx.engine.model",
    "InvalidInputError": "ctx.engine.errors",
    "KINDS": "ctx.engine.model",
    "LINK_TYPES": "ctx.engine.model",
    "Link": "ctx.engine.model",
    "LinkNotFoundError": "ctx.engine.errors",
    "LinkRecord": "ctx.engine.snapshot",
    "LogEntry": "ctx.engine.timeline",
    "MAX_BODY_BYTES": "ctx.engine.model",
    "Memory": "ctx.engine.model",
    "MemoryId": "ctx.engine.ids",
    "MemoryNotFoundError": "ctx.engine.errors",
    "MemoryRecord": "ctx.engine.snapshot",
    "MergeResult": "ctx.engine.threeway",
    "NotAStoreError": "ctx.engine.errors",
    "NotFoundError": "ctx.engine.errors",
    "PREFERENCES": "ctx.engine.model",
    "PathChange": "ctx.engine.timeline",
    "ReadOnlyStoreError": "ctx.engine.errors",
    "RefNotFoundError": "ctx.engine.errors",
    "ReflogEntry": "ctx.engine.store",
    "Snapshot": "ctx.engine.snapshot",
    "Source": "ctx.engine.model",
    "Store": "ctx.engine.store",
    "StoreBusyError": "ctx.engine.errors",
    "StoreError": "ctx.engine.errors",
    "StoreStatus": "ctx.engine.maintenance",
    "UndoResult": "ctx.engine.revisions",
    "WriteResult": "ctx.engine.memories",
    "blame": "ctx.engine.timeline",
    "blame_lines": "ctx.engine.annotate",
    "body_diff": "ctx.engine.changes",
    "create_branch": "ctx.engine.revisions",
    "delete_branch": "ctx.engine.revisions",
    "diff": "ctx.engine.changes",
    "edit": "ctx.engine.memories",
    "forget": "ctx.engine.memories",
    "fsck": "ctx.engine.maintenance",
    "gc": "ctx.engine.maintenance",
    "import_lines": "ctx.engine.batch",
    "link": "ctx.engine.links",
    "list_branches": "ctx.engine.revisions",
    "list_conflicts": "ctx.engine.conflicts",
    "list_links": "ctx.engine.links",
    "list_memories": "ctx.engine.memories",
    "log": "ctx.engine.timeline",
    "merge": "ctx.engine.threeway",
    "new_memory_id": "ctx.engine.ids",
    "parse_lines": "ctx.engine.batch",
    "parse_memory_id": "ctx.engine.ids",
    "prime": "ctx.engine.sections",
    "remember": "ctx.engine.memories",
    "remember_many": "ctx.engine.memories",
    "resolve": "ctx.engine.conflicts",
    "resolve_revision": "ctx.engine.revisions",
    "show": "ctx.engine.memories",
    "slugify": "ctx.engine.layout",
    "split_sections": "ctx.engine.sections",
    "status": "ctx.engine.maintenance",
    "switch_branch": "ctx.engine.revisions",
    "undo": "ctx.engine.revisions",
    "unlink": "ctx.engine.links",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctx.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
