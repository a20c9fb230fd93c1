"""The code index of a store: a projection of a source tree, kept current.

On disk, under the store's index folder (``.ctx/index/code/``)::

    manifest.msgpack    the root, and per file: size, mtime, content id,
                        language, chunks (or why it was left out)
    lexical/            the chunks' Tantivy index (ctx.hub.code.lexical)
    vectors.f32, vector_keys.txt
                        the chunks' vectors (ctx.hub.code.vectors)
    lock                flock: one process indexes at a time

Nothing here is a memory or a commit: deleting the folder loses nothing but
the time to index again.

:meth:`CodeIndex.update` walks the tree (:mod:`ctx.hub.code.files`), reads
only the files whose size or modification time changed (as git's index
does), cuts again only those whose content id changed, drops the files that
are gone (:mod:`ctx.hub.code.reading`), and embeds only chunk texts never
embedded before; or leaves them to the hub, which embeds the backlog in
steps on a thread of its own (:meth:`CodeIndex.next_backlog`,
:meth:`CodeIndex.add_vectors`, called by ``ctx.hub.server.backfill``), so
that indexing never waits for the embedder. The Tantivy
commit comes first and the manifest is replaced last, in one rename; a
Tantivy document names its file's content id, so documents from a run that
crashed before its manifest was written are dropped as stale when searched,
and replaced by the next run.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ctx.engine import InvalidInputError, plural
from ctx.hub.code.files import in_git_work_tree, read_file, read_source
from ctx.hub.code.lexical import CodeLexical
from ctx.hub.code.manifest import (
    KEYS,
    MANIFEST,
    ROWS,
    FileEntry,
    FileHead,
    Manifest,
    Outline,
    read_manifest,
    read_outline,
    stored_keys,
    write_outline,
)
from ctx.hub.code.reading import Progress, Reading, embed_text, vector_key
from ctx.hub.code.results import CodeIndexReport, CodeStatus
from ctx.hub.retrieval.embedders import Embedder, EmbedderError

if TYPE_CHECKING:  # numpy loads only where vectors are read or written
    import numpy as np
    import numpy.typing as npt

    from ctx.hub.code.vectors import CodeVectors, Graph

__all__ = ["CodeIndex", "chunk_key", "describe_skipped"]

WAITING = "waiting for another update of this code index to end"
"""The stage :meth:`CodeIndex.update` reports (done and total 0) when another
process holds the index's lock for longer than :data:`_QUIET_WAIT_S`."""

_QUIET_WAIT_S = 1.0
"""Seconds an update waits for the lock before it says it is waiting."""

_EMBED_BATCH = 256  # chunk texts embedded per step (progress is reported per step)
GRAPH_DELTA = 4096
"""Rows appended since the graph was built (searched exactly) before another."""


def chunk_key(path: str, entry: FileEntry | FileHead, position: int) -> str:
    """Returns the Tantivy key of a file's chunk at ``position``."""
    return f"{path}\0{entry.id}\0{position}"


class CodeIndex:
    """The code index in one folder.

    Args:
        folder: ``.ctx/index/code``.
        embedder: Builds the embedder when vectors are first needed.
    """

    def __init__(self, folder: Path, embedder: Callable[[], Embedder]) -> None:
        self.folder = folder
        self._make_embedder = embedder
        self._embedder: Embedder | None = None
        self._stamp: tuple[int, int] | None = None
        self._outline: Outline | None = None
        self._heads: dict[str, FileHead] | None = None
        self._manifest: Manifest | None = None
        self._lexical: CodeLexical | None = None
        self._vectors: CodeVectors | None = None
        self._settled: tuple[object, ...] | None = None  # no backlog at this state
        self._graph: Graph | None = None
        self.derived: dict[str, object] = {}
        """What searches derive from the manifest, dropped when it changes."""
        self.refresh()

    # -- reading ----------------------------------------------------------

    def refresh(self) -> bool:
        """Forgets what was read of the manifest if another process replaced it.

        Returns:
            Whether it changed.
        """
        stamp = _stamp_of(self.folder / MANIFEST)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        self._forget()
        if self._lexical is not None:
            self._lexical.reload()
        return True

    def _forget(self) -> None:
        self._outline = self._heads = self._manifest = None
        self._vectors = None
        self.derived.clear()

    @property
    def manifest(self) -> Manifest:
        """Returns the whole manifest (decoded on first use)."""
        if self._manifest is None:
            self._manifest = read_manifest(self.folder)
        return self._manifest

    @property
    def outline(self) -> Outline:
        """Returns the manifest with its files undecoded (cheap: module doc)."""
        if self._outline is None:
            self._outline = read_outline(self.folder)
        return self._outline

    def heads(self) -> dict[str, FileHead]:
        """Returns each file's :class:`FileHead` (decoded once per manifest)."""
        if self._heads is None:
            self._heads = self.outline.heads()
        return self._heads

    @property
    def exists(self) -> bool:
        """Returns whether a tree was ever indexed here."""
        return bool((self._manifest or self.outline).root)

    @property
    def lexical(self) -> CodeLexical:
        """Returns the Tantivy index, opened (or made again if damaged) on first use."""
        if self._lexical is None:
            folder = self.folder / "lexical"
            try:
                self._lexical = CodeLexical(folder)
            except ValueError:
                shutil.rmtree(folder, ignore_errors=True)
                kept = self.outline  # its vectors stay good: they are by text
                self._outline = Outline(
                    embedder=kept.embedder,
                    dimensions=kept.dimensions,
                    vectors=kept.vectors,
                )
                self._heads = {}
                self._manifest = Manifest()
                self._lexical = CodeLexical(folder)
        return self._lexical

    def vectors(self) -> CodeVectors | None:
        """Returns the vectors, or None when the index holds none."""
        dimensions = (self._manifest or self.outline).dimensions
        if self._vectors is None and dimensions:
            self._vectors = self._open_vectors(dimensions)
        return self._vectors

    def _open_vectors(self, dimensions: int) -> CodeVectors:
        from ctx.hub.code.vectors import CodeVectors

        vectors = CodeVectors(self.folder, dimensions)
        vectors.adopt(self._graph)
        return vectors

    # -- the graph (built by the hub) ---------------------------------------

    def graph_wanted(self) -> CodeVectors | None:
        """Returns the vectors to build a search graph over, or None if not needed.

        Wanted from :data:`~ctx.hub.code.vectors.GRAPH_MIN` rows, and again
        when the rows added since the last graph reach ``GRAPH_DELTA`` (or
        the rows were renumbered).
        """
        from ctx.hub.code.vectors import GRAPH_MIN

        vectors = self.vectors()
        if vectors is None or len(vectors.rows) < GRAPH_MIN:
            return None
        graph = vectors.graph
        if graph is not None and len(vectors.rows) - graph.count < GRAPH_DELTA:
            return None
        return vectors

    def adopt_graph(self, graph: Graph) -> None:
        """Keeps ``graph`` for every search from now on (if still for these rows)."""
        self._graph = graph
        vectors = self.vectors()
        if vectors is not None:
            vectors.adopt(graph)

    @property
    def embedder(self) -> Embedder:
        """Returns the store's embedder (built on first use)."""
        if self._embedder is None:
            self._embedder = self._make_embedder()
        return self._embedder

    def unembedded(self) -> int:
        """Returns how many chunks have no vector yet (the backlog)."""
        outline = self.outline
        stored = set(stored_keys(self.folder, outline.dimensions) or ())
        return sum(
            1
            for head in self.heads().values()
            for key in head.keys
            if key not in stored
        )

    def status(self, *, hub: bool = False) -> CodeStatus:
        """Returns the index's state (``hub``: a running hub answers)."""
        self.refresh()
        outline, heads = self.outline, self.heads()
        return CodeStatus(
            root=outline.root,
            files=sum(1 for h in heads.values() if not h.skipped),
            chunks=sum(len(h.keys) for h in heads.values()),
            vectors=outline.vectors,
            embedder=outline.embedder,
            unembedded=self.unembedded() if outline.vectors else 0,
            hub=hub,
            graph=self._graph.count if self._graph is not None else 0,
        )

    # -- writing ----------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, waiting: Callable[[], None] | None = None) -> Iterator[None]:
        """Holds the index's lock; ``waiting`` is called if it must wait for it.

        Not at once: the hub takes the lock for a moment to store vectors,
        which is no wait to speak of; another process's update can take
        minutes, and a second ``ctx code index`` meanwhile said nothing.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / "lock").open("a+b") as file:
            fd = file.fileno()
            deadline = time.monotonic() + _QUIET_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        if waiting is not None:
                            waiting()
                        fcntl.flock(fd, fcntl.LOCK_EX)
                        break
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(file.fileno(), fcntl.LOCK_UN)

    def update(
        self,
        root: Path,
        *,
        vectors: bool = True,
        embed: bool = True,
        progress: Progress | None = None,
    ) -> CodeIndexReport:
        """Brings the index up to date with the tree at ``root`` (module doc).

        Another root than the one indexed replaces it.

        Args:
            root: The folder to index.
            vectors: The chunks are to have vectors (the manifest says so,
                and the hub embeds the backlog only then).
            embed: Embed the chunks that have no vector yet now, in this
                process (with ``vectors``); else they are left to the hub.
            progress: Called with (stage, done, total) while reading and
                embedding.

        Raises:
            InvalidInputError: ``root`` is not a folder.
        """
        started = time.perf_counter()
        root = root.resolve()
        if not root.is_dir():
            raise InvalidInputError(
                f"{root} is not a folder.", hint="Give the folder of a source tree."
            )
        with self._locked(
            None if progress is None else lambda: progress(WAITING, 0, 0)
        ):
            self.refresh()  # another writer's manifest, if one came since
            self.lexical.reload()  # opened first: a damaged one empties the outline
            old, heads = self.outline, self.heads()
            if old.root != str(root):
                old = Outline(embedder=old.embedder, dimensions=old.dimensions)
                heads = {}
                self._lexical = None
                shutil.rmtree(self.folder / "lexical", ignore_errors=True)
            git = in_git_work_tree(root)
            if old.git != git:
                old, heads = msgspec.structs.replace(old, files={}), {}
            work = Reading(root, git, old, heads, progress)
            work.scan()
            gone = [path for path in old.files if path not in work.files]
            replaced = [p for p in work.parsed if p in old.files] + gone
            if replaced or work.parsed:
                added = [
                    (
                        chunk_key(path, work.heads[path], i),
                        path,
                        chunk.language,
                        text,
                        name,
                    )
                    for path in work.parsed
                    for i, (chunk, text, name) in enumerate(work.documents[path])
                ]
                self.lexical.replace(replaced, added)
            outline = Outline(
                root=str(root),
                git=git,
                embedder=old.embedder,
                dimensions=old.dimensions,
                generation=old.generation + 1,
                vectors=vectors,
                files=work.files,
            )
            warnings: list[str] = []
            embedded = 0
            if vectors and embed:
                try:
                    outline, embedded = self._embed(outline, work, progress)
                except EmbedderError as exc:
                    warnings.append(f"No vectors this time ({exc.message}).")
            same = (old.root, old.vectors, old.embedder) == (
                outline.root,
                outline.vectors,
                outline.embedder,
            )
            if work.read or gone or embedded or not same:
                self._write(outline, work.heads)
        heads = work.heads
        return CodeIndexReport(
            root=str(root),
            files=sum(1 for h in heads.values() if not h.skipped),
            chunks=sum(len(h.keys) for h in heads.values()),
            read=work.read,
            parsed=len(work.parsed),
            removed=len(gone),
            embedded=embedded,
            skipped=dict(sorted(work.skipped.items())),
            as_text=sum(1 for h in heads.values() if h.as_text),
            vectors=vectors,
            seconds=time.perf_counter() - started,
            warnings=tuple(warnings),
            unembedded=self.unembedded() if vectors else 0,
        )

    def _embed(
        self, outline: Outline, work: Reading, progress: Progress | None
    ) -> tuple[Outline, int]:
        """Embeds the chunk texts that have no vector; returns how many."""
        embedder = self.embedder
        outline, store = self._store_for(outline, embedder)
        wanted = [key for head in work.heads.values() for key in head.keys]
        missing = store.missing(wanted)
        texts = work.texts
        unknown = [key for key in missing if key not in texts]
        if unknown:  # embedded by an earlier run whose vectors were dropped
            texts = {**texts, **self._texts_of(outline, work.heads, set(unknown))}
            missing = [key for key in missing if key in texts]
        for start in range(0, len(missing), _EMBED_BATCH):
            if progress is not None:
                progress("embedding", start, len(missing))
            batch = missing[start : start + _EMBED_BATCH]
            store.append(batch, embedder.embed([texts[key] for key in batch]))
        if progress is not None and missing:
            progress("embedding", len(missing), len(missing))
        store.compact(set(wanted))
        return outline, len(missing)

    def _store_for(
        self, outline: Outline, embedder: Embedder
    ) -> tuple[Outline, CodeVectors]:
        """Returns the vectors as stored now, dropped if another embedder made them."""
        if (outline.embedder, outline.dimensions) != (
            embedder.name,
            embedder.dimensions,
        ):
            for name in (ROWS, KEYS):
                with contextlib.suppress(FileNotFoundError):
                    (self.folder / name).unlink()
            outline = msgspec.structs.replace(
                outline, embedder=embedder.name, dimensions=embedder.dimensions
            )
        self._vectors = self._open_vectors(outline.dimensions)
        return outline, self._vectors

    def _texts_of(
        self, outline: Outline, heads: dict[str, FileHead], keys: set[str]
    ) -> dict[str, str]:
        """Returns the embedded texts of ``keys``, read again from the files.

        A text is kept only if it is still the one its key names (the file
        may have changed since it was indexed).
        """
        found: dict[str, str] = {}
        root = Path(outline.root)
        for path, head in heads.items():
            if not keys.intersection(head.keys):
                continue
            try:
                source, _ = read_source(read_file(root, path))
            except OSError:
                continue
            if source is None:
                continue
            # As the file was read to be indexed (a byte order mark dropped):
            # read otherwise, a chunk's text, and so its key, would differ.
            lines = source.split("\n")
            entry = outline.entry(path)
            for chunk, key in zip(entry.chunks, entry.keys, strict=True):
                text = embed_text(chunk, "\n".join(lines[chunk.start - 1 : chunk.end]))
                if key in keys and vector_key(text) == key:
                    found[key] = text
        return found

    def _write(self, outline: Outline, heads: dict[str, FileHead]) -> None:
        self._stamp = write_outline(self.folder, outline)
        self._forget()
        self._outline, self._heads = outline, heads

    # -- the backlog (embedded by the hub) ---------------------------------

    def next_backlog(self, limit: int) -> tuple[list[str], list[str]] | None:
        """Returns up to ``limit`` chunks without a vector: their keys and texts.

        None when the index wants no vectors, or every chunk has one (or the
        files of those left cannot be read as they were indexed: the next
        ``ctx code index`` cuts them again).

        Raises:
            EmbedderError: The embedder cannot be made.
        """
        self.refresh()
        # Asked after every request the hub answers: once nothing is left,
        # nothing is read again until the manifest or the vectors change.
        settled = (self._stamp, _stamp_of(self.folder / ROWS))
        if settled == self._settled:
            return None
        outline = self.outline
        if not outline.root or not outline.vectors:
            self._settled = settled
            return None
        embedder = self.embedder
        same = (outline.embedder, outline.dimensions) == (
            embedder.name,
            embedder.dimensions,
        )
        stored = (
            set(stored_keys(self.folder, outline.dimensions) or ()) if same else set()
        )
        heads = self.heads()
        missing: list[str] = []
        for head in heads.values():
            missing.extend(key for key in head.keys if key not in stored)
        for start in range(0, len(missing), limit):
            wanted = dict.fromkeys(missing[start : start + limit])
            texts = self._texts_of(outline, heads, set(wanted))
            if texts:
                keys = [key for key in wanted if key in texts]
                return keys, [texts[key] for key in keys]
        self._settled = settled
        return None

    def add_vectors(
        self, keys: Sequence[str], rows: npt.NDArray[np.float32], embedder: Embedder
    ) -> None:
        """Stores the vectors of ``keys`` (made by ``embedder``), durably.

        Under the index's lock, against the vectors as stored now: keys no
        chunk uses any more, or that another process embedded meanwhile, are
        dropped; vectors of another embedder than the stored ones replace them.
        """
        with self._locked():
            self.refresh()
            old = self.outline
            outline, store = self._store_for(old, embedder)
            if outline != old:
                self._write(outline, self.heads())
            wanted = {key for head in self.heads().values() for key in head.keys}
            fresh: dict[str, int] = {}
            for i, key in enumerate(keys):
                if key in wanted and key not in store.rows:
                    fresh.setdefault(key, i)
            if fresh:
                store.append(list(fresh), rows[list(fresh.values())])
            store.compact(wanted)
            self._vectors = store
            self.derived.clear()


def _stamp_of(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def describe_skipped(skipped: dict[str, int]) -> str:
    """Returns the files left out, in words (``3 files left out: 2 binary, ...``)."""
    total = sum(skipped.values())
    if not total:
        return ""
    reasons = ", ".join(f"{count} {reason}" for reason, count in skipped.items())
    return f"{plural(total, 'file')} left out: {reasons}"
