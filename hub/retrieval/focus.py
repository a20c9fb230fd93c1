"""What the vector channel asks: the question less the words that tell least.

An embedder reads every word of a question, the ones that tell its
memories apart and the ones that do not. Two kinds of word do not, and
:func:`vector_focus` leaves them out of the question the vector channel
orders memories by:

- A name of a group: a word that names a tag (as the tag boost names one,
  :func:`~ctx.hub.retrieval.boost.name_tags`) carried by many memories, a
  speaker of a conversation or a project most memories belong to. Every
  memory of the group bears the name, so in the embedder it pulls the
  group's memories above the answer, most of all when the answer is in
  another speaker's turn; BM25 and the tag boost weigh the name already.
- A word nearly every memory holds (:data:`COMMON_SHARE`): in a store of
  whole conversations, the names of the two people who speak in each.
  BM25 weighs such a word next to nothing (its idf); the embedder, as much
  as any other.

What is left must still hold a word that is not a function word, or the
whole question is asked; so is a question in Chinese, Japanese or Korean,
whose function words the English list does not know ("项目是什么" less
the group ``topic:项目`` would ask "是什么", "what is it").

The cosines the channel returns stay those of the question as asked
(:meth:`~ctx.hub.retrieval.index.searcher.Searcher.search_vectors`):
relevance, the tag boost's backing and ``--explain`` judge how much a
memory bears on what was asked. Measured in docs/recall.md (step 2 of the
ranking).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctx.hub.retrieval.boost import TAG_CANDIDATES, name_tags, selectivity
from ctx.hub.retrieval.index.schema import content_analyzer
from ctx.hub.retrieval.index.searcher import Searcher
from ctx.hub.retrieval.index.terms import has_cjk

__all__ = [
    "COMMON_LEAST",
    "COMMON_SHARE",
    "GROUP_LEAST",
    "GROUP_SELECTIVITY",
    "vector_focus",
]

GROUP_SELECTIVITY = 0.95
"""A named tag at most this selective (carried by at least about a
twentieth of the live memories), and carried by at least
:data:`GROUP_LEAST`, names a group of memories, not a subject."""

GROUP_LEAST = 10
"""The fewest memories a tag that names a group is carried by: in a store of
forty, a tag on three is a subject (``db:postgres``), however large a
share of the store that is."""

COMMON_SHARE = 0.9
"""A word at least this share of the indexed memories hold is left out."""

COMMON_LEAST = 10
"""The fewest indexed memories for a word to count as one nearly all hold."""


def vector_focus(
    searcher: Searcher, question: str, found: Sequence[tuple[str, float]]
) -> str | None:
    """Returns what the vector channel asks instead of ``question``, if anything.

    ``found``: the lexical channel's hits (blob, score), best first; the
    tags of the first :data:`TAG_CANDIDATES` are those the question may
    name. ``None`` when no word is left out, when nothing but function
    words would be left to ask, or when the question holds Chinese,
    Japanese or Korean.
    """
    if has_cjk(question):
        return None
    rest = _common_out(searcher, question, _groups_out(searcher, question, found))
    if rest == question or not content_analyzer().analyze(rest):
        return None
    return rest


def _groups_out(
    searcher: Searcher, question: str, found: Sequence[tuple[str, float]]
) -> str:
    """Returns ``question`` less the words that name a group's tag."""
    by_blob = searcher.view.by_blob
    carrying = []
    for blob, _ in found[:TAG_CANDIDATES]:
        memory = searcher.read(by_blob[blob]) if blob in by_blob else None
        if memory is not None and memory.tags:
            carrying.append((memory.id, memory.tags))
    named = name_tags(question, carrying)
    every = {tag for tags in named.tags.values() for tag in tags}
    if not every:
        return question
    holders = searcher.tag_holders(question, every)
    live = len(searcher.view.blobs)
    groups = {
        tag
        for tag in every
        if holders[tag.lower()] >= GROUP_LEAST
        and selectivity(holders[tag.lower()], live) <= GROUP_SELECTIVITY
    }
    if not groups:
        return question
    return name_tags(
        question, [(i, [t for t in tags if t in groups]) for i, tags in carrying]
    ).rest


def _common_out(searcher: Searcher, question: str, text: str) -> str:
    """Returns ``text`` less the words nearly every indexed memory holds.

    The share is counted for the terms of ``question`` (the text the
    searcher weighs once per question), and a word of ``text`` is left out
    when all its terms are that common (the analyser drops its punctuation).
    """
    shares, total = searcher.holding(question, exact_from=COMMON_SHARE)
    if total < COMMON_LEAST:
        return text
    chunks = text.split()
    kept = [chunk for chunk in chunks if not _common(chunk, shares)]
    return text if len(kept) == len(chunks) else " ".join(kept)


def _common(chunk: str, shares: dict[str, float]) -> bool:
    terms = content_analyzer().analyze(chunk)
    return bool(terms) and all(shares.get(t, 0.0) >= COMMON_SHARE for t in terms)
