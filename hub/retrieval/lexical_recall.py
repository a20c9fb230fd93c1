"""An answer on a cold store: the lexical channel alone, in the caller's process.

With no hub running (or one that does not answer in time) a prompt's recall
would load the embedder, and on a store never indexed since an import,
index every memory first: 12 s for 1,000 memories on a busy machine, past
the hook's deadline, and the prompt got nothing. A hook never waits for
that: :func:`lexical_recall` ranks the branch tip's memories by BM25 alone,
with the lexical index's own analysis and weights, and the caller starts
the hub for the next prompt.

Where the ranking comes from:

- the store's Tantivy index, when its watermark for the branch is the
  tip's tree (every memory there is indexed): a search, filtered by the
  tip's live blobs (a long prompt's lines searched instead of it, a
  memory scoring as the line it matches best), and only the hits'
  memories are read;
- else a Tantivy index in memory, built from every memory of the tip (read
  pack by pack, :func:`~ctx.engine.read_memories`): about 0.35 s of a
  0.7 s hook at 10,000 memories on two quiet cores
  (``benchmarks/results/hook_cold.md``). Texts
  that need the language detector are indexed as English here: loading the
  detector costs more than the answer.

A hit's ``relevance`` is the share of the prompt's word weight it holds (as
recall's, without the cosine;
:meth:`~ctx.hub.retrieval.index.coverage.Matches.coverage`), of a long
prompt the best of the whole's and its lines' from the store's index
(:func:`~ctx.hub.retrieval.index.parts.question_parts`; a tip ranked in
memory weighs the prompt whole), and it is ``weak`` under the store's
``[recall] floor``. The result carries
what happened in ``notices``: always :data:`WARMING`, and a current index that
could not be read (then ranked in memory).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from datetime import datetime
from pathlib import Path

import msgspec

from ctx.engine import (
    HEADER_TOKENS,
    CatalogEntry,
    Memory,
    Store,
    estimate_tokens,
    is_archived,
    is_pinned,
    link_graph,
    live_catalog,
    read_memories,
)
from ctx.hub.retrieval.index.coverage import Matches
from ctx.hub.retrieval.index.documents import memory_embed_text
from ctx.hub.retrieval.index.folder import FORMAT, IndexState
from ctx.hub.retrieval.index.lexical import BODY_BOOST, TITLE_BOOST, LexicalIndex
from ctx.hub.retrieval.index.lexical_errors import LexicalIndexError
from ctx.hub.retrieval.index.parts import question_parts
from ctx.hub.retrieval.index.passages import may_be_long
from ctx.hub.retrieval.index.schema import content_analyzer, stem_analyzer
from ctx.hub.retrieval.index.terms import MAX_QUERY_TERMS, query_text
from ctx.hub.retrieval.results import WARMING, Hit, PassageMatch, RecallResult
from ctx.hub.retrieval.standing import standing_passage
from ctx.hub.retrieval.written import with_written

__all__ = ["CANDIDATES", "lexical_recall"]


CANDIDATES = 200
"""The best BM25 matches weighed for relevance and packed, relevant ones first."""

_INDEX = "index"
_K1 = 1.2
_B = 0.75


class _Ranked(msgspec.Struct, frozen=True):
    """One memory the lexical channel found, with its BM25 score and share."""

    memory_id: str
    score: float
    relevance: float


def lexical_recall(
    store: Store,
    query: str,
    *,
    branch: str,
    budget: int,
    floor: float,
    now: datetime,
) -> RecallResult:
    """Returns the branch tip's best lexical matches for ``query``, in ``budget``.

    Pinned memories, memories another one supersedes and archived ones
    (``tier:off-context``, as recall leaves them out) are left out (the
    session's start gives the pinned ones); each hit is taken while it fits.

    Args:
        store: The store (on disk, or in memory).
        query: The prompt.
        branch: The branch to read.
        budget: Tokens to fill.
        floor: The relevance under which a hit is weak.
        now: When the prompt was made (the result's ``now``).

    Raises:
        CtxError: The store cannot be read (a corrupt memory, a lost branch).
    """
    commit = store.branch_tip(branch)
    snap = store.snapshot(commit)
    tree = "empty" if snap.tree is None else snap.tree.decode("ascii")
    entries = live_catalog(store, commit).entries
    hidden = link_graph(store, commit).superseded()
    notices = [WARMING]
    ranked: list[_Ranked] = []
    memories: dict[str, Memory] = {}
    if query.strip() and entries:
        ranked, memories = _ranked(store, tree, branch, entries, query, notices)
    # The relevant first: a weak match ranked higher by BM25 (a memory that
    # repeats one of the prompt's words) must not take a relevant one's room.
    ranked.sort(key=lambda r: r.relevance < floor)
    taken: list[_Ranked] = []
    parts: dict[str, PassageMatch] = {}
    spent = left_out = 0
    for found in ranked:
        entry = entries[found.memory_id]
        cost = entry.tokens + HEADER_TOKENS
        if found.memory_id in hidden or is_pinned(entry.path):
            continue
        if budget - spent < HEADER_TOKENS:
            left_out += 1  # nothing fits any more: counted unread, as recall does
            continue
        if is_archived(_memory(store, found.memory_id, entry, memories).tags):
            continue  # off-context, as recall leaves it
        if spent + cost > budget and may_be_long(entry.tokens):
            room = budget - spent - HEADER_TOKENS
            part = _passage(store, found.memory_id, entry, memories, query, room)
            if part is not None:
                parts[found.memory_id] = part
                cost = estimate_tokens(part.text) + HEADER_TOKENS
        if spent + cost > budget:
            parts.pop(found.memory_id, None)
            left_out += 1
        else:
            spent += cost
            taken.append(found)
    hits: list[Hit] = []
    for found in taken:
        memory, entry = memories[found.memory_id], entries[found.memory_id]
        hit = Hit.of(
            memory,
            entry,
            branch=branch,
            score=found.score,
            relevance=found.relevance,
            weak=found.relevance < floor,
        )
        if (part := parts.get(found.memory_id)) is not None:
            hit = msgspec.structs.replace(
                hit,
                body=part.text,
                tokens=estimate_tokens(part.text) + HEADER_TOKENS,
                passage=part,
            )
        hits.append(hit)
    hits = with_written(store, {branch: commit}, hits)
    live = [e for mid, e in entries.items() if mid not in hidden]
    return RecallResult(
        query=query,
        branch=branch,
        commit=commit,
        now=now,
        budget=budget,
        hits=tuple(hits),
        tokens=spent,
        live_memories=len(live),
        live_tokens=sum(e.tokens + HEADER_TOKENS for e in live),
        left_out=left_out,
        seconds=0.0,
        temporal=(),
        warnings=("vector search not used: no hub answered",),
        notices=tuple(notices),
        nothing_relevant=not hits,
        weak=bool(hits) and all(h.weak for h in hits),
    )


def _passage(
    store: Store,
    memory_id: str,
    entry: CatalogEntry,
    memories: dict[str, Memory],
    query: str,
    room: int,
) -> PassageMatch | None:
    """Returns the passage of a long memory that holds the prompt's words.

    For a memory over the budget whole, as recall gives it, of ``room``
    tokens at most (:func:`~ctx.hub.retrieval.standing.standing_passage`);
    read here if the ranking did not read it.
    """
    memory = _memory(store, memory_id, entry, memories)
    return standing_passage(memory_embed_text(memory), query, room)


def _memory(
    store: Store, memory_id: str, entry: CatalogEntry, memories: dict[str, Memory]
) -> Memory:
    """Returns a memory from ``memories``, read into it if the ranking did not."""
    memory = memories.get(memory_id)
    if memory is None:
        [memory] = read_memories(store, [(entry.path, entry.blob)])
        memories[memory_id] = memory
    return memory


def _ranked(
    store: Store,
    tree: str,
    branch: str,
    entries: dict[str, CatalogEntry],
    query: str,
    notices: list[str],
) -> tuple[list[_Ranked], dict[str, Memory]]:
    """Returns the best matches, and the memories read on the way (by id).

    From the store's index when it is current for ``tree``, else from an
    index of the tip built in memory; an index that fails to read is noted
    in ``notices`` and the tip ranked in memory.
    """
    by_blob = {entry.blob: mid for mid, entry in entries.items()}
    index = None
    if store.path is not None:
        try:
            index = _current_index(store.path, branch, tree)
        except (LexicalIndexError, OSError, msgspec.DecodeError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            notices.append(f"the index could not be read ({message}); ranked in memory")
    try:
        if index is not None:
            return _search(index, query, by_blob, allowed=set(by_blob)), {}
    except LexicalIndexError as exc:
        notices.append(f"the index could not be read ({exc.message}); ranked in memory")
    return _in_memory(store, entries, query)


def _current_index(store_path: Path, branch: str, tree: str) -> LexicalIndex | None:
    """Returns the store's lexical index if it holds every memory of ``tree``.

    Raises:
        LexicalIndexError: The index's folder is not a readable index.
        OSError, msgspec.DecodeError: Its state cannot be read.
    """
    state_file = store_path / _INDEX / "state.json"
    if not state_file.exists():
        return None
    state = msgspec.json.decode(state_file.read_bytes(), type=IndexState)
    if state.format != FORMAT or state.watermarks.get(branch) != tree:
        return None
    return LexicalIndex.open(store_path / _INDEX / state.lexical, create=False)


def _in_memory(
    store: Store, entries: dict[str, CatalogEntry], query: str
) -> tuple[list[_Ranked], dict[str, Memory]]:
    """Ranks every memory of ``entries`` by BM25, in this process.

    The prompt's words are analysed as the lexical index analyses them
    (English stems, without function words), and each memory's title and
    body likewise, weighted as the index weighs those fields (Tantivy's
    BM25: k1 1.2, b 0.75, field length against the field's mean). Only
    the memories whose lowercased text holds the first letters of a stem
    are analysed: the stemmer changes no more than a word's last letter
    of the stem, so no other memory can hold it.
    """
    terms = _terms(query)
    if not terms:
        return [], {}
    ids = list(entries)
    read = read_memories(store, [(entries[m].path, entries[m].blob) for m in ids])
    memories = dict(zip(ids, read, strict=True))
    stems = stem_analyzer()
    prefixes = _prefixes(query, terms)
    total = len(read)
    title_mean = sum(len((m.title or "").split()) for m in read) / total or 1.0
    body_mean = sum(len(m.body.split()) for m in read) / total or 1.0
    counts: dict[str, tuple[list[int], int, list[int], int]] = {}
    for mid, memory in memories.items():
        low = f"{memory.title or ''}\n{memory.body}".lower()
        if prefixes is not None and not any(p in low for p in prefixes):
            continue
        title = stems.analyze(memory.title) if memory.title else []
        body = stems.analyze(memory.body)
        in_title = [title.count(t) for t in terms]
        in_body = [body.count(t) for t in terms]
        if any(in_title) or any(in_body):
            counts[mid] = (in_title, len(title), in_body, len(body))
    titled = [sum(1 for c in counts.values() if c[0][n]) for n in range(len(terms))]
    bodied = [sum(1 for c in counts.values() if c[2][n]) for n in range(len(terms))]
    weight = [_idf(total, max(t, b)) for t, b in zip(titled, bodied, strict=True)]
    whole = sum(weight) or 1.0
    title_idf = [TITLE_BOOST * _idf(total, n) for n in titled]
    body_idf = [BODY_BOOST * _idf(total, n) for n in bodied]
    ranked = []
    for mid, (in_title, title_len, in_body, body_len) in counts.items():
        score = held = 0.0
        for n in range(len(terms)):
            if in_title[n]:
                score += title_idf[n] * _tf(in_title[n], title_len, title_mean)
            if in_body[n]:
                score += body_idf[n] * _tf(in_body[n], body_len, body_mean)
            if in_title[n] or in_body[n]:
                held += weight[n]
        ranked.append(_Ranked(mid, score, held / whole))
    ranked.sort(key=lambda r: (-r.score, r.memory_id))
    return ranked[:CANDIDATES], memories


def _terms(query: str) -> list[str]:
    """Returns the distinct stems of what the prompt asks about."""
    return list(dict.fromkeys(content_analyzer().analyze(query_text(query))))[
        :MAX_QUERY_TERMS
    ]


def _prefixes(query: str, terms: list[str]) -> list[str] | None:
    """Returns what a memory's lowercased text must hold to hold a term.

    Per stem, the first letters it shares with a word of the prompt, less
    its last letter ("retri", of "retry": ``retr``). None when a stem has
    fewer than three such letters: every memory is then analysed.
    """
    stems = stem_analyzer()
    found: dict[str, str] = {}
    for word in re.findall(r"[^\W_]+", query.lower()):
        analysed = stems.analyze(word)
        if len(analysed) == 1 and analysed[0] in terms:
            stem = analysed[0]
            same = next(
                (n for n, (a, b) in enumerate(zip(word, stem, strict=False)) if a != b),
                min(len(word), len(stem)),
            )
            shared = stem[: min(same, len(stem) - 1)]
            if len(shared) >= len(found.get(stem, "")):
                found[stem] = shared
    if set(found) != set(terms) or any(len(p) < 3 for p in found.values()):
        return None
    return list(found.values())


def _idf(total: int, holding: int) -> float:
    """Returns BM25's inverse document frequency, as Tantivy computes it."""
    return math.log(1 + (total - holding + 0.5) / (holding + 0.5))


def _tf(count: int, length: int, mean: float) -> float:
    """Returns BM25's weight of a term found ``count`` times in a field."""
    if not count:
        return 0.0
    return count * (_K1 + 1) / (count + _K1 * (1 - _B + _B * length / mean))


def _search(
    index: LexicalIndex,
    query: str,
    by_blob: dict[str, str],
    *,
    allowed: Collection[str] | None,
) -> list[_Ranked]:
    """Returns the best :data:`CANDIDATES` matches, each with its relevance.

    ``allowed``: the blobs that may match (a shared index holds others'),
    or None for all.
    """
    parts = question_parts(query)  # a long prompt: as the line it matches best
    found = index.search(query, limit=CANDIDATES, allowed=allowed, parts=parts)
    if not found:
        return []
    blobs = [blob for blob, _ in found]
    shares = Matches(index, query).coverage(blobs)
    for part in parts:  # and holds the share of it
        for blob, share in Matches(index, part).coverage(blobs).items():
            shares[blob] = max(share, shares.get(blob, 0.0))
    return [
        _Ranked(by_blob[blob], score, shares.get(blob, 0.0))
        for blob, score in found
        if blob in by_blob
    ]
