"""What recall and search return: plain structs, cheap to import.

The command line decodes a running hub's answers into these without loading
the indexes (numpy, Tantivy, onnxruntime), so this module imports only msgspec.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from ctx.engine import HEADER_TOKENS, Outcome, is_pinned

if TYPE_CHECKING:  # the catalog's module brings dulwich's tree diffs
    from ctx.engine import CatalogEntry, Memory

__all__ = [
    "WARMING",
    "ChannelScore",
    "Explanation",
    "Hit",
    "HitConflict",
    "PassageMatch",
    "RecallResult",
    "Written",
]


WARMING = "memory warming up: lexical answer only"
"""The notice of a result made by the lexical channel alone, in the caller's
process (:func:`~ctx.hub.retrieval.lexical_recall.lexical_recall`): no
vectors, no hub (yet)."""


class ChannelScore(msgspec.Struct, frozen=True, kw_only=True):
    """One channel's part in a hit's score."""

    channel: str
    rank: int
    score: float
    contribution: float


class PassageMatch(msgspec.Struct, frozen=True, kw_only=True):
    """The passage of a long memory that the vector channel matched best.

    Attributes:
        number: Its number, from 1.
        of: How many passages the memory's text makes.
        text: The passage.
    """

    number: int
    of: int
    text: str


class Explanation(msgspec.Struct, frozen=True, kw_only=True):
    """Why a hit is where it is (``--explain``).

    ``boost`` is the temporal one (1 + gravity x closeness); ``tag_boost`` is
    1 + tags x support when the hit carries a tag the query names
    (``named_tags``), support being the share of the query's other words
    it holds (``ctx.hub.retrieval.boost``), else 1. ``passage`` names the
    passage the vector channel matched, for a memory long enough to have
    several (``ctx.hub.retrieval.index.passages``).
    """

    channels: tuple[ChannelScore, ...]
    fused: float
    closeness: float
    boost: float
    via: str | None
    last_commit: str | None
    last_agent: str | None
    last_summary: str | None
    tag_boost: float = 1.0
    named_tags: tuple[str, ...] = ()
    passage: PassageMatch | None = None


class HitConflict(msgspec.Struct, frozen=True, kw_only=True):
    """A merge left this memory in conflict: the hit is our side.

    Attributes:
        fields: The fields that clash.
        theirs_ref: The branch (or commit) merged in.
        theirs: That side's body, or None where that side deleted it.
    """

    fields: tuple[str, ...]
    theirs_ref: str
    theirs: str | None


class Written(msgspec.Struct, frozen=True, kw_only=True):
    """The write that last changed a recalled memory: its provenance.

    Attributes:
        commit: The commit.
        agent: The agent that wrote it (the commit's author).
        at: When it was written (the commit's time).
    """

    commit: str
    agent: str
    at: datetime


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """One recalled memory.

    ``conflict`` is set while a merge's clash on it is unresolved (``ctx show
    ID`` shows both sides). ``similarity`` is the vector channel's cosine of
    the memory to the question (-1 to 1; None when that channel did not find
    it, or for a pinned memory): unlike ``score``, which ranks, it is on a
    fixed scale, so a caller can keep only hits close in meaning.
    ``relevance`` (0 to 1; None for a pinned memory) is on a fixed scale too,
    and counts words as well as meaning: the largest of the cosine of the
    memory's best passage, the share of the question's word weight the
    memory holds, and 1 for a memory made in a time the question names
    (docs/recall.md, "Only what matters"). ``weak``: its relevance is under
    the floor (it shares little of the question's words or meaning); an
    explicit recall still gives it, as the best there is or beside strong
    hits, and the hook leaves out a recall whose hits are all weak.
    ``passage`` is set when the
    budget could not hold a long memory whole: ``body`` is then only the
    passage that matched (``ctx show ID`` shows all of it). ``written``
    is the write that last changed it on ``branch`` (who, which commit,
    when), None where history does not say.
    """

    id: str
    kind: str
    title: str | None
    body: str
    tags: tuple[str, ...]
    created_at: datetime
    path: str
    branch: str
    pinned: bool
    score: float
    tokens: int
    similarity: float | None = None
    relevance: float | None = None
    weak: bool = False
    explain: Explanation | None = None
    passage: PassageMatch | None = None
    conflict: HitConflict | None = None
    written: Written | None = None

    @classmethod
    def of(
        cls,
        memory: Memory,
        entry: CatalogEntry,
        *,
        branch: str,
        score: float,
        similarity: float | None = None,
        relevance: float | None = None,
        weak: bool = False,
        explain: Explanation | None = None,
    ) -> Hit:
        """Returns the hit of ``memory``, found at ``entry`` on ``branch``.

        It costs its text plus :data:`~ctx.engine.HEADER_TOKENS`, as recall
        counts every memory; it is pinned where its path says so.
        """
        return cls(
            id=memory.id,
            kind=memory.kind,
            title=memory.title,
            body=memory.body,
            tags=memory.tags,
            created_at=memory.created_at,
            path=entry.path,
            branch=branch,
            pinned=is_pinned(entry.path),
            score=score,
            tokens=entry.tokens + HEADER_TOKENS,
            similarity=similarity,
            relevance=relevance,
            weak=weak,
            explain=explain,
        )


class RecallResult(Outcome, frozen=True, kw_only=True):
    """A recall: the hits, and what they cost against the whole branch.

    ``nothing_relevant``: no memory reached even the weak floor (the
    question is about something the store does not hold), so no ranked
    memory is returned; ``near_miss`` is then the best of them, explained
    (only when an explanation was asked for). ``weak``: no memory reached
    the relevance floor, and the hits are the best weak ones (each marked
    ``weak``).
    ``pinned_left_out``: the paths of pinned memories that did not fit in
    their half of the budget (counted in ``left_out`` too).
    ``warnings``: channels that failed (vector search unavailable);
    ``notices``: what happened to the index on the way (it was unreadable
    and rebuilt, or lives in memory because the store cannot be written).
    ``unembedded``: live memories of the branch with no vector yet (the
    hub is embedding them): the vector channel could not find them.
    ``recall_id``: names this recall to ``ctx feedback`` (None for a search,
    or a store in memory). ``vector_question``: with an explanation asked
    for, the question the vector channel ordered memories by when it left
    out words that tell memories apart least (a speaker's name, a word
    nearly every memory holds: docs/recall.md, ranking step 2) or respelt
    a name or a word typed in haste ("servise": "service"), else None.
    """

    query: str
    branch: str
    commit: str
    now: datetime
    budget: int | None
    hits: tuple[Hit, ...]
    tokens: int
    live_memories: int
    live_tokens: int
    left_out: int
    seconds: float
    temporal: tuple[str, ...]
    warnings: tuple[str, ...]
    notices: tuple[str, ...] = ()
    unembedded: int = 0
    recall_id: str | None = None
    pinned_left_out: tuple[str, ...] = ()
    nothing_relevant: bool = False
    weak: bool = False
    near_miss: Hit | None = None
    vector_question: str | None = None
