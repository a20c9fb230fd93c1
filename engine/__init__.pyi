# The engine's public names, each once: the lazy loader in __init__.py reads
# this file, and type checkers read it as the package's interface.

from ._fetch_plan import (
    CODE_NAMESPACE as CODE_NAMESPACE,
)
from ._reaching import (
    Access as Access,
)
from ._reaching import (
    Credentials as Credentials,
)
from ._redaction_finish import (
    PENDING_REDACTION as PENDING_REDACTION,
)
from ._redaction_finish import (
    REDACTED as REDACTED,
)
from ._redaction_record import (
    Redaction as Redaction,
)
from ._redaction_record import (
    list_redactions as list_redactions,
)
from .abbreviation import (
    abbreviate as abbreviate,
)
from .abbreviation import (
    resolve_memory_id as resolve_memory_id,
)
from .adjacency import (
    Adjacency as Adjacency,
)
from .blame import (
    BlameLine as BlameLine,
)
from .blame import (
    blame as blame,
)
from .blame import (
    blame_lines as blame_lines,
)
from .branches import (
    CREATED_FROM as CREATED_FROM,
)
from .branches import (
    BranchInfo as BranchInfo,
)
from .branches import (
    BranchResult as BranchResult,
)
from .branches import (
    create_branch as create_branch,
)
from .branches import (
    delete_branch as delete_branch,
)
from .branches import (
    list_branches as list_branches,
)
from .branches import (
    reachable as reachable,
)
from .branches import (
    resolve_revision as resolve_revision,
)
from .branches import (
    switch_branch as switch_branch,
)
from .briefing import (
    Briefing as Briefing,
)
from .briefing import (
    BriefSession as BriefSession,
)
from .briefing import (
    brief as brief,
)
from .catalog import (
    Catalog as Catalog,
)
from .catalog import (
    CatalogEntry as CatalogEntry,
)
from .cloning import (
    CloneResult as CloneResult,
)
from .cloning import (
    clone as clone,
)
from .code_branches import (
    code_branch as code_branch,
)
from .code_branches import (
    code_memory_branch as code_memory_branch,
)
from .code_branches import (
    followed_branch as followed_branch,
)
from .code_branches import (
    make_code_branch as make_code_branch,
)
from .code_remotes import (
    add_code_remote as add_code_remote,
)
from .code_remotes import (
    check_code_store as check_code_store,
)
from .code_remotes import (
    clone_from_code as clone_from_code,
)
from .code_remotes import (
    code_remote_url as code_remote_url,
)
from .code_remotes import (
    code_remotes as code_remotes,
)
from .code_sync import (
    SyncResult as SyncResult,
)
from .code_sync import (
    sync_code_branches as sync_code_branches,
)
from .commits import (
    CommitInfo as CommitInfo,
)
from .compose import (
    FORMATS as FORMATS,
)
from .compose import (
    ComposedMemory as ComposedMemory,
)
from .compose import (
    Composition as Composition,
)
from .compose import (
    LeftOut as LeftOut,
)
from .compose import (
    compose as compose,
)
from .conflicts import (
    TAKES as TAKES,
)
from .conflicts import (
    ConflictNote as ConflictNote,
)
from .conflicts import (
    ResolveResult as ResolveResult,
)
from .conflicts import (
    ShownMemory as ShownMemory,
)
from .conflicts import (
    conflict_notes as conflict_notes,
)
from .conflicts import (
    conflicted_ids as conflicted_ids,
)
from .conflicts import (
    list_conflicts as list_conflicts,
)
from .conflicts import (
    resolve as resolve,
)
from .conflicts import (
    show_memory as show_memory,
)
from .diff import (
    ChangedMemory as ChangedMemory,
)
from .diff import (
    Diff as Diff,
)
from .diff import (
    body_diff as body_diff,
)
from .diff import (
    diff as diff,
)
from .diff import (
    diff_range as diff_range,
)
from .dream import (
    DREAM_AGENT as DREAM_AGENT,
)
from .dream import (
    PROPOSAL_KINDS as PROPOSAL_KINDS,
)
from .dream import (
    PROPOSAL_STATUSES as PROPOSAL_STATUSES,
)
from .dream import (
    DreamMergeResult as DreamMergeResult,
)
from .dream import (
    Evidence as Evidence,
)
from .dream import (
    LinkChange as LinkChange,
)
from .dream import (
    Proposal as Proposal,
)
from .dream import (
    ProposeResult as ProposeResult,
)
from .dream import (
    TagChange as TagChange,
)
from .dream import (
    dream_branch as dream_branch,
)
from .dream import (
    hidden_by as hidden_by,
)
from .dream import (
    list_proposals as list_proposals,
)
from .dream import (
    make_proposal as make_proposal,
)
from .dream import (
    merge_accepted as merge_accepted,
)
from .dream import (
    propose as propose,
)
from .dream import (
    sync_dream_branch as sync_dream_branch,
)
from .dream import (
    undone_merges as undone_merges,
)
from .dream_review import (
    ReviewResult as ReviewResult,
)
from .dream_review import (
    review_proposals as review_proposals,
)
from .errors import (
    CommitNotFoundError as CommitNotFoundError,
)
from .errors import (
    ConflictError as ConflictError,
)
from .errors import (
    CorruptStoreError as CorruptStoreError,
)
from .errors import (
    CtxError as CtxError,
)
from .errors import (
    DiskFullError as DiskFullError,
)
from .errors import (
    InvalidInputError as InvalidInputError,
)
from .errors import (
    LinkNotFoundError as LinkNotFoundError,
)
from .errors import (
    MemoryNotFoundError as MemoryNotFoundError,
)
from .errors import (
    NotAStoreError as NotAStoreError,
)
from .errors import (
    NotFoundError as NotFoundError,
)
from .errors import (
    ReadOnlyStoreError as ReadOnlyStoreError,
)
from .errors import (
    RefNotFoundError as RefNotFoundError,
)
from .errors import (
    RemoteError as RemoteError,
)
from .errors import (
    RemoteNotFoundError as RemoteNotFoundError,
)
from .errors import (
    StoreBusyError as StoreBusyError,
)
from .errors import (
    StoreError as StoreError,
)
from .errors import (
    store_damage as store_damage,
)
from .escapes import (
    DATA_NOTE as DATA_NOTE,
)
from .escapes import (
    commented as commented,
)
from .escapes import (
    one_line as one_line,
)
from .escapes import (
    quoted as quoted,
)
from .escapes import (
    visible as visible,
)
from .exports import (
    ExportLines as ExportLines,
)
from .exports import (
    export_lines as export_lines,
)
from .ids import (
    MEMORY_ID_PATTERN as MEMORY_ID_PATTERN,
)
from .ids import (
    CommitId as CommitId,
)
from .ids import (
    MemoryId as MemoryId,
)
from .ids import (
    new_memory_id as new_memory_id,
)
from .ids import (
    parse_memory_id as parse_memory_id,
)
from .imports import (
    ImportResult as ImportResult,
)
from .imports import (
    import_files as import_files,
)
from .imports import (
    import_memories as import_memories,
)
from .jsonl import (
    key_twice as key_twice,
)
from .layout import (
    MEMORY_AREAS as MEMORY_AREAS,
)
from .layout import (
    check_context as check_context,
)
from .layout import (
    context_of as context_of,
)
from .layout import (
    id_from_memory_path as id_from_memory_path,
)
from .layout import (
    is_memory_path as is_memory_path,
)
from .layout import (
    is_pinned as is_pinned,
)
from .layout import (
    slugify as slugify,
)
from .links import (
    LinkResult as LinkResult,
)
from .links import (
    UnlinkResult as UnlinkResult,
)
from .links import (
    link as link,
)
from .links import (
    list_links as list_links,
)
from .links import (
    unlink as unlink,
)
from .listing import (
    LISTING_ORDERS as LISTING_ORDERS,
)
from .listing import (
    list_sorted as list_sorted,
)
from .listing import (
    sort_memories as sort_memories,
)
from .live import (
    changed_blobs as changed_blobs,
)
from .live import (
    commit_at as commit_at,
)
from .live import (
    link_graph as link_graph,
)
from .live import (
    live_catalog as live_catalog,
)
from .live import (
    read_memories as read_memories,
)
from .live import (
    read_memory as read_memory,
)
from .log import (
    LogEntry as LogEntry,
)
from .log import (
    PathChange as PathChange,
)
from .log import (
    last_commits as last_commits,
)
from .log import (
    log as log,
)
from .maintenance import (
    FsckReport as FsckReport,
)
from .maintenance import (
    GcReport as GcReport,
)
from .maintenance import (
    InitResult as InitResult,
)
from .maintenance import (
    StoreStatus as StoreStatus,
)
from .maintenance import (
    TierCount as TierCount,
)
from .maintenance import (
    fsck as fsck,
)
from .maintenance import (
    gc as gc,
)
from .maintenance import (
    init_store as init_store,
)
from .maintenance import (
    status as status,
)
from .memories import (
    Draft as Draft,
)
from .memories import (
    EditResult as EditResult,
)
from .memories import (
    ForgetResult as ForgetResult,
)
from .memories import (
    ListedMemory as ListedMemory,
)
from .memories import (
    MemoryListing as MemoryListing,
)
from .memories import (
    RememberResult as RememberResult,
)
from .memories import (
    WriteResult as WriteResult,
)
from .memories import (
    edit as edit,
)
from .memories import (
    forget as forget,
)
from .memories import (
    list_memories as list_memories,
)
from .memories import (
    pin as pin,
)
from .memories import (
    remember as remember,
)
from .memories import (
    remember_many as remember_many,
)
from .memories import (
    show as show,
)
from .merge import (
    MergeResult as MergeResult,
)
from .merge import (
    merge as merge,
)
from .model import (
    AGENT_PATTERN as AGENT_PATTERN,
)
from .model import (
    EARLIEST_TIME as EARLIEST_TIME,
)
from .model import (
    INTENT_PATTERN as INTENT_PATTERN,
)
from .model import (
    KINDS as KINDS,
)
from .model import (
    LATEST_TIME as LATEST_TIME,
)
from .model import (
    LINK_TYPES as LINK_TYPES,
)
from .model import (
    MAX_BODY_BYTES as MAX_BODY_BYTES,
)
from .model import (
    PREFERENCES as PREFERENCES,
)
from .model import (
    Conflict as Conflict,
)
from .model import (
    Intent as Intent,
)
from .model import (
    Link as Link,
)
from .model import (
    Memory as Memory,
)
from .model import (
    Outcome as Outcome,
)
from .model import (
    Source as Source,
)
from .model import (
    check_kind as check_kind,
)
from .model import (
    check_time as check_time,
)
from .model import (
    decode_memory as decode_memory,
)
from .model import (
    encode as encode,
)
from .model import (
    headline as headline,
)
from .model import (
    is_agent_name as is_agent_name,
)
from .neighbourhood import (
    GraphEdge as GraphEdge,
)
from .neighbourhood import (
    GraphNode as GraphNode,
)
from .neighbourhood import (
    Neighbourhood as Neighbourhood,
)
from .neighbourhood import (
    neighbourhood as neighbourhood,
)
from .operations import (
    Operation as Operation,
)
from .operations import (
    UndoResult as UndoResult,
)
from .operations import (
    op_log as op_log,
)
from .operations import (
    undo as undo,
)
from .packing import (
    AUTO_PACK_LIMIT as AUTO_PACK_LIMIT,
)
from .packing import (
    AUTO_PACK_LOOSE as AUTO_PACK_LOOSE,
)
from .packing import (
    PackReport as PackReport,
)
from .packing import (
    auto_pack as auto_pack,
)
from .packing import (
    loose_objects as loose_objects,
)
from .packing import (
    merge_packs as merge_packs,
)
from .packing import (
    pack_loose as pack_loose,
)
from .packing import (
    packing_now as packing_now,
)
from .prime import (
    PrimeResult as PrimeResult,
)
from .prime import (
    prime as prime,
)
from .prime import (
    split_sections as split_sections,
)
from .provenance import (
    MAX_NODES as MAX_NODES,
)
from .provenance import (
    RelatedHit as RelatedHit,
)
from .provenance import (
    SummarizeResult as SummarizeResult,
)
from .provenance import (
    SupersedeResult as SupersedeResult,
)
from .provenance import (
    TraceNode as TraceNode,
)
from .provenance import (
    expand as expand,
)
from .provenance import (
    related as related,
)
from .provenance import (
    summarize as summarize,
)
from .provenance import (
    supersede as supersede,
)
from .provenance import (
    trace as trace,
)
from .query import (
    Facts as Facts,
)
from .query import (
    QuerySyntaxError as QuerySyntaxError,
)
from .query import (
    Term as Term,
)
from .query import (
    evaluate as evaluate,
)
from .query import (
    format_query as format_query,
)
from .query import (
    parse_query as parse_query,
)
from .redaction import (
    RedactResult as RedactResult,
)
from .redaction import (
    apply_redactions as apply_redactions,
)
from .redaction import (
    memory_texts as memory_texts,
)
from .redaction import (
    redact_memory as redact_memory,
)
from .redaction import (
    redact_text as redact_text,
)
from .reflogs import (
    ReflogEntry as ReflogEntry,
)
from .remotes import (
    RemoteInfo as RemoteInfo,
)
from .remotes import (
    RemoteLag as RemoteLag,
)
from .remotes import (
    add_remote as add_remote,
)
from .remotes import (
    differing_branches as differing_branches,
)
from .remotes import (
    list_remotes as list_remotes,
)
from .remotes import (
    remote_lag as remote_lag,
)
from .remotes import (
    remote_url as remote_url,
)
from .remotes import (
    remove_remote as remove_remote,
)
from .review import (
    DiffReport as DiffReport,
)
from .review import (
    Review as Review,
)
from .review import (
    changed_by as changed_by,
)
from .review import (
    diff_report as diff_report,
)
from .review import (
    link_ends as link_ends,
)
from .review import (
    review as review,
)
from .screen import (
    PendingWrite as PendingWrite,
)
from .screen import (
    Screen as Screen,
)
from .screen import (
    SecretFinding as SecretFinding,
)
from .selection import (
    Selected as Selected,
)
from .selection import (
    SelectedMemory as SelectedMemory,
)
from .selection import (
    select as select,
)
from .sessions import (
    SessionDetail as SessionDetail,
)
from .sessions import (
    SessionInfo as SessionInfo,
)
from .sessions import (
    SessionMemory as SessionMemory,
)
from .sessions import (
    SessionSummaryResult as SessionSummaryResult,
)
from .sessions import (
    check_session_id as check_session_id,
)
from .sessions import (
    list_sessions as list_sessions,
)
from .sessions import (
    session_detail as session_detail,
)
from .sessions import (
    session_path as session_path,
)
from .sessions import (
    summarize_session as summarize_session,
)
from .snapshot import (
    LinkRecord as LinkRecord,
)
from .snapshot import (
    Listing as Listing,
)
from .snapshot import (
    MemoryRecord as MemoryRecord,
)
from .snapshot import (
    Snapshot as Snapshot,
)
from .snapshot import (
    UnreadableMemory as UnreadableMemory,
)
from .store import (
    Clock as Clock,
)
from .store import (
    Store as Store,
)
from .tags import (
    TIERS as TIERS,
)
from .tags import (
    TagCount as TagCount,
)
from .tags import (
    count_tags as count_tags,
)
from .tags import (
    is_archived as is_archived,
)
from .tags import (
    tag as tag,
)
from .tags import (
    tier_of as tier_of,
)
from .tags import (
    untag as untag,
)
from .times import (
    TIME_FORMS as TIME_FORMS,
)
from .times import (
    parse_time as parse_time,
)
from .tokens import (
    HEADER_TOKENS as HEADER_TOKENS,
)
from .tokens import (
    estimate_tokens as estimate_tokens,
)
from .tokens import (
    memory_tokens as memory_tokens,
)
from .tokens import (
    recall_tokens as recall_tokens,
)
from .transfer import (
    FetchResult as FetchResult,
)
from .transfer import (
    PullResult as PullResult,
)
from .transfer import (
    PushResult as PushResult,
)
from .transfer import (
    RefUpdate as RefUpdate,
)
from .transfer import (
    fetch as fetch,
)
from .transfer import (
    pull as pull,
)
from .transfer import (
    push as push,
)
from .views import (
    CreateViewResult as CreateViewResult,
)
from .views import (
    DeleteViewResult as DeleteViewResult,
)
from .views import (
    View as View,
)
from .views import (
    create_view as create_view,
)
from .views import (
    delete_view as delete_view,
)
from .views import (
    get_view as get_view,
)
from .views import (
    list_views as list_views,
)
from .views import (
    render_view as render_view,
)
from .wording import (
    article as article,
)
from .wording import (
    plural as plural,
)
from .work_trees import (
    code_work_tree as code_work_tree,
)
from .work_trees import (
    main_work_tree as main_work_tree,
)
from .work_trees import (
    project_top as project_top,
)
