"""The projection of commits into the search indexes, caught up on demand.

Indexes are keyed by blob id: a memory that lives on fifty branches is indexed
once. A commit's view is the set of live blob ids in its tree
(:class:`~ctx.hub.retrieval.index.view.LiveView`, from the engine's catalog, cached per
tree id), and every search is filtered by it: :meth:`Projection.searcher`
hands out a :class:`~ctx.hub.retrieval.index.searcher.Searcher` for a view, and the
projection itself searches nothing. Catching up diffs the tree last indexed
for a branch (its watermark) with the tree asked for and indexes only the blobs
that are new and not yet indexed, so any commit, by any process or by ``git``
on the store, is visible to the next recall.

The indexes themselves, their folder, lock, sharing with other processes and
repair, are :class:`~ctx.hub.retrieval.index.stored.StoredIndexes`, which a projection
is.

Catching up takes ``lock`` (Tantivy allows one writer per index). A process
that cannot get it at once and has only a few blobs to index scores those in
memory (an in-memory Tantivy index and flat vectors beside the shared ones,
carried by the view) and answers correctly without waiting; with more, it
waits for the lock. The watermark moves only when both indexes hold every blob
of the tree, after they are durable, so a crash at any point leaves at worst
work to redo.

When the embedder fails, the lexical index is still caught up, the
watermark stays, and :attr:`Projection.warnings` says why.

:attr:`Projection.notices` (the index was rebuilt, or lives in memory) and
:attr:`Projection.warnings` (recall is lexical only) accumulate until the
caller reports and clears them.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ctx.engine import (
    CommitId,
    CtxError,
    Memory,
    Store,
    changed_blobs,
    live_catalog,
    plural,
    read_memory,
)
from ctx.hub.config import HubConfig
from ctx.hub.retrieval.embedders import Embedder, EmbedderError, make_embedder
from ctx.hub.retrieval.index.documents import (
    REPLY_TO,
    UNTOLD,
    embed_text,
    lexical_doc,
    told,
)
from ctx.hub.retrieval.index.errors import IndexCorruptError
from ctx.hub.retrieval.index.folder import FORMAT, IndexState
from ctx.hub.retrieval.index.hnsw import HnswVectors
from ctx.hub.retrieval.index.lexical import (
    LexicalDoc,
    LexicalIndex,
)
from ctx.hub.retrieval.index.passages import embed_passages, owner, passage_texts
from ctx.hub.retrieval.index.rows import FlatVectors
from ctx.hub.retrieval.index.searcher import Searcher
from ctx.hub.retrieval.index.stored import StoredIndexes, disk_full
from ctx.hub.retrieval.index.vectors import CROSSOVER
from ctx.hub.retrieval.index.view import LiveView, PendingIndexes

__all__ = ["FORMAT", "INLINE_EMBED", "REPLY_TO", "CatchUp", "Projection"]

PENDING_MAX = 64
"""Unindexed blobs a process scores in memory rather than wait for the lock."""

INLINE_EMBED = 64
"""Most vectors a deferring catch-up makes before it answers (about 1.7 s of
embedding for 200-word memories on two cores); with more, it makes none and
leaves them all to the backlog (docs/recall.md, "The embedding backlog")."""

_BATCH = 512  # blobs embedded and written per step
MEMORY_CACHE = 8192
"""How many decoded memories a projection keeps for its searchers to read."""
_SAVE_EVERY_S = 5.0  # a long build makes its work durable this often
# (saving rewrites the vector sidecar, which lists every key: per batch,
# a build of a million memories would write it 2,000 times)
_EMPTY = "empty"


@dataclass(frozen=True)
class CatchUp:
    """What a catch-up did: documents added, vectors embedded, seconds taken.

    ``reused`` counts the vectors copied instead of embedded: from a blob with
    the same text, or from the index a rebuild replaced.
    """

    indexed: int
    embedded: int
    seconds: float
    reused: int = 0


def _memory_blobs(
    store: Store, before: str | None, after: str | None
) -> tuple[list[str], list[str]]:
    """Returns the memory blobs added and removed between two trees."""
    return changed_blobs(
        store,
        None if before == _EMPTY else before,
        None if after == _EMPTY else after,
    )


class Projection(StoredIndexes):
    """The search indexes of one store, caught up to any commit on demand.

    Args:
        store: The store (one without a path gets indexes in memory).
        embedder: The embedder for the vector channel.
        progress: Called with (done, total) while many blobs are indexed.
        exact: Search every vector exactly rather than load an HNSW graph
            (loaded only if a catch-up must grow it): for a process that
            answers one question, where loading the graph would cost more
            than the search (docs/recall.md, "One question").
        defer: Never wait for the embedder: a catch-up that finds more than
            :data:`INLINE_EMBED` blobs without a vector indexes their text
            only, and leaves their vectors to :meth:`backlog` (made by the
            hub in the background, newest first).
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        progress: Callable[[int, int], None] | None = None,
        exact: bool = False,
        defer: bool = False,
    ) -> None:
        self.defer = defer
        self.progress = progress
        self.last_catch_up: CatchUp | None = None
        # A blob never changes: its memory can be kept for any later query.
        self._read_memory = functools.lru_cache(maxsize=MEMORY_CACHE)(self._read)
        super().__init__(store, embedder, exact=exact)

    def _read(self, path: str, blob: str) -> Memory:
        """Returns the memory in ``blob`` at ``path`` (cached: a blob never changes)."""
        return read_memory(self.store, path, blob)

    @classmethod
    def for_store(
        cls,
        store: Store,
        config: HubConfig,
        *,
        progress: Callable[[int, int], None] | None = None,
        exact: bool = False,
        defer: bool = False,
    ) -> Projection:
        """Returns the projection of ``store`` with the embedder its config names.

        Raises:
            EmbedderError: The embedder config is not valid.
        """
        return cls(
            store,
            make_embedder(config.embedder),
            progress=progress,
            exact=exact,
            defer=defer,
        )

    # -- views ------------------------------------------------------------

    def view(self, commit: CommitId, *, branch: str | None = None) -> LiveView:
        """Returns ``commit``'s live view, catching the indexes up to it first.

        An index found damaged on the way is repaired (:meth:`repair`) and
        caught up again.

        Args:
            commit: The commit to see.
            branch: The branch whose tip it is, whose watermark then moves;
                ``None`` for a past commit (indexed, no watermark moves).
        """
        try:
            return self._view(commit, branch)
        except IndexCorruptError as exc:
            self.repair(exc)
        return self._view(commit, branch)

    def _view(self, commit: CommitId, branch: str | None) -> LiveView:
        self._sync(recover=True)
        root = self.store.snapshot(commit).tree
        tree = _EMPTY if root is None else root.decode("ascii")
        view = self._views.get(tree)
        if view is None or view.commit != commit:
            view = self._make_view(commit)
            self._views = {tree: view}  # one cached view per Projection is enough
        if view.pending or branch is None or self._state.watermarks.get(branch) != tree:
            self._catch_up(view, tree, branch)
        if not self.defer and self.lexical.in_language(UNTOLD, limit=1):
            # Left untold by a catch-up that counted on a hub: none may run.
            self.tell_untold(view)
        view.complete = (
            not view.pending
            and self.lexical.count() == len(view.blobs)
            and self.vectors is not None
            and self.vectors.blob_count() == len(view.blobs)
        )
        return view

    def _make_view(self, commit: CommitId) -> LiveView:
        catalog = live_catalog(self.store, commit)
        by_blob = {entry.blob: mid for mid, entry in catalog.entries.items()}
        return LiveView(commit, catalog, by_blob, frozenset(by_blob))

    def _catch_up(self, view: LiveView, tree: str, branch: str | None) -> None:
        watermarks = self._state.watermarks
        base = watermarks.get(branch or "") or watermarks.get(self.store.head_branch())
        if base is None and watermarks:
            base = next(iter(watermarks.values()))
        if base is None or base == _EMPTY:
            # Nothing indexed yet: every memory of the view is new, and the
            # catalog already lists them (a tree walk costs ~1 s at 10,000).
            added, removed = list(view.by_blob), list[str]()
        else:
            # A watermark whose tree is gone (gc) diffs as the empty tree.
            added, removed = _memory_blobs(self.store, base, tree)
        missing = self._missing(added)
        if not missing:
            view.pending, view.pending_indexes = [], []
            if branch is not None:
                self._advance(branch, view, tree, base, removed)
            return
        with self._locked(blocking=len(missing) > PENDING_MAX) as got:
            if not got:
                self._score_pending(view, missing)
                return
            self._sync()
            missing = self._missing(missing)
            try:
                done = self._index(view, missing)
            except (CtxError, OSError) as exc:
                if not disk_full(exc, self._path):
                    raise
                # `ctx reindex` would meet the same full disk: the new
                # memories are scored in memory, as when the lock is busy;
                # by their words alone when they are many (embedding them
                # at every recall would cost seconds each time).
                few = len(missing) <= PENDING_MAX
                self.notices.append(
                    f"No space left on the disk of {self._path}: "
                    f"{plural(len(missing), 'new memory')} "
                    f"indexed in memory for now{'' if few else ', by words only'}."
                )
                self._score_pending(view, missing, embed=few)
                return
            view.pending, view.pending_indexes = [], []
            if branch is not None and done:
                self._advance(branch, view, tree, base, removed, locked=True)

    def _missing(self, blobs: Sequence[str]) -> list[str]:
        """Returns the blobs lacking a document or a vector.

        A deferring projection leaves out the blobs that only lack a vector
        when there are too many to embed now: they are its backlog.
        """
        blobs = list(dict.fromkeys(blobs))
        unlexed = set(self._missing_lexical(blobs))
        if self._deferred(blobs):
            return [b for b in blobs if b in unlexed]
        return [b for b in blobs if b in unlexed or not self._has_vector(b)]

    def _deferred(self, blobs: Sequence[str]) -> bool:
        """Returns whether the vectors ``blobs`` lack are left to the backlog."""
        if not self.defer:
            return False
        lacking = 0
        for blob in blobs:
            lacking += not self._has_vector(blob)
            if lacking > INLINE_EMBED:
                return True
        return False

    def _missing_lexical(self, blobs: Sequence[str]) -> list[str]:
        if len(blobs) > 2_000:
            known = self.lexical.known_blobs()
            return [b for b in blobs if b not in known]
        return [b for b in blobs if not self.lexical.contains(b)]

    def _advance(
        self,
        branch: str,
        view: LiveView,
        tree: str,
        base: str | None,
        removed: list[str],
        *,
        locked: bool = False,
    ) -> None:
        """Moves ``branch``'s watermark to ``tree`` (its blobs all indexed).

        Takes the lock unless ``locked``; if it is busy, the next catch-up
        moves the watermark instead.
        """
        if self._state.watermarks.get(branch) == tree:
            return
        if not locked:
            with self._locked(blocking=False) as got:
                if got:
                    self._sync()
                    self._advance(branch, view, tree, base, removed, locked=True)
            return
        state = self._state
        # With one branch indexed, what its diff removed is garbage.
        alone = state.watermarks == {branch: base}
        gone = [b for b in removed if alone and b not in view.blobs]
        if gone:
            with self.lexical.writer() as writer:
                writer.delete(gone)
                writer.commit()
            if self.vectors is not None:
                self.vectors.remove(gone)
                self._save_vectors()
        state.watermarks[branch] = tree
        state.commits[branch] = view.commit
        if (state.reuse or self._sources) and set(
            self.store.branches()
        ) <= state.watermarks.keys():
            # The rebuild has caught every branch up: nothing is left to copy.
            state.reuse = {}
            self._sources.clear()
        self._commit_state()

    # -- indexing ---------------------------------------------------------

    def _docs(
        self,
        view: LiveView,
        blobs: Sequence[str],
        *,
        later: bool = False,
        load: bool = True,
    ) -> list[LexicalDoc]:
        """Returns the documents of ``blobs`` (``later``, ``load``: ``lexical_doc``)."""
        snap = self.store.snapshot(view.commit)
        entries = view.catalog.entries
        docs = []
        for blob in blobs:
            entry = entries[view.by_blob[blob]]
            docs.append(lexical_doc(snap, entry.path, blob, later=later, load=load))
        return docs

    def _index(self, view: LiveView, blobs: list[str]) -> bool:
        """Indexes blobs of ``view`` (lock held); returns whether all got vectors."""
        started = time.perf_counter()
        added = embedded = reused = 0
        if self.vectors is None:
            self.vectors = self._new_vectors(
                None if self._files is None else self._files.path / self._state.vectors
            )
        embed_now = not self._deferred(blobs)
        saved = time.monotonic()
        with self.lexical.writer() as writer:
            unlexed = set(self._missing_lexical(blobs))
            untold: list[LexicalDoc] = []
            for first in range(0, len(blobs), _BATCH):
                batch = blobs[first : first + _BATCH]
                embeddable = self.vectors is not None and self._vector_error is None
                wanted = [
                    b
                    for b in batch
                    if b in unlexed or (embeddable and not self._has_vector(b))
                ]
                # A text the language detector must tell waits for the last
                # batch: the detector loads meanwhile.
                # Deferring, the hub tells them after the answer (tell_untold):
                # loading the detector costs 0.5 s of a core meanwhile.
                docs = self._docs(view, wanted, later=True, load=embed_now)
                lexed = [d for d in docs if d.blob in unlexed]
                untold += [d for d in lexed if d.language == UNTOLD]
                lexed = [d for d in lexed if d.language != UNTOLD]
                last = first + _BATCH >= len(blobs)
                if last:
                    lexed += map(told, untold) if embed_now else untold
                if lexed:
                    writer.add(lexed, new=True)  # the blobs of none are there
                    added += len(lexed)
                todo = [d for d in docs if not self._has_vector(d.blob)]
                if todo and self.vectors is not None and self._vector_error is None:
                    copied = self._sources.copy(
                        todo, self.vectors, self.lexical, self.folder, self._state.reuse
                    )
                    reused += len(copied)
                    todo = [d for d in todo if d.blob not in copied]
                if (
                    todo
                    and embed_now
                    and self.vectors is not None
                    and self._vector_error is None
                ):
                    try:
                        keys, vectors = embed_passages(
                            self.embedder, [(d.blob, embed_text(d)) for d in todo]
                        )
                    except EmbedderError as exc:
                        self._vector_error = exc
                    else:
                        self.vectors.add(keys, vectors)
                        embedded += len(todo)
                if last or time.monotonic() - saved > _SAVE_EVERY_S:
                    # Durable now: a killed build resumes from here.
                    writer.commit()
                    self._save_vectors()
                    saved = time.monotonic()
                if self.progress is not None:
                    self.progress(min(first + _BATCH, len(blobs)), len(blobs))
        self._upgrade_vectors()
        self._commit_state()
        if self._files is not None:
            self._files.collect(self._state)
        self.last_catch_up = CatchUp(
            added, embedded, time.perf_counter() - started, reused
        )
        if self._vector_error is not None:
            self.warnings.append(
                f"Vectors not updated ({self._vector_error.message}); "
                "recall is lexical only."
            )
            # Deferring, the watermark says only that the text is indexed.
            return self.defer
        return True

    def _upgrade_vectors(self) -> None:
        """Moves a flat index that has grown past the crossover to HNSW."""
        flat = self.vectors
        if flat is None or isinstance(flat, HnswVectors) or len(flat) < CROSSOVER:
            return
        assert isinstance(flat, FlatVectors)
        self.vectors = HnswVectors.from_flat(flat)
        self._save_vectors()

    def _score_pending(
        self, view: LiveView, blobs: list[str], *, embed: bool = True
    ) -> None:
        """Indexes a few blobs in memory, for a process that cannot take the lock.

        ``embed``: embed them too (else the vector channel finds none).
        """
        docs = self._docs(view, blobs)
        lexical = LexicalIndex.in_memory()
        with lexical.writer() as writer:
            writer.add(docs, new=True)
            writer.commit()
        vectors = None
        if self.vectors is not None and embed:
            try:
                keys, found = embed_passages(
                    self.embedder, [(d.blob, embed_text(d)) for d in docs]
                )
            except EmbedderError as exc:
                self._vector_error = exc
            else:
                vectors = FlatVectors(self.vectors.dimensions)
                vectors.add(keys, found)
        view.pending = blobs
        view.pending_indexes = [PendingIndexes(lexical, vectors)]

    # -- the embedding backlog --------------------------------------------

    def backlog(self, view: LiveView) -> list[str]:
        """Returns the blobs of ``view`` that have no vector yet, newest first.

        Newest by memory id (a ULID, so by creation time). Cheap when nothing
        is missing: every indexed document has a vector.
        """
        vectors = self.vectors
        # Memories, not keys: a long memory has a vector per passage.
        if vectors is not None and vectors.blob_count() >= self.lexical.count():
            return []
        pending = set(view.pending)
        lacking = [
            b
            for b in view.blobs
            if (vectors is None or b not in vectors) and b not in pending
        ]
        return sorted(lacking, key=view.by_blob.__getitem__, reverse=True)

    def tell_untold(self, view: LiveView, limit: int = 256) -> int:
        """Tells the languages a deferring catch-up left for later; returns how many.

        A catch-up that leaves vectors to the hub leaves it the language
        detector too (0.5 s of a core to load): such a document is indexed
        as English, its language :data:`~ctx.hub.retrieval.index.documents.UNTOLD`,
        until this indexes it again told. At most ``limit`` of ``view``'s.
        """
        blobs = self.lexical.in_language(UNTOLD, limit=limit, allowed=view.blobs)
        if not blobs:
            return 0
        docs = self._docs(view, blobs)  # detected now
        with self._locked(blocking=True):
            self._sync()
            with self.lexical.writer() as writer:
                writer.add(docs)  # each replaces its untold document
                writer.commit()
        return len(docs)

    def unembedded(self) -> int:
        """Returns how many indexed documents have no vector yet."""
        made = 0 if self.vectors is None else self.vectors.blob_count()
        return max(0, self.lexical.count() - made)

    def embed_texts(self, view: LiveView, blobs: Sequence[str]) -> list[str]:
        """Returns the text each of ``blobs`` (of ``view``) is embedded from."""
        return [embed_text(doc) for doc in self._docs(view, blobs)]

    def backlog_passages(
        self, view: LiveView, blobs: Sequence[str]
    ) -> tuple[list[str], list[str]]:
        """Returns the vector keys and texts to embed for ``blobs`` (of ``view``).

        Every passage of a long memory, keyed as a catch-up keys them
        (:func:`~ctx.hub.retrieval.index.passages.passage_texts`): its one
        text's vector would leave all but its first window unsearched.
        """
        return passage_texts([(d.blob, embed_text(d)) for d in self._docs(view, blobs)])

    def add_vectors(self, keys: Sequence[str], rows: npt.NDArray[np.float32]) -> int:
        """Adds vectors made outside the lock; returns for how many memories.

        ``keys`` are passage keys (:meth:`backlog_passages`). Takes the
        lock, sees what other processes did meanwhile, and adds the vectors
        of the memories that still have none; the index is durable when it
        returns, so a process killed at any point loses at most the rows it
        was adding.
        """
        with self._locked(blocking=True):
            self._sync()
            if self.vectors is None:
                return 0
            vectors = self.vectors
            missing = {b for b, _ in map(owner, keys) if b not in vectors}
            keep = [i for i, k in enumerate(keys) if owner(k)[0] in missing]
            if not keep:
                return 0
            self.vectors.add([keys[i] for i in keep], rows[keep])
            self._save_vectors()
            self._upgrade_vectors()
            self._commit_state()
            return len(missing)

    # -- searching --------------------------------------------------------

    def searcher(self, view: LiveView) -> Searcher:
        """Returns a searcher over ``view`` with the indexes as they are now.

        ``view`` is one this projection made (and so caught the indexes up
        to), or a part or union of such views.
        """
        return Searcher(
            view,
            lexical=self.lexical,
            vectors=self.vectors,
            embedder=self.embedder,
            read=self._read_memory,
            vector_error=self._vector_error,
        )

    # -- maintenance ------------------------------------------------------

    def reindex(self, *, reuse_vectors: bool = True) -> None:
        """Drops every index and starts empty; the next view rebuilds it.

        Args:
            reuse_vectors: Copy the vectors of blobs the dropped index had
                (same embedder) instead of embedding them again.
        """
        with self.rebuilding(reuse_vectors=reuse_vectors):
            pass

    @contextlib.contextmanager
    def rebuilding(self, *, reuse_vectors: bool = True) -> Iterator[None]:
        """Drops every index and holds the lock while the block rebuilds it.

        The block catches branches up (:meth:`view`); no other process
        indexes meanwhile, so what the rebuild reports is what it did. A
        rebuild that is killed leaves the replaced vectors named in the
        state, for whichever process goes on with it.

        Args:
            reuse_vectors: Copy the vectors of blobs the dropped index had
                (same embedder) instead of embedding them again.
        """
        if self._files is None:
            self._sources.clear()
            if reuse_vectors and self.vectors is not None:
                self._sources.keep(self.vectors, FORMAT)
            self.lexical = LexicalIndex.in_memory()
            self.vectors = self._new_vectors(None)
            self._state = IndexState()
            self._views = {}
            yield
            return
        self._sync(recover=True)  # a folder deleted under a hub comes back
        with self._locked(blocking=True):
            self._reset(reuse=reuse_vectors)
            self._views = {}
            yield
