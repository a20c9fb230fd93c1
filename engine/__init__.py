"""The ctx engine: memories as commits in a git object store.

Everything the command line does is a call to one of these names. The engine
never prints and never reads the environment or the wall clock: the clock is
given to :class:`Store`, identity to each write as an :class:`Intent`.
"""

from ctx.engine.batch import ImportLine, import_lines, parse_lines
from ctx.engine.blame import BlameLine, blame_lines
from ctx.engine.conflicts import list_conflicts, resolve
from ctx.engine.diff import ChangedMemory, Diff, body_diff, diff
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
from ctx.engine.log import LogEntry, PathChange, blame, log
from ctx.engine.maintenance import FsckReport, GcReport, StoreStatus, fsck, gc, status
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
from ctx.engine.merge import PREFERENCES, MergeResult, merge
from ctx.engine.model import (
    KINDS,
    LINK_TYPES,
    MAX_BODY_BYTES,
    Conflict,
    Intent,
    Link,
    Memory,
    Source,
)
from ctx.engine.prime import prime, split_sections
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
from ctx.engine.snapshot import LinkRecord, MemoryRecord, Snapshot
from ctx.engine.store import Clock, CommitInfo, ReflogEntry, Store

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
