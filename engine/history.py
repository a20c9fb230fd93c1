"""A derived index of what every commit changed, for fast log and blame.

Walking git history per query costs a tree diff per commit (0.3 s for 2,000
commits here). Instead every commit's changed paths are kept in
``cache/history.jsonl``, one JSON line per commit: ctx's own writes append
their line as they commit, and commits from anywhere else (merges, stock
``git``) are diffed once, the first time a query reaches them. The file is a
cache: a torn or unreadable line is skipped and its commit diffed again, and
deleting the file loses nothing.
"""

from __future__ import annotations

import heapq
import os
from binascii import unhexlify
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

import msgspec
from dulwich.object_store import BaseObjectStore
from dulwich.objects import Commit, ObjectID, Tree

from ctx.engine._pathwalk import (
    FileChange,
    PathWalk,
    Trees,
    Wanted,
    commit_header,
    memory_paths,
    tree_changes,
    under,
)
from ctx.engine._trees import read_tree
from ctx.engine.errors import CorruptStoreError
from ctx.engine.layout import (
    id_from_conflict_path,
    id_from_memory_path,
    is_memory_path,
)
from ctx.engine.model import decode_memory

if TYPE_CHECKING:
    from ctx.engine.snapshot import Snapshot
    from ctx.engine.store import Store

__all__ = ["Change", "CommitRecord", "History", "session_trailer"]


class Change(msgspec.Struct, frozen=True, array_like=True):
    """One changed path of a commit: its blob before and after, and its memory."""

    path: str
    old: str | None
    new: str | None
    id: str | None


class CommitRecord(msgspec.Struct, frozen=True, array_like=True):
    """What one commit changed, relative to its first parent.

    For a merge, only the paths whose result differs from every parent
    (what the merge itself decided) are listed, as git's history does.
    """

    commit: str
    parents: tuple[str, ...]
    time: int
    raw_changes: msgspec.Raw
    """The encoded changes, decoded only when asked for (a bulk import's
    line lists every path it wrote; most queries never look at it)."""
    agent: str = ""
    """The writing agent: the Ctx-Agent trailer, else the author's name."""
    session: str | None = None
    """The Ctx-Session trailer, "" for none; None in a line written before
    sessions were recorded (the commit's message tells then)."""

    @property
    def changes(self) -> tuple[Change, ...]:
        """Returns the changed paths."""
        return _CHANGES.decode(self.raw_changes)

    def of_memories(self, memory_ids: Iterable[str]) -> list[str]:
        """Returns those of ``memory_ids`` that a change of this commit is of.

        Read from the encoded changes without decoding them (a commit that
        imported ten thousand memories decodes in milliseconds): a change is
        encoded ``["path",old,new,"ID"]``, its memory last, so ``"ID"]``
        names a change of that memory and nothing else does (a link's path
        holds the ids it links, but its change is of no memory).
        """
        raw = bytes(self.raw_changes)
        return [m for m in memory_ids if f'"{m}"]'.encode() in raw]

    def mentions(self, text: str) -> bool:
        """Returns whether ``text`` occurs in the encoded changes.

        A quick pre-check before decoding them.
        """
        return text.encode("utf-8") in bytes(self.raw_changes)


_SAVE_EVERY = 1000
"""Commits a rebuild diffs between two appends to the cache file."""

_WIDE_CHANGES = 1 << 16
"""Bytes of a commit's encoded changes from which :meth:`History.changed_memories`
keeps the memories it changed as a set: a bulk import's commit."""

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(CommitRecord)
_CHANGES = msgspec.json.Decoder(tuple[Change, ...])


class History:
    """The commit-changes index of one store.

    Args:
        store: The store whose commits are indexed.
        folder: Where the cache file lives; ``None`` keeps it in memory.
    """

    def __init__(self, store: Store, folder: Path | None) -> None:
        self._store = store
        self._file = folder / "history.jsonl" if folder else None
        self._records: dict[str, CommitRecord] = {}
        self._offset = 0
        self._wide: dict[str, frozenset[str]] = {}  # commit -> memories it changed

    def changed_memories(
        self, rec: CommitRecord, memory_ids: Iterable[str]
    ) -> list[str]:
        """Returns those of ``memory_ids`` that a change of ``rec`` is of.

        What :meth:`CommitRecord.of_memories` finds. The changes of a bulk
        import (past :data:`_WIDE_CHANGES` bytes) are decoded once and the
        memories they are of kept: searching them for each id, as a small
        commit's are, cost each recall about 15 ms at 100,000 memories
        imported in one commit, for the hits whose last write it was.
        """
        if len(rec.raw_changes) < _WIDE_CHANGES:
            return rec.of_memories(memory_ids)
        changed = self._wide.get(rec.commit)
        if changed is None:
            changed = frozenset(c.id for c in rec.changes if c.id is not None)
            self._wide[rec.commit] = changed
        return [m for m in memory_ids if m in changed]

    # -- the cache file ---------------------------------------------------------

    def _refresh(self) -> None:
        if self._file is None:
            return
        try:
            with open(self._file, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1
        self._offset += end
        for line in data[:end].split(b"\n"):
            if not line:
                continue
            try:
                rec = _DECODER.decode(line)
            except msgspec.DecodeError:
                continue  # torn by a crash; the commit is diffed again on demand
            self._records[rec.commit] = rec

    def _append(self, records: list[CommitRecord]) -> None:
        for rec in records:
            self._records[rec.commit] = rec
        if self._file is None or not records:
            return
        payload = b"".join(_ENCODER.encode(r) + b"\n" for r in records)
        try:
            fd = os.open(self._file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError:
            return  # read-only store: keep the records in memory only
        try:
            os.write(fd, payload)
        except OSError:
            pass
        finally:
            os.close(fd)

    # -- recording --------------------------------------------------------------

    def record_write(
        self,
        commit: Commit,
        snap: Snapshot,
        before: Mapping[str, ObjectID | None],
        blob_changes: Mapping[str, ObjectID | None],
        contents: Mapping[str, bytes | None],
    ) -> None:
        """Appends the record of a commit ctx just wrote on top of ``snap``.

        ``before`` holds the blob id each changed path had in ``snap``.
        """
        changes = []
        for path, new in sorted(blob_changes.items()):
            old_id = before[path]
            old = old_id.decode("ascii") if old_id is not None else None
            content = contents.get(path)
            if content is None and old is not None and _id_in_content(path):
                content = snap.read_blob(old)
            changes.append(
                Change(
                    path,
                    old,
                    new.decode("ascii") if new else None,
                    _memory_id(path, content),
                )
            )
        self._append([_record(commit, tuple(changes))])

    def ensure(self, tip: str) -> None:
        """Indexes every ancestor of ``tip`` that is not indexed yet.

        What it diffs is appended to the cache file every
        :data:`_SAVE_EVERY` commits, not only at the end: a rebuild of a
        long history that is killed keeps what it did, and the next one
        starts from there.
        """
        self._refresh()
        missing: list[CommitRecord] = []
        fetched: dict[str, Commit] = {}
        trees = Trees(self._store.repo.object_store)
        stack = [tip]
        seen: set[str] = set()
        while stack:
            sha = stack.pop()
            if sha in seen:
                continue
            seen.add(sha)
            rec = self._records.get(sha)
            if rec is None:
                obj = fetched.pop(sha, None) or self._commit(sha)
                rec = _record(obj, self._diff(obj, fetched, trees))
                missing.append(rec)
                self._records[sha] = rec
                if len(missing) >= _SAVE_EVERY:
                    self._append(missing)
                    missing = []
            stack.extend(rec.parents)
        self._append(missing)

    def _commit(self, sha: str) -> Commit:
        """Reads a commit the walk reached.

        Raises:
            CorruptStoreError: it is missing from the store.
        """
        try:
            obj = self._store.repo.object_store[ObjectID(sha.encode())]
        except KeyError:
            raise CorruptStoreError(
                f"Commit {sha} is missing from the store."
            ) from None
        assert isinstance(obj, Commit)
        return obj

    def _diff(
        self, commit: Commit, fetched: dict[str, Commit], trees: Trees
    ) -> tuple[Change, ...]:
        """Returns what ``commit`` changed.

        Its parents are read into ``fetched`` (the walk reads them next).
        A commit of one parent is diffed through ``trees``
        (:func:`~ctx.engine._pathwalk.tree_changes`), which holds the trees
        a walk just compared; a merge, and a change that function leaves to
        dulwich, by dulwich's diff, its trees read through the parsed-tree
        cache, so the trees a commit shares with the one diffed before it
        are read once.
        """
        store = self._store.repo.object_store
        parent_trees = []
        for parent in commit.parents:
            key = parent.decode("ascii")
            obj = fetched.get(key) or self._commit(key)
            fetched[key] = obj
            parent_trees.append(obj.tree)
        pairs: list[FileChange] | None = None
        if len(parent_trees) <= 1:
            first = unhexlify(parent_trees[0]) if parent_trees else None
            pairs = tree_changes(trees, first, unhexlify(commit.tree))
        if pairs is None:
            pairs = self._dulwich_diff(parent_trees, commit.tree)
        changes = []
        for path, old, new in sorted(pairs):
            content = None
            if _id_in_content(path):
                blob = new or old
                assert blob is not None
                content = store[ObjectID(blob.encode())].as_raw_string()
            changes.append(Change(path, old, new, _memory_id(path, content)))
        return tuple(changes)

    def _dulwich_diff(
        self, parent_trees: list[ObjectID], tree: ObjectID
    ) -> list[FileChange]:
        """Returns the files that differ between a commit's tree and its parents'.

        For a merge, only the paths whose result differs from every parent.
        """
        # Here, not at the top: a merge, or a change of a kind ctx does not
        # write, is all that needs dulwich's diff (``ctx ls`` never does).
        from dulwich.diff_tree import tree_changes as dulwich_tree_changes
        from dulwich.diff_tree import tree_changes_for_merge

        cached = cast(BaseObjectStore, _CachedTrees(self._store.repo.object_store))
        pairs: list[FileChange] = []
        if len(parent_trees) <= 1:
            base = parent_trees[0] if parent_trees else None
            for ch in dulwich_tree_changes(cached, base, tree):
                old_path = ch.old.path if ch.old and ch.old.path else None
                new_path = ch.new.path if ch.new and ch.new.path else None
                if ch.type == "modify" or old_path == new_path:
                    path = (new_path or old_path or b"").decode()
                    pairs.append((path, _hex(ch.old), _hex(ch.new)))
                else:  # a rename or copy reported as one change
                    if old_path:
                        pairs.append((old_path.decode(), _hex(ch.old), None))
                    if new_path:
                        pairs.append((new_path.decode(), None, _hex(ch.new)))
        else:
            for group in tree_changes_for_merge(cached, parent_trees, tree):
                first = group[0]
                if first is None:
                    continue
                entry = first.new if first.new and first.new.path else first.old
                if entry is None or entry.path is None:
                    continue
                pairs.append((entry.path.decode(), _hex(first.old), _hex(first.new)))
        return pairs

    # -- queries ----------------------------------------------------------------

    def _graph(self, tip: str) -> dict[str, tuple[tuple[str, ...], int, bytes | None]]:
        """Returns the parents, time and tree of every commit reachable from ``tip``.

        From the cache where it has a commit (its tree then unknown, None),
        else from the commit's raw header: no tree is read, nothing diffed.
        """
        store = self._store.repo.object_store
        graph: dict[str, tuple[tuple[str, ...], int, bytes | None]] = {}
        stack = [tip]
        while stack:
            sha = stack.pop()
            if sha in graph:
                continue
            rec = self._records.get(sha)
            if rec is not None:
                graph[sha] = (rec.parents, rec.time, None)
            else:
                tree, parents, time = commit_header(store, sha)
                graph[sha] = (parents, time, tree)
            stack.extend(p for p in graph[sha][0] if p not in graph)
        return graph

    @staticmethod
    def _ordered(
        tip: str, graph: Mapping[str, tuple[tuple[str, ...], int, bytes | None]]
    ) -> Iterator[str]:
        """Yields the commits of ``graph`` in the order :meth:`records` gives."""
        children: dict[str, int] = dict.fromkeys(graph, 0)
        for parents, _, _ in graph.values():
            for parent in parents:
                children[parent] += 1
        ready = [(-graph[tip][1], 0, tip)]
        seq = 0
        while ready:
            _, _, sha = heapq.heappop(ready)
            yield sha
            for parent in graph[sha][0]:
                children[parent] -= 1
                if children[parent] == 0:
                    seq += 1
                    heapq.heappush(ready, (-graph[parent][1], seq, parent))

    def _made(self, sha: str, fetched: dict[str, Commit], trees: Trees) -> CommitRecord:
        """Diffs commit ``sha`` and keeps its record (to be appended)."""
        obj = fetched.pop(sha, None) or self._commit(sha)
        rec = self._records[sha] = _record(obj, self._diff(obj, fetched, trees))
        return rec

    def newest(self, tip: str) -> Iterator[CommitRecord]:
        """Yields the commits reachable from ``tip`` as :meth:`records` orders them.

        Only the commits it yields are diffed. The order needs the whole
        graph (:meth:`_graph`: no tree read); a commit's changes are diffed
        when it is yielded, and recorded for the next query. ``log -n 50``
        with no cache so diffs 50 commits, not the whole history.
        """
        return self._walk(tip, None)

    def _walk(self, tip: str, wanted: Wanted | None) -> Iterator[CommitRecord]:
        """Yields the records of the commits from ``tip``, newest first.

        A commit the cache lacks is diffed (and recorded) only if it differs
        from its first parent where ``wanted`` looks (any commit if None).
        """
        self._refresh()
        graph = self._graph(tip)
        objects = self._store.repo.object_store
        trees = Trees(objects)
        walk = PathWalk(trees, wanted) if wanted is not None else None
        made: list[CommitRecord] = []
        fetched: dict[str, Commit] = {}
        try:
            for sha in self._ordered(tip, graph):
                rec = self._records.get(sha)
                if rec is None:
                    parents, _, tree = graph[sha]
                    if walk is not None:
                        first = graph[parents[0]][2] if parents else None
                        if parents and first is None:  # the cache has the parent
                            first = commit_header(objects, parents[0])[0]
                        if not walk.differs(first, tree):
                            continue
                    rec = self._made(sha, fetched, trees)
                    made.append(rec)
                yield rec
        finally:
            self._append(made)

    def records(self, tip: str) -> list[CommitRecord]:
        """Returns every commit reachable from ``tip``, newest first.

        Children always come before their parents (as in ``git log``);
        among commits ready to be shown, the newest goes first.
        """
        self.ensure(tip)
        children: dict[str, int] = {tip: 0}
        stack = [tip]
        while stack:
            for parent in self._records[stack.pop()].parents:
                if parent not in children:
                    children[parent] = 0
                    stack.append(parent)
                children[parent] += 1
        out: list[CommitRecord] = []
        ready = [(-self._records[tip].time, 0, tip)]
        seq = 0
        while ready:
            _, _, sha = heapq.heappop(ready)
            rec = self._records[sha]
            out.append(rec)
            for parent in rec.parents:
                children[parent] -= 1
                if children[parent] == 0:
                    seq += 1
                    heapq.heappush(ready, (-self._records[parent].time, seq, parent))
        return out

    def touching(
        self, tip: str, *, memory_id: str | None = None, prefix: str | None = None
    ) -> Iterator[tuple[CommitRecord, list[Change]]]:
        """Yields, newest first, the commits that changed a memory or paths.

        A commit the cache lacks is first checked as ``git log -- PATH``
        checks it (:meth:`~ctx.engine._pathwalk.PathWalk.differs`: tree ids compared
        along the paths that may hold the memory or prefix); only one that
        differs there is diffed, by the code that fills the cache, and
        recorded. Cold, a memory's log of 20,000 commits so diffs the few
        hundred that touched it, not all of them.

        Args:
            tip: Where history starts.
            memory_id: Keep changes to this memory.
            prefix: Keep changes to paths under this prefix.
        """
        wanted = memory_paths(memory_id) if memory_id is not None else None
        if prefix is not None:
            wanted = under(prefix)
        for rec in self._walk(tip, wanted):
            if memory_id is not None and not rec.mentions(memory_id):
                continue
            if prefix is not None and not rec.mentions(prefix):
                continue
            hits = [
                c
                for c in rec.changes
                if (memory_id is None or c.id == memory_id)
                and (prefix is None or c.path.startswith(prefix))
            ]
            if hits:
                yield rec, hits


class _CachedTrees:
    """An object store as dulwich's tree diff reads it: trees, through the cache.

    The diff reads nothing but trees; each goes through
    :func:`~ctx.engine._trees.read_tree`, whose parsed trees outlive one diff.
    """

    def __init__(self, store: BaseObjectStore) -> None:
        self._store = store

    def __getitem__(self, sha: ObjectID) -> Tree:
        return read_tree(self._store, sha)


def _hex(entry: object) -> str | None:
    sha = getattr(entry, "sha", None)
    return sha.decode("ascii") if sha else None


def _id_in_content(path: str) -> bool:
    # A free-form memory's id is in its path: its blob need not be read.
    return is_memory_path(path) and id_from_memory_path(path) is None


def _memory_id(path: str, content: bytes | None) -> str | None:
    found = id_from_memory_path(path) or id_from_conflict_path(path)
    if found is not None:
        return found
    if _id_in_content(path) and content is not None:
        try:
            return decode_memory(content, path).id
        except CorruptStoreError:
            return None
    return None


def session_trailer(message: bytes) -> str:
    """Returns the Ctx-Session trailer of a commit message ("" for none)."""
    return _trailer(message, b"Ctx-Session: ") or ""


def _trailer(message: bytes, key: bytes) -> str | None:
    at = message.rfind(b"\n" + key)
    if at < 0:
        return None
    line = message[at + 1 + len(key) :].split(b"\n", 1)[0]
    return line.decode("utf-8", "replace").strip()


def _agent(commit: Commit) -> str:
    agent = _trailer(commit.message, b"Ctx-Agent: ")
    if agent is not None:
        return agent
    author: bytes = commit.author
    return author.decode("utf-8", "replace").split(" <", 1)[0]


def _record(commit: Commit, changes: tuple[Change, ...]) -> CommitRecord:
    return CommitRecord(
        commit.id.decode("ascii"),
        tuple(p.decode("ascii") for p in commit.parents),
        commit.commit_time,
        msgspec.Raw(_ENCODER.encode(changes)),
        _agent(commit),
        session_trailer(commit.message),
    )
