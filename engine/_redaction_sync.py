"""Joining another clone's record of redactions, and what it leaves behind.

A fetch and a push bring the remote's record (:mod:`ctx.engine.transfer`);
:func:`sync_redactions` joins it to the store's (both sides' redactions
kept, each version at its latest), :func:`record_behind` tells a push
whether the remote's lacks part of the store's, and what a record that was
behind carried of the texts a later redaction took out is deleted
(:func:`drop_removed`, and when the store's own record moves) unless a ref,
a reflog line or a branch just fetched reaches it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet

from dulwich.object_store import DiskObjectStore
from dulwich.objects import Commit, ObjectID

from ctx.engine._redaction_finish import reachable, reflog_commits
from ctx.engine._redaction_record import (
    BLOBS,
    MESSAGES,
    REDACTIONS_REF,
    closed,
    record_files,
    record_tip,
    redacted_objects,
    snapshot,
)
from ctx.engine.remotes import write_refs
from ctx.engine.store import Store

__all__ = ["delete_unreached", "drop_removed", "record_behind", "sync_redactions"]


def sync_redactions(
    store: Store, theirs: ObjectID | None, keep: Iterable[ObjectID] = ()
) -> bool:
    """Joins another clone's record (commit ``theirs``, fetched) to this one.

    Both sides' redactions are kept: their files are unioned (this side's
    where both name one, each ``blobs/`` entry then at its latest version).
    A record this one replaced is behind and changes nothing. One that holds
    all of this one is taken as it is when each record it says it replaced
    is one this store replaced or holds (a claim about another remote's
    record is not taken on trust: it would stop that record from being
    fetched); otherwise the join is a new snapshot that replaced both. The
    record moves with compare-and-swap under the store's lock.

    Returns:
        Whether the record changed.
    """
    if theirs is None or theirs not in store.repo.object_store:
        return False
    if not isinstance(store.repo.object_store[theirs], Commit):
        return False
    with store.locked():
        ours = record_tip(store)
        kept, replaced = record_files(store, ours)
        if ours == theirs or theirs in replaced:
            return False
        other, other_replaced = record_files(store, theirs)
        entries = closed({**other, **kept, **_later_messages(kept, other)})
        if ours is not None and entries == kept:
            return False
        checked = replaced | ({ours} if ours is not None else set())
        if entries == other and other_replaced <= checked:
            write_refs(store, {REDACTIONS_REF: theirs})
        else:
            commit, made = snapshot(
                store, entries, checked | {theirs}, "Join redaction records"
            )
            store.add_objects(made)
            write_refs(store, {REDACTIONS_REF: commit.id})
        _drop_replaced_record(store, ours, keep)
        return True


def _later_messages(
    kept: Mapping[bytes, tuple[int, ObjectID]],
    other: Mapping[bytes, tuple[int, ObjectID]],
) -> dict[bytes, tuple[int, ObjectID]]:
    """Returns the message entries of ``other`` that are later than this record's.

    Where both records carry a commit's message, differently, the record
    whose redactions include all of the other's made the later one. Two
    records that each hold a redaction the other lacks (made on two clones
    at once) keep this one's, as for versions (docs/security.md).
    """
    mine_ids = {path for path in kept if path.endswith(b".json")}
    their_ids = {path for path in other if path.endswith(b".json")}
    if not mine_ids < their_ids:
        return {}
    return {
        path: entry
        for path, entry in other.items()
        if path.startswith(MESSAGES + b"/") and kept.get(path, entry) != entry
    }


def record_behind(store: Store, theirs: ObjectID | None) -> bool:
    """Returns whether record ``theirs`` (a remote's) lacks part of this store's.

    A push sends the store's record only then: after a join, two records
    that hold the same differ in their ids alone.
    """
    ours = record_tip(store)
    if ours is None or theirs == ours:
        return False
    if theirs is None:
        return True
    if theirs in store.repo.object_store:
        return record_files(store, theirs)[0] != record_files(store, ours)[0]
    return True  # one this record replaced (never fetched again)


def drop_removed(
    store: Store,
    ids: Collection[ObjectID],
    keep: Iterable[ObjectID] = (),
    record: ObjectID | None = None,
) -> int:
    """Deletes the objects of ``ids`` that a redaction removed and nothing reaches.

    A remote's record (``record``) that is behind in part holds versions,
    and commit messages, a later redaction here rewrote again (with the
    text it took out); fetched with it (``ids``: what the fetch walked),
    they would stay on disk. What any ref, reflog line or ``keep`` (the
    fetched branches, before their tracking refs move) reaches is kept: a
    branch here may hold a version until the redaction is applied.

    Returns:
        How many were deleted.
    """
    objects = store.repo.object_store
    if not isinstance(objects, DiskObjectStore):
        return 0  # a store in memory: gone with the process
    with store.locked():
        removed = set(redacted_objects(store))
        if record is not None and record in objects and record != record_tip(store):
            files = record_files(store, record)[0]
            removed |= {
                sha
                for path, (_, sha) in files.items()
                if path.startswith(MESSAGES + b"/")
            }
        found = {sha for sha in ids if sha in removed and sha in objects}
        return delete_unreached(store, found, keep)


def delete_unreached(
    store: Store, found: AbstractSet[ObjectID], keep: Iterable[ObjectID] = ()
) -> int:
    """Deletes the objects of ``found`` that no ref, reflog line or ``keep`` reaches.

    Under the store's lock; the whole history is walked only when
    ``found`` holds anything.

    Returns:
        How many were deleted.
    """
    objects = store.repo.object_store
    if not found or not isinstance(objects, DiskObjectStore):
        return 0
    roots = [*store.repo.get_refs().values(), *reflog_commits(store), *keep]
    gone = set(found) - reachable(store, roots)
    packed = set()
    for sha in gone:
        if objects.contains_loose(sha):
            with contextlib.suppress(OSError):
                objects.delete_loose_object(sha)
        else:
            packed.add(sha)
    if packed:
        objects.repack(exclude=packed)
    store.drop_caches()
    return len(gone)


def _drop_replaced_record(
    store: Store, old: ObjectID | None, keep: Iterable[ObjectID] = ()
) -> int:
    """Deletes what record ``old`` carried (versions, messages) and nothing reaches.

    Called once the store's record moved from ``old``: a version or message
    the new record carries no longer (a later redaction rewrote it) still
    holds the text it took out.
    """
    if old is None or old not in store.repo.object_store:
        return 0
    folders = (BLOBS + b"/", MESSAGES + b"/")
    before = record_files(store, old)[0]
    after = record_files(store, record_tip(store))[0]
    carried = {sha for path, (_, sha) in before.items() if path.startswith(folders)}
    carried -= {sha for path, (_, sha) in after.items() if path.startswith(folders)}
    held = {sha for sha in carried if sha in store.repo.object_store}
    return delete_unreached(store, held, keep)
