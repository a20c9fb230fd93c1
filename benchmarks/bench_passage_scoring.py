"""How a long memory's vectors make its score: variants, on three sets at once.

Passages (``ctx.hub.retrieval.index.passages``) lifted LoCoMo at session level but
cost Cranfield a little (0.419 -> 0.412 nDCG@10), whose abstracts are just
over the embedder's window. This measures, in one run, on Cranfield
(nDCG@10), LoCoMo sessions (any@5, all@5, nDCG@10) and LoCoMo turns
(recall@10), several ways to score a memory from its vectors:

- its whole text as one vector (the embedder reads its first window,
  256 word pieces for MiniLM) -- ``whole``;
- its passages (windows of at most 120 words) -- ``best``: the best
  passage's cosine;

combined as: the whole alone (one vector per memory, as before passages),
the best passage alone (passages until this change), the larger of the two,
a weighted mean, and passages only past a length. Every store is embedded
once with a vector of each memory's whole text, and for a text of more
than 180 words its passages too, and each variant
scores the same vectors (exact cosines over every vector, then the defaults'
hybrid ranking), so the variants differ in scoring only. A last row ranks
with the code's own vector search, to check it equals its variant.

Run::

    .venv/bin/python benchmarks/bench_passage_scoring.py [--quick]

It writes ``benchmarks/results/passage_scoring.md``. Vectors are cached by
text under ``benchmarks/.data`` (``_embed_cache.py``): a second run embeds
nothing.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import bench_quality as quality
import bench_sessions as sessions
import numpy as np
import numpy.typing as npt
from _bench_common import cpu_name
from _embed_cache import CachedEmbedder

import ctx.hub.retrieval.index.passages as passages_module
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.index.passages import owner

RESULTS = Path(__file__).parent / "results" / "passage_scoring.md"
MEASURED_WINDOW = 180  # passages past this many words; the variants choose
ORIGINAL = passages_module.passages


def whole_and_passages(text: str) -> list[str]:
    """The layout measured: the whole text first, then its passages if long."""
    pieces = ORIGINAL(text)
    return pieces if len(pieces) == 1 else [text, *pieces]


CODE = "the code's vector search over these vectors (best of every vector)"
CHOSEN = "best passage past 300 words, else whole"

# name -> score of a memory from (whole cosine, best passage cosine, words)
Combine = Callable[
    [npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.int64]],
    npt.NDArray[np.float32],
]
VARIANTS: dict[str, Combine] = {
    "whole only (one vector, first window)": lambda w, b, n: w,
    "best passage (passages until now)": lambda w, b, n: b,
    "max(whole, best passage)": lambda w, b, n: np.maximum(w, b),
    "(whole + best passage) / 2": lambda w, b, n: (w + b) / 2,
    "best passage past 240 words, else whole": lambda w, b, n: np.where(n > 240, b, w),
    "best passage past 300 words, else whole": lambda w, b, n: np.where(n > 300, b, w),
}


@dataclass
class Vectors:
    """Every vector of one store, arranged to score memories fast."""

    blobs: list[str]
    whole: npt.NDArray[np.float32]  # one row per blob
    pieces: npt.NDArray[np.float32]  # passage rows, grouped by blob
    starts: npt.NDArray[np.int64]  # first passage row of each blob
    words: npt.NDArray[np.int64]

    @classmethod
    def of(cls, built: quality.Built) -> Vectors:
        index = built.projection.vectors
        assert index is not None
        blobs = sorted(built.view.blobs)
        texts = built.projection.embed_texts(built.view, blobs)
        whole = index.vectors_of(blobs)
        rows, starts = [], []
        for blob in blobs:
            family = index.family(blob)
            extra = sorted(family[1:], key=lambda k: owner(k)[1])
            starts.append(sum(len(r) for r in rows))
            rows.append(index.vectors_of(extra) if extra else whole[[len(starts) - 1]])
        return cls(
            blobs,
            whole,
            np.concatenate(rows),
            np.array(starts, dtype=np.int64),
            np.array([len(t.split()) for t in texts], dtype=np.int64),
        )

    def search(
        self, combine: Combine, query: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[str, float]]:
        whole = self.whole @ query
        best = np.maximum.reduceat(self.pieces @ query, self.starts)
        score = combine(whole, best, self.words)
        order = sorted(range(len(score)), key=lambda i: (-score[i], self.blobs[i]))
        return [(self.blobs[i], float(score[i])) for i in order[:limit]]


def use(built: quality.Built, vectors: Vectors, combine: Combine | None) -> None:
    """Makes the store's searcher score vectors by ``combine`` (None: the code's)."""
    searcher = built.searcher
    if combine is None:
        searcher.__dict__.pop("search_vector", None)
        return

    def search_vector(query: npt.NDArray[np.float32], limit: int):  # type: ignore[no-untyped-def]
        return vectors.search(combine, query, limit)

    searcher.search_vector = search_vector  # type: ignore[method-assign]


def cranfield_row(cran: tuple[quality.Built, quality.Corpus]) -> dict[str, float]:
    built, corpus = cran
    found = quality.score_cranfield(
        quality.hub_ranker(built, RecallConfig(), corpus.now), corpus
    )
    return {"cranfield nDCG@10": found["ndcg10"]}


def sessions_row(
    sess: list[tuple[quality.Built, sessions.Sessions]],
) -> dict[str, float]:
    found = sessions.scores(
        [sessions.hub(b, RecallConfig(), c.now) for b, c in sess], [c for _, c in sess]
    )
    return {f"sessions {m}": found[m] for m in ("any@5", "all@5", "nDCG@10")}


def turns_row(turns: list[tuple[quality.Built, quality.Corpus]]) -> dict[str, float]:
    scored = quality.score_locomo(
        [quality.hub_ranker(b, RecallConfig(), c.now) for b, c in turns],
        [c for _, c in turns],
    )
    return {"turns R@10": scored.mean("all", 10)}


def main() -> None:
    """Writes (or with --quick prints) the report."""
    parser = quality.eval_parser(__doc__, "2 conversations, print")
    args = parser.parse_args()
    began = time.perf_counter()
    loads = [os.getloadavg()[0]]
    eval_dir = args.eval_dir.resolve()
    embedder = CachedEmbedder(make_embedder({"kind": "minilm"}))
    ref = quality.load_reference(eval_dir)
    count = 2 if args.quick else None
    cran_corpus = quality.load_cranfield(eval_dir)
    session_corpora = sessions.load(eval_dir)[:count]
    turn_corpora = quality.load_locomo(eval_dir, ref)[:count]
    # Every store holds a vector of each memory's whole text, and for a text
    # over MEASURED_WINDOW words its passages too (keys #1...).
    window = passages_module.WINDOW_WORDS
    passages_module.WINDOW_WORDS = MEASURED_WINDOW
    passages_module.passages = whole_and_passages
    try:
        cran = (quality.build(cran_corpus, embedder), cran_corpus)
        sess = [
            (
                quality.build(
                    quality.Corpus(c.name, c.texts, c.drafts, c.keys, c.now), embedder
                ),
                c,
            )
            for c in session_corpora
        ]
        turns = [(quality.build(c, embedder), c) for c in turn_corpora]
    finally:
        passages_module.passages = ORIGINAL
        passages_module.WINDOW_WORDS = window
    embedder.save()
    print(f"stores built, {embedder.embedded} texts embedded", file=sys.stderr)
    stores = [cran[0], *(b for b, _ in sess), *(b for b, _ in turns)]
    vectors = {id(b): Vectors.of(b) for b in stores}
    for b in stores:
        quality.memoize_channels(b.searcher)  # bm25 and fuzzy: the same for all
    results: dict[str, dict[str, float]] = {}
    rows: dict[str, Combine | None] = {**VARIANTS, CODE: None}
    # One set at a time, every variant: the sets' stores each score alike.
    # No LoCoMo turn is long enough for passages (at most 151 words with its
    # reply context), so every variant scores the turns alike: they are
    # ranked once, with the default (CHOSEN), and that row stands for all.
    parts = [
        ([cran[0]], lambda: cranfield_row(cran), rows),
        ([b for b, _ in sess], lambda: sessions_row(sess), VARIANTS),
        ([b for b, _ in turns], lambda: turns_row(turns), {CHOSEN: VARIANTS[CHOSEN]}),
    ]
    for part_stores, measure, chosen in parts:
        for name, combine in chosen.items():
            for b in part_stores:
                use(b, vectors[id(b)], combine)
                b.searcher.search_vectors = type(b.searcher).search_vectors.__get__(
                    b.searcher
                )
            results.setdefault(name, {}).update(measure())
            print(f"{name}: {results[name]}", file=sys.stderr, flush=True)
        loads.append(os.getloadavg()[0])
    embedder.save()
    long_cran = sum(len(t.split()) > MEASURED_WINDOW for t in cran_corpus.texts)
    lines = [
        "# How a long memory's vectors make its score",
        "",
        "Generated by `benchmarks/bench_passage_scoring.py`; do not edit by hand.",
        "",
        f"Date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {cpu_name()},"
        f" {os.cpu_count()} cores; Python {platform.python_version()};"
        f" {time.perf_counter() - began:.0f} s; {embedder.embedded} texts embedded"
        " this run (the rest from the cache). Embedder: MiniLM.",
        "",
        f"Load average (1 min) at start / most / end: {loads[0]:.1f} /"
        f" {max(loads):.1f} / {loads[-1]:.1f} (2 cores shared with other work).",
        "",
        *([f"Conditions: {args.note}", ""] if args.note else []),
        f"Cranfield: 1,400 abstracts ({long_cran} over"
        f" {MEASURED_WINDOW} words), 225 queries, nDCG@10."
        f" LoCoMo sessions: {len(sess)} conversations, one memory per session,"
        f" {sum(len(c.questions) for _, c in sess)} questions. LoCoMo turns:"
        f" {len(turns)} conversations, recall@10 of categories 1-4. Every row is"
        " the defaults' hybrid ranking (no relevance floor); only the vector"
        " channel's score of a memory changes. `words`: the words of the text"
        " embedded. No LoCoMo turn is over 180 words (151 at most, with its"
        " reply context), so every variant scores the turns alike: they were"
        f" ranked once, with `{CHOSEN}` (the default now: `WINDOW_WORDS` 300)."
        " The last row (the code's search, every vector's best: the same as"
        " `max(whole, best passage)`) checks the harness on Cranfield only.",
        "",
    ]
    metrics = list(dict.fromkeys(m for row in results.values() for m in row))
    lines += [
        "| vector score of a memory | " + " | ".join(metrics) + " |",
        "|---|" + "---|" * len(metrics),
    ]
    for name, row in results.items():
        if name != CODE:  # the turns, ranked once, stand for every variant
            row = results[CHOSEN] | row
        cells = [f"{row[m]:.4f}" if m in row else "-" for m in metrics]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
