"""Dream's proposals in git: written on ``dream/<branch>``, reviewed, merged.

Dream (``ctx.hub.dream``) reads a branch and proposes fixes; this module is
the part that lives in git. A proposal is one file under ``proposals/`` on
the branch ``dream/<branch>`` (never on the branch read), written in its own
commit together with its effect (the link files it adds, the memories it
tags), with the intent trailers: agent ``dream``, intent ``dream``, the
confidence, and the evidence as the reason. So ``ctx log``, ``blame`` and
``undo`` cover proposals like any other write.

A proposal's id is a hash of what it changes (kind, links, tags), and its
file is written only if no file of that id exists: two workers never make
the same proposal twice, and a rejected proposal is never made again. Review
rewrites the file with the new status (accepted, rejected), in a commit made
by the reviewer. :func:`merge_accepted` re-checks every accepted proposal
against the branch as it is now, builds one commit of their effects on the
branch's tip and brings it in through the normal :func:`~ctx.engine.merge`
(conflicts as data), so one ``ctx undo`` takes it back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime

import msgspec

from ctx.engine.adjacency import adjacency
from ctx.engine.branches import check_new_branch_name
from ctx.engine.commits import CommitInfo
from ctx.engine.errors import (
    CorruptStoreError,
    InvalidInputError,
    RefNotFoundError,
)
from ctx.engine.ids import CommitId, MemoryId
from ctx.engine.layout import PROPOSALS, link_path, proposal_path
from ctx.engine.merge import DREAM_PREFIX, MergeResult, merge
from ctx.engine.model import (
    LINK_TYPES,
    Intent,
    Link,
    Memory,
    Outcome,
    decode_memory,
    encode,
    encode_struct,
)
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store
from ctx.engine.tags import OFF_CONTEXT, is_archived, with_tier
from ctx.engine.wording import plural

__all__ = [
    "DREAM_AGENT",
    "PROPOSAL_KINDS",
    "PROPOSAL_STATUSES",
    "DreamMergeResult",
    "Evidence",
    "LinkChange",
    "Proposal",
    "ProposeResult",
    "TagChange",
    "decode_proposal",
    "dream_branch",
    "hidden_by",
    "list_proposals",
    "make_proposal",
    "merge_accepted",
    "proposal_effects",
    "propose",
    "sync_dream_branch",
    "undone_merges",
]

DREAM_AGENT = "dream"
"""The agent (git author) of every proposal."""
PROPOSAL_KINDS = ("duplicate", "update", "link", "contradiction", "recurrence", "tier")
PROPOSAL_STATUSES = ("proposed", "accepted", "rejected", "merged", "stale")
_ID_CHARS = 12
_TIER = "tier:"


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    """A memory a proposal is about, as it was when the proposal was made."""

    id: MemoryId
    blob: str


class LinkChange(msgspec.Struct, frozen=True, kw_only=True):
    """A link a proposal adds: ``source`` ``type`` ``target``."""

    source: MemoryId
    type: str
    target: MemoryId


class TagChange(msgspec.Struct, frozen=True, kw_only=True):
    """A tag a proposal adds to a memory (a tier tag replaces the tier)."""

    memory: MemoryId
    tag: str


class Proposal(msgspec.Struct, frozen=True, kw_only=True):
    """One proposal, the content of its file under ``proposals/``.

    Attributes:
        version: Format version (1).
        id: Hash of what it changes; equal proposals have equal ids.
        kind: One of :data:`PROPOSAL_KINDS`.
        branch: The branch it was made for.
        memories: The memories it is about, with the blobs they had.
        links: The links it adds.
        tags: The tags it adds.
        confidence: How sure Dream is, 0..1.
        reason: The evidence, in one line.
        created_at: When it was made.
        status: One of :data:`PROPOSAL_STATUSES`.
        reviewer: Who accepted or rejected it.
        note: Why it was rejected, or why it went stale.
        declined: The memories whose change a reviewer rejected inside it
            (a tier proposal lists many memories; each is accepted or
            rejected on its own); their changes are never merged.
    """

    version: int
    id: str
    kind: str
    branch: str
    memories: tuple[Evidence, ...]
    links: tuple[LinkChange, ...] = ()
    tags: tuple[TagChange, ...] = ()
    confidence: float
    reason: str
    created_at: datetime
    status: str = "proposed"
    reviewer: str | None = None
    note: str | None = None
    declined: tuple[MemoryId, ...] = ()

    def changed_memories(self) -> tuple[MemoryId, ...]:
        """Returns the memories whose tags it changes, in order, once each."""
        return tuple(dict.fromkeys(c.memory for c in self.tags))

    def hides(self) -> tuple[MemoryId, ...]:
        """Returns the memories it takes out of recall, once each.

        Those it marks superseded, and those it moves off-context (recall
        leaves archived memories out too), but for the ones declined.
        """
        superseded = (c.target for c in self.links if c.type == "SUPERSEDES")
        archived = (
            c.memory
            for c in self.tags
            if c.tag == _TIER + OFF_CONTEXT and c.memory not in self.declined
        )
        return tuple(dict.fromkeys([*superseded, *archived]))


class ProposeResult(msgspec.Struct, frozen=True, kw_only=True):
    """What :func:`propose` did with one proposal.

    Attributes:
        id: The proposal.
        commit: Its commit, or ``None`` when a proposal of that id existed.
    """

    id: str
    commit: CommitId | None


class DreamMergeResult(Outcome, frozen=True, kw_only=True):
    """What :func:`merge_accepted` did.

    Attributes:
        branch: The branch merged into.
        merged: The accepted proposals whose effects reached it.
        stale: The accepted proposals left out, each with why.
        merge: The merge, or ``None`` when there was nothing to merge.
        hidden: The memories the merge hides from recall (superseded).
    """

    branch: str
    merged: tuple[str, ...]
    stale: tuple[tuple[str, str], ...] = ()
    merge: MergeResult | None = None
    hidden: tuple[MemoryId, ...] = ()


_DECODER = msgspec.json.Decoder(Proposal)


def dream_branch(branch: str) -> str:
    """Returns the branch Dream writes its proposals for ``branch`` on."""
    return f"{DREAM_PREFIX}{branch}"


def _check_kind(kind: str) -> str:
    if kind not in PROPOSAL_KINDS:
        raise InvalidInputError(
            f"Unknown proposal kind {kind!r}.",
            hint="Kinds: " + ", ".join(PROPOSAL_KINDS) + ".",
        )
    return kind


def make_proposal(
    *,
    kind: str,
    branch: str,
    memories: Mapping[MemoryId, str],
    links: Sequence[LinkChange] = (),
    tags: Sequence[TagChange] = (),
    confidence: float,
    reason: str,
    now: datetime,
) -> Proposal:
    """Returns a new proposal; its id is a hash of ``kind``, ``links`` and ``tags``.

    Args:
        kind: One of :data:`PROPOSAL_KINDS`.
        branch: The branch it is for.
        memories: The memories it is about and the blobs they have now.
        links: The links it adds.
        tags: The tags it adds.
        confidence: How sure, 0..1.
        reason: The evidence, one line.
        now: When it is made.
    """
    _check_kind(kind)
    for change in links:
        if change.type not in LINK_TYPES:
            raise InvalidInputError(f"Unknown link type {change.type!r}.")
    if not links and not tags:
        raise InvalidInputError("A proposal must change something.")
    key = "\n".join(
        [
            kind,
            *sorted(f"L {c.source} {c.type} {c.target}" for c in links),
            *sorted(f"T {c.memory} {c.tag}" for c in tags),
        ]
    )
    digest = hashlib.sha1(key.encode(), usedforsecurity=False).hexdigest()
    # Checked here so that a bad reason fails before any write.
    Intent(agent=DREAM_AGENT, intent="dream", confidence=confidence, reason=reason)
    return Proposal(
        version=1,
        id=digest[:_ID_CHARS],
        kind=kind,
        branch=branch,
        memories=tuple(
            Evidence(id=mid, blob=blob) for mid, blob in sorted(memories.items())
        ),
        links=tuple(links),
        tags=tuple(tags),
        confidence=round(confidence, 3),
        reason=reason,
        created_at=now,
    )


def decode_proposal(data: bytes, where: str) -> Proposal:
    """Returns the proposal a file holds.

    Raises:
        CorruptStoreError: the file at ``where`` is not a proposal.
    """
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise CorruptStoreError(f"{where} is not a valid proposal: {exc}") from exc


def _tagged(memory: Memory, tag: str) -> Memory:
    if tag.startswith(_TIER):
        tags = with_tier(memory.tags, tag[len(_TIER) :])
    else:
        tags = tuple(sorted({*memory.tags, tag}))
    return msgspec.structs.replace(memory, tags=tags)


def proposal_effects(
    snap: Snapshot, proposals: Iterable[Proposal]
) -> dict[str, bytes | None]:
    """Returns the path changes that carry out ``proposals`` on ``snap``.

    A link already there, a tag already carried or a memory not on ``snap``
    changes nothing.
    """
    out: dict[str, bytes | None] = {}
    edited: dict[MemoryId, tuple[str, Memory]] = {}
    for proposal in proposals:
        for change in proposal.links:
            path = link_path(change.source, change.type, change.target)
            if path in out or snap.blob_id(path) is not None:
                continue
            if snap.find_path(change.source) is None:
                continue  # a link from a memory gone from this tree: nothing
            if snap.find_path(change.target) is None:
                continue
            link = Link(
                version=1,
                agent=DREAM_AGENT,
                created_at=proposal.created_at,
                confidence=proposal.confidence,
                reason=proposal.reason,
            )
            out[path] = encode(link)
        for tag in proposal.tags:
            if tag.memory in proposal.declined:
                continue
            if tag.memory not in edited:
                found = snap.find_path(tag.memory)
                if found is None:
                    continue
                edited[tag.memory] = (found, snap.find(tag.memory).memory)
            path, memory = edited[tag.memory]
            edited[tag.memory] = (path, _tagged(memory, tag.tag))
    for path, memory in edited.values():
        data = encode(memory)
        if snap.read(path) != data:
            out[path] = data
    return out


def _ensure_branch(store: Store, branch: str) -> str:
    """Returns ``dream/<branch>``, created at ``branch``'s tip if missing."""
    name = dream_branch(branch)
    tip = store.branch_tip(branch)
    with store.locked():
        if name not in store.branches():
            check_new_branch_name(name)
            store.move_branch(name, None, tip, f"ctx dream: created from {branch}")
    return name


def sync_dream_branch(store: Store, branch: str) -> str:
    """Brings ``branch``'s new commits into ``dream/<branch>``; returns its name.

    The dream branch is made at ``branch``'s tip the first time; later the
    branch is merged into it (never the other way), so that proposals can
    name memories written since.
    """
    name = _ensure_branch(store, branch)
    intent = Intent(agent=DREAM_AGENT, intent="dream", reason="catch up")
    merge(store, branch, intent, into=name)
    return name


def propose(store: Store, proposal: Proposal) -> ProposeResult:
    """Writes one proposal on ``dream/<branch>`` in a commit of its own.

    Nothing is written when a proposal of the same id exists on the dream
    branch, whatever its status: the check runs under the store's lock, on
    the tip the commit is built on.
    """
    name = _ensure_branch(store, proposal.branch)
    path = proposal_path(proposal.id)
    intent = Intent(
        agent=DREAM_AGENT,
        intent="dream",
        confidence=proposal.confidence,
        reason=proposal.reason,
    )

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        if snap.blob_id(path) is not None:
            return {}
        return {**proposal_effects(snap, [proposal]), path: encode_struct(proposal)}

    ids = ", ".join(e.id for e in proposal.memories)
    commit = store.write(name, intent, f"Propose {proposal.kind}: {ids}", build)
    return ProposeResult(id=proposal.id, commit=commit.id if commit else None)


def list_proposals(
    store: Store, branch: str, *, status: str | None = None
) -> list[Proposal]:
    """Returns the proposals made for ``branch``, oldest first.

    Args:
        store: The store.
        branch: The branch they were made for (not the dream branch).
        status: Only those with this status.
    """
    if status is not None and status not in PROPOSAL_STATUSES:
        raise InvalidInputError(
            f"Unknown status {status!r}.",
            hint="Statuses: " + ", ".join(PROPOSAL_STATUSES) + ".",
        )
    try:
        tip = store.branch_tip(dream_branch(branch))
    except RefNotFoundError:
        store.branch_tip(branch)  # raises for a branch that does not exist
        return []
    snap = store.snapshot(tip)
    found = [
        decode_proposal(snap.read_blob(blob), path)
        for path, blob in snap.files(PROPOSALS + "/")
    ]
    found.sort(key=lambda p: (p.created_at, p.id))
    return [p for p in found if status is None or p.status == status]


def undone_merges(
    store: Store, branch: str, proposals: Iterable[Proposal]
) -> tuple[str, ...]:
    """Returns the merged ones of ``proposals`` whose effects ``branch`` lacks.

    An undo took their merge back: each may be accepted and merged again.
    """
    merged = [p for p in proposals if p.status == "merged"]
    if not merged:
        return ()
    snap = store.snapshot(store.branch_tip(branch))
    return tuple(p.id for p in merged if proposal_effects(snap, [p]))


def _hidden(
    snap: Snapshot, superseded: set[str], proposals: Iterable[Proposal]
) -> tuple[MemoryId, ...]:
    out: dict[MemoryId, None] = {}
    for proposal in proposals:
        for target in proposal.hides():
            if target in superseded or target in out:
                continue
            if snap.find_path(target) is None:
                continue
            if not is_archived(snap.find(target).memory.tags):
                out[target] = None
    return tuple(out)


def hidden_by(
    store: Store, branch: str, proposals: Iterable[Proposal]
) -> tuple[MemoryId, ...]:
    """Returns the memories merging ``proposals`` would hide from recall.

    Those they supersede or move off-context (:meth:`Proposal.hides`) that
    are on ``branch`` and still in recall there, each once.
    """
    snap = store.snapshot(store.branch_tip(branch))
    return _hidden(snap, adjacency(store, snap).superseded(), proposals)


Recheck = Callable[[Proposal, dict[MemoryId, Memory]], str | None]
"""Says why a proposal no longer holds for the memories as they are now
(``None``: it still holds). Given only proposals whose memories changed."""


def _still_holds(snap: Snapshot, proposal: Proposal, recheck: Recheck) -> str | None:
    current: dict[MemoryId, Memory] = {}
    changed = False
    # A memory edited since the proposal was made may say the current value
    # now: it is never hidden on the proposal's word (a re-check ranked by
    # when each was written, not edited, and hid the fresh edit).
    hides = set(proposal.hides())
    for evidence in proposal.memories:
        path = snap.find_path(evidence.id)
        if path is None:
            return f"memory {evidence.id} is no longer on the branch"
        blob = snap.blob_id(path)
        memory = snap.find(evidence.id).memory
        if blob != evidence.blob and evidence.id in hides:
            # What it says, not its tags (a tier, a tag added by hand).
            before = decode_memory(snap.read_blob(evidence.blob), path)
            if (before.title, before.body) != (memory.title, memory.body):
                return (
                    f"memory {evidence.id}, which it would hide, was edited "
                    "since: it may say the current value now"
                )
        changed = changed or blob != evidence.blob
        current[evidence.id] = memory
    return recheck(proposal, current) if changed else None


def merge_accepted(
    store: Store,
    branch: str,
    intent: Intent,
    recheck: Recheck,
    *,
    merge_intent: str = "merge",
    most_hidden: int | None = None,
) -> DreamMergeResult:
    """Merges the effects of the accepted proposals into ``branch``.

    Under the store's lock: each accepted proposal whose memories changed
    since it was made is re-checked by ``recheck`` (one whose memory is gone
    is stale); the effects of those that hold are written as one commit on
    ``branch``'s tip, which :func:`~ctx.engine.merge` brings in with a merge
    commit (``ctx undo`` takes it back). Then the dream branch records each
    proposal as merged or stale. The two commits on ``branch`` carry
    ``intent`` with its intent set to ``merge_intent``.

    Raises:
        InvalidInputError: The merge would hide more than ``most_hidden``
            memories from recall (nothing is written).
    """
    name = dream_branch(branch)
    with store.locked():
        tip = store.branch_tip(branch)
        snap = store.snapshot(tip)
        accepted = list_proposals(store, branch, status="accepted")
        stale: dict[str, str] = {}
        good: list[Proposal] = []
        for proposal in accepted:
            why = _still_holds(snap, proposal, recheck)
            if why is None:
                good.append(proposal)
            else:
                stale[proposal.id] = why
        hidden = _hidden(snap, adjacency(store, snap).superseded(), good)
        if most_hidden is not None and len(hidden) > most_hidden:
            raise InvalidInputError(
                f"The merge would hide {plural(len(hidden), 'memory')} from recall.",
                hint="`ctx dream review --status accepted` shows them; "
                'confirm with --yes ("yes": true through MCP and HTTP).',
            )
        result: MergeResult | None = None
        changes = proposal_effects(snap, good)
        if changes:
            count = plural(len(good), "accepted proposal")
            merging = msgspec.structs.replace(intent, intent=merge_intent)
            commit = store.detached_commit(
                tip, changes, merging, f"Dream: {count} for {branch}"
            )
            assert commit is not None  # the changes change the tree
            result = merge(
                store,
                commit.id,
                merging,
                into=branch,
                no_ff=True,
                summary=f"Merge {count} from {name} into {branch}",
            )
        if good or stale:
            _record_outcome(store, name, good, stale)
    return DreamMergeResult(
        branch=branch,
        merged=tuple(p.id for p in good),
        stale=tuple(sorted(stale.items())),
        merge=result,
        hidden=hidden if result is not None else (),
    )


def _record_outcome(
    store: Store, name: str, merged: Sequence[Proposal], stale: Mapping[str, str]
) -> CommitInfo | None:
    def build(snap: Snapshot) -> dict[str, bytes | None]:
        out: dict[str, bytes | None] = {}
        for proposal in merged:
            new = msgspec.structs.replace(proposal, status="merged")
            out[proposal_path(proposal.id)] = encode_struct(new)
        for pid, why in stale.items():
            path = proposal_path(pid)
            data = snap.read(path)
            if data is not None:
                new = msgspec.structs.replace(
                    decode_proposal(data, path), status="stale", note=why
                )
                out[path] = encode_struct(new)
        return out

    intent = Intent(agent=DREAM_AGENT, intent="dream", reason="merge recorded")
    summary = f"Record {plural(len(merged), 'merged proposal')}"
    if stale:
        summary += f" and {plural(len(stale), 'stale proposal')}"
    return store.write(name, intent, summary, build)
