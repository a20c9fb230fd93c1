"""A redaction's rewrite of history (step 1), shared by making and applying one.

:func:`rewrite_history` gives every commit some roots reach that holds what
is redacted a new version (its tree's blobs mapped, its message taken out
of or carried, ``Ctx-Redacted`` added), storing nothing: a redaction
(:mod:`ctx.engine.redaction`) stores what it made and records it, and a
pull replays others' redactions through it in memory
(:func:`~ctx.engine.redaction.apply_redactions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from dulwich.objects import Commit, ObjectID, ShaFile, Tree
from dulwich.trailers import Trailer, format_trailers, parse_trailers

from ctx.engine._redaction_finish import needles_of, replaced_message
from ctx.engine._redaction_record import Redaction
from ctx.engine.store import Store

__all__ = [
    "Graph",
    "Rewrite",
    "hex_map",
    "parents_first",
    "rewrite_history",
    "trailer_of",
    "with_trailer",
]


Graph = dict[ObjectID, tuple[ObjectID, list[ObjectID]]]
"""Per commit, its tree and parents."""


Rewrite = tuple[
    dict[ObjectID, ObjectID],
    dict[ObjectID, ObjectID],
    list[ShaFile],
    dict[ObjectID, ObjectID],
    Graph,
]
"""Old commit to new, old blob to new, the new trees and commits, old tree to
new, and every commit walked (its tree and parents)."""


def rewrite_history(
    store: Store,
    record: Redaction,
    *,
    blob_map: Callable[[ObjectID], ObjectID | None],
    known: Mapping[ObjectID, ObjectID],
    texts: tuple[str, ...],
    roots: Iterable[ObjectID],
    lookup: Callable[[ObjectID], ShaFile],
    messages: Mapping[ObjectID, bytes] | None = None,
) -> Rewrite | None:
    """Step 1 of a redaction (:mod:`ctx.engine.redaction`), storing nothing.

    Rewrites every commit ``roots`` reach, reading trees and commits through
    ``lookup`` (which may hold objects not stored yet). A commit of
    ``messages`` (a record's, by old commit id) gets that message as it is.
    The caller holds the store's lock.

    Returns:
        The rewrite, or None when no commit holds what is redacted.
    """
    objects = store.repo.object_store
    needles = needles_of(texts)
    trailer = trailer_of(record)
    trees: dict[ObjectID, ObjectID] = {}
    blobs: dict[ObjectID, ObjectID] = {}
    commits: dict[ObjectID, ObjectID] = {}
    new_objects: list[ShaFile] = []

    def tree_map(sha: ObjectID) -> ObjectID:
        if sha in trees:
            return trees[sha]
        tree = lookup(sha)
        assert isinstance(tree, Tree)
        changed = False
        out = Tree()
        for entry in tree.iteritems():
            target = entry.sha
            if entry.mode & 0o170000 == 0o040000:
                target = tree_map(entry.sha)
            elif entry.mode & 0o170000 == 0o100000:
                new = blob_map(entry.sha)
                if new is not None:
                    blobs[entry.sha] = new
                    target = new
            changed |= target != entry.sha
            out.add(entry.path, entry.mode, target)
        if changed:
            new_objects.append(out)
            trees[sha] = out.id
        else:
            trees[sha] = sha
        return trees[sha]

    graph: Graph = {}
    for commit in parents_first(lookup, roots):
        graph[commit.id] = (commit.tree, commit.parents)
        if commit.id in known and known[commit.id] in objects:
            commits[commit.id] = known[commit.id]
            continue
        tree = tree_map(commit.tree)
        parents = [commits.get(p, p) for p in commit.parents]
        carried = messages.get(commit.id) if messages else None
        message = carried or replaced_message(commit.message, needles) or commit.message
        own = tree != commit.tree or message != commit.message
        if not own and parents == commit.parents:
            continue
        new = commit.copy()
        assert isinstance(new, Commit)
        new.tree = tree
        new.parents = parents
        if carried is None and own:
            message = with_trailer(message, trailer)
        new.message = message
        new_objects.append(new)
        commits[commit.id] = new.id
    if not commits:
        return None
    return commits, blobs, new_objects, trees, graph


def hex_map(ids: Mapping[ObjectID, ObjectID]) -> dict[str, str]:
    return {old.decode(): new.decode() for old, new in ids.items()}


def trailer_of(record: Redaction) -> Trailer:
    return Trailer(
        "Ctx-Redacted", record.what + (f" ({record.reason})" if record.reason else "")
    )


def with_trailer(message: bytes, trailer: Trailer) -> bytes:
    body, trailers = parse_trailers(message)
    if trailer in trailers:
        return message  # a carried message (apply_redactions) has it already
    if not trailers:
        return message.rstrip(b"\n") + b"\n\n" + format_trailers([trailer])
    return body.rstrip(b"\n") + b"\n\n" + format_trailers([*trailers, trailer])


def parents_first(
    lookup: Callable[[ObjectID], ShaFile], roots: Iterable[ObjectID]
) -> Iterator[Commit]:
    """Yields every commit ``roots`` reach, each after all its parents."""
    done: set[ObjectID] = set()
    for root in roots:
        # A commit read is kept on the stack until its parents are done: each
        # is read once (a loose one is inflated each time).
        stack: list[tuple[ObjectID, Commit | None]] = [(root, None)]
        while stack:
            sha, read = stack.pop()
            if sha in done:
                continue
            if read is not None:
                done.add(sha)
                yield read
                continue
            obj = lookup(sha)
            if not isinstance(obj, Commit):
                done.add(sha)
                continue
            stack.append((sha, obj))
            stack.extend((p, None) for p in obj.parents if p not in done)
