"""Typed links between memories, one small file each under ``links/``."""

from __future__ import annotations

from typing import Literal

from ctx.engine.abbreviation import resolve_memory_id
from ctx.engine.adjacency import adjacency
from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.catalog import catalog
from ctx.engine.errors import InvalidInputError, LinkNotFoundError
from ctx.engine.ids import CommitId, MemoryId
from ctx.engine.layout import link_dir, link_path
from ctx.engine.model import Intent, Link, Outcome, check_link_type, decode_link, encode
from ctx.engine.snapshot import LinkRecord, Snapshot
from ctx.engine.store import Store

__all__ = ["LinkResult", "UnlinkResult", "link", "list_links", "unlink"]


class LinkResult(Outcome, frozen=True, kw_only=True):
    """What ``link`` did: the link's file and the commit that wrote it.

    Attributes:
        path: The link's file under ``links/``.
        commit: The commit, or None when the link already existed.
        changed: Whether a commit was made.
    """

    path: str
    commit: CommitId | None
    changed: bool


class UnlinkResult(Outcome, frozen=True, kw_only=True):
    """What ``unlink`` did: the link file it deleted and the commit.

    Attributes:
        path: The link's file under ``links/``.
        commit: The commit that deleted it.
    """

    path: str
    commit: CommitId


def _ends(
    store: Store, source: str, target: str, branch: str | None
) -> tuple[MemoryId, MemoryId]:
    a = resolve_memory_id(store, source, branch)
    b = resolve_memory_id(store, target, branch)
    if a == b:
        raise InvalidInputError("A memory cannot link to itself.")
    return a, b


def link(
    store: Store,
    source: str,
    target: str,
    link_type: str,
    intent: Intent,
    *,
    confidence: float | None = None,
    branch: str | None = None,
) -> LinkResult:
    """Adds a typed link from ``source`` to ``target`` (both must exist).

    Re-adding an identical link writes nothing.
    """
    a, b = _ends(store, source, target, branch)
    kind = check_link_type(link_type)
    path = link_path(a, kind, b)

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        snap.find(a)
        snap.find(b)
        existing = snap.read(path)
        if existing is not None:
            return {}
        value = Link(
            version=1,
            agent=intent.agent,
            created_at=store.clock(),
            confidence=confidence if confidence is not None else intent.confidence,
            reason=intent.reason,
        )
        return {path: encode(value)}

    commit = store.write(
        target_branch(store, branch), intent, f"Link {a} {kind} {b}", build
    )
    return LinkResult(
        path=path, commit=commit.id if commit else None, changed=commit is not None
    )


def unlink(
    store: Store,
    source: str,
    target: str,
    link_type: str,
    intent: Intent,
    *,
    branch: str | None = None,
) -> UnlinkResult:
    """Removes a typed link.

    Raises:
        LinkNotFoundError: there is no such link.
    """
    a, b = _ends(store, source, target, branch)
    kind = check_link_type(link_type)
    path = link_path(a, kind, b)

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        if snap.blob_id(path) is None:
            raise LinkNotFoundError(f"No {kind} link from {a} to {b}.")
        return {path: None}

    commit = store.write(
        target_branch(store, branch), intent, f"Unlink {a} {kind} {b}", build
    )
    assert commit is not None  # the link file was there, so it is deleted
    return UnlinkResult(path=path, commit=commit.id)


def list_links(
    store: Store,
    memory_id: str,
    *,
    direction: Literal["out", "in", "both"] = "both",
    rev: str | None = None,
) -> list[LinkRecord]:
    """Returns the links of a memory, outgoing first.

    Both directions come from the adjacency index; only the link files that
    are returned are read.
    """
    mid = resolve_memory_id(store, memory_id, rev)
    snap = store.snapshot(resolve_revision(store, rev))
    catalog(store, snap).require(mid)
    adj = adjacency(store, snap)
    ends: list[tuple[str, str, str]] = []
    if direction in ("out", "both"):
        ends.extend((mid, t, o) for t, o in sorted(adj.outgoing(mid)))
    if direction in ("in", "both"):
        ends.extend((s, t, mid) for t, s in sorted(adj.incoming(mid)))
    out = []
    for source, kind, target in ends:
        path = link_path(MemoryId(source), kind, MemoryId(target))
        data = snap.read(path)
        if data is not None:
            out.append(
                LinkRecord(
                    source=MemoryId(source),
                    type=kind,
                    target=MemoryId(target),
                    link=decode_link(data, path),
                    path=path,
                )
            )
    return out


def links_touching(store: Store, snap: Snapshot, memory_id: MemoryId) -> list[str]:
    """Returns the paths of every link from or to ``memory_id`` in ``snap``.

    What goes with a memory that is deleted (``forget``, a conflict settled
    by deleting it): no link is left pointing at nothing. Incoming links are
    found through the adjacency index.
    """
    paths = [path for path, _ in snap.files(link_dir(memory_id))]
    for link_type, source in adjacency(store, snap).incoming(memory_id):
        paths.append(link_path(MemoryId(source), link_type, memory_id))
    return paths
