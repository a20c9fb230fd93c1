"""The redaction record: what was removed, kept on ``refs/ctx/redactions``.

Each redaction is a commit on the record whose tree holds ``<id>.json``
(what, why, when, the map of old commit and blob ids to new ones, never the
text) and, under ``blobs/<old blob id>``, the redacted version of each blob,
so another clone can apply the same rewrite without knowing the text
(:mod:`ctx.engine.redaction` makes and applies them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref

if TYPE_CHECKING:
    from ctx.engine.redaction import Redaction
    from ctx.engine.store import Store

__all__ = [
    "BLOBS",
    "REDACTIONS_REF",
    "record_commit",
    "record_id",
    "record_tip",
    "record_tree",
    "store_record",
    "tree_entries",
    "tree_from_entries",
]

REDACTIONS_REF = Ref(b"refs/ctx/redactions")
"""The ref of the redaction record."""
BLOBS = b"blobs"
"""The record's folder of redacted blobs, by their old id."""


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
    """Returns a record tree's files, ``blobs/`` ones by their path."""
    objects = store.repo.object_store
    tree = objects[tree_id]
    assert isinstance(tree, Tree)
    out: dict[bytes, tuple[int, ObjectID]] = {}
    for entry in tree.iteritems():
        if entry.path == BLOBS:
            sub = objects[entry.sha]
            assert isinstance(sub, Tree)
            for inner in sub.iteritems():
                out[BLOBS + b"/" + inner.path] = (inner.mode, inner.sha)
        else:
            out[entry.path] = (entry.mode, entry.sha)
    return out


def tree_from_entries(
    store: Store, entries: Mapping[bytes, tuple[int, ObjectID]]
) -> tuple[ObjectID, list[ShaFile]]:
    top = Tree()
    inner = Tree()
    for path, (mode, sha) in sorted(entries.items()):
        if path.startswith(BLOBS + b"/"):
            inner.add(path[len(BLOBS) + 1 :], mode, sha)
        else:
            top.add(path, mode, sha)
    made: list[ShaFile] = []
    if len(inner):
        top.add(BLOBS, 0o040000, inner.id)
        made.append(inner)
    made.append(top)
    return top.id, made


def record_commit(
    store: Store, tree: ObjectID, parents: list[ObjectID], summary: str
) -> Commit:
    commit = Commit()
    commit.tree = tree
    commit.parents = parents
    commit.author = commit.committer = b"ctx <ctx@ctx>"
    when = store.clock()
    offset = when.utcoffset()
    commit.author_time = commit.commit_time = int(when.timestamp())
    commit.author_timezone = commit.commit_timezone = (
        int(offset.total_seconds()) if offset else 0
    )
    commit.encoding = b"UTF-8"
    commit.message = summary.encode() + b"\n"
    return commit


def store_record(
    store: Store, record: Redaction, blobs: Mapping[ObjectID, ObjectID]
) -> ObjectID:
    """Step 2: adds the redaction to the record (not yet on its ref)."""
    tip = record_tip(store)
    entries: dict[bytes, tuple[int, ObjectID]] = {}
    if tip is not None:
        commit = store.repo.object_store[tip]
        assert isinstance(commit, Commit)
        entries = tree_entries(store, commit.tree)
    data = Blob.from_string(msgspec.json.encode(record))
    entries[record.id.encode() + b".json"] = (0o100644, data.id)
    for old, new in blobs.items():
        entries[BLOBS + b"/" + old] = (0o100644, new)
    tree, trees = tree_from_entries(store, entries)
    commit = record_commit(store, tree, [tip] if tip else [], f"Redaction {record.id}")
    store.add_objects([data, *trees, commit])
    return commit.id
