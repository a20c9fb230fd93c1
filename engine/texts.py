"""The text index: which live memories of a tree hold a text, a kind and title, an id.

``remember`` must tell whether the branch already holds the same text
(whitespace aside), and ``remember --upsert`` which memory has a kind and
title, on every write and at any size. Reading every memory's blob per write
is out of the question, and so is loading the whole catalog (its decode and
scan grow with the store: about 9 ms per 10,000 memories). This index keeps
one row per memory of one tree, ``(path, id, text hash, kind, title)``, in
SQLite (``cache/texts.sqlite``; in memory for a store without a folder),
and follows the tree a write starts from with a pruned tree diff: a write
after a write diffs a few trees, applies a row or two and asks two indexed
queries. Short ids are looked up here too (``ids_matching``): the id and the
id reversed are indexed, so a prefix or a suffix is one range query. Like
every cache it is derived from the tree and disposable: a missing, stale or
unreadable file is rebuilt.

Writes move it under the store's lock; a read that resolves a short id may
move it too, so a catch-up checks again, inside its transaction, where the
index stands.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dulwich.diff_tree import TreeChange, tree_changes
from dulwich.objects import ObjectID

from ctx.engine.errors import CorruptStoreError
from ctx.engine.ids import MemoryId
from ctx.engine.layout import is_memory_path
from ctx.engine.model import Memory, decode_memory

if TYPE_CHECKING:
    from ctx.engine.snapshot import Snapshot
    from ctx.engine.store import Store

__all__ = ["TextIndex", "record_write", "text_index", "text_key"]

_VERSION = "2"  # 2: ids, and ids reversed, indexed for short ids
_EMPTY = "empty"
_BATCH = 500  # keys per query (SQLite allows 32,766 parameters)
_STATE = "CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory (
    path TEXT PRIMARY KEY, id TEXT NOT NULL, text TEXT NOT NULL,
    kind TEXT NOT NULL, title TEXT, rid TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS memory_text ON memory (text);
CREATE INDEX IF NOT EXISTS memory_title ON memory (kind, title);
CREATE INDEX IF NOT EXISTS memory_id ON memory (id);
CREATE INDEX IF NOT EXISTS memory_rid ON memory (rid);
"""
_INSERT = "INSERT OR REPLACE INTO memory VALUES (?, ?, ?, ?, ?, ?)"
_LOCK = threading.RLock()  # one catch-up, or one catch-up and query, at a time
_AFTER = "~"  # sorts after every character of an id: ``x <= id < x~`` is a prefix


def text_key(body: str) -> str:
    """Returns the hash two bodies share when they differ only in whitespace."""
    normal = " ".join(body.split()).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(normal, digest_size=16).hexdigest()


class TextIndex:
    """The memories of one tree by text hash and by kind and title.

    Each query first makes sure the index still stands at that tree, under
    a process-wide lock: threads of one process (a hub answering MCP calls)
    share the connection, and one may have moved it to another tree.

    Args:
        store: The store.
        snap: The tree asked about.
        db: The open database, caught up with that tree.
    """

    def __init__(self, store: Store, snap: Snapshot, db: sqlite3.Connection) -> None:
        self._store = store
        self._snap = snap
        self._db = db

    def _rows(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with _LOCK:
            _catch_up(self._store, self._snap, self._db)
            return self._db.execute(sql, args).fetchall()

    def with_text(self, body: str) -> list[tuple[MemoryId, str]]:
        """Returns ``(id, path)`` of the memories whose body is ``body``.

        Whitespace is normalised on both sides (:func:`text_key`).
        """
        rows = self._rows(
            "SELECT id, path FROM memory WHERE text = ? ORDER BY id",
            (text_key(body),),
        )
        return [(MemoryId(mid), path) for mid, path in rows]

    def first_with_keys(self, keys: Sequence[str]) -> dict[str, tuple[MemoryId, str]]:
        """Returns, per text key that some memory has, the first ``(id, path)``.

        One query per 500 keys: an import asks about every line at once.
        """
        found: dict[str, tuple[MemoryId, str]] = {}
        wanted = list(dict.fromkeys(keys))
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            marks = ",".join("?" * len(batch))
            rows = self._rows(
                f"SELECT text, id, path FROM memory WHERE text IN ({marks}) "
                "ORDER BY id",
                batch,
            )
            for key, mid, path in rows:
                found.setdefault(key, (MemoryId(mid), path))
        return found

    def ids_matching(self, part: str, limit: int) -> tuple[list[MemoryId], int]:
        """Returns the ids that start or end with ``part``, and how many there are.

        Two range queries on indexed columns, whatever the store's size.

        Args:
            part: Upper-case characters of an id.
            limit: At most this many ids are returned (sorted); the count is
                of all of them.
        """
        low, rlow = part, part[::-1]
        where = "(id >= ? AND id < ?) OR (rid >= ? AND rid < ?)"
        args = (low, low + _AFTER, rlow, rlow + _AFTER)
        rows = self._rows(
            f"SELECT DISTINCT id FROM memory WHERE {where} ORDER BY id LIMIT ?",
            (*args, limit),
        )
        ids = [MemoryId(mid) for (mid,) in rows]
        if len(ids) < limit:
            return ids, len(ids)
        ((count,),) = self._rows(
            f"SELECT COUNT(DISTINCT id) FROM memory WHERE {where}", args
        )
        return ids, int(count)

    def suffix_neighbours(self, memory_id: str) -> list[str]:
        """Returns the ids next to ``memory_id`` in the order of ids read backwards.

        The longest suffix ``memory_id`` shares with any other id is the one
        it shares with one of these (at most two).
        """
        rid = memory_id[::-1]
        out: list[str] = []
        for query in (
            "SELECT id FROM memory WHERE rid < ? ORDER BY rid DESC LIMIT 1",
            "SELECT id FROM memory WHERE rid > ? ORDER BY rid LIMIT 1",
        ):
            out.extend(str(mid) for (mid,) in self._rows(query, (rid,)))
        return out

    def ids_by_suffix(self) -> list[str]:
        """Returns every id, in the order of ids read backwards."""
        return [str(mid) for (mid,) in self._rows("SELECT id FROM memory ORDER BY rid")]

    def with_title(self, kind: str, title: str) -> list[tuple[MemoryId, str]]:
        """Returns ``(id, path)`` of the memories of ``kind`` titled ``title``."""
        rows = self._rows(
            "SELECT id, path FROM memory WHERE kind = ? AND title = ? ORDER BY id",
            (kind, title),
        )
        return [(MemoryId(mid), path) for mid, path in rows]


def text_index(store: Store, snap: Snapshot) -> TextIndex:
    """Returns the text index of ``snap``'s tree, caught up if stale."""
    with _LOCK:
        db = store.caches.get("texts")
        if not isinstance(db, sqlite3.Connection):
            db = _keep(store, _open(store))
        try:
            _catch_up(store, snap, db)
        except sqlite3.Error:
            # An unreadable file: start again in memory, from the whole tree.
            db = _keep(store, _connect(":memory:"))
            _catch_up(store, snap, db)
    return TextIndex(store, snap, db)


def record_write(
    store: Store, before: Snapshot, after: Snapshot, added: Sequence[tuple[str, Memory]]
) -> None:
    """Moves the text index from ``before`` to ``after``, a write that added ``added``.

    A writer knows what it wrote: giving it here spares the next write a diff
    of the two trees (1-2 ms at a million memories). Nothing happens unless
    the index stands at ``before`` (another process may have moved it).
    """
    db = store.caches.get("texts")
    if not isinstance(db, sqlite3.Connection) or after.tree is None:
        return
    old = before.tree.decode("ascii") if before.tree is not None else _EMPTY
    with _LOCK:
        _record(db, old, after.tree.decode("ascii"), added)


def _record(
    db: sqlite3.Connection, old: str, new: str, added: Sequence[tuple[str, Memory]]
) -> None:
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT value FROM state WHERE key = 'tree'").fetchone()
            if (row[0] if row else _EMPTY) == old:
                db.executemany(_INSERT, [_row(path, m) for path, m in added])
                db.execute("INSERT OR REPLACE INTO state VALUES ('tree', ?)", (new,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    except sqlite3.Error:
        return  # a cache: the next write catches up from the trees


def _keep(store: Store, db: sqlite3.Connection) -> sqlite3.Connection:
    """Returns ``db``, kept in ``store``'s caches and closed with the store."""
    old = store.caches.get("texts")
    if isinstance(old, sqlite3.Connection):
        old.close()
    store.caches["texts"] = db
    weakref.finalize(store, db.close)
    return db


def _connect(where: str) -> sqlite3.Connection:
    db = sqlite3.connect(where, isolation_level=None, check_same_thread=False)
    # A disposable cache: no waiting on the disk at each write. A file a
    # crash leaves damaged fails to read and is rebuilt in memory.
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA journal_mode = MEMORY")
    db.execute(_STATE)
    version = db.execute("SELECT value FROM state WHERE key = 'version'").fetchone()
    if version is None or version[0] != _VERSION:
        # Another version's rows may have other columns: start again.
        db.executescript("DROP TABLE IF EXISTS memory; DELETE FROM state;")
        db.execute("INSERT INTO state VALUES ('version', ?)", (_VERSION,))
    db.executescript(_SCHEMA)
    return db


def _open(store: Store) -> sqlite3.Connection:
    if store.path is not None:
        folder = store.path / "cache"
        try:
            folder.mkdir(exist_ok=True)
            return _connect(str(folder / "texts.sqlite"))
        except (OSError, sqlite3.Error):
            pass  # read-only or damaged: the index lives in memory only
    return _connect(":memory:")


def _catch_up(store: Store, snap: Snapshot, db: sqlite3.Connection) -> None:
    tree = snap.tree.decode("ascii") if snap.tree is not None else _EMPTY
    if _indexed_tree(db) == tree:
        return
    objects = store.repo.object_store
    db.execute("BEGIN IMMEDIATE")
    try:
        # Asked again under SQLite's write lock: another process (a read
        # resolving a short id) may have moved the index meanwhile.
        old = _indexed_tree(db)
        before = None if old == _EMPTY else ObjectID(old.encode())
        try:
            changes = list(tree_changes(objects, before, snap.tree))
        except KeyError:  # the indexed tree is gone (gc): start again
            db.execute("DELETE FROM memory")
            changes = list(tree_changes(objects, None, snap.tree))
        _apply(store, db, changes)
        db.execute("INSERT OR REPLACE INTO state VALUES ('tree', ?)", (tree,))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _indexed_tree(db: sqlite3.Connection) -> str:
    row = db.execute("SELECT value FROM state WHERE key = 'tree'").fetchone()
    return str(row[0]) if row else _EMPTY


def _row(path: str, memory: Memory) -> tuple[str, str, str, str, str | None, str]:
    mid = memory.id
    return (path, mid, text_key(memory.body), memory.kind, memory.title, mid[::-1])


def _apply(store: Store, db: sqlite3.Connection, changes: list[TreeChange]) -> None:
    objects = store.repo.object_store
    for change in changes:
        old, new = change.old, change.new
        if old is not None and old.path:
            db.execute("DELETE FROM memory WHERE path = ?", (old.path.decode(),))
        if new is None or not new.path or not new.sha:
            continue
        path = new.path.decode("utf-8")
        if not is_memory_path(path):
            continue
        try:
            memory = decode_memory(objects[new.sha].as_raw_string(), path)
        except CorruptStoreError:
            continue  # fsck reports it; the index just skips it
        db.execute(_INSERT, _row(path, memory))
