"""Finding Dream's candidates for one memory, with the indexes and the rules.

:class:`Detector` looks at one memory of a live view: its nearest
neighbours by vector and by BM25 (:data:`NEIGHBOURS` each), judged pair by
pair by :func:`~ctx.hub.dream.rules.judge_pair`; the temporal parser's
cycles in its text (a recurrence); its age, whether agents were given it
and how often they said they used it (a tier). Pairs already linked, and
memories already superseded, are left alone. At most :data:`MAX_LINKS` link
candidates per memory, and a shared name counts for a link only when
:meth:`Detector.rare`.

A pair is judged by the cosine of what the two memories say. A memory
that replies to another text (a chat turn imported with its ``reply_to``
context) is indexed by a vector of the context and itself, which finds
it by its question in recall; judged by that vector, two copies of one
turn with different contexts look like two subjects. Such a memory's own
text is embedded once per cycle for the judging (:meth:`Detector.cosine`).

:meth:`Detector.recheck` asks the same rules again about a proposal whose
memories changed since it was made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

import msgspec
import numpy as np

from ctx.engine import (
    Adjacency,
    LinkChange,
    Memory,
    MemoryId,
    Proposal,
    TagChange,
    make_proposal,
)
from ctx.hub.dream.rules import (
    Thresholds,
    judge_pair,
    recurrence,
    stale,
)
from ctx.hub.retrieval.embedders import Embedder, EmbedderError
from ctx.hub.retrieval.index.documents import REPLY_TO
from ctx.hub.retrieval.index.searcher import Searcher
from ctx.hub.retrieval.temporal.parse import parse_temporal

__all__ = ["MAX_LINKS", "NEIGHBOURS", "Detector", "recheck"]

NEIGHBOURS = 8
"""Neighbours asked of each channel (vectors, BM25) for one memory."""
MAX_LINKS = 1
"""The most link candidates one memory gives in one cycle."""
RARE_SHARE = 0.01
"""A name is rare when at most this share of the memories (and at least
:data:`RARE_MIN`) hold it: only a rare shared name is evidence of a link."""
RARE_MIN = 5
_QUERY_WORDS = 32
_TIER = "tier:"


def _text(memory: Memory) -> str:
    return f"{memory.title}\n{memory.body}" if memory.title else memory.body


class Detector:
    """Finds the candidates of the memories of one live view.

    Args:
        searcher: The view's searcher.
        links: The view's link graph.
        branch: The branch the proposals are for.
        now: The time of the cycle.
        limits: The rules' thresholds.
        recalled: How many hook sessions were given each memory.
        used: How often agents said they used each memory: recalls whose
            feedback names it (``ctx feedback``), sessions whose answer
            cited it (:mod:`ctx.hub.dream.cited`).
        written: Returns when each memory was last written (its newest
            commit), asked once, the first time a memory is old enough to
            leave the context.
    """

    def __init__(
        self,
        searcher: Searcher,
        links: Adjacency,
        branch: str,
        now: datetime,
        limits: Thresholds | None = None,
        recalled: Mapping[str, int] | None = None,
        used: Mapping[str, int] | None = None,
        written: Callable[[], Mapping[str, datetime]] | None = None,
    ) -> None:
        self.searcher = searcher
        self.links = links
        self.branch = branch
        self.now = now
        self.limits = limits or Thresholds()
        self.recalled = recalled or {}
        self.used = used or {}
        self._written = written
        self._last: Mapping[str, datetime] | None = None
        self._superseded = links.superseded()
        self._rare: dict[str, bool] = {}
        self._said: dict[str, np.ndarray | None] = {}

    def rare(self, name: str) -> bool:
        """Returns whether few memories hold ``name`` (by BM25, cached)."""
        if name not in self._rare:
            size = len(self.searcher.view.catalog.entries)
            most = max(RARE_MIN, int(size * RARE_SHARE))
            held = self.searcher.search_bm25(name, most + 1)
            self._rare[name] = len(held) <= most
        return self._rare[name]

    def _said_vector(self, memory: Memory, blob: str) -> np.ndarray | None:
        """Returns the vector of what ``memory`` says itself (cached)."""
        if memory.id not in self._said:
            vector = None
            if REPLY_TO in memory.meta:
                try:
                    vector = self.searcher.embedder.embed([_text(memory)])[0]
                except EmbedderError:
                    vector = None
            else:
                vector = self.searcher.vector_of(blob)
            self._said[memory.id] = vector
        return self._said[memory.id]

    def cosine(
        self, a: Memory, a_blob: str, b: Memory, b_blob: str, indexed: float | None
    ) -> float | None:
        """Returns the cosine of what ``a`` and ``b`` say.

        ``indexed``, their index vectors' cosine, unless either replies to
        a context its vector holds (see the module's docstring).
        """
        if REPLY_TO not in a.meta and REPLY_TO not in b.meta:
            return indexed
        va, vb = self._said_vector(a, a_blob), self._said_vector(b, b_blob)
        if va is None or vb is None:
            return indexed
        return float(np.dot(va, vb))

    def _linked(self, a: str, b: str) -> bool:
        return any(other == b for _, other in self.links.outgoing(a)) or any(
            other == b for _, other in self.links.incoming(a)
        )

    def _neighbours(self, blob: str, memory: Memory) -> dict[str, float | None]:
        """Returns the neighbours' blobs, each with its cosine (if known)."""
        found: dict[str, float | None] = {}
        vector = self.searcher.vector_of(blob)
        if vector is not None:
            for other, score in self.searcher.search_vector(vector, NEIGHBOURS + 1):
                found[other] = float(score)
        query = " ".join(_text(memory).split()[:_QUERY_WORDS])
        for other, _ in self.searcher.search_bm25(query, NEIGHBOURS + 1):
            if other not in found:
                other_vector = self.searcher.vector_of(other)
                cosine = None
                if vector is not None and other_vector is not None:
                    cosine = float(np.dot(vector, other_vector))
                found[other] = cosine
        found.pop(blob, None)
        return found

    def examine(self, memory_id: str) -> list[Proposal]:
        """Returns the candidates one memory gives (nothing for a superseded one)."""
        entry = self.searcher.view.catalog.entries.get(memory_id)
        memory = self.searcher.read(memory_id)
        if entry is None or memory is None or memory_id in self._superseded:
            return []
        out = [*self._pairs(memory, entry.blob), *self._alone(memory, entry.blob)]
        return out

    def _pairs(self, memory: Memory, blob: str) -> list[Proposal]:
        by_blob = self.searcher.view.by_blob
        entries = self.searcher.view.catalog.entries
        neighbours = self._neighbours(blob, memory)
        ranked = sorted(neighbours.items(), key=lambda item: -(item[1] or -1.0))
        out: list[Proposal] = []
        links = 0
        for other_blob, cosine in ranked:
            other_id = by_blob.get(other_blob)
            if other_id is None or other_id == memory.id:
                continue
            if other_id in self._superseded or self._linked(memory.id, other_id):
                continue
            other = self.searcher.read(other_id)
            if other is None:
                continue
            cosine = self.cosine(memory, blob, other, other_blob, cosine)
            verdict = judge_pair(memory, other, cosine, self.limits, self.rare)
            if verdict is None:
                continue
            if verdict.kind == "link":
                if links >= MAX_LINKS:
                    continue
                links += 1
            out.append(
                make_proposal(
                    kind=verdict.kind,
                    branch=self.branch,
                    memories={
                        memory.id: blob,
                        MemoryId(other_id): entries[other_id].blob,
                    },
                    links=[
                        LinkChange(
                            source=MemoryId(verdict.source),
                            type=verdict.link,
                            target=MemoryId(verdict.target),
                        )
                    ],
                    confidence=verdict.confidence,
                    reason=verdict.reason,
                    now=self.now,
                )
            )
        return out

    def _alone(self, memory: Memory, blob: str) -> list[Proposal]:
        out: list[Proposal] = []
        parsed = parse_temporal(_text(memory), memory.created_at)
        tag = recurrence(memory, [(c.dimension, c.label) for c in parsed.cycles])
        if tag is not None:
            label = parsed.cycles[0].label if parsed.cycles else tag.split(":")[1]
            out.append(self._tag(memory, blob, "recurrence", tag, 0.8, f"{label!r}"))
        tier = self.tier(memory)
        if tier is not None:
            out.append(self._tag(memory, blob, "tier", *tier))
        return out

    def tier(self, memory: Memory) -> tuple[str, float, str] | None:
        """Returns the tier a memory should move to (tag, confidence, why), or None."""
        entry = self.searcher.view.catalog.entries[memory.id]
        if entry.path.startswith("pinned/") or any(
            t.startswith(_TIER) for t in memory.tags
        ):
            return None  # only working memories move, and a person set the tier
        given = self.recalled.get(memory.id, 0)
        used = self.used.get(memory.id, 0)
        if used >= self.limits.reference_uses:
            return (
                "tier:reference",
                0.7,
                f"agents said they used it {used} times (feedback, answers citing it)",
            )
        if (
            given
            or used
            or not stale(memory, self.now, self.limits)
            or self.links.incoming(memory.id)
        ):
            return None
        # Untouched since it was last written, whatever date it is about: a
        # note of last year's event written today stays.
        last = max(memory.created_at, self.last_written(memory.id) or memory.created_at)
        if self.now - last < timedelta(days=self.limits.stale_days):
            return None
        days = (self.now - last).days
        return (
            "tier:off-context",
            0.6,
            f"untouched for {days} days, never recalled, nothing links to it; "
            "recall would leave it out",
        )

    def last_written(self, memory_id: str) -> datetime | None:
        """Returns when ``memory_id`` was last written (its newest commit)."""
        if self._written is None:
            return None
        if self._last is None:
            self._last = self._written()
        return self._last.get(memory_id)

    def _tag(
        self,
        memory: Memory,
        blob: str,
        kind: str,
        tag: str,
        confidence: float,
        reason: str,
    ) -> Proposal:
        return make_proposal(
            kind=kind,
            branch=self.branch,
            memories={memory.id: blob},
            tags=[TagChange(memory=memory.id, tag=tag)],
            confidence=confidence,
            reason=f"{tag}: {reason}",
            now=self.now,
        )


def recheck(
    proposal: Proposal,
    memories: Mapping[MemoryId, Memory],
    embedder: Embedder,
    now: datetime,
    limits: Thresholds | None = None,
) -> str | None:
    """Returns why ``proposal`` no longer holds for ``memories``, or ``None``.

    The rules are asked again about the memories as they are now: a pair must
    still be the same kind with the same link; a memory must still recur, or
    still belong in the proposed tier.
    """
    limits = limits or Thresholds()
    found = list(memories.values())
    if proposal.links:
        a, b = found
        try:
            vectors = embedder.embed([_text(a), _text(b)])
            cosine: float | None = float(np.dot(vectors[0], vectors[1]))
        except EmbedderError:
            cosine = None
        verdict = judge_pair(a, b, cosine, limits)
        [link] = proposal.links
        if verdict is None or (verdict.kind, verdict.link) != (
            proposal.kind,
            link.type,
        ):
            now_is = "nothing" if verdict is None else f"a {verdict.kind}"
            return f"the memories changed: the rules now see {now_is}"
        ends = (link.source, link.target)
        if (verdict.source, verdict.target) != ends and (
            link.type not in ("RELATES_TO", "CONTRADICTS")
            or (verdict.target, verdict.source) != ends
        ):
            return "the memories changed: the link would now go the other way"
        return None
    [memory] = found
    [change] = proposal.tags
    if proposal.kind == "recurrence":
        parsed = parse_temporal(_text(memory), memory.created_at)
        bare = msgspec.structs.replace(memory, tags=())
        if recurrence(bare, [(c.dimension, c.label) for c in parsed.cycles]) != (
            change.tag
        ):
            return "the memory changed: it no longer names that cycle"
        return None
    if change.tag == "tier:off-context" and not stale(memory, now, limits):
        return "the memory changed: it is no longer old enough"
    return None
