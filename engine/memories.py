"""Writing and reading memories: remember, import, edit, forget, show, list."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from ctx.engine.abbreviation import resolve_memory_id
from ctx.engine.adjacency import adjacency
from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.catalog import record_added
from ctx.engine.commits import CommitInfo
from ctx.engine.errors import InvalidInputError, RefNotFoundError
from ctx.engine.ids import CommitId, MemoryId, new_memory_id
from ctx.engine.layout import (
    MEMORY,
    PINNED,
    PRIMED,
    check_context,
    context_of,
    memory_path,
    slugify,
    source_path,
)
from ctx.engine.links import links_touching
from ctx.engine.model import (
    MAX_TAGS,
    Intent,
    Memory,
    Outcome,
    check_body,
    check_kind,
    check_tag,
    check_tier_tags,
    check_time,
    check_title,
    encode,
    headline,
)
from ctx.engine.snapshot import MemoryRecord, Snapshot, UnreadableMemory
from ctx.engine.store import Store
from ctx.engine.wording import plural

if TYPE_CHECKING:  # the text index (sqlite3) loads when a write asks it
    from ctx.engine.texts import TextIndex

__all__ = [
    "Draft",
    "EditResult",
    "ForgetResult",
    "ListedMemory",
    "MemoryListing",
    "RememberResult",
    "WriteResult",
    "edit",
    "forget",
    "list_memories",
    "pin",
    "remember",
    "remember_many",
    "show",
]


LISTING_WIDTH = 70
"""Characters of a headline in listings (``ls``, ``query``)."""


class Draft(msgspec.Struct, frozen=True, kw_only=True):
    """A memory to be written; validated when it is turned into a Memory.

    Attributes:
        text: The body.
        title: Optional one-line title.
        kind: One of the memory kinds.
        context: The folder under ``memory/`` (ignored when ``pinned``).
        tags: ``namespace:value`` tags.
        when: When the remembered thing happened; defaults to now.
        pinned: Store under ``pinned/<context>/`` to be recalled first.
        meta: Free string metadata.
    """

    text: str
    title: str | None = None
    kind: str = "fact"
    context: str = "general"
    tags: tuple[str, ...] = ()
    when: datetime | None = None
    pinned: bool = False
    meta: dict[str, str] = {}


class WriteResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a write did: the commit it made (if any) and the memories it touched.

    Attributes:
        commit: The commit, or None when nothing changed.
        ids: One id per draft, in order: the new memory's, or for a draft
            whose text was already there, the memory that holds it.
        paths: The path of each of ``ids`` (when known).
        skipped: The positions (0-based) of the drafts not written because
            their text was already on the branch (or earlier in the batch).
        updated: The memories an upsert rewrote instead of adding one.
    """

    commit: CommitInfo | None
    ids: tuple[MemoryId, ...]
    paths: tuple[str, ...] = ()
    skipped: tuple[int, ...] = ()
    updated: tuple[MemoryId, ...] = ()

    @property
    def existing(self) -> tuple[MemoryId, ...]:
        """Returns the ids of the skipped drafts' memories, in order."""
        return tuple(self.ids[n] for n in self.skipped)

    @property
    def written(self) -> tuple[MemoryId, ...]:
        """Returns the ids of the memories this write added, in order."""
        skipped = set(self.skipped)
        return tuple(m for n, m in enumerate(self.ids) if n not in skipped)


class RememberResult(Outcome, frozen=True, kw_only=True):
    """What ``remember`` wrote: the memory, its path and the commit.

    Attributes:
        id: The new memory's id (or the existing one's, see below).
        path: Where it is stored.
        commit: The commit that wrote it; None when nothing was written.
        existing: The branch already held this text: ``id`` is that memory's.
        updated: An upsert rewrote the memory of that kind and title.
        tags_added: For a text already held, the tags given that the memory
            did not carry, added to it (``commit`` is then that change's).
        pinned_now: For a text already held (or a memory an upsert
            rewrote) that was not pinned, asked to be pinned: the memory
            was moved under ``pinned/`` (``path`` is its new one; ``commit``
            that change's, or the tags' after it).
    """

    id: MemoryId
    path: str
    commit: CommitId | None
    existing: bool = False
    updated: bool = False
    tags_added: tuple[str, ...] = ()
    pinned_now: bool = False

    @classmethod
    def of(cls, result: WriteResult) -> RememberResult:
        """Returns the report of ``result``, the write of one memory."""
        return cls(
            id=result.ids[0],
            path=result.paths[0],
            commit=result.commit.id if result.commit else None,
            existing=bool(result.skipped),
            updated=bool(result.updated),
        )


class EditResult(Outcome, frozen=True, kw_only=True):
    """What a change to one memory (edit, tag, untag) did.

    Attributes:
        id: The memory's id.
        commit: The commit, or None when the memory already was so.
        changed: Whether a commit was made.
    """

    id: MemoryId
    commit: CommitId | None
    changed: bool


class ForgetResult(Outcome, frozen=True, kw_only=True):
    """What ``forget`` deleted: the memory, the commit and the path it had.

    Attributes:
        id: The forgotten memory's id.
        commit: The commit that deleted it.
        path: Where it was stored.
    """

    id: MemoryId
    commit: CommitId
    path: str


class ListedMemory(msgspec.Struct, frozen=True, kw_only=True):
    """One line of a listing (``ls``): a memory's id, kind, title and place.

    Attributes:
        id: The memory's id.
        kind: Its kind.
        title: Its title, if it has one.
        path: Where it is stored.
        headline: The title, or the body's first line, cut to 70 characters.
        conflict: Whether a merge left a conflict on it (``ctx show ID``).
    """

    id: MemoryId
    kind: str
    title: str | None
    path: str
    headline: str
    conflict: bool = False

    @classmethod
    def of(
        cls, record: MemoryRecord, conflicted: Set[MemoryId] = frozenset()
    ) -> ListedMemory:
        """Returns the listing line of ``record``, given the ids in conflict."""
        memory = record.memory
        return cls(
            id=memory.id,
            kind=memory.kind,
            title=memory.title,
            path=record.path,
            headline=headline(memory.title, memory.body, LISTING_WIDTH),
            conflict=memory.id in conflicted,
        )


class MemoryListing(msgspec.Struct, frozen=True, kw_only=True):
    """A listing's answer (``ls``): its lines, and the files left out of it.

    Attributes:
        memories: One line per memory, in the order asked for.
        unreadable: The memory files under the prefix that cannot be read
            (a store another tool wrote; ``ctx fsck`` names them too).
    """

    memories: tuple[ListedMemory, ...]
    unreadable: tuple[UnreadableMemory, ...] = ()


def edit_result(memory_id: MemoryId, commit: CommitInfo | None) -> EditResult:
    """Returns the EditResult of a change to ``memory_id`` that made ``commit``."""
    return EditResult(
        id=memory_id,
        commit=commit.id if commit else None,
        changed=commit is not None,
    )


def normalize_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Returns the validated tags, sorted and without repeats."""
    out = tuple(sorted({check_tag(t) for t in tags}))
    if len(out) > MAX_TAGS:
        raise InvalidInputError(f"A memory may carry at most {MAX_TAGS} tags.")
    return out


def _new_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Returns a new memory's tags, validated; its tier ones as `ctx tag` checks.

    Only a new memory's: a memory already stored may carry two tiers (a
    merge unites both sides' tags) and is still edited as it is.
    """
    out = normalize_tags(tags)
    check_tier_tags(out)
    return out


def _check_when(when: datetime) -> datetime:
    if when.tzinfo is None:
        raise InvalidInputError("A time must carry a timezone offset.")
    return check_time(when)


def build_memory(draft: Draft, memory_id: MemoryId, now: datetime) -> Memory:
    """Returns the validated Memory for ``draft``."""
    check_context(draft.context)
    for key, value in draft.meta.items():
        if not key or "\x00" in key or "\x00" in value:
            raise InvalidInputError(
                "Meta keys must be non-empty and free of NUL bytes."
            )
    return Memory(
        version=1,
        id=memory_id,
        kind=check_kind(draft.kind),
        title=check_title(draft.title),
        body=check_body(draft.text),
        tags=_new_tags(draft.tags),
        created_at=_check_when(draft.when or now),
        meta=dict(draft.meta),
    )


def _pinned_path(snap: Snapshot, memory: Memory, context: str, taken: set[str]) -> str:
    stem = slugify(memory.title or memory.body.split("\n", 1)[0])
    path = source_path(PINNED, context, stem)
    n = 2
    while path in taken or snap.blob_id(path) is not None:
        path = source_path(PINNED, context, f"{stem}-{n}")
        n += 1
    taken.add(path)
    return path


def remember(
    store: Store,
    draft: Draft,
    intent: Intent,
    *,
    branch: str | None = None,
    allow_duplicate: bool = False,
    upsert: bool = False,
) -> WriteResult:
    """Writes one memory as one commit.

    A text the branch already holds (whitespace aside) is not written again:
    the result names the memory that holds it (``skipped``), unless
    ``allow_duplicate``. With ``upsert``, the live memory of the draft's kind
    and title is rewritten instead (:func:`_upsert`).

    Returns:
        The commit (None when nothing was written) and the memory's id.

    Raises:
        InvalidInputError: the draft is not a valid memory, or an upsert is
            ambiguous (nothing written).
    """
    if upsert:
        return _upsert(store, draft, intent, branch=branch)
    return remember_many(
        store, [draft], intent, branch=branch, allow_duplicate=allow_duplicate
    )


def tip_text_index(store: Store, branch: str) -> TextIndex | None:
    from ctx.engine.texts import text_index

    try:
        tip = store.branch_tip(branch)
    except RefNotFoundError:
        return None  # the first write makes the branch
    return text_index(store, store.snapshot(tip))


def already_there(
    known: TextIndex | None, memories: Sequence[Memory]
) -> dict[int, int | tuple[MemoryId, str]]:
    """Returns, for each draft whose text is already there, where it is.

    The value is the position of an earlier draft with that text, or the id
    and path of the memory of ``known`` that has it.
    """
    from ctx.engine.texts import text_key

    keys = [text_key(memory.body) for memory in memories]
    stored = {} if known is None else known.first_with_keys(keys)
    seen: dict[str, int] = {}
    out: dict[int, int | tuple[MemoryId, str]] = {}
    for n, key in enumerate(keys):
        if key in seen:
            out[n] = seen[key]
        elif key in stored:
            out[n] = stored[key]
        seen.setdefault(key, n)
    return out


def remember_many(
    store: Store,
    drafts: Sequence[Draft],
    intent: Intent,
    *,
    branch: str | None = None,
    summary: str | None = None,
    labels: Sequence[str] | None = None,
    allow_duplicate: bool = False,
) -> WriteResult:
    """Writes many memories in one commit; every draft is validated first.

    A draft whose body (whitespace normalised) a live memory of the branch
    or an earlier draft already has is skipped, unless ``allow_duplicate``:
    the check asks the text index (``texts.py``), never the memories' blobs.

    Args:
        store: The store.
        drafts: The memories to write.
        intent: Who writes and why.
        branch: The branch (default: HEAD).
        summary: The commit's first line; ``{n}`` stands for the number of
            memories written, with its noun ("3 memories", "1 memory").
        labels: Names of the drafts for error messages (e.g. "Line 3").
        allow_duplicate: Write every draft, even a text already there.

    Raises:
        InvalidInputError: some draft is invalid; the message names it
            (by label, or "Item N"). Nothing is written.
    """
    from ctx.engine.texts import record_write, text_index

    if not drafts:
        raise InvalidInputError("There is nothing to write.")
    now = store.clock()
    memories: list[tuple[Memory, Draft]] = []
    for n, draft in enumerate(drafts, 1):
        try:
            memories.append((build_memory(draft, new_memory_id(now), now), draft))
        except InvalidInputError as exc:
            if len(drafts) == 1 and labels is None:
                raise
            label = labels[n - 1] if labels else f"Item {n}"
            raise InvalidInputError(f"{label}: {exc.message}", hint=exc.hint) from None
    name = target_branch(store, branch)
    bodies = [m for m, _ in memories]
    ids: list[MemoryId] = []
    paths: list[str] = []
    skipped: list[int] = []

    parent: list[Snapshot] = []
    written: list[tuple[str, Memory]] = []

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        ids.clear()
        paths.clear()
        skipped.clear()
        parent[:] = [snap]
        written.clear()
        there = (
            {} if allow_duplicate else already_there(text_index(store, snap), bodies)
        )
        taken: set[str] = set()
        out: dict[str, bytes | None] = {}
        for n, (memory, draft) in enumerate(memories):
            where = there.get(n)
            if where is not None:
                skipped.append(n)
                mid, path = (
                    (ids[where], paths[where]) if isinstance(where, int) else where
                )
                ids.append(mid)
                paths.append(path)
                continue
            if draft.pinned:
                path = _pinned_path(snap, memory, draft.context, taken)
            else:
                path = memory_path(draft.context, memory.id)
            out[path] = encode(memory)
            written.append((path, memory))
            ids.append(memory.id)
            paths.append(path)
        return out

    first = memories[0][0]
    if summary is None:
        summary = (
            f"Remember {first.kind} {first.id}: {headline(first.title, first.body, 60)}"
            if len(memories) == 1
            else "Remember {n}"
        )
    if "{n}" in summary:
        known = None if allow_duplicate else tip_text_index(store, name)
        fresh = len(memories) - len(
            {} if allow_duplicate else already_there(known, bodies)
        )
        summary = summary.replace("{n}", plural(fresh, "memory"))
    commit = store.write(name, intent, summary, build)
    if commit is not None and parent and written:
        after = store.snapshot(commit.id)
        record_write(store, parent[0], after, written)
        record_added(store, parent[0], after, written)
    return WriteResult(
        commit=commit, ids=tuple(ids), paths=tuple(paths), skipped=tuple(skipped)
    )


def _upsert(
    store: Store, draft: Draft, intent: Intent, *, branch: str | None = None
) -> WriteResult:
    """Rewrites the live memory of the draft's kind and title, or adds one.

    The memory found keeps its id, path and time; it takes the draft's body,
    and its tags gain the draft's. With none of that kind and title on the
    branch, the draft is written as :func:`remember` would.

    Raises:
        InvalidInputError: the draft has no title, is invalid, or two live
            memories have that kind and title. Nothing is written.
    """
    if draft.title is None:
        raise InvalidInputError(
            "An upsert needs a title.", hint="Give --title with --upsert."
        )
    from ctx.engine.texts import text_index

    probe = build_memory(draft, new_memory_id(store.clock()), store.clock())
    name = target_branch(store, branch)
    found: list[tuple[MemoryId, str]] = []

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        found.clear()
        same = text_index(store, snap).with_title(probe.kind, probe.title or "")
        if len(same) > 1:
            kind, title = probe.kind, probe.title
            raise InvalidInputError(
                f"{plural(len(same), 'memory')} of kind {kind} are titled {title!r}.",
                hint=f"Edit one by id: `ctx edit {same[0][0]}`.",
            )
        if not same:
            return {}
        mid, path = same[0]
        blob = snap.blob_id(path)
        assert blob is not None  # the index is caught up with this very tree
        old = snap.record(path, blob).memory
        new = msgspec.structs.replace(
            old,
            body=probe.body,
            tags=normalize_tags(set(old.tags) | set(probe.tags)),
            meta={**old.meta, **probe.meta},
        )
        found.append((mid, path))
        return {path: encode(new)}

    summary = f"Upsert {probe.kind}: {headline(probe.title, probe.body, 60)}"
    # The look and the add under one hold of the lock: between two holds, a
    # second upsert of the same title would find none too, and add another
    # (then every later upsert of it is refused as ambiguous).
    with store.locked():
        commit = store.write(name, intent, summary, build)
        if not found:
            return remember_many(store, [draft], intent, branch=branch)
    mid, path = found[0]
    return WriteResult(commit=commit, ids=(mid,), paths=(path,), updated=(mid,))


def edit(
    store: Store,
    memory_id: str,
    intent: Intent,
    *,
    body: str | None = None,
    title: str | None = None,
    kind: str | None = None,
    add_tags: Sequence[str] = (),
    remove_tags: Sequence[str] = (),
    meta: Mapping[str, str] | None = None,
    when: datetime | None = None,
    branch: str | None = None,
) -> EditResult:
    """Writes a new version of a memory at the same path.

    ``when`` changes when the remembered thing happened (``created_at``).

    Returns:
        The commit, or a result with ``commit=None`` if nothing changed.
    """
    mid = resolve_memory_id(store, memory_id, branch)
    if body is not None:
        check_body(body)
    new_title = check_title(title) if title is not None else None
    if kind is not None:
        check_kind(kind)
    added = normalize_tags(add_tags)
    removed = set(remove_tags)
    happened = None if when is None else _check_when(when)

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        rec = snap.find(mid)
        old = rec.memory
        tags = normalize_tags((set(old.tags) | set(added)) - removed)
        new = msgspec.structs.replace(
            old,
            body=body if body is not None else old.body,
            title=new_title if title is not None else old.title,
            kind=kind or old.kind,
            tags=tags,
            meta={**old.meta, **meta} if meta else old.meta,
            created_at=happened or old.created_at,
        )
        return {rec.path: encode(new)}

    commit = store.write(target_branch(store, branch), intent, f"Edit {mid}", build)
    return edit_result(mid, commit)


def pin(
    store: Store, memory_id: str, intent: Intent, *, branch: str | None = None
) -> EditResult:
    """Moves a memory under ``pinned/``, where every recall gives it first.

    It keeps its id, text and links; its path becomes that of a memory
    remembered with ``pinned`` (``pinned/<context>/<slug>.json``, the
    context of the folder it leaves). A memory pinned already changes
    nothing: no commit.

    Raises:
        InvalidInputError: it lies in ``primed/`` or ``sessions/``, whose
            own commands keep it there (a prime again would move it back; a
            session's summary is found by its path).
    """
    mid = resolve_memory_id(store, memory_id, branch)

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        rec = snap.find(mid)
        if rec.pinned:
            return {}
        if rec.area != MEMORY:
            raise InvalidInputError(
                f"Memory {mid} lies in {rec.area}/ ({rec.path}), which its own "
                "command keeps: only a memory under memory/ can be pinned.",
                hint="`ctx prime FILE --pin` pins a document's sections."
                if rec.area == PRIMED
                else "A session's summary stays with its session.",
            )
        path = _pinned_path(snap, rec.memory, context_of(rec.path), set())
        return {rec.path: None, path: encode(rec.memory)}

    commit = store.write(target_branch(store, branch), intent, f"Pin {mid}", build)
    return edit_result(mid, commit)


def forget(
    store: Store, memory_id: str, intent: Intent, *, branch: str | None = None
) -> ForgetResult:
    """Deletes a memory and every link from or to it, in one commit.

    The memory stays in history: ``show ID@COMMIT`` and ``log ID`` find it.
    Incoming links are found through the adjacency index.
    """
    mid = resolve_memory_id(store, memory_id, branch)
    paths: list[str] = []

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        rec = snap.find(mid)
        out: dict[str, bytes | None] = {rec.path: None}
        out |= dict.fromkeys(links_touching(store, snap, mid))
        paths[:] = [rec.path]
        return out

    commit = store.write(target_branch(store, branch), intent, f"Forget {mid}", build)
    assert commit is not None  # the memory was found, so its path is deleted
    return ForgetResult(id=mid, commit=commit.id, path=paths[0])


def show(store: Store, memory_id: str, rev: str | None = None) -> MemoryRecord:
    """Returns a memory as it stands at ``rev`` (default: the HEAD branch).

    ``memory_id`` is an id, full or short, never ``ID@REV``: a revision
    comes only from ``rev``, which the caller checked (a door that reads
    ``ID@REV`` splits it first).
    """
    mid = resolve_memory_id(store, memory_id, rev)
    commit = resolve_revision(store, rev)
    return store.snapshot(commit).find(mid)


def list_memories(
    store: Store, rev: str | None = None, prefix: str = "", *, all: bool = False
) -> list[MemoryRecord]:
    """Returns the memories at ``rev`` whose path starts with ``prefix``.

    Memories another one SUPERSEDES are left out unless ``all`` is true.
    """
    if ".." in prefix.split("/"):
        raise InvalidInputError(f"Path prefix {prefix!r} may not contain '..'.")
    commit: CommitId = resolve_revision(store, rev)
    snap = store.snapshot(commit)
    folder = prefix.rpartition("/")[0]
    records = snap.memories(folder) if folder else snap.memories()
    hidden = set() if all else adjacency(store, snap).superseded()
    return [
        r for r in records if r.path.startswith(prefix) and r.memory.id not in hidden
    ]
