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
are gone, and embeds only chunk texts never embedded before. The Tantivy
commit comes first and the manifest is replaced last, in one rename; a
Tantivy document names its file's content id, so documents from a run that
crashed before its manifest was written are dropped as stale when searched,
and replaced by the next run.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

from ctx.engine import InvalidInputError, plural
from ctx.hub.code.blocks import FileChunks
from ctx.hub.code.chunking import chunk_file
from ctx.hub.code.files import (
    Candidate,
    content_id,
    in_git_work_tree,
    read_source,
    walk_tree,
)
from ctx.hub.code.lexical import CodeLexical
from ctx.hub.code.results import Chunk, CodeIndexReport
from ctx.hub.code.vectors import CodeVectors
from ctx.hub.embedders import Embedder, EmbedderError
from ctx.hub.index.documents import text_hash

__all__ = ["FORMAT", "CodeIndex", "FileEntry", "Manifest", "chunk_key", "embed_text"]

FORMAT = 1
"""Version of the folder's layout; another version is built again."""

_MANIFEST = "manifest.msgpack"
_EMBED_BATCH = 256  # chunk texts embedded per step (progress is reported per step)
_EMBED_CHARS = 2000  # the embedder reads 256 tokens: more text is wasted work

Progress = Callable[[str, int, int], None]


class FileEntry(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One file of the tree, as last indexed.

    ``skipped`` says why a file is left out ("" when indexed); ``keys`` holds
    each chunk's vector key (the hash of the text embedded).
    """

    size: int
    mtime_ns: int
    id: str = ""
    language: str = ""
    skipped: str = ""
    chunks: tuple[Chunk, ...] = ()
    keys: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    as_text: bool = False


class Manifest(msgspec.Struct, kw_only=True):
    """What the code index holds (``manifest.msgpack``)."""

    format: int = FORMAT
    root: str = ""
    git: bool = False
    embedder: str = ""
    dimensions: int = 0
    generation: int = 0
    files: dict[str, FileEntry] = {}


def chunk_key(path: str, entry: FileEntry, position: int) -> str:
    """Returns the Tantivy key of a file's chunk at ``position``."""
    return f"{path}\0{entry.id}\0{position}"


def embed_text(chunk: Chunk, text: str) -> str:
    """Returns what is embedded for a chunk: its name, kind and path, then its text."""
    head = " ".join(part for part in (chunk.qualified, chunk.kind, chunk.path) if part)
    return f"{head}\n{text}"[:_EMBED_CHARS]


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
        self.manifest = Manifest()
        self._stamp: tuple[int, int] | None = None
        self._lexical: CodeLexical | None = None
        self._vectors: CodeVectors | None = None
        self.derived: dict[str, object] = {}
        """What searches derive from the manifest, dropped when it changes."""
        self.refresh()

    # -- reading ----------------------------------------------------------

    def refresh(self) -> bool:
        """Reads the manifest again if another process replaced it.

        Returns:
            Whether it changed.
        """
        path = self.folder / _MANIFEST
        try:
            info = path.stat()
        except OSError:
            stamp = None
        else:
            stamp = (info.st_mtime_ns, info.st_size)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        manifest = Manifest()
        if stamp is not None:
            with contextlib.suppress(OSError, msgspec.DecodeError):
                manifest = msgspec.msgpack.decode(path.read_bytes(), type=Manifest)
        self.manifest = manifest if manifest.format == FORMAT else Manifest()
        self._vectors = None
        self.derived.clear()
        if self._lexical is not None:
            self._lexical.reload()
        return True

    @property
    def exists(self) -> bool:
        """Returns whether a tree was ever indexed here."""
        return bool(self.manifest.root)

    @property
    def lexical(self) -> CodeLexical:
        """Returns the Tantivy index, opened (or made again if damaged) on first use."""
        if self._lexical is None:
            folder = self.folder / "lexical"
            try:
                self._lexical = CodeLexical(folder)
            except ValueError:
                shutil.rmtree(folder, ignore_errors=True)
                self.manifest = Manifest()
                self._lexical = CodeLexical(folder)
        return self._lexical

    def vectors(self) -> CodeVectors | None:
        """Returns the vectors, or None when the index holds none."""
        if self._vectors is None and self.manifest.dimensions:
            self._vectors = CodeVectors(self.folder, self.manifest.dimensions)
        return self._vectors

    @property
    def embedder(self) -> Embedder:
        """Returns the store's embedder (built on first use)."""
        if self._embedder is None:
            self._embedder = self._make_embedder()
        return self._embedder

    # -- writing ----------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / "lock").open("a+b") as file:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(file.fileno(), fcntl.LOCK_UN)

    def update(
        self,
        root: Path,
        *,
        vectors: bool = True,
        progress: Progress | None = None,
    ) -> CodeIndexReport:
        """Brings the index up to date with the tree at ``root`` (module doc).

        Another root than the one indexed replaces it.

        Args:
            root: The folder to index.
            vectors: Embed the chunks that have no vector yet.
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
        with self._locked():
            self.refresh()  # another writer's manifest, if one came since
            old = self.manifest
            if old.root != str(root):
                old = Manifest(embedder=old.embedder, dimensions=old.dimensions)
                self._lexical = None
                shutil.rmtree(self.folder / "lexical", ignore_errors=True)
            git = in_git_work_tree(root)
            if old.git != git:
                old = msgspec.structs.replace(old, files={})
            work = _Work(root, git, old.files, progress)
            files = work.scan()
            gone = [path for path in old.files if path not in files]
            replaced = [p for p in work.parsed if p in old.files] + gone
            added = [
                (chunk_key(path, files[path], i), path, chunk.language, text, name)
                for path in work.parsed
                for i, (chunk, text, name) in enumerate(work.documents[path])
            ]
            self.lexical.replace(replaced, added)
            manifest = Manifest(
                root=str(root),
                git=git,
                embedder=old.embedder,
                dimensions=old.dimensions,
                generation=old.generation + 1,
                files=files,
            )
            warnings: list[str] = []
            embedded = 0
            if vectors:
                try:
                    embedded = self._embed(manifest, work.texts, progress)
                except EmbedderError as exc:
                    warnings.append(f"No vectors this time ({exc.message}).")
            self._write(manifest)
        chunks = sum(len(e.chunks) for e in files.values())
        return CodeIndexReport(
            root=str(root),
            files=sum(1 for e in files.values() if not e.skipped),
            chunks=chunks,
            read=work.read,
            parsed=len(work.parsed),
            removed=len(gone),
            embedded=embedded,
            skipped=dict(sorted(work.skipped.items())),
            as_text=sum(1 for e in files.values() if e.as_text),
            vectors=vectors,
            seconds=time.perf_counter() - started,
            warnings=tuple(warnings),
        )

    def _embed(
        self,
        manifest: Manifest,
        texts: dict[str, str],
        progress: Progress | None,
    ) -> int:
        """Embeds the chunk texts that have no vector; returns how many."""
        embedder = self.embedder
        if manifest.embedder != embedder.name:
            for name in ("vectors.f32", "vector_keys.txt"):
                with contextlib.suppress(FileNotFoundError):
                    (self.folder / name).unlink()
            manifest.embedder, manifest.dimensions = embedder.name, embedder.dimensions
            self._vectors = None
        store = self._vectors or CodeVectors(self.folder, manifest.dimensions)
        wanted = [key for e in manifest.files.values() for key in e.keys]
        missing = store.missing(wanted)
        unknown = [key for key in missing if key not in texts]
        if unknown:  # embedded by an earlier run whose vectors were dropped
            texts = {**texts, **self._texts_of(manifest, set(unknown))}
            missing = [key for key in missing if key in texts]
        for start in range(0, len(missing), _EMBED_BATCH):
            if progress is not None:
                progress("embedding", start, len(missing))
            batch = missing[start : start + _EMBED_BATCH]
            store.append(batch, embedder.embed([texts[key] for key in batch]))
        if progress is not None and missing:
            progress("embedding", len(missing), len(missing))
        store.compact(set(wanted))
        self._vectors = store
        return len(missing)

    def _texts_of(self, manifest: Manifest, keys: set[str]) -> dict[str, str]:
        """Returns the embedded texts of ``keys``, read again from the files."""
        found: dict[str, str] = {}
        root = Path(manifest.root)
        for path, entry in manifest.files.items():
            if not keys.intersection(entry.keys):
                continue
            try:
                lines = (root / path).read_text("utf-8").split("\n")
            except (OSError, UnicodeDecodeError):
                continue
            for chunk, key in zip(entry.chunks, entry.keys, strict=True):
                text = "\n".join(lines[chunk.start - 1 : chunk.end])
                found[key] = embed_text(chunk, text)
        return found

    def _write(self, manifest: Manifest) -> None:
        temp = self.folder / f".{_MANIFEST}.{os.getpid()}"
        with temp.open("wb") as file:
            file.write(msgspec.msgpack.encode(manifest))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, self.folder / _MANIFEST)
        self.manifest = manifest
        self.derived.clear()
        info = (self.folder / _MANIFEST).stat()
        self._stamp = (info.st_mtime_ns, info.st_size)


class _Work:
    """One update's reading of the tree."""

    def __init__(
        self,
        root: Path,
        git: bool,
        before: dict[str, FileEntry],
        progress: Progress | None,
    ) -> None:
        self.root = root
        self.git = git
        self.before = before
        self.progress = progress
        self.read = 0
        self.parsed: list[str] = []
        self.skipped: Counter[str] = Counter()
        self.documents: dict[str, list[tuple[Chunk, str, str]]] = {}
        self.texts: dict[str, str] = {}  # vector key -> text to embed

    def scan(self) -> dict[str, FileEntry]:
        candidates, self.skipped = walk_tree(self.root)
        files: dict[str, FileEntry] = {}
        for number, candidate in enumerate(candidates):
            if self.progress is not None and number % 500 == 0:
                self.progress("reading", number, len(candidates))
            old = self.before.get(candidate.path)
            same_stat = (
                old is not None
                and old.size == candidate.size
                and old.mtime_ns == candidate.mtime_ns
            )
            if old is not None and same_stat:
                files[candidate.path] = old
            else:
                files[candidate.path] = self._read(candidate.path, candidate, old)
            entry = files[candidate.path]
            if entry.skipped:
                self.skipped[entry.skipped] += 1
        return files

    def _read(
        self, path: str, candidate: Candidate, old: FileEntry | None
    ) -> FileEntry:
        size, mtime_ns = candidate.size, candidate.mtime_ns
        self.read += 1
        try:
            data = (self.root / path).read_bytes()
        except OSError:
            return FileEntry(size=size, mtime_ns=mtime_ns, skipped="unreadable")
        identity = content_id(data, git=self.git)
        if old is not None and old.id == identity:
            return msgspec.structs.replace(old, size=size, mtime_ns=mtime_ns)
        text, reason = read_source(data)
        if text is None:
            return FileEntry(
                size=size,
                mtime_ns=mtime_ns,
                id=identity,
                skipped=reason or "unreadable",
            )
        cut = _cut(path, text, candidate.language)
        self.parsed.append(path)
        keys = []
        documents = []
        for chunk, body in zip(cut.chunks, cut.texts, strict=True):
            embedded = embed_text(chunk, body)
            key = text_hash(embedded)
            keys.append(key)
            self.texts[key] = embedded
            documents.append((chunk, body, chunk.qualified))
        self.documents[path] = documents
        return FileEntry(
            size=size,
            mtime_ns=mtime_ns,
            id=identity,
            language=candidate.language,
            chunks=tuple(cut.chunks),
            keys=tuple(keys),
            modules=tuple(dict.fromkeys(cut.modules)),
            as_text=cut.as_text,
        )


def _cut(path: str, text: str, language: str) -> FileChunks:
    """Returns a file's chunks; a grammar that fails makes text blocks."""
    from ctx.hub.code.blocks import chunk_text

    try:
        return chunk_file(path, text, language)
    except (ImportError, RecursionError, ValueError):
        return chunk_text(path, text, language, as_text=True)


def describe_skipped(skipped: dict[str, int]) -> str:
    """Returns the files left out, in words (``3 files left out: 2 binary, ...``)."""
    total = sum(skipped.values())
    if not total:
        return ""
    reasons = ", ".join(f"{count} {reason}" for reason, count in skipped.items())
    return f"{plural(total, 'file')} left out: {reasons}"
