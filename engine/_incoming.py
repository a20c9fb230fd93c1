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
- a tree that does not parse or is malformed (what dulwich's ``Tree.check``
  refuses, in its words: order, duplicates, zero-padded modes);
- an entry whose object is missing or of another type than its mode says;
- a tree or blob whose content is not its id (each one is hashed);
- a commit or blob that a redaction removed (:mod:`ctx.engine.redaction`),
  when the fetch is given the redacted ids.

Objects the store already holds are trusted and not walked: ctx wrote them,
or an earlier fetch checked them (a fetch refused by these checks leaves
nothing behind: see :mod:`ctx.engine.transfer`). So a fetch of ten new
memories checks the ten new commits and the few trees and blobs they
changed, and a clone checks everything once. What each moved branch's tree
holds at its top is read even where its tip is held: a remote refused as
not a ctx store (after its objects, checked, were kept) is refused again.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import stat
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

from dulwich.errors import ChecksumMismatch, ObjectFormatException
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
    parse_tree,
)

T = TypeVar("T", bound=ShaFile)

_Entries = list[tuple[bytes, int, ObjectID]]
"""A tree's entries, name, mode and id, in the order it holds them."""

__all__ = [
    "RECORD_TIP",
    "Checked",
    "Held",
    "Objects",
    "RawObjects",
    "RedactedError",
    "RefusedError",
    "check_incoming",
    "entry_problem",
]

RECORD_TIP = "the record of redactions"
"""The name a fetch gives the remote's redaction record (``refs/ctx/redactions``)
among the tips it checks: what it reaches is checked as a branch's is, and a
refusal names it so. No branch can be named so (a ref name holds no space)."""

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


@runtime_checkable
class RawObjects(Protocol):
    """Objects that also give an object's type number and bytes, unparsed."""

    def __getitem__(self, sha: ObjectID, /) -> ShaFile:
        """Returns object ``sha``; raises KeyError if there is none."""
        ...

    def get_raw(self, sha: ObjectID, /) -> tuple[int, bytes]:
        """Returns object ``sha``'s type number and content; KeyError if none."""
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
        seen: Every object checked.
    """

    ids: list[ObjectID] = field(default_factory=list)
    tops: dict[str, frozenset[bytes]] = field(default_factory=dict)
    seen: set[ObjectID] = field(default_factory=set)


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
        subject = branch if branch == RECORD_TIP else f"branch {branch!r}"
        try:
            walk.branch(branch, tip)
        except _RedactedProblemError as exc:
            raise RedactedError(f"{subject} {exc}") from None
        except _ProblemError as exc:
            raise RefusedError(f"{subject} {exc}") from None
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
        self.checked = Checked()
        self.seen = self.checked.seen
        self.pairs: set[tuple[ObjectID | None, ObjectID]] = set()
        self._raw: Callable[[ObjectID], tuple[int, bytes]] | None = None
        self._hash: Callable[[], Any] = hashlib.sha1  # dulwich's hash object
        self._oid_length = 20
        if isinstance(objects, BaseObjectStore):
            self._raw = objects.get_raw
            self._hash = objects.object_format.hash_func
            self._oid_length = objects.object_format.oid_length
        elif isinstance(objects, RawObjects):
            self._raw = objects.get_raw
        self._tops: dict[ObjectID, frozenset[bytes]] = {}
        self._commits_read: dict[ObjectID, Commit] = {}
        self._trees_read: dict[ObjectID, tuple[_Entries, bytes]] = {}
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
        except ChecksumMismatch:
            raise _not_its_id(subject(), sha) from None
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

    def _read_raw(
        self, sha: ObjectID, kind: type[ShaFile], what: str, path: bytes = b""
    ) -> bytes:
        """Returns the content of object ``sha``, a ``kind``, or says why not.

        A store's own reads give the type and bytes (no object made for
        each of tens of thousands of files and folders); anything else is
        read as an object. Either way the bytes are hashed to their id, as
        dulwich's check of an object does.
        """

        def subject() -> str:
            return f"{what} {_shown(path)}" if path else what

        try:
            if self._raw is not None:
                type_num, data = self._raw(sha)
            else:
                obj = self.objects[sha]
                type_num, data = obj.type_num, obj.as_raw_string()
        except KeyError:
            raise _ProblemError(f"lacks {subject()} ({sha.decode()})") from None
        except (ObjectFormatException, ValueError, zlib.error) as exc:
            raise _ProblemError(
                f"holds {subject()}, which cannot be read ({exc})"
            ) from None
        if type_num != kind.type_num:
            found = object_class(type_num)
            name = found.type_name.decode() if found else f"object of type {type_num}"
            want = kind.type_name.decode("ascii")
            raise _ProblemError(f"holds a {name} as {subject()}, not a {want}")
        digest = self._hash()
        digest.update(b"%s %d\0" % (kind.type_name, len(data)))
        digest.update(data)
        if digest.hexdigest().encode() != sha:
            raise _not_its_id(subject(), sha)
        return data

    def _keep_blob(self, sha: ObjectID, path: bytes) -> None:
        """Checks that ``sha`` is a blob, and keeps it."""
        self._read_raw(sha, Blob, "the file", path)
        self._keep_id(sha, Blob.type_name)

    def _tree(
        self, sha: ObjectID, what: str, path: bytes = b""
    ) -> tuple[_Entries, bytes]:
        """Returns the entries of tree ``sha``, in its order, and its bytes."""
        found = self._trees_read.get(sha)
        if found is None:
            data = self._read_raw(sha, Tree, what, path)
            try:
                entries = cast(_Entries, parse_tree(data, self._oid_length))
            except (ObjectFormatException, ValueError) as exc:
                subject = f"{what} {_shown(path)}" if path else what
                raise _ProblemError(
                    f"holds {subject}, which cannot be read ({exc})"
                ) from None
            found = self._trees_read[sha] = (entries, data)
        return found

    def branch(self, branch: str, tip: ObjectID) -> None:
        commit = self._read(tip, Commit, "its tip")
        if tip not in self.seen and tip not in self.have:
            self._commits(commit)
        # What the tip's tree holds at its top, for every branch, one whose
        # tip is held too: a fetch refused as not a store's leaves its
        # objects (docs/remotes.md), and a retry found the tip held and
        # moved the branch unchecked.
        tops = self._tops.get(commit.tree)
        if tops is None:
            entries, _ = self._tree(commit.tree, "its tree")
            tops = self._tops[commit.tree] = frozenset(e[0] for e in entries)
        self.checked.tops[branch] = tops

    def _commits(self, tip: Commit) -> None:
        stack = [tip]
        while stack:
            commit = stack.pop()
            if commit.id in self.seen:
                continue
            try:
                commit.check()
            except ChecksumMismatch:
                raise _not_its_id(f"commit {commit.id.decode()}", commit.id) from None
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
            what = "the folder" if path else subject
            entries, data = self._tree(new, what, path)
            if new in self.have:
                continue  # held, so whole
            if new not in self.seen:
                self._check_tree(new, entries, data, path)
            previous: dict[bytes, tuple[int, ObjectID]] = {}
            if old is not None:
                before = self._trees_read.get(old)
                if before is None:
                    # Unreadable: its own commit's check says why.
                    with contextlib.suppress(_ProblemError):
                        before = self._tree(old, "the folder")
                if before is not None:
                    previous = {name: (mode, sha) for name, mode, sha in before[0]}
            for name, mode, sha in entries:
                before_entry = previous.get(name)
                if before_entry == (mode, sha):
                    continue
                child = path + b"/" + name if path else name
                if mode == stat.S_IFDIR:
                    old_sub = None
                    if before_entry is not None and before_entry[0] == stat.S_IFDIR:
                        old_sub = before_entry[1]
                    stack.append((old_sub, sha, child))
                elif sha not in self.seen:
                    self._keep_blob(sha, child)

    def _check_tree(
        self, sha: ObjectID, entries: _Entries, data: bytes, path: bytes
    ) -> None:
        """Checks a tree as :func:`entry_problem`, then as dulwich's ``Tree.check``.

        Every entry's name and mode first; then the strict parse (no
        zero-padded mode), the order and no name twice, in the words of
        dulwich's check.
        """
        at = _shown(path) if path else "the top folder"
        for name, mode, _sha in entries:
            problem = entry_problem(path, name, mode)
            if problem is not None:
                raise _ProblemError(f"has {problem}")
        try:
            parse_tree(data, self._oid_length, strict=True)
            _check_order(entries)
        except ObjectFormatException as exc:
            raise _ProblemError(f"holds a malformed folder at {at} ({exc})") from None
        self._keep_id(sha, Tree.type_name)


def _not_its_id(subject: str, sha: ObjectID) -> _ProblemError:
    """Returns the refusal of an object whose content is not object ``sha``."""
    return _ProblemError(
        f"holds {subject}, which cannot be read (its content is not "
        f"object {sha.decode()})"
    )


def _check_order(entries: _Entries) -> None:
    """Raises as dulwich's ``Tree.check`` for entries out of order or twice."""
    last_name = last_key = None
    for name, mode, _sha in entries:
        key = name + b"/" if stat.S_ISDIR(mode) else name
        if last_key is not None:
            if last_key > key:
                raise ObjectFormatException("entries not sorted")
            if name == last_name:
                raise ObjectFormatException(f"duplicate entry {name!r}")
        last_name, last_key = name, key
