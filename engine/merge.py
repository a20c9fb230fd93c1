"""Three-way merge of branches with memory-aware rules.

dulwich finds the merge base and merges body text line by line; the tree
level is ours, because the rules work on decoded memories, not bytes:

- a path changed on one side only takes that side;
- the same change on both sides collapses;
- tags union (a tag removed on either side stays removed), links union;
- each field of a memory changed on one side only takes that side; bodies
  changed on both sides merge line by line when the edits do not overlap;
- anything else is a clash: settled by ``prefer`` when given, otherwise kept
  as a :class:`~ctx.engine.model.Conflict` under ``conflicts/`` with both
  versions, while the memory's path keeps ours. Nothing is ever dropped.
"""

from __future__ import annotations

import contextlib
from typing import Literal

import msgspec
from dulwich.diff_tree import tree_changes
from dulwich.graph import find_merge_base
from dulwich.merge import merge_blobs
from dulwich.objects import Blob, ObjectID, ShaFile

from ctx.engine import _trees
from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.commits import CommitInfo
from ctx.engine.errors import CorruptStoreError, InvalidInputError
from ctx.engine.ids import CommitId, MemoryId
from ctx.engine.layout import (
    conflict_path,
    is_conflict_path,
    is_memory_path,
    parse_link_path,
)
from ctx.engine.model import (
    PREFERENCES,
    Conflict,
    Intent,
    Memory,
    Outcome,
    decode_link,
    decode_memory,
    encode,
)
from ctx.engine.screen import SecretFinding
from ctx.engine.store import Store
from ctx.engine.wording import plural

__all__ = ["MergeResult", "Preference", "merge"]

Preference = Literal["ours", "theirs", "newer", "confident"]
_SCALARS = ("kind", "title", "created_at", "source")


class MergeResult(Outcome, frozen=True, kw_only=True):
    """What a merge did.

    Attributes:
        source: The revision merged.
        target: The branch merged into.
        base: The merge base (``None`` for unrelated histories).
        commit: The merge commit, or the new tip after a fast-forward.
        fast_forward: The target only moved forward to the source.
        up_to_date: There was nothing to merge.
        merged: Memories both sides changed that were combined cleanly.
        settled: Memories whose clash ``prefer`` settled.
        conflicts: Clashes kept for ``ctx resolve``.
        secrets: Secrets in the text the merge brought into the target, as
            the store's screen found them (none without a screen); the
            merge is made all the same.
    """

    source: str
    target: str
    base: CommitId | None
    commit: CommitInfo | None
    fast_forward: bool = False
    up_to_date: bool = False
    merged: tuple[MemoryId, ...] = ()
    settled: tuple[MemoryId, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    secrets: tuple[SecretFinding, ...] = ()


def merge(
    store: Store,
    source: str,
    intent: Intent,
    *,
    into: str | None = None,
    prefer: str | None = None,
    no_ff: bool = False,
    preview: bool = False,
    summary: str | None = None,
) -> MergeResult:
    """Merges revision ``source`` into branch ``into`` (default: HEAD).

    With ``preview`` nothing is written: the result says what the merge
    would do (a fast-forward, the memories combined, the conflicts), with
    ``commit`` left None unless it would be a fast-forward to ``source``.
    ``summary`` is the merge commit's first line (default: "Merge SOURCE
    into TARGET").

    Returns:
        What happened; clashes are data in ``conflicts``, never exceptions.
    """
    if prefer is not None and prefer not in PREFERENCES:
        raise InvalidInputError(
            f"Unknown preference {prefer!r}.",
            hint="Use ours, theirs, newer or confident.",
        )
    target = target_branch(store, into)
    if (
        not preview
        and source.startswith(DREAM_PREFIX)
        and not target.startswith(DREAM_PREFIX)
    ):
        raise InvalidInputError(
            f"{source!r} holds Dream's proposals, which reach {target!r} only "
            "once reviewed.",
            hint="Review them with `ctx dream review`, then `ctx dream merge`.",
        )
    theirs = resolve_revision(store, source)
    # A preview writes nothing: it takes no lock, so a read-only store (a
    # mount, another user's) can still show what a merge would do.
    with contextlib.nullcontext() if preview else store.locked():
        ours = store.branch_tip(target)
        bases = find_merge_base(
            store.repo, [ObjectID(ours.encode()), ObjectID(theirs.encode())]
        )
        base = CommitId(bases[0].decode()) if bases else None
        if base == theirs or ours == theirs:
            return MergeResult(
                source=source, target=target, base=base, commit=None, up_to_date=True
            )
        if base == ours and not no_ff:
            if not preview:
                store.move_branch(
                    target, ours, theirs, f"ctx merge: fast-forward to {source}"
                )
            return MergeResult(
                source=source,
                target=target,
                base=base,
                commit=store.commit(theirs),
                fast_forward=True,
                secrets=_arrived(store, ours, _changed(store, ours, theirs)),
            )
        merger = _TreeMerge(store, target, source, ours, theirs, base, prefer)
        tree, objects = merger.run()
        outcome = MergeResult(
            source=source,
            target=target,
            base=base,
            commit=None,
            merged=tuple(merger.merged),
            settled=tuple(merger.settled),
            conflicts=tuple(merger.conflicts),
            secrets=_arrived(store, ours, merger.changes),
        )
        if preview:
            return outcome
        summary = summary or f"Merge {source} into {target}"
        if merger.conflicts:
            summary += f" ({plural(len(merger.conflicts), 'conflict')})"
        commit = store.merge_commit(
            target, [ours, theirs], tree, objects, intent, summary
        )
    return msgspec.structs.replace(outcome, commit=commit)


def _changed(store: Store, ours: CommitId, theirs: CommitId) -> dict[str, bytes | None]:
    """Returns what a fast-forward from ``ours`` to ``theirs`` changes."""
    if store.screen is None:
        return {}
    objects = store.repo.object_store
    out: dict[str, bytes | None] = {}
    old, new = store.snapshot(ours).tree, store.snapshot(theirs).tree
    for change in tree_changes(objects, old, new):
        if change.new is not None and change.new.path is not None:
            blob = objects[ObjectID(change.new.sha)]
            out[change.new.path.decode("utf-8")] = blob.as_raw_string()
    return out


def _arrived(
    store: Store, ours: CommitId, changes: dict[str, bytes | None]
) -> tuple[SecretFinding, ...]:
    """Returns the secrets in the text ``changes`` bring onto ``ours``."""
    if store.screen is None or not changes:
        return ()
    return store.screen.scan(store.snapshot(ours), changes)


DREAM_PREFIX = "dream/"
"""Dream's branches: merged into another branch only by ``ctx dream merge``,
which brings in the accepted proposals alone (:mod:`ctx.engine.dream`)."""


class _TreeMerge:
    def __init__(
        self,
        store: Store,
        target: str,
        source: str,
        ours: CommitId,
        theirs: CommitId,
        base: CommitId | None,
        prefer: str | None,
    ) -> None:
        self.store = store
        self.objects = store.repo.object_store
        self.target = target
        self.source = source
        self.ours = ours
        self.theirs = theirs
        self.base = base
        self.prefer = prefer
        self.trees = {
            "base": store.snapshot(base).tree if base else None,
            "ours": store.snapshot(ours).tree,
            "theirs": store.snapshot(theirs).tree,
        }
        self.merged: list[MemoryId] = []
        self.settled: list[MemoryId] = []
        self.conflicts: list[Conflict] = []
        self.changes: dict[str, bytes | None] = {}

    def _side(self, name: str) -> dict[str, tuple[bytes | None, bytes | None]]:
        out: dict[str, tuple[bytes | None, bytes | None]] = {}
        for ch in tree_changes(self.objects, self.trees["base"], self.trees[name]):
            for entry in (ch.old, ch.new):
                if entry is not None and entry.path is not None:
                    path = entry.path.decode("utf-8")
                    old = ch.old.sha if ch.old and ch.old.path == entry.path else None
                    new = ch.new.sha if ch.new and ch.new.path == entry.path else None
                    out[path] = (old, new)
        return out

    def _read(self, sha: bytes | None) -> bytes | None:
        return None if sha is None else self.objects[ObjectID(sha)].as_raw_string()

    def run(self) -> tuple[ObjectID, list[ShaFile]]:
        ours_changes = self._side("ours")
        theirs_changes = self._side("theirs")
        for path, (old, new) in sorted(theirs_changes.items()):
            mine = ours_changes.get(path)
            if mine is None:
                self.changes[path] = self._read(new)
            elif mine[1] != new:
                self._both_changed(
                    path, self._read(old), self._read(mine[1]), self._read(new)
                )
        blobs: dict[str, ObjectID | None] = {}
        extra: list[ShaFile] = []
        for path, data in self.changes.items():
            if data is None:
                blobs[path] = None
            else:
                blob = Blob.from_string(data)
                extra.append(blob)
                blobs[path] = blob.id
        tree, trees = _trees.apply_changes(self.objects, self.trees["ours"], blobs)
        return tree, extra + trees

    def _both_changed(
        self, path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
    ) -> None:
        if parse_link_path(path) is not None:
            # Links union: a link kept by either side stays; if both changed
            # it, the more confident (then the newer) version wins.
            if ours is None or theirs is None:
                self.changes[path] = ours or theirs
            else:
                a, b = decode_link(ours, path), decode_link(theirs, path)
                key_a = (a.confidence or 0.0, a.created_at)
                key_b = (b.confidence or 0.0, b.created_at)
                self.changes[path] = theirs if key_b > key_a else ours
            return
        if not is_memory_path(path):
            self._keep_both(path, ours, theirs)
            return
        try:
            mb = decode_memory(base, path) if base else None
            mo = decode_memory(ours, path) if ours else None
            mt = decode_memory(theirs, path) if theirs else None
        except CorruptStoreError:
            return
        if mo is not None and mt is not None and mo.id != mt.id:
            self._relocate(path, mt)
            return
        self._merge_memory(path, mb, mo, mt)

    def _keep_both(self, path: str, ours: bytes | None, theirs: bytes | None) -> None:
        # A view (or any other file) changed differently on both sides: ours
        # stays at the path, theirs is kept beside it, so nothing is lost.
        # A stored conflict on both sides keeps ours: it is re-derived.
        if theirs is None or ours is None or is_conflict_path(path):
            if ours is None and theirs is not None:
                self.changes[path] = theirs  # deleted here, changed there: keep it
            return
        stem, dot, ext = path.rpartition(".")
        side = (
            f"{stem}.theirs-{self.theirs[:8]}"
            if dot
            else f"{path}.theirs-{self.theirs[:8]}"
        )
        self.changes[f"{side}.{ext}" if dot else side] = theirs

    def _relocate(self, path: str, memory: Memory) -> None:
        # Two different memories were added at one pinned/primed path.
        stem = path[: -len(".json")]
        n = 2
        ours = self.trees["ours"]
        assert ours is not None
        while _trees.lookup(self.objects, ours, f"{stem}-{n}.json"):
            n += 1
        self.changes[f"{stem}-{n}.json"] = encode(memory)

    def _merge_memory(
        self, path: str, base: Memory | None, ours: Memory | None, theirs: Memory | None
    ) -> None:
        present = ours or theirs
        assert present is not None
        mid = present.id
        if ours is None or theirs is None:
            clash: tuple[str, ...] = ("deleted",)
            result = present
        else:
            result, clash = _combine(base, ours, theirs)
        if not clash:
            self.changes[path] = encode(result)
            self.merged.append(mid)
            return
        if self.prefer is not None:
            pick = self._pick(mid)
            chosen = theirs if pick == "theirs" else ours
            if chosen is not None and ours is not None and theirs is not None:
                chosen = msgspec.structs.replace(
                    result, **{f: getattr(chosen, f) for f in clash}
                )
            self.changes[path] = encode(chosen) if chosen is not None else None
            self.settled.append(mid)
            return
        self.changes[path] = encode(result)
        conflict = Conflict(
            version=1,
            id=mid,
            path=path,
            fields=clash,
            ours_branch=self.target,
            theirs_ref=self.source,
            theirs_commit=self.theirs,
            base=base,
            ours=ours,
            theirs=theirs,
        )
        self.changes[conflict_path(mid)] = encode(conflict)
        self.conflicts.append(conflict)

    def _pick(self, mid: MemoryId) -> str:
        if self.prefer in ("ours", "theirs"):
            return self.prefer
        history = self.store.history
        ours = next(history.touching(self.ours, memory_id=mid), None)
        theirs = next(history.touching(self.theirs, memory_id=mid), None)
        if ours is None or theirs is None:
            return "theirs" if ours is None else "ours"
        if self.prefer == "newer":
            return "theirs" if theirs[0].time > ours[0].time else "ours"
        a = self.store.commit(CommitId(ours[0].commit)).intent
        b = self.store.commit(CommitId(theirs[0].commit)).intent
        conf_a = a.confidence if a and a.confidence is not None else 0.5
        conf_b = b.confidence if b and b.confidence is not None else 0.5
        return "theirs" if conf_b > conf_a else "ours"


def _combine(
    base: Memory | None, ours: Memory, theirs: Memory
) -> tuple[Memory, tuple[str, ...]]:
    """Merges two versions field by field; returns the result and clashes.

    Clashing fields keep our value in the result.
    """
    updates: dict[str, object] = {}
    clash: list[str] = []
    for name in _SCALARS:
        o, t = getattr(ours, name), getattr(theirs, name)
        b = getattr(base, name) if base else None
        if o == t or t == b:
            continue
        if o == b:
            updates[name] = t
        else:
            clash.append(name)
    b_body = base.body if base else ""
    if ours.body != theirs.body and theirs.body != b_body:
        if ours.body == b_body:
            updates["body"] = theirs.body
        else:
            merged, conflicted = merge_blobs(
                Blob.from_string(_lines(b_body)),
                Blob.from_string(_lines(ours.body)),
                Blob.from_string(_lines(theirs.body)),
            )
            if conflicted:
                clash.append("body")
            else:
                updates["body"] = merged.decode("utf-8").removesuffix("\n")
    b_tags = set(base.tags) if base else set()
    o_tags, t_tags = set(ours.tags), set(theirs.tags)
    removed = (b_tags - o_tags) | (b_tags - t_tags)
    updates["tags"] = tuple(sorted((o_tags | t_tags) - removed))
    b_meta = base.meta if base else {}
    meta = dict(ours.meta)
    for key in set(ours.meta) | set(theirs.meta):
        o, t, b = ours.meta.get(key), theirs.meta.get(key), b_meta.get(key)
        if o == t or t == b:
            continue
        if o == b:
            if t is None:
                meta.pop(key, None)
            else:
                meta[key] = t
        elif "meta" not in clash:
            clash.append("meta")
    updates["meta"] = meta
    return msgspec.structs.replace(ours, **updates), tuple(clash)


def _lines(text: str) -> bytes:
    return text.encode("utf-8") + b"\n"
