"""The index folder on disk: its state file, its lock, and old generations.

See :mod:`ctx.hub.retrieval.index.projection` and docs/recall.md for what the files
mean. This
module only reads and writes them: ``state.json`` (replaced atomically), the
``lock`` (flock, released by the kernel when a holder dies), and the removal of
index folders that a rebuild replaced, once nobody can still be reading them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from ctx.hub.retrieval.index.lexical_errors import LexicalIndexError

__all__ = ["FORMAT", "IndexFolder", "IndexState"]

FORMAT = 10
"""Version of the index folder's layout; another version is rebuilt.

2: the lexical index keeps each document's text hash (the embedding cache).
3: and each document's tag values (a query naming a tag boosts it).
4: a memory's vector embeds its ``reply_to`` meta before its text.
5: the lexical index keeps each blob id in fast fields (hits read no document).
6: and a memory in another language in a field stemmed in that language.
7: a long memory has a vector per passage (:mod:`ctx.hub.retrieval.index.passages`).
8: only a text of more than 300 words is cut into passages (7: 180).
9: the lexical index keeps Chinese, Japanese and Korean as pairs of characters.
10: and the terms of each passage of a long memory (its relevance's word share).
"""

_WAIT_S = 300.0  # the longest a process waits for another's catch-up
_STALE_S = 600.0  # age after which replaced index folders are removed


class IndexState(msgspec.Struct, kw_only=True):
    """What ``state.json`` holds.

    Attributes:
        format: :data:`FORMAT` when written.
        embedder: The name of the embedder that built the vectors.
        dimensions: Their length.
        generation: Incremented by every write, so readers notice changes.
        lexical: The Tantivy folder's name.
        vectors: The vector index folder's name.
        watermarks: Per branch, the tree every blob of which is indexed.
        commits: Per branch, the commit of that tree.
        reuse: The vector folders of the indexes a rebuild replaces, each
            with the format it was built at: made by the same embedder,
            their rows are copied rather than embedded again
            (:mod:`ctx.hub.retrieval.index.reuse`), and they are kept until the
            rebuild has caught up every branch.
    """

    format: int = FORMAT
    embedder: str = ""
    dimensions: int = 0
    generation: int = 0
    lexical: str = "lexical"
    vectors: str = "vectors"
    watermarks: dict[str, str] = {}
    commits: dict[str, str] = {}
    reuse: dict[str, int] = {}

    @classmethod
    def fresh(cls, generation: int) -> IndexState:
        """Returns an empty state naming new index folders."""
        token = secrets.token_hex(4)
        return cls(
            lexical=f"lexical-{token}",
            vectors=f"vectors-{token}",
            generation=generation,
        )


class IndexFolder:
    """``.ctx/index/``: created on first use, with its lock file."""

    def __init__(self, path: Path) -> None:
        """Creates the folder and its lock file if missing.

        Raises:
            OSError: They cannot be created (a read-only store).
        """
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        (path / "lock").touch(exist_ok=True)

    def has_state(self) -> bool:
        """Returns whether an index was ever written here."""
        return (self.path / "state.json").exists()

    def holds(self, state: IndexState) -> bool:
        """Returns whether the index folders ``state`` names are all here.

        The vector folder is written once the index has vectors (``state``
        then names their embedder).
        """
        vectors = not state.embedder or (self.path / state.vectors).is_dir()
        return vectors and (self.path / state.lexical).is_dir()

    def read_state(self) -> IndexState:
        """Returns the state.

        Raises:
            OSError, msgspec.DecodeError: It is missing or unreadable.
        """
        return msgspec.json.decode(
            (self.path / "state.json").read_bytes(), type=IndexState
        )

    def write_state(self, state: IndexState) -> None:
        """Replaces the state file in one rename."""
        temp = self.path / f".state.json.{os.getpid()}"
        temp.write_bytes(msgspec.json.encode(state))
        os.replace(temp, self.path / "state.json")

    @contextlib.contextmanager
    def locked(self, *, blocking: bool) -> Iterator[bool]:
        """Holds the lock; yields False if ``blocking`` is off and it is busy.

        Raises:
            LexicalIndexError: Blocking, another process held it for 5 minutes.
        """
        with (self.path / "lock").open("rb") as file:
            deadline = time.monotonic() + _WAIT_S
            while True:
                try:
                    fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not blocking:
                        yield False
                        return
                    if time.monotonic() > deadline:
                        raise LexicalIndexError(
                            "Another process has held the index lock for "
                            f"{_WAIT_S:.0f} s.",
                            hint="Run `ctx reindex` once it has finished.",
                        ) from None
                    time.sleep(0.05)
            try:
                yield True
            finally:
                fcntl.flock(file.fileno(), fcntl.LOCK_UN)

    def collect(self, state: IndexState) -> None:
        """Removes what ``state`` no longer names, once old enough (lock held)."""
        # ``code``: the code index (ctx.hub.code), which keeps its own files.
        keep = {
            "lock",
            "state.json",
            "code",
            state.lexical,
            state.vectors,
            *state.reuse,
        }
        cutoff = time.time() - _STALE_S
        for child in self.path.iterdir():
            if child.name in keep:
                continue
            with contextlib.suppress(OSError):
                if child.stat().st_mtime > cutoff:
                    continue
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink()

    def size_bytes(self, state: IndexState) -> int:
        """Returns the bytes of the indexes ``state`` names (not replaced ones)."""
        total = 0
        for name in (state.lexical, state.vectors):
            for file in (self.path / name).rglob("*"):
                with contextlib.suppress(OSError):
                    total += file.stat().st_size if file.is_file() else 0
        return total
