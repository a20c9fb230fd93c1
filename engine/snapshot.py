"""A read-only view of the memories, links and conflicts in one tree."""

from __future__ import annotations

import stat
from collections.abc import Iterator

import msgspec
from dulwich.object_store import BaseObjectStore
from dulwich.objects import S_ISGITLINK, ObjectID

from ctx.engine import _trees
from ctx.engine.errors import CorruptStoreError, MemoryNotFoundError
from ctx.engine.ids import CommitId, MemoryId
from ctx.engine.layout import (
    CONFLICTS,
    LINKS,
    MEMORY,
    MEMORY_AREAS,
    area_of,
    conflict_path,
    context_of,
    id_from_conflict_path,
    is_memory_path,
    is_pinned,
    link_dir,
    memory_path,
    parse_link_path,
)
from ctx.engine.model import (
    Conflict,
    Link,
    Memory,
    decode_conflict,
    decode_link,
    decode_memory,
)

__all__ = ["LinkRecord", "Listing", "MemoryRecord", "Snapshot", "UnreadableMemory"]


class MemoryRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A memory together with where it is stored.

    Attributes:
        memory: The decoded memory.
        path: Its path in the tree.
        blob: The git blob id of its bytes (the content hash).
    """

    memory: Memory
    path: str
    blob: str

    @property
    def area(self) -> str:
        """Returns the top folder: memory, pinned, primed or sessions."""
        return area_of(self.path)

    @property
    def context(self) -> str:
        """Returns the context (for memory/) or source name (pinned/primed)."""
        return context_of(self.path)

    @property
    def pinned(self) -> bool:
        """Returns whether the memory is always recalled first."""
        return is_pinned(self.path)


class UnreadableMemory(msgspec.Struct, frozen=True, kw_only=True):
    """A memory file left out of a listing because it cannot be read.

    A store written by another tool (stock git, a hostile remote's
    commits) may hold a memory that does not decode; one such file must not
    hide every other memory of its branch. ``ctx fsck`` reports it too.

    Attributes:
        path: Where it is in the tree.
        blob: The id of what is there.
        reason: Why it cannot be read: a sentence that names the path.
    """

    path: str
    blob: str
    reason: str

    def warning(self) -> str:
        """Returns the line that tells people it was left out."""
        return f"{self.reason.rstrip('.')}; it is left out."


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    """The memories of a listing, and the memory files left out of it.

    Attributes:
        memories: The memories, in the order asked for.
        unreadable: The memory files under the prefix that cannot be read.
    """

    memories: tuple[MemoryRecord, ...]
    unreadable: tuple[UnreadableMemory, ...] = ()


class LinkRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One typed link between two memories."""

    source: MemoryId
    type: str
    target: MemoryId
    link: Link
    path: str


class Snapshot:
    """The state of a store at one commit.

    Args:
        store: The object store to read from.
        commit: The commit this tree belongs to (``None`` for no commit).
        tree: The root tree id (``None`` for an empty tree).
    """

    def __init__(
        self, store: BaseObjectStore, commit: CommitId | None, tree: ObjectID | None
    ) -> None:
        self._store = store
        self.commit = commit
        self.tree = tree
        self.unreadable: dict[str, UnreadableMemory] = {}
        """The memories :meth:`memories` left out so far, by path."""

    @property
    def objects(self) -> BaseObjectStore:
        """Returns the object store this snapshot reads from."""
        return self._store

    @classmethod
    def empty(cls, store: BaseObjectStore) -> Snapshot:
        """Returns a snapshot with nothing in it."""
        return cls(store, None, None)

    def blob_id(self, path: str) -> str | None:
        """Returns the blob id at ``path``, or ``None``."""
        if self.tree is None:
            return None
        found = _trees.lookup(self._store, self.tree, path)
        if found is None or stat.S_ISDIR(found[0]) or S_ISGITLINK(found[0]):
            return None
        return found[1].decode("ascii")

    def read(self, path: str) -> bytes | None:
        """Returns the bytes at ``path``, or ``None``."""
        blob = self.blob_id(path)
        if blob is None:
            return None
        return _trees.read_blob(self._store, ObjectID(blob.encode()))

    def read_blob(self, blob: str) -> bytes:
        """Returns the bytes of blob ``blob``."""
        return _trees.read_blob(self._store, ObjectID(blob.encode()))

    def files(self, prefix: str = "") -> Iterator[tuple[str, str]]:
        """Yields ``(path, blob_id)`` for every file under ``prefix``."""
        if self.tree is None:
            return
        for path, sha in _trees.iter_files(self._store, self.tree, prefix):
            yield path, sha.decode("ascii")

    def folders(self, path: str) -> list[str]:
        """Returns the names of the sub-folders of folder ``path``."""
        if self.tree is None:
            return []
        found = (
            _trees.lookup(self._store, self.tree, path)
            if path
            else (
                stat.S_IFDIR,
                self.tree,
            )
        )
        if found is None or not stat.S_ISDIR(found[0]):
            return []
        tree = _trees.read_tree(self._store, found[1])
        return [e.path.decode() for e in tree.iteritems() if stat.S_ISDIR(e.mode)]

    def contexts(self) -> list[str]:
        """Returns the context folders under ``memory/``."""
        return self.folders(MEMORY)

    def record(self, path: str, blob: str) -> MemoryRecord:
        """Returns the memory stored in ``blob`` at ``path``."""
        return MemoryRecord(
            memory=decode_memory(self.read_blob(blob), path), path=path, blob=blob
        )

    def find_path(self, memory_id: MemoryId) -> str | None:
        """Returns the path of memory ``memory_id``, or ``None``."""
        for context in self.contexts():
            path = memory_path(context, memory_id)
            if self.blob_id(path) is not None:
                return path
        for area in MEMORY_AREAS:
            if area == MEMORY:
                continue  # found by its path above
            for path, blob in self.files(area):
                if not path.endswith(".json"):
                    continue
                data = self.read_blob(blob)
                if (
                    memory_id.encode() in data
                    and decode_memory(data, path).id == memory_id
                ):
                    return path
        return None

    def find(self, memory_id: MemoryId) -> MemoryRecord:
        """Returns memory ``memory_id``.

        Raises:
            MemoryNotFoundError: it is not in this tree.
        """
        path = self.find_path(memory_id)
        if path is None:
            raise MemoryNotFoundError(
                f"No memory {memory_id} here.",
                hint="`ctx ls` lists memories; `ctx log` shows removed ones.",
            )
        blob = self.blob_id(path)
        assert blob is not None
        return self.record(path, blob)

    def memories(self, prefix: str = "") -> Iterator[MemoryRecord]:
        """Yields every memory under ``prefix`` (default: all areas).

        A memory file that cannot be read is left out and noted in
        :attr:`unreadable`, so that one bad file does not hide the others.
        """
        for area in [prefix] if prefix else MEMORY_AREAS:
            for path, blob in self.files(area):
                if not is_memory_path(path):
                    continue
                try:
                    yield self.record(path, blob)
                except CorruptStoreError as exc:
                    self._left_out(path, blob, exc.message)
                except (KeyError, TypeError):  # a folder's id, or nothing, there
                    self._left_out(path, blob, f"{path} is not a file in the store.")

    def _left_out(self, path: str, blob: str, reason: str) -> None:
        self.unreadable[path] = UnreadableMemory(path=path, blob=blob, reason=reason)

    def links_from(self, memory_id: MemoryId) -> list[LinkRecord]:
        """Returns the outgoing links of ``memory_id``."""
        return list(self._links(link_dir(memory_id)))

    def links(self) -> Iterator[LinkRecord]:
        """Yields every link in the tree."""
        yield from self._links(LINKS)

    def _links(self, prefix: str) -> Iterator[LinkRecord]:
        for path, blob in self.files(prefix):
            parsed = parse_link_path(path)
            if parsed is None:
                continue
            source, link_type, target = parsed
            yield LinkRecord(
                source=source,
                type=link_type,
                target=target,
                link=decode_link(self.read_blob(blob), path),
                path=path,
            )

    def conflict(self, memory_id: MemoryId) -> Conflict | None:
        """Returns the unresolved conflict on ``memory_id``, if any."""
        data = self.read(conflict_path(memory_id))
        return None if data is None else decode_conflict(data, conflict_path(memory_id))

    def conflicted(self) -> set[MemoryId]:
        """Returns the ids of the memories with an unresolved conflict.

        Reads the names in ``conflicts/`` only, not the conflicts.
        """
        found = (id_from_conflict_path(path) for path, _ in self.files(CONFLICTS))
        return {mid for mid in found if mid is not None}

    def conflicts(self) -> list[Conflict]:
        """Returns every unresolved conflict."""
        return [
            decode_conflict(self.read_blob(blob), path)
            for path, blob in self.files(CONFLICTS)
        ]
