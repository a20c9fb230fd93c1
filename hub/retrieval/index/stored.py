"""The indexes of one store's index folder: opened, locked, shared, repaired.

On disk (``.ctx/index/``)::

    lexical-<token>/   the Tantivy index (ctx.hub.retrieval.index.lexical)
    vectors-<token>/   the vector index (ctx.hub.retrieval.index.vectors), flat or HNSW
    state.json         format, embedder, folder names, watermark per branch
    lock               flock: one process catches up at a time

A rebuild writes new folders and switches ``state.json`` to them at once
(docs/recall.md); other processes see the switch at their next look
(:meth:`StoredIndexes._sync`) and reopen.

A missing or unreadable index is rebuilt with a notice, and so is one found
damaged while in use (:mod:`ctx.hub.retrieval.index.errors`;
:meth:`StoredIndexes.repair`); a changed embedder (its
:attr:`~ctx.hub.retrieval.embedders.Embedder.name` differs from the one recorded)
drops the vectors and embeds again. A store that cannot be written
(read-only), or whose disk is full, gets its indexes in memory.

:class:`StoredIndexes` is what the projection
(:class:`~ctx.hub.retrieval.index.projection.Projection`) catches up; its underscored
members are for that subclass.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from ctx.engine import CtxError, Store, plural
from ctx.hub.retrieval.embedders import Embedder, EmbedderError
from ctx.hub.retrieval.index.errors import IndexCorruptError
from ctx.hub.retrieval.index.folder import FORMAT, IndexFolder, IndexState
from ctx.hub.retrieval.index.lexical import LexicalIndex
from ctx.hub.retrieval.index.lexical_errors import (
    LexicalIndexCorruptError,
    LexicalIndexError,
)
from ctx.hub.retrieval.index.reuse import VectorSources, vector_folders
from ctx.hub.retrieval.index.rows import FlatVectors
from ctx.hub.retrieval.index.vectors import (
    VectorIndex,
    VectorIndexCorruptError,
    VectorIndexError,
    open_vectors,
)
from ctx.hub.retrieval.index.view import LiveView

__all__ = ["StoredIndexes"]


class StoredIndexes:
    """The lexical and vector indexes of one store, as its index folder holds them.

    Attributes:
        store: The store (one without a path gets indexes in memory).
        embedder: The embedder the vectors are made with.
        exact: Search every vector exactly rather than load an HNSW graph.
        lexical: The lexical index.
        vectors: The vector index (``None`` while the embedder is down).
        notices: What happened to the indexes (rebuilt, in memory), until the
            caller reports and clears them.
        warnings: Channels that failed (recall is lexical only), likewise.
    """

    def __init__(self, store: Store, embedder: Embedder, *, exact: bool) -> None:
        """Opens the indexes of ``store``'s index folder (see the module)."""
        self.store = store
        self.embedder = embedder
        self.exact = exact
        self.notices: list[str] = []
        self.warnings: list[str] = []
        self._path = store.path / "index" if store.path is not None else None
        self._files: IndexFolder | None = None
        self._views: dict[str, LiveView] = {}  # made with these indexes
        self._state = IndexState()
        self._vector_error: EmbedderError | None = None
        self._sources = VectorSources()  # of the indexes a rebuild replaces
        self._holding = 0  # depth of this process's hold on the lock
        self.lexical: LexicalIndex
        self.vectors: VectorIndex | None = None
        self._open()

    # -- opening ----------------------------------------------------------

    @property
    def folder(self) -> Path | None:
        """Returns the index folder, or ``None`` when the indexes live in memory."""
        return None if self._files is None else self._files.path

    def _open(self, *, lost: bool = False) -> None:
        """Opens the index folder's indexes, rebuilding what cannot be read.

        ``lost``: this process had the index open and its files are gone
        (deleted): rebuilding them gets a notice, as an unreadable index does.
        A projection that will answer many questions (not ``exact``: the
        hub) also checks every vector against its checksum, once.
        """
        if self._path is not None:
            try:
                self._files = IndexFolder(self._path)
            except OSError:
                self.notices.append(
                    f"Cannot write {self._path}: the index is built in memory."
                )
        if self._files is None:
            self._in_memory()
            return
        said = len(self.notices)
        try:
            self._load_or_rebuild(lost)
        except (CtxError, OSError) as exc:
            if not disk_full(exc, self._path):
                raise
            del self.notices[said:]  # "rebuilt it": nothing was
            # As for a read-only store: the answer comes from indexes in
            # memory; `ctx reindex` would meet the same full disk.
            self.notices.append(
                f"No space left on the disk of {self._path}: the index is built "
                "in memory."
            )
            self._files = None
            self._in_memory()
            return
        if not self.exact:
            self._check()

    def _in_memory(self) -> None:
        self.lexical = LexicalIndex.in_memory()
        self.vectors = self._new_vectors(None)

    def _load_or_rebuild(self, lost: bool) -> None:
        """Opens the folder's indexes; rebuilds them, with a notice, if unreadable."""
        try:
            self._load(lost=lost)
        except (CtxError, msgspec.DecodeError, OSError):
            with self._locked(blocking=True):
                # Another process may have been replacing it: look again.
                try:
                    self._load(locked=True, lost=lost)
                except (CtxError, msgspec.DecodeError, OSError) as exc:
                    if disk_full(exc, self._path):
                        raise
                    reason = exc.message if isinstance(exc, CtxError) else str(exc)
                    self.notices.append(
                        f"The index was unreadable ({reason}); rebuilt it."
                    )
                    self._reset()

    def _check(self) -> None:
        """Reads every byte of the indexes against its checksum; repairs damage.

        As long as reading both indexes once (docs/recall.md, "Damage"): done
        by a projection that answers many questions, when it opens them.
        """
        try:
            self.lexical.verify()
        except LexicalIndexCorruptError as exc:
            self.repair(exc)
        damaged = [] if self.vectors is None else self.vectors.damaged()
        if damaged:
            self.repair(
                VectorIndexCorruptError(
                    f"{plural(len(damaged), 'vector')} failed their checksum.",
                    keys=damaged,
                )
            )

    def _load(self, *, locked: bool = False, lost: bool = False) -> None:
        assert self._files is not None
        if not self._files.has_state():
            if locked:
                if lost:
                    self.notices.append(
                        f"The index in {self._files.path} was deleted; rebuilt it."
                    )
                self._reset()
                return
            with self._locked(blocking=True):
                self._load(locked=True, lost=lost)
                return
        state = self._files.read_state()
        if state.format != FORMAT:
            raise LexicalIndexError(f"index format {state.format}")
        self._open_indexes(state)

    def _open_indexes(self, state: IndexState) -> None:
        """Opens the index folders ``state`` names."""
        assert self._files is not None
        lexical = LexicalIndex.open(self._files.path / state.lexical, create=False)
        path = self._files.path / state.vectors
        if state.embedder != self.embedder.name:
            state.watermarks = {}  # every blob needs a new vector
            state.commits = {}
            state.reuse = {}
            vectors = self._new_vectors(path)
        else:
            vectors = open_vectors(path, graph=not self.exact)
            vectors.made_by = state.embedder  # for a sidecar saved without it
        self._state, self.lexical, self.vectors = state, lexical, vectors

    def _new_vectors(self, path: Path | None) -> VectorIndex | None:
        """Returns a new empty vector index, or None if the embedder is down."""
        try:
            dimensions = self.embedder.dimensions
        except EmbedderError as exc:
            self._vector_error = exc
            return None
        vectors = FlatVectors(dimensions, path)
        vectors.made_by = self.embedder.name
        return vectors

    def _has_vector(self, blob: str) -> bool:
        return self.vectors is not None and blob in self.vectors

    def _reset(self, *, reuse: bool = True) -> None:
        """Starts new, empty indexes in new folders (lock held).

        With ``reuse``, the vectors of the index being replaced (and of any
        it was still copying from), if made by the same embedder, are named
        in the new state, to be copied rather than embedded again
        (:mod:`ctx.hub.retrieval.index.reuse`); a state file that cannot be read names
        none, and the vector folders this embedder made are looked for.

        The state file switches to them at once; other processes see the
        switch at their next look and reopen. The old folders are removed
        by a later catch-up, once nobody can still be reading them.
        """
        assert self._files is not None
        sources = self._replaced_vectors() if reuse else {}
        self._sources.clear()
        self._state = IndexState.fresh(self._state.generation)
        self._state.reuse = sources
        made = [
            self._files.path / self._state.lexical,
            self._files.path / self._state.vectors,
        ]
        try:
            self.lexical = LexicalIndex.open(made[0])
            self.vectors = self._new_vectors(made[1])
            self._save_vectors()
            self._commit_state()
        except BaseException:
            # Folders no state names would wait ten minutes for a catch-up
            # to remove them; a full disk would meet one more each recall.
            for folder in made:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        self._files.collect(self._state)

    def _replaced_vectors(self) -> dict[str, int]:
        """Returns the vector folders a rebuild may copy from, with their format."""
        assert self._files is not None
        name = self.embedder.name
        try:
            state = self._files.read_state()
        except (msgspec.DecodeError, OSError):
            return vector_folders(self._files.path, name, FORMAT)
        if state.embedder != name or not state.embedder:
            return {}
        found = {**state.reuse, state.vectors: state.format}
        return {n: f for n, f in found.items() if (self._files.path / n).is_dir()}

    @contextlib.contextmanager
    def _locked(self, *, blocking: bool) -> Iterator[bool]:
        """Holds the index lock (always granted for indexes in memory).

        Reentrant: a rebuild holds it while it catches every branch up.
        """
        if self._files is None or self._holding:
            yield True
            return
        with self._files.locked(blocking=blocking) as got:
            self._holding += got
            try:
                yield got
            finally:
                self._holding -= got

    # -- repair -----------------------------------------------------------

    def repair(self, exc: IndexCorruptError) -> None:
        """Repairs the index ``exc`` found damaged, with a notice.

        A damaged lexical index is started again in a new folder (the
        vectors are kept); damaged vectors are removed, and only they are
        embedded again. Either way the watermarks are dropped, so the next
        view finds what the repaired index lacks and indexes only that. If
        another process rebuilt the index meanwhile, its rebuild is opened.
        """
        if isinstance(exc, VectorIndexCorruptError):
            self.notices.append(
                f"Vectors were damaged ({exc.message}); embedding them again."
            )
        else:
            self.notices.append(
                f"The index was unreadable ({exc.message}); rebuilt it."
            )
        self._views = {}
        if self._files is None:
            self._repair_in_memory(exc)
            return
        seen = (self._state.lexical, self._state.vectors)
        with self._locked(blocking=True):
            try:
                state = self._files.read_state()
                if (state.lexical, state.vectors) != seen:
                    self._open_indexes(state)  # rebuilt by another process
                    return
                if isinstance(exc, VectorIndexCorruptError):
                    self._state = state
                    self._repair_vectors(exc.keys)
                else:
                    self._renew_lexical(state)
            except (CtxError, msgspec.DecodeError, OSError):
                self._reset()

    def _renew_lexical(self, state: IndexState) -> None:
        """Starts a new lexical index beside the vectors ``state`` names."""
        assert self._files is not None
        state.lexical = IndexState.fresh(0).lexical
        state.watermarks, state.commits = {}, {}
        self.lexical = LexicalIndex.open(self._files.path / state.lexical)
        self._state = state
        self._commit_state()

    def _repair_vectors(self, keys: Sequence[str]) -> None:
        """Removes ``keys`` and every damaged vector, to be embedded again."""
        assert self._files is not None
        self.vectors = open_vectors(
            self._files.path / self._state.vectors,
            graph=not self.exact,
            previous=self.vectors,
        )
        self.vectors.remove([*keys, *self.vectors.damaged()])
        self._save_vectors()
        self._state.watermarks, self._state.commits = {}, {}
        self._commit_state()

    def _repair_in_memory(self, exc: IndexCorruptError) -> None:
        """Repairs indexes that live in memory (rarely damaged: never on disk)."""
        if isinstance(exc, VectorIndexCorruptError) and self.vectors is not None:
            self.vectors.remove([*exc.keys, *self.vectors.damaged()])
        elif not isinstance(exc, VectorIndexCorruptError):
            self.lexical = LexicalIndex.in_memory()
        self._state = IndexState()

    def _sync(self, *, recover: bool = False) -> None:
        """Sees what other processes committed to the index since we looked.

        With ``recover`` (the lock not held), an index whose files were
        deleted since this process opened it (``rm -r .ctx/index`` under a
        running hub) is opened again and rebuilt, as a new process would.
        """
        if self._files is None:
            return
        try:
            state = self._files.read_state()
        except (OSError, msgspec.DecodeError):
            state = None  # the state file is replaced in one rename: gone
        if state is None or not self._files.holds(state):
            if recover:
                self._reopen()
            return
        if state.generation != self._state.generation:
            if (state.lexical, state.vectors) != (
                self._state.lexical,
                self._state.vectors,
            ):
                self._open_indexes(state)  # reindexed meanwhile
                self._views = {}
                return
            self._state = state
            if state.embedder == self.embedder.name:
                with contextlib.suppress(VectorIndexError):
                    self.vectors = open_vectors(
                        self._files.path / state.vectors,
                        graph=not self.exact,
                        previous=self.vectors,
                    )

    def _reopen(self) -> None:
        """Opens the index again: its files were deleted under this process."""
        self._files = None
        self._views = {}
        self._open(lost=True)

    def _commit_state(self) -> None:
        self._state.generation += 1
        if self.vectors is not None:
            self._state.embedder = self.embedder.name
            self._state.dimensions = self.vectors.dimensions
        if self._files is not None:
            self._files.write_state(self._state)

    def _save_vectors(self) -> None:
        if self._files is not None and self.vectors is not None:
            self.vectors.save()

    def watermarks(self) -> dict[str, tuple[str, str]]:
        """Returns the (commit, tree) each indexed branch was last caught up to."""
        self._sync(recover=True)
        state = self._state
        return {
            branch: (state.commits.get(branch, ""), tree)
            for branch, tree in sorted(state.watermarks.items())
        }

    @property
    def embedder_name(self) -> str:
        """Returns the name of the embedder that built the vectors."""
        return self._state.embedder or self.embedder.name

    def size_bytes(self) -> int:
        """Returns the bytes the current indexes take on disk (0 in memory)."""
        return 0 if self._files is None else self._files.size_bytes(self._state)


_NEARLY_FULL = 1 << 20
"""Free bytes under which a failed index write is taken for a full disk."""


def disk_full(exc: BaseException | None, folder: Path | None = None) -> bool:
    """Returns whether ``exc``, or what caused it, says the disk is full.

    Tantivy says it in words, or not at all (a writer thread that died on
    the full disk: "An index writer was killed"); the vector index wraps the
    ``OSError``. With ``folder``, an index error while its disk has under a
    megabyte free counts too.
    """
    if folder is not None and isinstance(exc, (LexicalIndexError, VectorIndexError)):
        with contextlib.suppress(OSError):
            found = os.statvfs(folder)
            if found.f_bavail * found.f_frsize < _NEARLY_FULL:
                return True
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        said = exc.message if isinstance(exc, CtxError) else str(exc)
        if "No space left on device" in said or "os error 28" in said:
            return True
        exc = exc.__cause__
    return False
