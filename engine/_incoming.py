"""What a fetch may bring: the checks on every object before a ref moves.

A remote can hold what stock git refuses (``git fsck``, a fetch with
``transfer.fsckObjects``) and what ctx cannot read. Once a ref points at it,
every read of the branch fails, and ``git fsck`` with it. So a fetch walks
everything the new branch tips reach that the store does not hold yet, and
refuses the whole fetch at the first of:

- a branch tip that is missing, or is not a commit;
- a commit that does not parse (dulwich's ``Commit.check``), or whose tree or
  parents are missing or of the wrong type;
- a tree entry that is not a file (``100644``, ``100755``) or a folder: a
  submodule link (``160000``), a symbolic link (``120000``), another mode;
- a name git refuses in a checkout: empty, ``.``, ``..``, holding ``/``,
  ``.git`` in any spelling NTFS or HFS+ reads as ``.git`` (dulwich's
  ``validate_path_element_*``), and ``.gitmodules``, which only submodules use;
- a tree that does not parse or is malformed (dulwich's ``Tree.check``:
  order, duplicates, zero-padded modes);
- an entry whose object is missing or of another type than its mode says;
- a commit or blob that a redaction removed (:mod:`ctx.engine.redaction`),
  when the fetch is given the redacted ids.

Objects the store already holds are trusted and not walked: ctx wrote them,
or an earlier fetch checked them (a refused fetch leaves nothing behind: see
:mod:`ctx.engine.transfer`). So a fetch of ten new memories checks the ten
new commits and the few trees and blobs they changed, and a clone checks
everything once.
"""

from __future__ import annotations

import contextlib
import re
import stat
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from dulwich.errors import ObjectFormatException
from dulwich.index import (
    validate_path_element_default,
    validate_path_element_hfs,
    validate_path_element_ntfs,
)
from dulwich.object_store import BaseObjectStore
from dulwich.objects import (
    S_IFGITLINK,
    Blob,
    Commit,
    ObjectID,
    ShaFile,
    Tree,
    object_class,
)

T = TypeVar("T", bound=ShaFile)

__all__ = [
    "Checked",
    "Held",
    "Objects",
    "RedactedError",
    "RefusedError",
    "check_incoming",
    "entry_problem",
]

_FILE_MODES = (stat.S_IFREG | 0o644, stat.S_IFREG | 0o755)
_NAMED_MODES = {
    S_IFGITLINK: "a submodule link",
    stat.S_IFLNK: "a symbolic link",
}
_USUAL_MODES = frozenset((stat.S_IFDIR, *_FILE_MODES))
_PLAIN_NAME = re.compile(rb"[A-Za-z0-9_-][A-Za-z0-9._-]*\Z")
"""Names no check refuses (no leading dot, no ``~``, ASCII): checked faster."""
_NAME_CHECKS = (
    validate_path_element_default,
    validate_path_element_ntfs,
    validate_path_element_hfs,
)


class Objects(Protocol):
    """Where a check reads objects: an object store, or anything indexed alike."""

    def __getitem__(self, sha: ObjectID, /) -> ShaFile:
        """Returns object ``sha``; raises KeyError if there is none."""
        ...


class Held(Protocol):
    """What a store holds already: anything that answers ``sha in held``."""

    def __contains__(self, sha: ObjectID, /) -> bool:
        """Returns whether object ``sha`` is held."""
        ...


class RefusedError(Exception):
    """What is wrong with a fetch: ``branch 'x' has ...``, ready for a sentence."""


class RedactedError(RefusedError):
    """A fetch would bring back what a redaction removed."""


@dataclass
class Checked:
    """What :func:`check_incoming` walked.

    Attributes:
        ids: Every new object's id (only when asked to collect them).
        tops: The names at the top of each new branch tip's tree.
    """

    ids: list[ObjectID] = field(default_factory=list)
    tops: dict[str, frozenset[bytes]] = field(default_factory=dict)


def check_incoming(
    objects: Objects,
    tips: Mapping[str, ObjectID],
    have: Held,
    *,
    collect: bool = False,
    redacted: Mapping[ObjectID, str] | None = None,
) -> Checked:
    """Checks everything ``tips`` reach in ``objects`` that ``have`` lacks.

    Args:
        objects: Where the new objects are (with the old ones, or not).
        tips: The branches about to move, by name, with their new tips.
        have: The objects the store already holds (trusted, not walked).
        collect: Return the new objects' ids too (for a fetch that copies them).
        redacted: Commits and blobs a redaction removed, each with its label
            (``redaction 1a2b... (memory 01J..., leaked key)``).

    Raises:
        RedactedError: a new object is one a redaction removed.
        RefusedError: the first problem found, branch by branch in name order.
    """
    walk = _Walk(objects, have, collect, redacted or {})
    for branch, tip in sorted(tips.items()):
        try:
            walk.branch(branch, tip)
        except _RedactedProblemError as exc:
            raise RedactedError(f"branch {branch!r} {exc}") from None
        except _ProblemError as exc:
            raise RefusedError(f"branch {branch!r} {exc}") from None
    return walk.checked


class _ProblemError(Exception):
    pass


class _RedactedProblemError(_ProblemError):
    pass


def entry_problem(folder: bytes, name: bytes, mode: int) -> str | None:
    """Returns what is wrong with tree entry ``name`` in ``folder``, or None.

    The answer is a noun phrase that names the entry ("a submodule link at
    'memory/x.json'"): a name git refuses, or a mode that is not a file's or
    a folder's.
    """
    if not _PLAIN_NAME.match(name) and not _git_accepts(name):
        return f"an entry named {_shown(name)} in " + (
            _shown(folder) if folder else "the top folder"
        )
    if mode in _USUAL_MODES:
        return None
    where = _shown(folder + b"/" + name if folder else name)
    if mode in _NAMED_MODES:
        return f"{_NAMED_MODES[mode]} at {where}"
    return f"an entry of mode {mode:o} at {where}"


def _git_accepts(name: bytes) -> bool:
    """Returns whether git checks out a file or folder named ``name``."""
    return (
        b"/" not in name
        and name.lower() != b".gitmodules"
        and all(check(name) for check in _NAME_CHECKS)
    )


def _type_name(obj: ShaFile) -> str:
    return obj.type_name.decode("ascii")


def _shown(path: bytes) -> str:
    return repr(path.decode("utf-8", "backslashreplace"))


class _Walk:
    """One walk over new commits, and the trees and blobs each one changed.

    A new commit's tree is compared with its first parent's, as
    :mod:`ctx.engine._sending` does, and only what differs is checked: the
    parent's tree is either held already or checked when the parent is. The
    comparisons are memoised on the pair of trees, never on the new tree
    alone, for the reason given there.
    """

    def __init__(
        self,
        objects: Objects,
        have: Held,
        collect: bool,
        redacted: Mapping[ObjectID, str],
    ) -> None:
        self.objects = objects
        self.have = have
        self.collect = collect
        self.redacted = redacted
        self.seen: set[ObjectID] = set()
        self.pairs: set[tuple[ObjectID | None, ObjectID]] = set()
        self.checked = Checked()
        self._raw = None
        if isinstance(objects, BaseObjectStore):
            self._raw = objects.get_raw
            self._hash = objects.object_format.hash_func
        self._tops: dict[ObjectID, frozenset[bytes]] = {}
        self._commits_read: dict[ObjectID, Commit] = {}
        self._trees_read: dict[ObjectID, Tree] = {}
        """Commits and trees read (by type, not yet by content): read once each."""

    def _read(self, sha: ObjectID, kind: type[T], what: str, path: bytes = b"") -> T:
        """Returns object ``sha``, which must be a ``kind``, or says why not.

        ``what`` and ``path`` name what the object should be ("the file",
        ``b"memory/x.json"``); the path is only formatted to say what is wrong.
        """

        def subject() -> str:
            return f"{what} {_shown(path)}" if path else what

        try:
            obj = self.objects[sha]
        except KeyError:
            raise _ProblemError(f"lacks {subject()} ({sha.decode()})") from None
        except (ObjectFormatException, ValueError) as exc:
            raise _ProblemError(
                f"holds {subject()}, which cannot be read ({exc})"
            ) from None
        if not isinstance(obj, kind):
            want = kind.type_name.decode("ascii")
            raise _ProblemError(
                f"holds a {_type_name(obj)} as {subject()}, not a {want}"
            )
        return obj

    def _keep(self, obj: ShaFile) -> None:
        """Marks ``obj`` checked, and collects it unless held already."""
        self._keep_id(obj.id, obj.type_name)

    def _keep_id(self, sha: ObjectID, type_name: bytes) -> None:
        label = self.redacted.get(sha)
        if label is not None:
            raise _RedactedProblemError(
                f"holds {type_name.decode()} {sha.decode()[:10]}, which {label} removed"
            )
        self.seen.add(sha)
        if self.collect and sha not in self.have:
            self.checked.ids.append(sha)

    def _keep_blob(self, sha: ObjectID, path: bytes) -> None:
        """Checks that ``sha`` is a blob, and keeps it, reading its type only.

        A store's own reads give the type and bytes (no object made for
        each of tens of thousands of files), and the bytes are hashed to
        their id; anything else is read as any object is.
        """
        if self._raw is None:
            self._keep(self._read(sha, Blob, "the file", path))
            return
        try:
            type_num, data = self._raw(sha)
        except KeyError:
            raise _ProblemError(
                f"lacks the file {_shown(path)} ({sha.decode()})"
            ) from None
        except (ObjectFormatException, ValueError, zlib.error) as exc:
            raise _ProblemError(
                f"holds the file {_shown(path)}, which cannot be read ({exc})"
            ) from None
        if type_num != Blob.type_num:
            kind = object_class(type_num)
            name = kind.type_name.decode() if kind else f"object of type {type_num}"
            raise _ProblemError(
                f"holds a {name} as the file {_shown(path)}, not a blob"
            )
        digest = self._hash()
        digest.update(b"blob %d\0" % len(data))
        digest.update(data)
        if digest.hexdigest().encode() != sha:
            # As dulwich's read checks every object it makes.
            raise _ProblemError(
                f"holds the file {_shown(path)}, which cannot be read (its "
                f"content is not object {sha.decode()})"
            )
        self._keep_id(sha, Blob.type_name)

    def branch(self, branch: str, tip: ObjectID) -> None:
        commit = self._read(tip, Commit, "its tip")
        if tip in self.seen or tip in self.have:
            return
        self._commits(commit)
        tops = self._tops.get(commit.tree)
        if tops is None:
            tree = self._read(commit.tree, Tree, "its tree")
            tops = self._tops[commit.tree] = frozenset(e.path for e in tree.iteritems())
        self.checked.tops[branch] = tops

    def _commits(self, tip: Commit) -> None:
        stack = [tip]
        while stack:
            commit = stack.pop()
            if commit.id in self.seen:
                continue
            try:
                commit.check()
            except ObjectFormatException as exc:
                raise _ProblemError(
                    f"holds a malformed commit {commit.id.decode()} ({exc})"
                ) from None
            self._keep(commit)
            where = f"commit {commit.id.decode()}"
            parents = []
            for sha in commit.parents:
                parent = self._commits_read.get(sha)
                if parent is None:
                    parent = self._read(sha, Commit, f"a parent of {where}")
                    self._commits_read[sha] = parent
                    if sha not in self.seen and sha not in self.have:
                        stack.append(parent)
                parents.append(parent)
            old = parents[0].tree if parents else None
            self._changed(old, commit.tree, f"the tree of {where}")

    def _changed(self, old_root: ObjectID | None, root: ObjectID, subject: str) -> None:
        stack = [(old_root, root, b"")]
        while stack:
            old, new, path = stack.pop()
            if new == old or (old, new) in self.pairs:
                continue
            self.pairs.add((old, new))
            tree = self._trees_read.get(new)
            if tree is None:
                what = "the folder" if path else subject
                tree = self._trees_read[new] = self._read(new, Tree, what, path)
            if new in self.have:
                continue  # held, so whole
            if new not in self.seen:
                self._check_tree(tree, path)
            previous: dict[bytes, tuple[int, ObjectID]] = {}
            if old is not None:
                before: ShaFile | None = self._trees_read.get(old)
                if before is None:
                    # Unreadable: its own commit's check says why.
                    with contextlib.suppress(
                        KeyError, ObjectFormatException, ValueError
                    ):
                        before = self.objects[old]
                if isinstance(before, Tree):
                    previous = {e.path: (e.mode, e.sha) for e in before.iteritems()}
            for entry in tree.iteritems():
                mode, sha = entry.mode, entry.sha
                before_entry = previous.get(entry.path)
                if before_entry == (mode, sha):
                    continue
                child = path + b"/" + entry.path if path else entry.path
                if mode == stat.S_IFDIR:
                    old_sub = None
                    if before_entry is not None and before_entry[0] == stat.S_IFDIR:
                        old_sub = before_entry[1]
                    stack.append((old_sub, sha, child))
                elif sha not in self.seen:
                    self._keep_blob(sha, child)

    def _check_tree(self, tree: Tree, path: bytes) -> None:
        at = _shown(path) if path else "the top folder"
        for entry in tree.iteritems():
            problem = entry_problem(path, entry.path, entry.mode)
            if problem is not None:
                raise _ProblemError(f"has {problem}")
        try:
            tree.check()
        except ObjectFormatException as exc:
            raise _ProblemError(f"holds a malformed folder at {at} ({exc})") from None
        self._keep(tree)
