"""The objects a transfer sends: new commits and what their trees changed.

dulwich's ``MissingObjectFinder`` collects every object reachable from what
the other side already has, so a push of 10 new memories onto a 10k-memory
branch read all ~10,000 trees and blobs of the old tip (0.8 s of a 1.3 s
push, measured in benchmarks/bench_remotes.py). The commits ctx writes
change a few paths each, and its sharded trees let a diff skip every subtree
whose id did not change: for each new commit, only the trees and blobs that
differ from its first parent's are sent.

Why that is complete: a commit the other side has comes with its whole tree
(git keeps every object reachable from its refs). A new commit's first
parent is either had there or new, and then sent the same way; by induction
every object of its tree is either there or sent. A root commit sends its
whole tree. An object sent twice (a merge's second parent had it) is only
redundant. The induction needs every commit's comparison done in full, so
the walk remembers pairs of trees compared, not trees sent.

The walk reads commits and trees, never a blob: a tree entry's mode says
what its object is. Trees are parsed from their stored bytes (no dulwich
object made and hashed for each), and what is sent is named by id and type,
for :mod:`ctx.engine._pack_copy` to send as the packs hold it.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable

from dulwich.object_store import BaseObjectStore
from dulwich.objects import Commit, ObjectID, Tree, parse_tree
from dulwich.walk import Walker

__all__ = ["objects_to_send"]

_GITLINK = 0o160000
_TREE = Tree.type_num


def objects_to_send(
    objects: BaseObjectStore, have: Iterable[ObjectID], want: Iterable[ObjectID]
) -> dict[ObjectID, str]:
    """Returns the objects reachable from ``want`` that ``have`` lacks.

    Each with its type's name, in the order found (a commit before its
    tree, a tree before what it holds). ``have`` may name commits this
    store does not hold; they are ignored (a superset is then sent, never
    too little).
    """
    known = [sha for sha in have if sha in objects]
    wanted = [sha for sha in want if sha not in set(known)]
    out: dict[ObjectID, str] = {}
    if not wanted:
        return out
    done: set[tuple[ObjectID | None, ObjectID]] = set()
    for entry in Walker(objects, wanted, exclude=known):
        commit: Commit = entry.commit
        out[commit.id] = "commit"
        before = None
        if commit.parents:
            parent = objects[commit.parents[0]]
            assert isinstance(parent, Commit)
            before = parent.tree
        _changed(objects, before, commit.tree, out, done)
    return out


def _changed(
    objects: BaseObjectStore,
    old: ObjectID | None,
    new: ObjectID,
    out: dict[ObjectID, str],
    done: set[tuple[ObjectID | None, ObjectID]],
) -> None:
    # Memoised on the pair, never on ``new`` alone: a tree already sent was
    # compared with some other old tree, whose own objects may be sent only
    # later, through this very comparison (a link added, then removed).
    if new == old or (old, new) in done:
        return
    done.add((old, new))
    out[new] = "tree"
    previous: dict[bytes, tuple[int, ObjectID]] = {}
    if old is not None:
        previous = {name: (mode, sha) for name, mode, sha in _entries(objects, old)}
    for name, mode, sha in _entries(objects, new):
        before = previous.get(name)
        if before is not None and before[1] == sha:
            continue
        if stat.S_ISDIR(mode):
            old_sub = before[1] if before and stat.S_ISDIR(before[0]) else None
            _changed(objects, old_sub, sha, out, done)
        elif mode & 0o170000 != _GITLINK:  # a submodule's commit is not ours
            out[sha] = "blob"


def _entries(
    objects: BaseObjectStore, tree: ObjectID
) -> list[tuple[bytes, int, ObjectID]]:
    type_num, data = objects.get_raw(tree)
    assert type_num == _TREE, tree
    return [
        (name, mode, ObjectID(sha))
        for name, mode, sha in parse_tree(data, objects.object_format.oid_length)
    ]
