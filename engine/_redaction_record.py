"""The redaction record: what was removed, kept on ``refs/ctx/redactions``.

Each redaction is a commit on the record whose tree holds ``<id>.json``
(what, why, when, the map of old commit and blob ids to new ones, never the
text) and, under ``blobs/<old blob id>``, the redacted version of each blob
(and under ``messages/<old commit id>``, each commit message the text was
taken out of), so another clone can apply the same rewrite without knowing
the text (:mod:`ctx.engine.redaction` makes and applies them). Here are the
record's form and its reading (:func:`list_redactions`); joining another
clone's is :mod:`ctx.engine._redaction_sync`.

The record is one commit without parents, a snapshot of every redaction:
a later redaction can rewrite a version an earlier one made (a second text
taken out of the same memory), and the earlier version, which still holds
that text, must leave the record, its history included. So each entry under
``blobs/`` names the latest redacted version of its blob (:func:`closed`),
and the record commit it replaces is left to the prune. The ids of the
record commits a snapshot replaced are listed in its ``replaced`` file
(ids only): a remote still on one of them is behind, and its record is
neither fetched (it would bring the removed version back) nor joined.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref

if TYPE_CHECKING:
    from ctx.engine.store import Store

__all__ = [
    "BLOBS",
    "MESSAGES",
    "REDACTIONS_REF",
    "REPLACED",
    "Redaction",
    "blob_data",
    "closed",
    "holds_redacted",
    "list_redactions",
    "record_files",
    "record_id",
    "record_tip",
    "record_tree",
    "redacted_objects",
    "replaced_records",
    "snapshot",
    "store_record",
]

REDACTIONS_REF = Ref(b"refs/ctx/redactions")
"""The ref of the redaction record."""
BLOBS = b"blobs"
"""The record's folder of redacted blobs, by their old id."""
MESSAGES = b"messages"
"""The record's folder of rewritten commit messages, by the old commit's id."""
FOLDERS = (BLOBS, MESSAGES)
REPLACED = b"replaced"
"""The record's file of the record commits it replaced, one id per line."""


def record_id(record: Redaction) -> str:
    digest = hashlib.sha256(
        msgspec.json.encode([record.what, record.reason, sorted(record.commits)])
        + record.time.isoformat().encode()
    )
    return digest.hexdigest()[:12]


def record_tip(store: Store) -> ObjectID | None:
    try:
        return store.repo.refs[REDACTIONS_REF]
    except KeyError:
        return None


def record_tree(store: Store) -> Tree | None:
    tip = record_tip(store)
    if tip is None:
        return None
    commit = store.repo.object_store[tip]
    assert isinstance(commit, Commit)
    tree = store.repo.object_store[commit.tree]
    assert isinstance(tree, Tree)
    return tree


def tree_entries(store: Store, tree_id: ObjectID) -> dict[bytes, tuple[int, ObjectID]]:
    """Returns a record tree's files, those of its folders by their path."""
    objects = store.repo.object_store
    tree = objects[tree_id]
    assert isinstance(tree, Tree)
    out: dict[bytes, tuple[int, ObjectID]] = {}
    for entry in tree.iteritems():
        if entry.path in FOLDERS:
            sub = objects[entry.sha]
            assert isinstance(sub, Tree)
            for inner in sub.iteritems():
                out[entry.path + b"/" + inner.path] = (inner.mode, inner.sha)
        else:
            out[entry.path] = (entry.mode, entry.sha)
    return out


def tree_from_entries(
    store: Store, entries: Mapping[bytes, tuple[int, ObjectID]]
) -> tuple[ObjectID, list[ShaFile]]:
    top = Tree()
    inner = {folder: Tree() for folder in FOLDERS}
    for path, (mode, sha) in sorted(entries.items()):
        folder, _, name = path.partition(b"/")
        if name and folder in inner:
            inner[folder].add(name, mode, sha)
        else:
            top.add(path, mode, sha)
    made: list[ShaFile] = []
    for folder, tree in inner.items():
        if len(tree):
            top.add(folder, 0o040000, tree.id)
            made.append(tree)
    made.append(top)
    return top.id, made


def closed(
    entries: Mapping[bytes, tuple[int, ObjectID]],
) -> dict[bytes, tuple[int, ObjectID]]:
    """Returns a record's files with each ``blobs/`` entry at its latest version.

    An entry ``blobs/A -> B`` where ``blobs/B -> C`` is also there (a later
    redaction rewrote B) becomes ``blobs/A -> C``, so that no entry keeps a
    version a later redaction removed.
    """
    prefix = BLOBS + b"/"
    out = dict(entries)
    for path, (mode, sha) in entries.items():
        if not path.startswith(prefix):
            continue
        seen = {sha}
        while (later := entries.get(prefix + sha)) is not None:
            sha = later[1]
            if sha in seen:
                break  # a cycle, which no redaction makes: keep the last
            seen.add(sha)
        out[path] = (mode, sha)
    return out


def record_files(
    store: Store, tip: ObjectID | None
) -> tuple[dict[bytes, tuple[int, ObjectID]], frozenset[ObjectID]]:
    """Returns record ``tip``'s files (but ``replaced``) and the commits it replaced."""
    if tip is None:
        return {}, frozenset()
    commit = store.repo.object_store[tip]
    assert isinstance(commit, Commit)
    entries = tree_entries(store, commit.tree)
    listed = entries.pop(REPLACED, None)
    if listed is None:
        return entries, frozenset()
    blob = store.repo.object_store[listed[1]]
    lines = blob.data.split() if isinstance(blob, Blob) else []
    ids = {ObjectID(line) for line in lines if len(line) == 40}
    return entries, frozenset(ids)


def replaced_records(store: Store) -> frozenset[ObjectID]:
    """Returns the record commits the store's record replaced (none if no record)."""
    return record_files(store, record_tip(store))[1]


def snapshot(
    store: Store,
    entries: Mapping[bytes, tuple[int, ObjectID]],
    replaced: AbstractSet[ObjectID],
    summary: str,
) -> tuple[Commit, list[ShaFile]]:
    """Returns a record commit of ``entries`` (closed), and the objects it needs.

    The commit has no parents; ``replaced`` names the ones it replaces.
    """
    files = closed(entries)
    listed = Blob.from_string(b"".join(sha + b"\n" for sha in sorted(replaced)))
    if replaced:
        files[REPLACED] = (0o100644, listed.id)
    tree, trees = tree_from_entries(store, files)
    commit = Commit()
    commit.tree = tree
    commit.parents = []
    commit.author = commit.committer = b"ctx <ctx@ctx>"
    when = store.clock()
    offset = when.utcoffset()
    commit.author_time = commit.commit_time = int(when.timestamp())
    commit.author_timezone = commit.commit_timezone = (
        int(offset.total_seconds()) if offset else 0
    )
    commit.encoding = b"UTF-8"
    commit.message = summary.encode() + b"\n"
    return commit, [*([listed] if replaced else []), *trees, commit]


def store_record(
    store: Store,
    record: Redaction,
    blobs: Mapping[ObjectID, ObjectID],
    messages: Mapping[ObjectID, Blob],
) -> ObjectID:
    """Step 2: adds the redaction to the record (not yet on its ref).

    ``messages``: the message of each rewritten commit, by the old commit's
    id, where the redaction took the text out of it (those the record
    carries already included, each without the text now).
    """
    tip = record_tip(store)
    entries, replaced = record_files(store, tip)
    data = Blob.from_string(msgspec.json.encode(record))
    entries[record.id.encode() + b".json"] = (0o100644, data.id)
    for old, new in blobs.items():
        entries[BLOBS + b"/" + old] = (0o100644, new)
    for old, message in messages.items():
        entries[MESSAGES + b"/" + old] = (0o100644, message.id)
    if tip is not None:
        replaced |= {tip}
    commit, made = snapshot(store, entries, replaced, f"Redaction {record.id}")
    store.add_objects([data, *messages.values(), *made])
    return commit.id


# -- reading the record ------------------------------------------------------


class Redaction(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One redaction, as recorded on ``refs/ctx/redactions``.

    Attributes:
        version: Format version (1).
        id: Twelve hex digits naming it.
        what: What was removed, in words that do not repeat it
            (``memory 01J…``, ``a text of 40 characters``).
        reason: Why, as given.
        time: When.
        commits: Old commit id to new one, for every rewritten commit.
        blobs: Old blob id to new one, for every rewritten blob.
    """

    version: int = 1
    id: str
    what: str
    reason: str | None = None
    time: datetime
    commits: dict[str, str] = {}
    blobs: dict[str, str] = {}

    @property
    def label(self) -> str:
        """Returns ``redaction ID (what, reason)`` for messages."""
        why = f", {self.reason}" if self.reason else ""
        return f"redaction {self.id} ({self.what}{why})"


_RECORD_DECODER = msgspec.json.Decoder(Redaction)


def list_redactions(store: Store) -> list[Redaction]:
    """Returns every recorded redaction, oldest first."""
    tree = record_tree(store)
    if tree is None:
        return []
    out = []
    for entry in tree.iteritems():
        if not entry.path.endswith(b".json"):
            continue
        obj = store.repo.object_store[entry.sha]
        if isinstance(obj, Blob):
            with contextlib.suppress(msgspec.DecodeError):
                out.append(_RECORD_DECODER.decode(obj.data))
    return sorted(out, key=lambda r: (r.time, r.id))


def redacted_objects(store: Store) -> dict[ObjectID, str]:
    """Returns every commit and blob a redaction removed, with its label."""
    out: dict[ObjectID, str] = {}
    for record in list_redactions(store):
        for sha in (*record.commits, *record.blobs):
            out[ObjectID(sha.encode())] = record.label
    return out


def holds_redacted(store: Store) -> list[str]:
    """Returns the labels of the redactions whose old objects this store holds."""
    objects = store.repo.object_store
    labels = {label for sha, label in redacted_objects(store).items() if sha in objects}
    return sorted(labels)


def blob_data(store: Store, sha: ObjectID) -> bytes:
    blob = store.repo.object_store[sha]
    return blob.data if isinstance(blob, Blob) else b""
