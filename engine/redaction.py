"""Redaction: removing a text from every version of history, for good.

A secret that got into a commit travels with every push. ``redact_text``
(or ``redact_memory``, for every version of one memory) rewrites every
commit that any ref or any reflog line reaches and that holds the text, in
these steps, each one safe to be killed in:

1. Rewrite: every blob that holds the text gets a new version without it
   (``[REDACTED]``), every tree and commit above it a new id; a commit whose
   tree or message changed keeps its trailers and gains ``Ctx-Redacted:
   <what> (<reason>)``. Author, committer and times are kept. The new
   objects are stored; no ref points at them yet.
2. Record: a new snapshot on ``refs/ctx/redactions`` whose tree holds
   ``<id>.json`` (what, why, when, and the map of old commit and blob ids to
   new ones, never the text) and, under ``blobs/<old blob id>`` and
   ``messages/<old commit id>``, the redacted version of each blob and the
   rewritten message of each commit whose message held the text, of those
   other clones may hold (:func:`_shared`), so another clone can apply the
   same rewrite without knowing the text. The record is stored, and
   ``redaction.pending`` in the store folder names it. Redactions a fetch
   brought and nothing applied yet are applied first.
3. Refs: every branch, fetched branch and the record move at once (one
   write of ``packed-refs``).
4. Reflogs: every line's ids are mapped, and its message redacted; each log
   file is replaced by a rename. The operation log is the reflog, so
   ``ctx undo`` keeps working on the rewritten commits.
5. Prune: every object that no ref and no reflog line reaches is deleted,
   loose ones and those in packs (the packs are rewritten without them);
   the engine's caches are dropped. ``redaction.pending`` goes last.

Killed before step 2 ends, the store is as it was (with a few unreferenced
new objects a later ``gc`` removes). Killed after, the next open of the
store (:meth:`~ctx.engine.store.Store.open`) finishes steps 3 to 5 from
``redaction.pending``, which holds the text until then (it is in the
objects anyway until the prune).

The record travels: ``fetch`` and ``push`` bring each other's records
(:func:`~ctx.engine._redaction_sync.sync_redactions`), a fetch refuses
objects a redaction removed
(:func:`~ctx.engine._redaction_record.redacted_objects`), and a pull
applies the record to a clone that still holds the old history
(:func:`apply_redactions`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet

import msgspec
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from ctx.engine._redaction_finish import (
    HEADS,
    REDACTED,
    REMOTES,
    Pending,
    finish_steps,
    needles_of,
    reflog_commits,
    reflog_shas,
    refs_to_rewrite,
    replaced,
    replaced_in_text,
    replaced_message,
    write_pending,
)
from ctx.engine._redaction_record import (
    BLOBS,
    MESSAGES,
    Redaction,
    blob_data,
    list_redactions,
    record_files,
    record_id,
    record_tip,
    store_record,
)
from ctx.engine._redaction_rewrite import (
    Graph,
    Rewrite,
    hex_map,
    parents_first,
    rewrite_history,
    trailer_of,
    with_trailer,
)
from ctx.engine._redaction_sync import delete_unreached
from ctx.engine.errors import CorruptStoreError, InvalidInputError, NotFoundError
from ctx.engine.ids import MemoryId
from ctx.engine.layout import MEMORY_AREAS
from ctx.engine.model import Memory, Outcome, decode_memory, encode
from ctx.engine.remotes import list_remotes
from ctx.engine.store import Store

__all__ = [
    "RedactResult",
    "apply_redactions",
    "memory_texts",
    "redact_memory",
    "redact_text",
]

_MIN_TEXT = 4
"""Shorter texts are not searched for in commit messages (too common)."""


class RedactResult(Outcome, frozen=True, kw_only=True):
    """What a redaction (or applying one) did.

    Attributes:
        redaction: The redaction's id.
        what: What was removed.
        reason: Why.
        commits: How many commits were rewritten.
        blobs: How many blob versions were rewritten.
        branches: The branches that moved.
        pruned: How many objects were deleted.
        remotes: Per remote, its branches that still hold the old history
            (as last fetched): ``ctx push REMOTE --force-with-lease`` them.
    """

    redaction: str
    what: str
    reason: str | None = None
    commits: int
    blobs: int
    branches: tuple[str, ...] = ()
    pruned: int = 0
    remotes: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)


# -- the public operations -----------------------------------------------------


def redact_text(store: Store, text: str, *, reason: str | None = None) -> RedactResult:
    """Removes ``text`` (taken literally) from every blob and commit message.

    Raises:
        InvalidInputError: the text is too short, or no version holds it.
    """
    if len(text.strip()) < _MIN_TEXT:
        raise InvalidInputError(
            f"Give at least {_MIN_TEXT} characters to redact.",
            hint="A shorter text would match too much.",
        )

    def blob_fn(data: bytes) -> bytes | None:
        return replaced_in_text(data, (text,))

    return _redact(
        store,
        what=f"a text of {len(text)} characters",
        reason=reason,
        blob_fn=blob_fn,
        texts=(text,),
    )


def redact_memory(
    store: Store, memory_id: MemoryId, *, reason: str | None = None
) -> RedactResult:
    """Removes the title and body of every version of memory ``memory_id``.

    Each version keeps its id, kind, tags and times, with ``[REDACTED]`` as
    its body (and title); commit messages and conflicts lose its texts.

    Raises:
        NotFoundError: no version of the memory is in the history.
    """
    key = memory_id.encode()
    texts = memory_texts(store, memory_id)
    if not texts:
        raise NotFoundError(
            f"No version of memory {memory_id} is in the history.",
            hint="`ctx log` shows the memories each commit changed.",
        )
    needles = needles_of(texts)

    def blob_fn(data: bytes) -> bytes | None:
        if key not in data:
            return None
        try:
            memory = decode_memory(data)
        except CorruptStoreError:
            return replaced(data, needles)  # a conflict holding its versions
        if memory.id != memory_id:
            return None
        redacted = msgspec.structs.replace(
            memory, body=REDACTED, title=REDACTED if memory.title else None
        )
        new = encode(redacted)
        return None if new == data else new

    return _redact(
        store,
        what=f"memory {memory_id}",
        reason=reason,
        blob_fn=blob_fn,
        texts=tuple(t for t in texts if len(t) >= _MIN_TEXT),
    )


def apply_redactions(store: Store) -> list[RedactResult]:
    """Rewrites what this store holds of history that a recorded redaction removed.

    For a clone that still holds the old history when another's redactions
    arrive (a pull). A redaction is pending here when the store holds one
    of its old commits or blobs, or an earlier pending one made it. The
    pending ones are replayed in their order, in memory, on ids alone: each
    maps old blob ids to new ones, and a commit it rewrote to the one the
    redactions since made of it, where this store has that (it was
    fetched). A version one redaction made and a later one rewrote again is
    no longer anywhere (it held the later text), so only the last versions,
    which the record carries under ``blobs/``, are stored; the refs then
    move once.

    Returns:
        One result per pending redaction, with how many of its commits and
        versions this store held; the refs moved and the objects pruned are
        in the last.

    Raises:
        CorruptStoreError: a redacted version the record names is not
            here (nothing is changed).
    """
    if not isinstance(store.repo, Repo):
        return []
    with store.locked():
        objects = store.repo.object_store
        pending = _pending(store, list_redactions(store))
        if not pending:
            return []
        made: dict[ObjectID, ShaFile] = {}

        def lookup(sha: ObjectID) -> ShaFile:
            return made[sha] if sha in made else objects[sha]

        roots = [*refs_to_rewrite(store).values(), *reflog_commits(store)]
        # A version the record carries no redacted version of was only the
        # redacting store's own (see _shared): left as it is.
        files = record_files(store, record_tip(store))[0]
        carried = {
            path[len(BLOBS) + 1 :] for path in files if path.startswith(BLOBS + b"/")
        }
        rewritten = {old for record, _, _ in pending for old in record.commits}
        messages = {
            ObjectID(path[len(MESSAGES) + 1 :]): blob_data(store, sha)
            for path, (_, sha) in files.items()
            if path.startswith(MESSAGES + b"/")
            and path[len(MESSAGES) + 1 :].decode() in rewritten
        }
        composed: dict[ObjectID, ObjectID] = {}
        for at, (record, _, _) in enumerate(pending):
            blobs = {
                _sha(o): _sha(n)
                for o, n in record.blobs.items()
                if o.encode() in carried
            }
            rewrite = rewrite_history(
                store,
                record,
                blob_map=blobs.get,
                known=_known(record, [r for r, _, _ in pending[at + 1 :]]),
                texts=(),
                roots=[composed.get(r, r) for r in roots],
                lookup=lookup,
                messages=messages,
            )
            if rewrite is None:
                continue
            commits, _, new_objects, _, _ = rewrite
            # Each commit held here, to its latest version; one an earlier
            # step made is one of those versions already.
            composed = {o: commits.get(n, n) for o, n in composed.items()} | {
                o: n for o, n in commits.items() if o not in made
            }
            made.update((o.id, o) for o in new_objects)
        if not composed:
            # Nothing here reaches what they removed any more (the fetch moved
            # the only branch that did): what is left of it on disk goes.
            old = {
                _sha(sha)
                for record, _, _ in pending
                for sha in (*record.commits, *record.blobs)
            }
            pruned = delete_unreached(store, {sha for sha in old if sha in objects})
            if not pruned:
                return []
            last = RedactResult(
                redaction="", what="", commits=0, blobs=0, pruned=pruned
            )
        else:
            store.add_objects(_kept(store, made, set(composed.values())))
            subjects = _subjects(store, composed)
            last = _settle(
                store,
                pending[-1][0],
                Pending(commits=hex_map(composed), subjects=subjects),
                {},
            )
    results = [
        RedactResult(
            redaction=record.id,
            what=record.what,
            reason=record.reason,
            commits=commits,
            blobs=blobs,
        )
        for record, commits, blobs in pending
    ]
    results[-1] = msgspec.structs.replace(
        results[-1], branches=last.branches, pruned=last.pruned, remotes=last.remotes
    )
    return results


def _subjects(
    store: Store, composed: Mapping[ObjectID, ObjectID]
) -> dict[str, tuple[str, str]]:
    """Returns each rewritten commit's first line and its new one's, if they differ."""
    objects = store.repo.object_store
    out = {}
    for old, new in composed.items():
        was, now = objects[old], objects[new]
        assert isinstance(was, Commit)
        assert isinstance(now, Commit)
        first, second = (c.message.split(b"\n", 1)[0] for c in (was, now))
        if first != second:
            with contextlib.suppress(UnicodeDecodeError):
                out[old.decode()] = (first.decode(), second.decode())
    return out


def _pending(
    store: Store, records: Iterable[Redaction]
) -> list[tuple[Redaction, int, int]]:
    """Returns the redactions pending here, in the order they apply.

    A redaction is pending when the store holds one of its old objects, or
    another pending redaction made one (it rewrote again what that one
    rewrote): that one goes first, whatever their times say (clocks of
    clones differ). Each comes with how many of its commits and blobs the
    store held or the ones before it made.
    """
    objects = store.repo.object_store
    records = list(records)
    olds = {r.id: {*r.commits, *r.blobs} for r in records}
    news = {r.id: {*r.commits.values(), *r.blobs.values()} for r in records}
    made: set[str] = set()
    chosen: list[Redaction] = []
    grown = True
    while grown:  # every pending one, however they chain
        grown = False
        for record in records:
            if record not in chosen and any(
                o in made or _sha(o) in objects for o in olds[record.id]
            ):
                chosen.append(record)
                made |= news[record.id]
                grown = True
    ordered: list[Redaction] = []
    left = sorted(chosen, key=lambda r: (r.time, r.id))
    while left:
        # The first whose old objects no other one left makes (a cycle,
        # which no clone makes, takes them in time order).
        ready = [
            r
            for r in left
            if not any(olds[r.id] & news[o.id] for o in left if o is not r)
        ]
        ordered.append((ready or left)[0])
        left.remove(ordered[-1])
    out = []
    made = set()
    for record in ordered:
        commits = sum(o in made or _sha(o) in objects for o in record.commits)
        blobs = sum(o in made or _sha(o) in objects for o in record.blobs)
        out.append((record, commits, blobs))
        made |= news[record.id]
    return out


def _known(record: Redaction, later: list[Redaction]) -> dict[ObjectID, ObjectID]:
    """Returns each commit ``record`` rewrote, to what ``later`` made of it in turn."""
    out = {}
    for old, new in record.commits.items():
        for each in later:
            new = each.commits.get(new, new)
        out[_sha(old)] = _sha(new)
    return out


def _kept(
    store: Store, made: Mapping[ObjectID, ShaFile], tips: AbstractSet[ObjectID]
) -> list[ShaFile]:
    """Returns the objects of ``made`` that ``tips`` reach, each one checked.

    Raises:
        CorruptStoreError: one of them names a blob that is neither made
            nor in the store (the record lacks a redacted version).
    """
    objects = store.repo.object_store
    out: dict[ObjectID, ShaFile] = {}
    stack = [sha for sha in tips if sha in made]
    while stack:
        obj = made[stack.pop()]
        if obj.id in out:
            continue
        out[obj.id] = obj
        if isinstance(obj, Commit):
            named = [obj.tree, *obj.parents]
        else:
            assert isinstance(obj, Tree)
            named = [e.sha for e in obj.iteritems() if e.mode != 0o160000]
        for sha in named:
            if sha in made:
                stack.append(sha)
            elif sha not in objects:
                raise CorruptStoreError(
                    f"The record of redactions lacks object {sha.decode()[:10]}, "
                    "which a redaction put in its place.",
                    hint="Nothing was changed; `ctx fetch` brings the whole record.",
                )
    return list(out.values())


def _sha(text: str) -> ObjectID:
    return ObjectID(text.encode())


def memory_texts(store: Store, memory_id: MemoryId) -> tuple[str, ...]:
    """Returns the titles and bodies of every version of ``memory_id`` in history.

    What :func:`redact_memory` removes; empty if no version is there (or
    every one is redacted already).
    """
    key = memory_id.encode()
    with store.locked():
        texts: set[str] = set()
        for blob in _blobs_holding(store, key):
            memory = _memory(store, blob)
            if memory is not None and memory.id == memory_id:
                texts.update(t for t in (memory.title, memory.body) if t)
    texts.discard(REDACTED)
    return tuple(sorted(texts, key=len, reverse=True))


# -- one redaction ---------------------------------------------------------------


def _redact(
    store: Store,
    *,
    what: str,
    reason: str | None,
    blob_fn: Callable[[bytes], bytes | None],
    texts: tuple[str, ...],
) -> RedactResult:
    if not isinstance(store.repo, Repo) or store.path is None:
        raise InvalidInputError("Only a store on disk can be redacted.")
    if reason is not None and ("\n" in reason or "\r" in reason):
        raise InvalidInputError("A redaction's reason is one line.")
    objects = store.repo.object_store
    memo: dict[ObjectID, ObjectID | None] = {}
    new_blobs: list[ShaFile] = []

    def blob_map(sha: ObjectID) -> ObjectID | None:
        if sha not in memo:
            obj = objects[sha]
            assert isinstance(obj, Blob)
            data = blob_fn(obj.data)
            if data is None or data == obj.data:
                memo[sha] = None
            else:
                blob = Blob.from_string(data)
                new_blobs.append(blob)
                memo[sha] = blob.id
        return memo[sha]

    record = Redaction(id="", what=what, reason=reason, time=store.clock())

    def rewritten() -> Rewrite | None:
        memo.clear()
        new_blobs.clear()
        return rewrite_history(
            store,
            record,
            blob_map=blob_map,
            known={},
            texts=texts,
            roots=[*refs_to_rewrite(store).values(), *reflog_commits(store)],
            lookup=objects.__getitem__,
        )

    with store.locked():
        rewrite = rewritten()
        if rewrite is None:
            raise InvalidInputError(
                "No version in the history holds what was to be redacted.",
                hint="Nothing was changed.",
            )
        # Redactions a fetch brought and nothing applied yet go first: what
        # this one records then starts from their versions and messages.
        if _pending(store, list_redactions(store)):
            applied = apply_redactions(store)
            rewrite = rewritten()
            if rewrite is None and applied:
                return applied[-1]  # a fetched redaction took it out already
            if rewrite is None:
                raise CorruptStoreError("The history changed while it was redacted.")
        commits, blobs, new_objects, trees, graph = rewrite
        shared, shared_commits = _shared(store, blobs, trees, graph)
        messages = _messages(store, record, commits, new_objects, shared_commits, texts)
        # Step 1: the rewritten objects, referenced by nothing yet.
        store.add_objects([*new_blobs, *new_objects])
        # Step 2: the record, and the note that the redaction is under way.
        full = msgspec.structs.replace(
            record, commits=hex_map(commits), blobs=hex_map(blobs)
        )
        full = msgspec.structs.replace(full, id=record_id(full))
        record_commit = store_record(
            store, full, {o: n for o, n in blobs.items() if o in shared}, messages
        )
        pending = Pending(
            record=record_commit.decode(), commits=full.commits, texts=texts
        )
        return _settle(store, full, pending, blobs)


def _settle(
    store: Store,
    record: Redaction,
    pending: Pending,
    blobs: Mapping[ObjectID, ObjectID],
) -> RedactResult:
    """Notes the rewrite as under way, then runs steps 3 to 5."""
    write_pending(store, pending)
    commits = {ObjectID(o.encode()) for o in pending.commits}
    stale = _stale_remotes(store, refs_to_rewrite(store), commits)
    moved, pruned = finish_steps(store, pending)
    return RedactResult(
        redaction=record.id,
        what=record.what,
        reason=record.reason,
        commits=len(pending.commits),
        blobs=len(blobs),
        branches=moved,
        pruned=pruned,
        remotes=stale,
    )


def _messages(
    store: Store,
    record: Redaction,
    commits: Mapping[ObjectID, ObjectID],
    made: Iterable[ShaFile],
    shared: AbstractSet[ObjectID] | None,
    texts: tuple[str, ...],
) -> dict[ObjectID, Blob]:
    """Returns the messages the record carries, by the old commit's id.

    Those of the shared commits (all with ``shared`` None) whose message
    held the text, as rewritten: a clone that holds such a commit but never
    fetches its new version (an undone write) takes the message from here.
    Those the record carries already lose the text too, and gain this
    redaction's trailer, as the commit they became did: each is the message
    of the commit's last version.
    """
    needles = needles_of(texts)
    objects = store.repo.object_store
    new = {obj.id: obj for obj in made if isinstance(obj, Commit)}
    out: dict[ObjectID, Blob] = {}
    files = record_files(store, record_tip(store))[0]
    for path, (_, sha) in files.items():
        if path.startswith(MESSAGES + b"/"):
            carried = objects[sha]
            data = (
                replaced(carried.data, needles) if isinstance(carried, Blob) else None
            )
            if data is not None:
                data = with_trailer(data, trailer_of(record))
                out[ObjectID(path[len(MESSAGES) + 1 :])] = Blob.from_string(data)
    for old, rewritten in commits.items():
        if shared is not None and old not in shared:
            continue
        commit = objects[old]
        assert isinstance(commit, Commit)
        if replaced_message(commit.message, needles) is not None:
            out.setdefault(old, Blob.from_string(new[rewritten].message))
    return out


def _shared(
    store: Store,
    blobs: Mapping[ObjectID, ObjectID],
    trees: Mapping[ObjectID, ObjectID],
    graph: Graph,
) -> tuple[set[ObjectID], set[ObjectID] | None]:
    """Returns the rewritten blobs, and the commits, that other clones may hold.

    The record carries the redacted version of these only: it travels with
    every push, and the redacted version of a memory only this store held
    would publish the rest of it. A blob is the store's own when only
    branches no remote has (no fetched branch of that name) reach it, by
    their tips or their reflogs (an undone write): a branch never pushed. A
    store without remotes cannot tell (a team server others fetch from):
    every blob is shared. So is one the record already carries the
    redacted version of (this one has less of it). Only the trees the
    rewrite changed (``trees``, old to new) are read, and the commits are
    the rewrite's (``graph``). The commits are None for every commit.
    """
    files = record_files(store, record_tip(store))[0]
    published = {
        sha for path, (_, sha) in files.items() if path.startswith(BLOBS + b"/")
    }
    if not list_remotes(store):
        return set(blobs), None
    refs = refs_to_rewrite(store)
    tracked = {
        bytes(ref[len(REMOTES) :]).partition(b"/")[2]
        for ref in refs
        if ref.startswith(REMOTES)
    }

    def shared_ref(name: bytes) -> bool:
        return not name.startswith(HEADS) or name[len(HEADS) :] in tracked

    roots = [sha for ref, sha in refs.items() if shared_ref(bytes(ref))]
    roots += reflog_shas(store, shared_ref)
    commits: set[ObjectID] = set()
    walk = [sha for sha in roots if sha in graph]
    while walk:
        sha = walk.pop()
        if sha not in commits:
            commits.add(sha)
            walk.extend(p for p in graph[sha][1] if p in graph)
    objects = store.repo.object_store
    found = {sha for sha in blobs if sha in published}
    seen: set[ObjectID] = set()
    stack = [graph[sha][0] for sha in commits]
    while stack:
        sha = stack.pop()
        if sha in seen or trees.get(sha, sha) == sha:
            continue  # read already, or holds no rewritten blob
        seen.add(sha)
        tree = objects[sha]
        assert isinstance(tree, Tree)
        for entry in tree.iteritems():
            if entry.sha in blobs:
                found.add(entry.sha)
            elif entry.mode & 0o170000 == 0o040000:
                stack.append(entry.sha)
    return found, commits


# -- helpers ---------------------------------------------------------------------


def _blobs_holding(store: Store, key: bytes) -> set[ObjectID]:
    """Returns the blobs of memory areas, in any reachable version, holding ``key``."""
    objects = store.repo.object_store
    roots = [*refs_to_rewrite(store).values(), *reflog_commits(store)]
    areas = {a.encode() for a in MEMORY_AREAS}
    seen: set[ObjectID] = set()
    found: set[ObjectID] = set()
    stack: list[ObjectID] = []
    for commit in parents_first(objects.__getitem__, roots):
        top = objects[commit.tree]
        assert isinstance(top, Tree)
        stack.extend(e.sha for e in top.iteritems() if e.path in areas)
    while stack:
        sha = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        obj = objects[sha]
        if isinstance(obj, Tree):
            stack.extend(e.sha for e in obj.iteritems())
        elif isinstance(obj, Blob) and key in obj.data:
            found.add(sha)
    return found


def _memory(store: Store, sha: ObjectID) -> Memory | None:
    obj = store.repo.object_store[sha]
    assert isinstance(obj, Blob)
    try:
        return decode_memory(obj.data)
    except CorruptStoreError:
        return None


def _stale_remotes(
    store: Store, refs: Mapping[Ref, ObjectID], commits: AbstractSet[ObjectID]
) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for ref, sha in refs.items():
        if ref.startswith(REMOTES) and sha in commits:
            remote, _, branch = bytes(ref[len(REMOTES) :]).decode().partition("/")
            out.setdefault(remote, []).append(branch)
    return {name: tuple(sorted(b)) for name, b in sorted(out.items())}
