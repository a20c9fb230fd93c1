"""What a memory branch saw of its code branch: ``refs/ctx/code/<branch>``.

A store that follows the code keeps, for each memory branch named as a code
branch, a small record (a JSON blob the ref points at):

- ``tip``: the code commit the code branch was at when last seen, by a
  write on it or by ``ctx sync``. A code branch deleted after its merge is
  judged by this commit.
- ``fork``: where the code branch stood when first seen with no commit of
  its own (every commit of it reachable from another branch, as a fresh
  ``git switch -c`` is); ``None`` when it had commits of its own already.
  A code tip still in the history of ``fork`` has not moved beyond it: the
  branch is not merged, however far the target moved on.

The record is bookkeeping, not memory: no reflog, no operation, never
pushed; a lost record only makes ``ctx sync`` fall back on git's own rule
(:mod:`ctx.engine.code_sync`). A record is replaced when its memory branch is
made anew.
"""

from __future__ import annotations

import msgspec
from dulwich.errors import NotCommitError
from dulwich.file import FileLocked
from dulwich.objects import Blob, ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo
from dulwich.walk import Walker

from ctx.engine.errors import StoreError
from ctx.engine.store import Store

__all__ = ["CODE_RECORDS", "CodeRecord", "note_code_tip", "read_code_record"]

CODE_RECORDS = b"refs/ctx/code/"
"""The records' refs, one per memory branch, under this prefix."""

_HEADS = b"refs/heads/"
_REMOTES = b"refs/remotes/"


class CodeRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What a memory branch saw of its code branch (see the module).

    Attributes:
        version: The record's format (1).
        tip: The code commit the code branch was at when last seen.
        fork: Where it stood when first seen with no commit of its own;
            ``None`` when it had some.
    """

    version: int = 1
    tip: str
    fork: str | None = None


_ENCODER = msgspec.json.Encoder(order="deterministic")


def _ref(branch: str) -> Ref:
    return Ref(CODE_RECORDS + branch.encode("utf-8", "surrogateescape"))


def read_code_record(store: Store, branch: str) -> CodeRecord | None:
    """Returns memory branch ``branch``'s record, or ``None`` without one.

    A record that cannot be read counts as none.
    """
    sha = _target(store, _ref(branch))
    if sha is None or sha not in store.repo.object_store:
        return None
    blob = store.repo.object_store[sha]
    if not isinstance(blob, Blob):
        return None
    try:
        return msgspec.json.decode(blob.as_raw_string(), type=CodeRecord)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _target(store: Store, ref: Ref) -> ObjectID | None:
    try:
        return store.repo.refs[ref]
    except KeyError:
        return None


def note_code_tip(
    store: Store, repo: Repo, branch: str, tip: ObjectID, *, fresh: bool = False
) -> None:
    """Records that code branch ``branch`` is at ``tip``, for its memory branch.

    The first record of a branch (or one made ``fresh``, for a memory branch
    made anew) says where it forked if it has no commit of its own yet; later
    ones move the tip and keep the fork. A record already saying so is left
    alone; one moved meanwhile by another process is left to it, and one
    the disk refuses is skipped (the next write or sync records it).
    """
    ref = _ref(branch)
    old = _target(store, ref)
    record = None if fresh else read_code_record(store, branch)
    if record is not None and record.tip == tip.decode():
        return
    if record is not None:
        fork = record.fork
    else:
        fork = None if _has_own_commits(repo, branch, tip) else tip.decode()
    blob = Blob.from_string(_ENCODER.encode(CodeRecord(tip=tip.decode(), fork=fork)))
    if blob.id == old:
        return
    try:
        store.add_objects([blob])
        if old is None:
            store.repo.refs.add_if_new(ref, blob.id)
        else:
            store.repo.refs.set_if_equals(ref, old, blob.id)
    except FileLocked:
        pass  # another process records the same branch: one record is enough
    except (OSError, StoreError):
        pass  # bookkeeping: the next write or sync records it


def _has_own_commits(repo: Repo, branch: str, tip: ObjectID) -> bool:
    """Returns whether ``tip`` holds commits no other branch reaches.

    The other branches are the repository's local branches and the fetched
    ones, but for ``branch`` itself and its namesakes on remotes (its own
    upstream is no other branch). So a branch made with ``git switch -c``
    and no commit since has none, as ``git branch --merged`` would say.
    """
    name = branch.encode("utf-8", "surrogateescape")
    others: list[ObjectID] = []
    for ref, sha in repo.get_refs().items():
        if ref.startswith(_HEADS):
            if ref[len(_HEADS) :] == name:
                continue
        elif ref.startswith(_REMOTES):
            if ref[len(_REMOTES) :].partition(b"/")[2] in (name, b"HEAD"):
                continue
        else:
            continue
        others.append(sha)
    try:
        walker = Walker(repo.object_store, [tip], exclude=others, max_entries=1)
        return next(iter(walker), None) is not None
    except (KeyError, NotCommitError):
        return True  # a ref at no commit here: no proof of a fork
