"""The tag boost: which tags a question names, and how far a named tag lifts a hit.

A question names a tag by a word equal to the tag's value or the whole tag
("Caroline" names ``speaker:caroline``), by two adjacent words joined with a
hyphen ("job queue" names ``component:job-queue``), or by any one word of a
value of several ("Fahim" names ``speaker:fahim-khan``); a namespace alone
("the speaker") names nothing, nor does a part that is a function word
("the" in ``topic:state-of-the-art``). A value in Chinese, Japanese or
Korean, written without spaces, is named anywhere in the question
("支付服务的超时是多少" names ``项目:支付``).

How far a named tag lifts a hit depends on how much the tag tells: its
selectivity, the share of the other live memories that do not carry it
(:func:`selectivity`; a tag every memory carries lifts nothing, one no other
memory carries lifts fully). A hit's fused score is multiplied by ``1 +
tags x selectivity`` of its most selective named tag (:func:`tag_boosts`),
each tag's carriers counted once per question. In a conversation of two
people, each speaker's tag is on about half the turns: it tells half as much
as the name of a project that three memories of a thousand carry.

The boost is bounded by what else the hit matches. Each hit has a
``backing`` (0..1): the larger of the share of the question's other words
(those that named no tag) it holds, weighed as the relevance weighs them
(:meth:`~ctx.hub.retrieval.index.searcher.Searcher.coverage`), and its cosine to the
question (a turn that answers in other words). A tagged hit is boosted,
but it is never lifted above a hit that ranked above it and whose backing
is at least :data:`CLEARLY_BETTER` higher (:func:`bounded`): the boost
reorders near ties among hits that answer the question, and never lifts
the turns of the person a question names above the other person's turn
that holds the answer (issue 29: with the whole boost on every tagged hit,
the answer in the other speaker's turn fell out of the top 10), nor two
memories tagged ``project:api`` that say nothing of "rate limit" above the
one that does.

Measured on LoCoMo (``benchmarks/bench_empty_answers.py``): of the 409
questions that name one speaker and hold evidence in the other's turn,
recall@10 of those turns went 0.580 (the whole boost) -> 0.640 (0.82 with
no boost), adversarial questions (category 5) 0.664 -> 0.712; recall@10 of
categories 1-4, side by side on the same stores, 0.7336 -> 0.7321 and
0.7308 -> 0.7294 (two builds of the stores differ by about 0.003).
Scaling each boost by its hit's backing instead protected the other
speaker more (0.73) but cost categories 1-4 0.004-0.006 in two builds: a
question that names a speaker is most often answered in that speaker's
turn, so the bound keeps only a clearly better match from being buried.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctx.hub.retrieval.index.schema import content_analyzer
from ctx.hub.retrieval.index.terms import has_cjk

if TYPE_CHECKING:
    from ctx.hub.retrieval.index.searcher import Searcher

__all__ = [
    "CLEARLY_BETTER",
    "TAG_CANDIDATES",
    "NamedTags",
    "bounded",
    "name_tags",
    "selectivity",
    "tag_boosts",
    "tag_parts",
]

TAG_CANDIDATES = 64
"""How many of the best fused hits the boost weighs (each is read from git,
as gravity reads its 64; the projection keeps the last 8,192 read). A
bounded boost reorders near ties, not hits from far down the list; yet on
one build of the LoCoMo stores 20 candidates lost 0.006 of recall@10
(0.7246 against 0.7309 for 64 and 0.7306 for every fused hit). A cold read
costs about 0.1 ms (a packed store on two cores)."""

CLEARLY_BETTER = 0.3
"""How much higher a hit's backing (0..1) must be than a tagged hit's for the
boost not to lift the tagged hit above it."""

_EDGE_PUNCTUATION = "\"'`()[]{}<>,;!?.*"
_PART_SPLIT = re.compile(r"[\s\-_./]+")


def tag_parts(value: str) -> list[str]:
    """Returns the words of a tag value of several that may name it alone.

    ``fahim-khan`` gives ``fahim`` and ``khan``; a value of one word gives
    nothing (the whole value names it). Function words and single letters
    are left out: they would name the tag in any question.
    """
    parts = [p for p in _PART_SPLIT.split(value) if p]
    if len(parts) < 2:
        return []
    return [p for p in parts if len(p) > 1 and content_analyzer().analyze(p)]


@dataclass(frozen=True)
class NamedTags:
    """What a question names among some memories' tags.

    Attributes:
        tags: Per memory id, the tags of it that the question names.
        rest: The question without the words that named a tag, for the
            share of its other words each hit holds ("" when none are left).
    """

    tags: dict[str, tuple[str, ...]]
    rest: str


def _word(chunk: str) -> str:
    word = chunk.strip(_EDGE_PUNCTUATION).lower()
    for ending in ("'s", "\u2019s"):
        word = word.removesuffix(ending)
    return word


@functools.lru_cache(maxsize=8192)
def _names_of(tag: str) -> tuple[str, str, tuple[str, ...], bool]:
    """Returns what of ``tag`` a question's word may equal, and if it is CJK.

    The whole tag lowercased, its value and the value's parts
    (:func:`tag_parts`); a tag is named query after query, by the same hits.
    """
    lower = tag.lower()
    value = lower.partition(":")[2] or lower
    return lower, value, tuple(tag_parts(value)), has_cjk(value)


def name_tags(query: str, tagged: Iterable[tuple[str, Sequence[str]]]) -> NamedTags:
    """Returns the tags ``query`` names among ``tagged`` (memory id, its tags).

    See the module docstring for what names a tag.
    """
    chunks = query.split()
    words = [_word(chunk) for chunk in chunks]
    pairs = {
        f"{a}-{b}": (i, i + 1) for i, (a, b) in enumerate(itertools.pairwise(words))
    }
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        if word:
            positions.setdefault(word, []).append(i)
            # A word written as a whole tag ("project:ctx") also names its value.
            value = word.partition(":")[2]
            if value:
                positions.setdefault(value, []).append(i)
    named: dict[str, tuple[str, ...]] = {}
    used: set[int] = set()
    inside: set[str] = set()  # values named inside a word (CJK)
    lowered = query.lower()
    # Many hits carry the same tags: each is looked up once.
    naming: dict[str, bool] = {}
    for memory_id, tags in tagged:
        found = []
        for tag in tags:
            if tag not in naming:
                lower, value, parts, cjk = _names_of(tag)
                hits = [
                    *positions.get(lower, ()),
                    *positions.get(value, ()),
                    *pairs.get(value, ()),
                    *(i for part in parts for i in positions.get(part, ())),
                ]
                used.update(hits)
                naming[tag] = bool(hits) or (cjk and value in lowered)
                if not hits and naming[tag]:
                    inside.add(value)
            if naming[tag]:
                found.append(tag)
        if found:
            named[memory_id] = tuple(found)
    rest = " ".join(chunk for i, chunk in enumerate(chunks) if i not in used)
    for value in sorted(inside, key=len, reverse=True):
        rest = " ".join(re.sub(re.escape(value), " ", rest, flags=re.I).split())
    return NamedTags(named, rest)


def selectivity(holders: int, live: int) -> float:
    """Returns the share of the other ``live`` memories that lack a tag.

    ``holders``: the live memories that carry it, the boosted one among
    them. 1 when no other memory carries it, 0 when every one does.
    """
    if live <= 1:
        return 1.0
    return min(1.0, max(0.0, (live - holders) / (live - 1)))


def tag_boosts(
    searcher: Searcher, text: str, named: NamedTags, weight: float
) -> dict[str, float]:
    """Returns per memory of ``named`` the share its fused score gains.

    ``weight`` times the :func:`selectivity` of its most selective named
    tag; each named tag's carriers are counted once, in the searcher's view.
    """
    every = {tag for tags in named.tags.values() for tag in tags}
    holders = searcher.tag_holders(text, every)
    live = len(searcher.view.blobs)
    return {
        memory_id: weight * max(selectivity(holders[tag.lower()], live) for tag in tags)
        for memory_id, tags in named.tags.items()
    }


def bounded(
    fused: Mapping[str, float],
    backing: Mapping[str, float],
    boosts: Mapping[str, float],
) -> dict[str, float]:
    """Returns the boosted fused score of each hit of ``boosts``.

    Each is ``fused`` times ``1 + boosts[hit]``, lowered to just under the
    score of the lowest hit of ``fused`` that ranked above it, is not
    boosted, and has a backing at least :data:`CLEARLY_BETTER` higher;
    never under its own fused score.
    """
    out = {}
    tagged = boosts.keys()
    for memory_id, boost in boosts.items():
        own = fused[memory_id]
        score = own * (1 + boost)
        above = [
            fused[other]
            for other in fused
            if other not in tagged
            and fused[other] > own
            and backing.get(other, 0.0) >= backing.get(memory_id, 0.0) + CLEARLY_BETTER
        ]
        if above:
            # Just under it: the final order breaks exact ties by id.
            score = max(own, min(score, min(above) * (1 - 1e-9)))
        out[memory_id] = score
    return out
