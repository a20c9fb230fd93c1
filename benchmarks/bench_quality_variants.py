"""Ranking variants tried against ctx's defaults on LoCoMo and Cranfield.

Usage::

    .venv/bin/python benchmarks/bench_quality_variants.py    # ~10 min

Same protocol and stores as ``bench_quality.py`` (MiniLM, depth 100, the
default weights). Each variant changes one step of the ranking, in one run
beside the defaults; none of them is the default, and the results say why.
Results go to ``benchmarks/results/quality_variants.md``.

- **score fusion** instead of reciprocal ranks: each channel's scores are
  normalised (by the channel's best score, min-max, or "DBSF": mean +- 3
  standard deviations mapped to 0..1) and summed, the vector channel's
  weighted by ``alpha``; "rrf + score" adds a small share of the normalised
  score to each reciprocal rank.
- **pseudo-relevance feedback**: after the default ranking, the 10 words with
  the highest tf-idf in its 3 best memories (stopwords out) are added to the
  query for a second BM25 channel, fused with weight 0.5.
- **passage vectors**: a memory of several sentences also gets one vector
  per passage (sentences packed up to 24 words); its vector score is the
  best of its whole-text vector and its passages'.
- **link expansion over turns**: each LoCoMo turn linked (``RELATES_TO``) to
  the turn before it in its session, and ``rank()`` given those links, so
  its one-hop expansion (damping 0.5) can bring in a strong hit's
  neighbours; Cranfield has no links.
- **WordLlama** (only if the ``wordllama`` package is importable: it is not
  a dependency; the committed results had it installed with ``pip install
  --target DIR wordllama`` and DIR appended to ``sys.path``): its bundled
  256-dimension static embedding as a further channel.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _bench_common import cpu_name
from bench_quality import (
    DEPTH,
    KS,
    ROOT,
    Built,
    Corpus,
    build,
    load_cranfield,
    load_locomo,
    load_reference,
    memoize_channels,
    score_cranfield,
    score_locomo,
    version,
)

from ctx.engine import Adjacency
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.ranking import (
    Channels,
    Ranked,
    apply_gravity,
    apply_tags,
    fuse,
    rank,
    search_channels,
)

RESULTS = Path(__file__).parent / "results" / "quality_variants.md"
CONFIG = RecallConfig(depth=DEPTH)
Hits = list[tuple[str, float]]
Fusion = Callable[[Channels, "Built"], dict[str, Ranked]]
ExtraChannel = Callable[["Built", str, Channels], Hits]

# -- fusion by scores ---------------------------------------------------------


def _normalised(hits: Hits, how: str) -> dict[str, float]:
    scores = [score for _, score in hits]
    if how == "max":
        top = max(scores) or 1.0
        return {blob: score / top for blob, score in hits}
    if how == "minmax":
        low, high = min(scores), max(scores)
        return {blob: (score - low) / ((high - low) or 1.0) for blob, score in hits}
    mean, spread = statistics.mean(scores), statistics.pstdev(scores) or 1.0
    low = mean - 3 * spread
    return {blob: (score - low) / (6 * spread) for blob, score in hits}


def score_fusion(how: str, alpha: float, rrf: float = 0.0) -> Fusion:
    """Sums normalised channel scores; with ``rrf``, adds that share of them
    to the reciprocal ranks instead."""

    def fused(channels: Channels, built: Built) -> dict[str, Ranked]:
        ranked: dict[str, Ranked] = {}
        for channel, hits in channels.hits.items():
            if not hits:
                continue
            weight = channels.weights[channel]
            share = weight * (alpha if channel == "vector" else 1.0)
            normalised = _normalised(hits, how)
            for position, (blob, _) in enumerate(hits, start=1):
                memory_id = built.view.by_blob.get(blob)
                if memory_id is None:
                    continue
                entry = ranked.setdefault(memory_id, Ranked(memory_id))
                contribution = share * normalised[blob]
                if rrf:
                    contribution = rrf * contribution + weight / (CONFIG.k + position)
                entry.fused += contribution
        return ranked

    return fused


def rrf_fusion(channels: Channels, built: Built) -> dict[str, Ranked]:
    return fuse(channels, built.view, CONFIG.k)


# -- extra channels -----------------------------------------------------------

_WORD = re.compile(r"[a-z][a-z']+")
_STOPWORDS = """a about after again all also am an and any are as at be because been
    before being but by can could did do does doing down during each few for
    from get got had has have having he her here hers him his how i if in into
    is it its just know like me more most my no nor not now of off oh on once
    one only or other our out over own really same she should so some such
    than that the their them then there these they think this those through
    to too under until up very was we were what when where which while who
    whom why will with wow would yeah yes you your"""
_STOP = frozenset(_STOPWORDS.split())


class Feedback:
    """Pseudo-relevance feedback for one corpus (document frequencies)."""

    def __init__(self, corpus: Corpus, docs: int = 3, terms: int = 10) -> None:
        self.frequency: Counter[str] = Counter()
        for text in corpus.texts:
            self.frequency.update(set(_WORD.findall(text.lower())))
        self.total = len(corpus.texts)
        self.docs = docs
        self.terms = terms

    def __call__(self, built: Built, question: str, channels: Channels) -> Hits:
        first = fuse(channels, built.view, CONFIG.k)
        best = sorted(first.values(), key=lambda r: (-r.fused, r.id))[: self.docs]
        asked = set(_WORD.findall(question.lower()))
        weights: Counter[str] = Counter()
        for hit in best:
            memory = channels.read(hit.id)
            words = [] if memory is None else _WORD.findall(memory.body.lower())
            words = [w for w in words if w not in _STOP and w not in asked]
            for word, count in Counter(words).items():
                idf = math.log(self.total / (1 + self.frequency[word]))
                weights[word] += count / len(words) * idf
        added = [word for word, _ in weights.most_common(self.terms)]
        if not added:
            return []
        text = f"{channels.temporal.rest} {' '.join(added)}"
        return built.searcher.search_bm25(text, DEPTH)


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\s*(?=\[image: )")


def passages(text: str, words: int = 24) -> list[str]:
    """Splits a text into runs of whole sentences of up to ``words`` words."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in filter(None, (s.strip() for s in _SENTENCE.split(text))):
        length = len(sentence.split())
        if current and size + length > words:
            out.append(" ".join(current))
            current, size = [], 0
        current.append(sentence)
        size += length
    if current:
        out.append(" ".join(current))
    return out


class Passages:
    """Best-of(whole, passages) vector scores for one store, replacing 'vector'."""

    def __init__(self, built: Built, corpus: Corpus) -> None:
        blob_of = {built.key_of[m]: blob for blob, m in built.view.by_blob.items()}
        self.blobs = [blob_of[key] for key in corpus.keys]
        owners, texts = [], []
        for row, draft in enumerate(corpus.drafts):
            text = f"{draft.title}\n{draft.text}" if draft.title else draft.text
            found = passages(text)
            if len(found) > 1:
                owners += [row] * len(found)
                texts += found
        embedder = built.projection.embedder
        self.owners = np.array(owners, dtype=np.int64)
        self.vectors = embedder.embed(texts) if texts else np.zeros((0, 384))
        self.count = len(texts)

    def __call__(self, built: Built, question: str, channels: Channels) -> Hits:
        text = channels.temporal.rest
        if not text.strip():
            return []
        best = np.full(len(self.blobs), -1.0, dtype=np.float32)
        row = {blob: i for i, blob in enumerate(self.blobs)}
        for blob, score in built.searcher.search_vectors(text, len(row)):
            best[row[blob]] = score
        query = built.projection.embedder.embed([text])[0]
        np.maximum.at(best, self.owners, self.vectors @ query)
        top = np.argsort(-best)[:DEPTH]
        return [(self.blobs[i], float(best[i])) for i in top if best[i] > 0]


def turn_links(built: Built, corpus: Corpus) -> Adjacency:
    """Links each turn to the one before it in its session (LoCoMo keys)."""
    id_of = {key: memory_id for memory_id, key in built.key_of.items()}
    edges = [
        (id_of[turn], "RELATES_TO", id_of[before])
        for before, turn in itertools.pairwise(corpus.keys)
        if before.partition(":")[0] == turn.partition(":")[0]
    ]
    return Adjacency("", edges)


class StaticChannel:
    """WordLlama's cosine over every memory of one store."""

    def __init__(self, model: object, built: Built, corpus: Corpus) -> None:
        blob_of = {built.key_of[m]: blob for blob, m in built.view.by_blob.items()}
        self.blobs = [blob_of[key] for key in corpus.keys]
        self.model = model
        self.vectors = np.asarray(model.embed(corpus.texts, norm=True))  # type: ignore[attr-defined]

    def __call__(self, built: Built, question: str, channels: Channels) -> Hits:
        text = channels.temporal.rest or question
        query = np.asarray(self.model.embed([text], norm=True))[0]  # type: ignore[attr-defined]
        scores = self.vectors @ query
        top = np.argsort(-scores)[:DEPTH]
        return [(self.blobs[i], float(scores[i])) for i in top if scores[i] > 0]


def wordllama() -> object | None:
    """Returns the bundled WordLlama model, or None if it cannot load offline."""
    try:
        from wordllama import WordLlama  # type: ignore[import-not-found]
    except ImportError:
        return None
    import wordllama as package

    # 0.4.0.post1 looks for its bundled tokenizer in "tokenizer/" but ships
    # it in "tokenizers/": point its cache at the package folder instead.
    try:
        return WordLlama.load(
            cache_dir=Path(package.__file__).parent, disable_download=True
        )
    except (FileNotFoundError, OSError) as exc:
        print(f"WordLlama unavailable offline: {exc}", file=sys.stderr)
        return None


# -- running ------------------------------------------------------------------


def ranker(
    built: Built,
    now: datetime,
    fusion: Fusion,
    extra: ExtraChannel | None,
    channel: str,
    weight: float,
) -> Callable[[str], list[str]]:
    def ranked(question: str) -> list[str]:
        channels = search_channels(built.searcher, question, config=CONFIG, now=now)
        if extra is not None:
            channels.hits[channel] = extra(built, question, channels)
            channels.weights[channel] = weight
        found = fusion(channels, built)
        apply_tags(found, built.searcher, channels, CONFIG.tags)
        apply_gravity(found, channels, CONFIG.gravity)
        best = sorted(found.values(), key=lambda r: (-r.score, r.id))
        return [built.key_of[r.id] for r in best[: max(KS)]]

    return ranked


def product(
    built: Built, now: datetime, links: Adjacency | None = None
) -> Callable[[str], list[str]]:
    graphs = [links] if links is not None else []

    def ranked(question: str) -> list[str]:
        found = rank(built.searcher, question, config=CONFIG, now=now, links=graphs)
        return [built.key_of[r.id] for r in found.hits[: max(KS)]]

    return ranked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval"
    )
    parser.add_argument("--quick", action="store_true", help="2 conversations, print")
    args = parser.parse_args()
    began = time.perf_counter()
    ref = load_reference(args.eval_dir)
    corpora = load_locomo(args.eval_dir, ref)[: 2 if args.quick else None]
    cran_corpus = load_cranfield(args.eval_dir)
    embedder = make_embedder({"kind": "minilm"})
    stores = [build(c, embedder) for c in corpora]
    cran = build(cran_corpus, embedder)
    for built in [*stores, cran]:
        memoize_channels(built.searcher)
    everything = [*zip(stores, corpora, strict=True), (cran, cran_corpus)]
    print(f"stores built in {time.perf_counter() - began:.0f} s", file=sys.stderr)

    def per_store(make: Callable[[Built, Corpus], ExtraChannel]) -> ExtraChannel:
        made = {id(b): make(b, c) for b, c in everything}
        return lambda built, q, channels: made[id(built)](built, q, channels)

    feedback = per_store(lambda b, c: Feedback(c))
    made_passages = {id(b): Passages(b, c) for b, c in everything}
    extra_vectors = sum(p.count for p in made_passages.values())
    variants: list[tuple[str, Fusion, ExtraChannel | None, str, float]] = [
        ("RRF, as rank() does it (reimplemented here)", rrf_fusion, None, "", 0.0),
        *[
            (
                f"score fusion, {how}, alpha {alpha:g}",
                score_fusion(how, alpha),
                None,
                "",
                0.0,
            )
            for how in ("max", "minmax", "dbsf")
            for alpha in (0.5, 1.0, 2.0)
        ],
        ("RRF + 0.05 x score (max)", score_fusion("max", 1.0, 0.05), None, "", 0.0),
        (
            "RRF + feedback channel (3 docs, 10 words), weight 0.5",
            rrf_fusion,
            feedback,
            "feedback",
            0.5,
        ),
        (
            f"RRF, vector = best of whole and passages (+{extra_vectors:,} vectors)",
            rrf_fusion,
            lambda b, q, ch: made_passages[id(b)](b, q, ch),
            "vector",
            1.0,
        ),
    ]
    model = wordllama()
    if model is not None:
        static = per_store(lambda b, c: StaticChannel(model, b, c))
        variants += [
            (
                f"RRF + WordLlama channel, weight {w:g}",
                rrf_fusion,
                static,
                "wordllama",
                w,
            )
            for w in (0.25, 0.5, 1.0)
        ]
    rows = []
    linked = "rank() with each turn linked to the one before it (expansion 0.5)"
    named = [
        ("rank() (the defaults)", None),
        (linked, None),
        *[(v[0], v) for v in variants],
    ]
    for name, variant in named:
        if variant is None:
            rankers = [
                product(b, c.now, turn_links(b, c) if name == linked else None)
                for b, c in everything[:-1]
            ] + [product(cran, cran_corpus.now)]
        else:
            _, fusion, extra, channel, weight = variant
            rankers = [
                ranker(b, c.now, fusion, extra, channel, weight) for b, c in everything
            ]
        locomo = score_locomo(rankers[:-1], corpora)
        cranfield = score_cranfield(rankers[-1], cran_corpus)
        rows.append(
            [name]
            + [f"{locomo.mean('all', k):.3f}" for k in KS]
            + [f"{locomo.mean(c, 10):.3f}" for c in (1, 2, 3, 4)]
            + [f"{cranfield['ndcg10']:.3f}"]
        )
        print(" | ".join(rows[-1]), file=sys.stderr)
    text = render(rows, model is not None, time.perf_counter() - began, args.quick)
    print(text)
    if not args.quick:
        RESULTS.write_text(text)


def render(rows: list[list[str]], static: bool, seconds: float, quick: bool) -> str:
    header = "variant|R@5|R@10|R@25|R@50|multi-hop R@10|temporal R@10|open R@10|single R@10|Cranfield nDCG@10"
    lines = [
        "# ctx ranking variants",
        "",
        "Generated by `benchmarks/bench_quality_variants.py`; do not edit by hand.",
        "",
        f"Date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {cpu_name()}; tantivy "
        f"{version('tantivy')}, onnxruntime {version('onnxruntime')}; "
        f"{seconds / 60:.1f} min{' (quick: 2 conversations)' if quick else ''}.",
        "",
        "LoCoMo categories 1-4 (question-weighted), MiniLM stores (turns tagged",
        "with their speaker, with the previous turn as reply context), depth 100,",
        "default weights, tag boost and gravity; see the script's docstring for",
        "each variant.",
        "Ties break by memory id, which is random per build: differences under",
        "about 0.01 are noise.",
        "",
        "| " + " | ".join(header.split("|")) + " |",
        "|" + "---|" * len(header.split("|")),
        *["| " + " | ".join(row) + " |" for row in rows],
        "",
    ]
    if static:
        lines += [
            f"WordLlama {version('wordllama')} was importable for this run (it is"
            " not a dependency of ctx).",
            "",
        ]
    else:
        lines += ["WordLlama was not installed for this run: no row for it.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
