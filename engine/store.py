"""The store: a bare git repository plus ctx's lock, caches and settings.

Layout of a store folder (``.ctx/`` in a project)::

    git/          bare git repository, written through dulwich
    config.toml   settings read by the layers above
    cache/        derived engine state (commit history index); disposable
    index/        the hub's derived indexes; disposable
    lock          the write lock

Every write goes through :meth:`Store.write`: under the store's lock it reads
the branch tip, asks the caller for path changes, writes the objects, and moves
the branch with compare-and-swap. If the tip moved anyway (a stock ``git``
writing beside ctx), the changes are rebuilt on the new tip and tried again.

A write the disk refuses (full, over quota, failing) raises one ctx error
(:func:`~ctx.engine._lock.disk_error`) and leaves no trace: the ``.lock``
files dulwich was writing are removed, a half-written pack too, and a torn
line of the branch's log cut off; the branch stays where it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.file import FileLocked
from dulwich.object_store import DiskObjectStore
from dulwich.objects import Blob, Commit, ObjectID, ShaFile
from dulwich.refs import (
    SYMREF,
    DiskRefsContainer,
    Ref,
    RefsContainer,
    check_ref_format,
)
from dulwich.repo import BaseRepo, MemoryRepo, Repo
from dulwich.trailers import Trailer, format_trailers

from ctx.engine import _trees
from ctx.engine._builds import BUILD_PREFIX, remove_abandoned_builds
from ctx.engine._lock import HeldLock, abandon_git_files, disk_error, write_lock
from ctx.engine._objects import open_repository
from ctx.engine._packs import TEMP_PREFIX, write_pack
from ctx.engine._redaction_finish import PENDING_REDACTION, finish_redaction
from ctx.engine._ref_room import make_room
from ctx.engine.commits import CommitInfo, commit_info, git_identity, git_time
from ctx.engine.errors import (
    CommitNotFoundError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    NotAStoreError,
    RefNotFoundError,
    StoreBusyError,
    StoreError,
    damaged_branch,
)
from ctx.engine.history import History
from ctx.engine.ids import CommitId, is_object_id
from ctx.engine.model import Intent
from ctx.engine.reflogs import drop_unfinished_line
from ctx.engine.screen import PendingWrite, Screen
from ctx.engine.snapshot import Snapshot

__all__ = ["PACKED_REFS", "Clock", "Store", "check_branch_name", "symbolic_target"]

Clock = Callable[[], datetime]
"""Returns the current time (timezone aware); injected, never read here."""

STORE_FORMAT = 1
_SECTION = (b"ctx",)
_PACK_THRESHOLD = 64
_HEADS = b"refs/heads/"
PACKED_REFS = Ref(b"packed-refs")
"""What :meth:`Store.moving` notes for a write of the ``packed-refs`` file."""


_HEAD = Ref(b"HEAD")
_MOVED = object()
_STALE_REF_LOCK_NS = 600 * 1_000_000_000  # ten minutes


def check_branch_name(name: str) -> str:
    """Returns ``name`` if git accepts it as a branch name, else raises."""
    if (
        not name
        or name.startswith("-")
        or name in ("HEAD", "@")
        or not check_ref_format(_ref(name.encode("utf-8", "surrogateescape")))
    ):
        raise InvalidInputError(
            f"{name!r} is not a valid branch name.",
            hint="Branch names follow git's rules: no spaces, '..', '~', '^', ':'.",
        )
    return name


def _ref(branch: str | bytes) -> Ref:
    return Ref(_HEADS + (branch.encode() if isinstance(branch, str) else branch))


def symbolic_target(refs: RefsContainer, name: Ref) -> Ref | None:
    """Returns the ref that symbolic ref ``name`` names (None: it is no such ref).

    That ref alone is read: dulwich's ``get_symrefs`` reads every ref, and
    one damaged ref file (holding nothing, as a disk may leave it) made it
    fail for all of them.
    """
    raw = refs.read_ref(name) or b""
    return Ref(raw[len(SYMREF) :].rstrip(b"\r\n")) if raw.startswith(SYMREF) else None


class Store:
    """A ctx store, on disk or in memory.

    Args:
        repo: The git repository that holds the memories.
        path: The store folder, or ``None`` for an in-memory store.
        clock: Source of the current time for commits and reflog entries.
        lock_timeout: Seconds a writer waits for the store's lock.
        screen: What every write and merge is shown first (the hub's secret
            scan); ``None`` writes as asked.
    """

    def __init__(
        self,
        repo: BaseRepo,
        path: Path | None,
        *,
        clock: Clock,
        lock_timeout: float = 60.0,
        screen: Screen | None = None,
    ) -> None:
        self.repo = repo
        self.path = path
        self.clock = clock
        self.lock_timeout = lock_timeout
        self.screen = screen
        self._lock_depth = 0
        self._held: HeldLock | None = None
        self._commits: dict[bytes, Commit] = {}
        self.caches: dict[str, object] = {}
        """Derived state kept for the life of this object (e.g. adjacency)."""
        self.history = History(self, path / "cache" if path else None)

    # -- creating and opening -------------------------------------------------

    @classmethod
    def init(
        cls,
        path: Path,
        *,
        clock: Clock,
        branch: str = "main",
        exist_ok: bool = False,
        screen: Screen | None = None,
    ) -> Store:
        """Creates a store in folder ``path`` with one empty commit on ``branch``.

        Safe against racing creators (several first writes to the user
        store at once): the repository is built in a temporary folder and
        renamed into place under the store's lock, so ``git/`` is either
        absent or complete.

        Raises:
            ConflictError: a store already exists there (unless ``exist_ok``).
        """
        check_branch_name(branch)
        if not (path / "git").exists():
            try:
                (path / "cache").mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"Cannot create a store at {path}: {exc.strerror}."
                ) from exc
            with write_lock(path / "lock", 60.0):
                if not (path / "git").exists():
                    cls._create(path, clock, branch)
                    store = cls.open(path, clock=clock, screen=screen)
                    store.history.ensure(store.branch_tip(branch))
                    return store
        if exist_ok:
            return cls.open(path, clock=clock, screen=screen)
        raise ConflictError(f"A store already exists at {path}.")

    @classmethod
    def _create(cls, path: Path, clock: Clock, branch: str) -> None:
        tmp = Path(tempfile.mkdtemp(prefix=BUILD_PREFIX, dir=path))
        try:
            repo = Repo.init_bare(str(tmp))
            config = repo.get_config()
            config.set(_SECTION, b"storeversion", str(STORE_FORMAT).encode())
            # ctx writes no multi-pack-index; looking for one cost dulwich a
            # stat before every object read (10,000 reading a 10,000 import).
            config.set((b"core",), b"multiPackIndex", b"false")
            config.write_to_path()
            repo.refs.set_symbolic_ref(_HEAD, _ref(branch))
            cls(repo, None, clock=clock)._write_initial(branch)
            repo.close()
            os.rename(tmp, path / "git")
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise StoreError(
                f"Cannot create a store at {path}: {exc.strerror}."
            ) from exc

    @classmethod
    def open(cls, path: Path, *, clock: Clock, screen: Screen | None = None) -> Store:
        """Opens the store in folder ``path``.

        Raises:
            NotAStoreError: ``path`` holds no ctx store.
            CorruptStoreError: the repository cannot be read.
        """
        git_dir = path / "git"
        if not git_dir.is_dir():
            raise NotAStoreError(
                f"{path} is not a ctx store.",
                hint="Run `ctx init` to create one, or pass --store.",
            )
        remove_abandoned_builds(path)  # a killed clone's or init's folder
        try:
            repo = open_repository(git_dir)
            version = repo.get_config().get(_SECTION, b"storeversion")
        except NotGitRepository as exc:
            raise NotAStoreError(f"{path} is not a ctx store.") from exc
        except KeyError:
            raise NotAStoreError(
                f"{path} holds a git repository, not a ctx store."
            ) from None
        except (OSError, ValueError) as exc:
            raise CorruptStoreError(
                f"The store at {path} cannot be read: {exc}"
            ) from exc
        if int(version) > STORE_FORMAT:
            raise StoreError(
                f"The store at {path} needs a newer ctx (format {version!r})."
            )
        store = cls(repo, path, clock=clock, screen=screen)
        if (path / PENDING_REDACTION).exists():
            # A redaction killed after its first step: finish it before
            # anything reads the half-rewritten history.
            finish_redaction(store)
        return store

    @classmethod
    def memory(
        cls, *, clock: Clock, branch: str = "main", screen: Screen | None = None
    ) -> Store:
        """Returns a new store held in memory (for tests and dry runs)."""
        repo = MemoryRepo()
        repo.refs.set_symbolic_ref(_HEAD, _ref(branch))
        store = cls(repo, None, clock=clock, screen=screen)
        store._write_initial(branch)
        return store

    def _write_initial(self, branch: str) -> None:
        intent = Intent(agent="ctx", intent="init")
        self.write(
            branch, intent, "Create the store", lambda snap: {}, allow_empty=True
        )

    def close(self) -> None:
        """Releases the repository's open files."""
        if isinstance(self.repo, Repo):
            self.repo.close()

    # -- refs -----------------------------------------------------------------

    def head_branch(self) -> str:
        """Returns the branch HEAD names: the default for every command.

        HEAD alone is read: another branch's damaged file (one holding no
        commit id) must not stop every command on this one.
        """
        target = symbolic_target(self.repo.refs, _HEAD)
        if target is None or not target.startswith(_HEADS):
            raise CorruptStoreError("The store's HEAD does not name a branch.")
        return bytes(target[len(_HEADS) :]).decode("utf-8")

    def set_head(self, branch: str) -> None:
        """Makes ``branch`` (which must exist) the default branch."""
        self.branch_tip(branch)
        with self.locked(), self._disk_errors():
            self.repo.refs.set_symbolic_ref(_HEAD, _ref(branch))

    def branch_tip(self, branch: str, *, checked: bool = True) -> CommitId:
        """Returns the commit ``branch`` points at.

        ``checked``: the store must hold that commit (else the store is
        damaged). Unchecked, the branch file's id as it stands ("" for a file
        holding none): for listing and deleting a damaged branch.

        Raises:
            RefNotFoundError: no such branch.
            CorruptStoreError: (checked) the branch holds no commit id, or one
                the store does not hold.
        """
        check_branch_name(branch)
        sha = self.repo.refs.get_peeled(_ref(branch))
        if sha is None:
            try:
                sha = self.repo.refs[_ref(branch)]
            except KeyError:
                if branch not in self.branches():
                    raise RefNotFoundError(
                        f"No branch named {branch!r}.",
                        hint="`ctx branches` lists them.",
                    ) from None
                sha = ObjectID(b"")  # its file is there, cut short by a crash
        said = bytes(sha).decode("ascii", "replace")
        if not checked:
            return CommitId(said)
        # Not a commit someone named wrong: the store lost what its own branch
        # points at (a copy without its objects, a damaged pack), or the
        # branch file holds no id.
        if not is_object_id(said):
            raise damaged_branch(branch, f"holds {said[:60]!r}, not a commit id")
        try:  # read as any object is: `in` would rescan the packs
            self.repo.object_store.get_raw(ObjectID(bytes(sha)))
        except KeyError:
            what = f"points at commit {said}, which the store does not hold"
            raise damaged_branch(branch, what) from None
        return CommitId(said)

    def branches(self) -> list[str]:
        """Returns every branch name, sorted."""
        names = self.repo.refs.keys(base=Ref(b"refs/heads"))
        return sorted(name.decode("utf-8") for name in names)

    def move_branch(
        self, branch: str, old: CommitId | None, new: CommitId | None, message: str
    ) -> None:
        """Moves (creates, deletes) a branch with compare-and-swap, logged.

        Must be called with the lock held (see :meth:`locked`). A ref
        ``.lock`` file held by stock git is waited for, up to the store's
        lock timeout; one older than ten minutes is taken as abandoned.

        Raises:
            ConflictError: the branch was not at ``old``.
            StoreBusyError: the ref stayed locked for the whole timeout.
            StoreError: the disk refused the write (the branch did not move).
        """
        try:
            self._move_branch(branch, old, new, message)
        except OSError as exc:
            error = self._refused(exc)
            if new is not None:
                drop_unfinished_line(self.repo, branch, new)
            raise error from exc

    def _move_branch(
        self, branch: str, old: CommitId | None, new: CommitId | None, message: str
    ) -> None:
        ref = _ref(branch)
        when, offset = git_time(self.clock())
        who, text = git_identity("ctx"), message.encode("utf-8")
        refs = self.repo.refs
        old_id = ObjectID(old.encode()) if old else None
        if old_id is None and new is not None:
            make_room(self, branch)
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                with self.moving(ref):
                    if new is None:
                        ok = refs.remove_if_equals(ref, old_id, who, when, offset, text)
                    elif old_id is None:
                        ok = refs.add_if_new(
                            ref, ObjectID(new.encode()), who, when, offset, text
                        )
                    else:
                        ok = refs.set_if_equals(
                            ref, old_id, ObjectID(new.encode()), who, when, offset, text
                        )
            except FileLocked as exc:
                self._wait_for_ref_lock(branch, os.fsdecode(exc.lockfilename), deadline)
                continue
            if not ok:
                raise ConflictError(f"Branch {branch!r} moved during the operation.")
            return

    @contextmanager
    def _disk_errors(self) -> Iterator[None]:
        """Turns an ``OSError`` of writing into a ctx error, leaving no lock."""
        try:
            yield
        except OSError as exc:
            raise self._refused(exc) from exc

    def _refused(self, exc: OSError) -> StoreError:
        """Removes the lock files ``exc`` left; returns the error to raise."""
        abandon_git_files(exc)
        return disk_error(self.path or Path("(in memory)"), exc)

    @contextmanager
    def moving(self, ref: Ref) -> Iterator[None]:
        """Notes that the block takes ``ref``'s lock (or :data:`PACKED_REFS`'s).

        The note in the store's lock file says which ref lock the holder may
        hold, so that the next writer clears it if the holder dies holding
        it. Nothing without the store's lock held.
        """
        held = self._held
        if held is None:
            yield
            return
        held.announce(ref)
        try:
            yield
        finally:
            held.clear()

    def _wait_for_ref_lock(self, branch: str, lockfile: str, deadline: float) -> None:
        # We hold the store lock, so the ref lock is not a live ctx writer's
        # (a dead one's was cleared when we took the store lock): it is stock
        # git's, which may be slow (a hook, a loaded disk). Git never breaks
        # a lock; we only remove one far older than any git command takes.
        try:
            mtime = os.stat(lockfile).st_mtime_ns
        except FileNotFoundError:
            return
        held = self._held
        if held is not None and held.now_ns() - mtime > _STALE_REF_LOCK_NS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lockfile)
            return
        if time.monotonic() >= deadline:
            raise StoreBusyError(
                f"Branch {branch!r} stayed locked by {lockfile}.",
                hint="A git command may be running; if none is, remove that file.",
            )
        time.sleep(0.01)

    def _clear_dead_writers_lock(self, held: HeldLock) -> None:
        # The previous holder of the store lock died while moving the noted
        # ref. A ref lock made after its note (within a second, the coarsest
        # mtime step of common file systems) is its own: nobody else ever
        # will finish it. An older lock is stock git's and is left alone.
        # packed-refs (the transfers' many refs at once) takes longer to
        # write, and its lock's mtime is its last write: two seconds. Not
        # more: a git command may lock it soon after the writer died.
        ref, refs = held.previous, self.repo.refs
        if not ref or not isinstance(refs, DiskRefsContainer):
            return
        if ref == PACKED_REFS:
            lockfile = os.path.join(os.fsdecode(refs.path), "packed-refs.lock")
            window = 2_000_000_000
        elif ref.startswith(_HEADS) and check_ref_format(Ref(ref)):
            lockfile = os.fsdecode(refs.refpath(Ref(ref))) + ".lock"
            window = 1_000_000_000
        else:
            return
        with contextlib.suppress(FileNotFoundError):
            mtime = os.stat(lockfile).st_mtime_ns
            if held.previous_ns <= mtime <= held.previous_ns + window:
                os.unlink(lockfile)
        held.clear()

    # -- reading --------------------------------------------------------------

    def commit(self, commit_id: CommitId) -> CommitInfo:
        """Returns the commit ``commit_id``.

        Raises:
            CommitNotFoundError: no such commit.
        """
        return commit_info(self._commit_object(commit_id))

    def _commit_object(self, commit_id: CommitId) -> Commit:
        try:
            obj = self.repo.object_store[ObjectID(commit_id.encode("ascii"))]
        except (KeyError, ValueError, UnicodeEncodeError):
            raise CommitNotFoundError(f"No commit {commit_id}") from None
        if not isinstance(obj, Commit):
            raise CommitNotFoundError(f"Object {commit_id} is not a commit.")
        return obj

    def snapshot(self, commit_id: CommitId) -> Snapshot:
        """Returns a read-only view of the tree of commit ``commit_id``."""
        tree = self._commit_object(commit_id).tree
        return Snapshot(self.repo.object_store, commit_id, tree)

    def iter_commits(self, start: CommitId) -> Iterator[CommitInfo]:
        """Yields the commits reachable from ``start``, newest first."""
        from dulwich.walk import Walker

        for entry in Walker(self.repo.object_store, [ObjectID(start.encode())]):
            yield commit_info(entry.commit)

    # -- writing --------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Holds the store's write lock (re-entrant within one Store)."""
        if self._lock_depth or self.path is None:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        with write_lock(self.path / "lock", self.lock_timeout) as held:
            self._lock_depth = 1
            self._held = held
            try:
                self._clear_dead_writers_lock(held)
                yield
            finally:
                self._held = None
                self._lock_depth = 0

    def write(
        self,
        branch: str,
        intent: Intent,
        summary: str,
        build: Callable[[Snapshot], Mapping[str, bytes | None]],
        *,
        allow_empty: bool = False,
    ) -> CommitInfo | None:
        """Commits the changes ``build`` returns on top of ``branch``'s tip.

        ``build`` receives the tip's snapshot and returns the new content of
        every changed path (``None`` deletes it). It may raise to refuse the
        write; nothing is written then. It may be called more than once if
        the tip moves under us, and must be a pure function of the snapshot.
        The store's screen, if any, sees what ``build`` returned, with the
        summary and intent, and may refuse or change them likewise.

        Returns:
            The new commit, or ``None`` when nothing would change.
        """
        check_branch_name(branch)
        with self.locked():
            for _attempt in range(20):
                tip: ObjectID | None = None
                if not allow_empty or _ref(branch) in self.repo.refs:
                    tip = ObjectID(self.branch_tip(branch).encode())
                parent_tree: ObjectID | None = None
                if tip is not None:
                    commit_obj = self._commits.get(tip) or self.repo.object_store[tip]
                    assert isinstance(commit_obj, Commit)
                    parent_tree = commit_obj.tree
                    snap = Snapshot(
                        self.repo.object_store, CommitId(tip.decode()), parent_tree
                    )
                else:
                    snap = Snapshot.empty(self.repo.object_store)
                pending = self._screened(
                    snap,
                    PendingWrite(
                        summary=summary, intent=intent, changes=dict(build(snap))
                    ),
                )
                result = self._commit_changes(
                    branch,
                    tip,
                    parent_tree,
                    snap,
                    pending.changes,
                    pending.intent,
                    pending.summary,
                    allow_empty,
                )
                if result is not _MOVED:
                    return result  # type: ignore[return-value]
            raise StoreBusyError(
                f"Branch {branch!r} kept moving; gave up after 20 tries."
            )

    def _screened(self, before: Snapshot, pending: PendingWrite) -> PendingWrite:
        if self.screen is None or not pending.changes:
            return pending
        return self.screen.check(before, pending)

    def _commit_changes(
        self,
        branch: str,
        tip: ObjectID | None,
        parent_tree: ObjectID | None,
        snap: Snapshot,
        changes: Mapping[str, bytes | None],
        intent: Intent,
        summary: str,
        allow_empty: bool,
    ) -> CommitInfo | object | None:
        objects: list[ShaFile] = []
        blob_changes: dict[str, ObjectID | None] = {}
        before = _trees.lookup_many(self.repo.object_store, parent_tree, changes)
        for path, content in changes.items():
            if content is None:
                if before[path] is not None:
                    blob_changes[path] = None
                continue
            blob = Blob.from_string(content)
            if before[path] != blob.id:
                objects.append(blob)
                blob_changes[path] = blob.id
        if not blob_changes and not allow_empty:
            return None
        if parent_tree is None:
            tree_id, trees = _trees.apply_changes(
                self.repo.object_store, None, blob_changes
            )
        elif blob_changes:
            tree_id, trees = _trees.apply_changes(
                self.repo.object_store, parent_tree, blob_changes
            )
        else:
            tree_id, trees = parent_tree, []
        objects.extend(trees)
        commit = self._make_commit(tree_id, [tip] if tip else [], intent, summary)
        objects.append(commit)
        self._store_objects(objects)
        info = commit_info(commit)
        try:
            self.move_branch(
                branch,
                CommitId(tip.decode()) if tip else None,
                info.id,
                f"ctx {intent.intent}: {summary}",
            )
        except ConflictError:
            return _MOVED  # the tip moved: rebuild on the new one
        self.history.record_write(commit, snap, before, blob_changes, changes)
        return info

    def detached_commit(
        self,
        parent: CommitId,
        changes: Mapping[str, bytes | None],
        intent: Intent,
        summary: str,
    ) -> CommitInfo | None:
        """Writes a commit of ``changes`` on ``parent`` that no branch points at.

        For a change that reaches a branch only through :func:`merge` (Dream's
        accepted proposals): the objects are stored, no ref moves.

        Returns:
            The commit, or ``None`` when ``changes`` change nothing.
        """
        tree = self._commit_object(parent).tree
        pending = self._screened(
            Snapshot(self.repo.object_store, parent, tree),
            PendingWrite(summary=summary, intent=intent, changes=dict(changes)),
        )
        changes, intent, summary = pending.changes, pending.intent, pending.summary
        before = _trees.lookup_many(self.repo.object_store, tree, changes)
        objects: list[ShaFile] = []
        blob_changes: dict[str, ObjectID | None] = {}
        for path, content in changes.items():
            blob = None if content is None else Blob.from_string(content)
            if before[path] != (blob.id if blob else None):
                blob_changes[path] = blob.id if blob else None
                if blob is not None:
                    objects.append(blob)
        if not blob_changes:
            return None
        tree_id, trees = _trees.apply_changes(
            self.repo.object_store, tree, blob_changes
        )
        commit = self._make_commit(
            tree_id, [ObjectID(parent.encode())], intent, summary
        )
        self._store_objects([*objects, *trees, commit])
        return commit_info(commit)

    def _make_commit(
        self, tree: ObjectID, parents: list[ObjectID], intent: Intent, summary: str
    ) -> Commit:
        trailers = [
            Trailer("Ctx-Agent", intent.agent),
            Trailer("Ctx-Intent", intent.intent),
        ]
        if intent.confidence is not None:
            trailers.append(Trailer("Ctx-Confidence", f"{intent.confidence:g}"))
        if intent.session:
            trailers.append(Trailer("Ctx-Session", intent.session))
        if intent.reason:
            trailers.append(Trailer("Ctx-Reason", intent.reason))
        commit = Commit()
        commit.tree = tree
        commit.parents = parents
        commit.author = commit.committer = git_identity(intent.agent)
        when, offset = git_time(self.clock())
        commit.author_time = commit.commit_time = when
        commit.author_timezone = commit.commit_timezone = offset
        commit.encoding = b"UTF-8"
        subject = summary.replace("\n", " ").strip()
        commit.message = subject.encode("utf-8") + b"\n\n" + format_trailers(trailers)
        return commit

    def merge_commit(
        self,
        branch: str,
        parents: list[CommitId],
        tree: ObjectID,
        extra_objects: list[ShaFile],
        intent: Intent,
        summary: str,
    ) -> CommitInfo:
        """Writes a commit with several parents and moves ``branch`` to it.

        Must be called with the lock held; ``parents[0]`` must be the tip.
        What the merge brings is the merge's to name (``MergeResult.secrets``,
        never refused); its own message, the merger's name and reason
        included, is screened as any write's.
        """
        if self.screen is not None:
            own = PendingWrite(summary=summary, intent=intent, changes={})
            checked = self.screen.check(self.snapshot(parents[0]), own)
            intent, summary = checked.intent, checked.summary
        commit = self._make_commit(
            tree, [ObjectID(p.encode()) for p in parents], intent, summary
        )
        self._store_objects([*extra_objects, commit])
        info = commit_info(commit)
        self.move_branch(branch, parents[0], info.id, f"ctx {intent.intent}: {summary}")
        return info

    def add_objects(self, objects: list[ShaFile]) -> None:
        """Stores ``objects`` (a pack when many); no ref moves.

        For a rewrite of history (:mod:`ctx.engine.redaction`), whose objects
        join the store before any ref points at them.
        """
        self._store_objects(objects)

    def drop_caches(self) -> None:
        """Forgets every derived view of history (after history was rewritten).

        The history index in ``cache/`` is removed too; it is rebuilt as
        queries reach commits.
        """
        self._commits = {}
        self.caches.clear()
        folder = self.path / "cache" if self.path else None
        if folder is not None and folder.is_dir():
            for child in folder.iterdir():
                if child.is_file():
                    with contextlib.suppress(OSError):
                        child.unlink()
        self.history = History(self, folder)

    def _store_objects(self, objects: list[ShaFile]) -> None:
        store = self.repo.object_store
        with self._disk_errors():
            if len(objects) > _PACK_THRESHOLD and isinstance(store, DiskObjectStore):
                self._write_pack(store, objects)
            elif len(objects) > _PACK_THRESHOLD:
                store.add_objects([(obj, None) for obj in objects])
            else:
                for obj in objects:
                    store.add_object(obj)
        # Cached only once stored: a tree the disk refused is not there.
        _trees.remember_trees(objects)
        for obj in objects:
            if isinstance(obj, Commit):
                self._commits = {obj.id: obj}  # the next write's parent

    @staticmethod
    def _write_pack(store: DiskObjectStore, objects: list[ShaFile]) -> None:
        # A pack the disk refused leaves its temporary files (the finished
        # data of a pack whose index failed, say); under the store's lock no
        # other ctx writer makes any, so the new ones are this write's.
        folder = Path(store.pack_dir)
        before = {p.name for p in folder.glob(TEMP_PREFIX + "*")}
        try:
            write_pack(store, objects)
        except OSError as exc:
            abandon_git_files(exc)
            for path in folder.glob(TEMP_PREFIX + "*"):
                if path.name not in before:
                    with contextlib.suppress(OSError):
                        path.unlink()
            raise
