"""Every number of the README's "How good" table, measured in one run.

The table gathers the results of several benchmarks; this runs their
protocols side by side with the defaults of this commit, in one process,
and writes the table's rows:

- LoCoMo, one memory per turn (``bench_quality.py``): recall@5/10/25/50 of
  categories 1-4 for the hybrid ranking with the defaults, the reference
  plain BM25, MiniLM vectors alone, and the turns without reply context and
  speaker tags; recall@10 of the temporal questions; the adversarial
  questions (category 5) with the tag boost and without it.
- The relevance floor (``bench_relevance.py``): each question asked of the
  next conversation's store, the share that returns nothing, and the
  recall@10 the floor costs on the questions' own stores.
- Cranfield (``bench_quality.py``): nDCG@10 of the hybrid ranking, the
  reference plain BM25, and the hybrid ranking with one vector per abstract
  (as before passages).
- LoCoMo, one memory per session (``bench_sessions.py``): any@5, all@5,
  any@10, all@10, nDCG@10 of the hybrid ranking, BM25 (rank_bm25) over
  lower-cased ``[a-z0-9]+`` tokens and over words split at spaces (the
  plain baseline), one vector per session, and the passages' vectors alone.
- ``ctx find`` on dulwich's sources without docstrings
  (``bench_code_quality.py``, 600 functions, seed 20): recall@1/5 and MRR@10
  of the fused search and of each channel alone; file recall@5 against
  ripgrep.

Rankings are without the relevance floor except in its own row, as in the
benchmarks they come from. Vectors are cached by text under
``benchmarks/.data`` (``_embed_cache.py``), so a second run embeds nothing.

Run::

    .venv/bin/python benchmarks/bench_how_good.py

It writes ``benchmarks/results/how_good.md``.
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import bench_code_quality as code
import bench_quality as quality
import bench_relevance as relevance
import bench_sessions as sessions
from _bench_common import cpu_name
from _embed_cache import CachedEmbedder

import ctx.hub.retrieval.index.passages as passages_module
from ctx.hub.code.index import CodeIndex
from ctx.hub.code.search import WEIGHTS
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.floors import relevant
from ctx.hub.retrieval.ranking import rank

RESULTS = Path(__file__).parent / "results" / "how_good.md"
VECTORS = RecallConfig(bm25=0, fuzzy=0, tags=0, gravity=0)


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def one_vector(build, window: int = 10**9):  # type: ignore[no-untyped-def]
    """Runs ``build()`` with passages only past ``window`` words (none: one vector)."""
    words = passages_module.WINDOW_WORDS
    passages_module.WINDOW_WORDS = window
    try:
        return build()
    finally:
        passages_module.WINDOW_WORDS = words


def triple(values: list[float]) -> str:
    return " / ".join(f"{v:.3f}" for v in values)


def turns(eval_dir: Path, embedder: CachedEmbedder) -> dict[str, str]:
    """The LoCoMo turn rows, the floor's row and the adversarial note."""
    ref = quality.load_reference(eval_dir)
    corpora = quality.load_locomo(eval_dir, ref)
    built = [quality.build(c, embedder) for c in corpora]
    embedder.save()
    bare_corpora = [quality.stripped(c, tags=True) for c in corpora]
    bare = [quality.build(c, embedder) for c in bare_corpora]
    embedder.save()
    progress("LoCoMo turn stores built")
    config = RecallConfig()

    def scored(stores, cfg):  # type: ignore[no-untyped-def]
        return quality.score_locomo(
            [
                quality.hub_ranker(b, cfg, c.now)
                for b, c in zip(stores, corpora, strict=True)
            ],
            corpora,
        )

    hybrid = scored(built, config)
    plain = quality.score_locomo(
        [quality.reference_ranker(ref, c) for c in corpora], corpora
    )
    vectors = scored(built, VECTORS)
    alone = scored(bare, config)
    untagged = scored(built, RecallConfig(tags=0))
    ks = quality.KS
    out = {
        "turns": triple([hybrid.mean("all", k) for k in ks]),
        "turns plain": triple([plain.mean("all", k) for k in ks]),
        "turns vectors": triple([vectors.mean("all", k) for k in ks]),
        "turns alone": triple([alone.mean("all", k) for k in ks]),
        "temporal": f"{hybrid.mean(2, 10):.3f}",
        "temporal plain": f"{plain.mean(2, 10):.3f}",
        "adversarial": f"{hybrid.mean(5, 10):.3f}",
        "adversarial untagged": f"{untagged.mean(5, 10):.3f}",
        "turns r10": f"{hybrid.mean('all', 10):.4f}",
    }
    progress(f"turns: {out}")
    # The floor: each question of categories 1-4 asked of its own store and
    # of the next conversation's (bench_relevance.py).
    own, foreign, plain_r10 = [], 0, []
    for number, corpus in enumerate(corpora):
        mine, other = built[number], built[(number + 1) % len(built)]
        for question in corpus.questions:
            if question.category not in quality.CATEGORIES:
                continue
            ranking = rank(mine.searcher, question.text, config=config, now=corpus.now)
            hits = relevant(ranking, config.floor, config.fall_off)[0]
            keys = [mine.key_of[r.id] for r in hits]
            own.append(relevance.recall_at_10(keys, question.evidence))
            plain_r10.append(
                relevance.recall_at_10(
                    [mine.key_of[r.id] for r in ranking.hits], question.evidence
                )
            )
            asked = rank(other.searcher, question.text, config=config, now=corpus.now)
            foreign += not relevant(asked, config.floor, config.fall_off)[0]
    base, floored = statistics.mean(plain_r10), statistics.mean(own)
    out["foreign empty"] = f"{foreign / len(own):.1%}"
    out["floor cost"] = f"{base - floored:.4f}"
    out["floor off r10"] = f"{base:.4f}"
    progress(f"floor: {out['foreign empty']} at {out['floor cost']}")
    return out


def cranfield(eval_dir: Path, embedder: CachedEmbedder) -> dict[str, str]:
    ref = quality.load_reference(eval_dir)
    corpus = quality.load_cranfield(eval_dir)
    built = quality.build(corpus, embedder)
    whole = one_vector(lambda: quality.build(corpus, embedder))
    before = one_vector(lambda: quality.build(corpus, embedder), window=180)
    embedder.save()
    config = RecallConfig()

    def ndcg(ranker) -> str:  # type: ignore[no-untyped-def]
        return f"{quality.score_cranfield(ranker, corpus)['ndcg10']:.3f}"

    out = {
        "cranfield": ndcg(quality.hub_ranker(built, config, corpus.now)),
        "cranfield plain": ndcg(quality.reference_ranker(ref, corpus)),
        "cranfield one vector": ndcg(quality.hub_ranker(whole, config, corpus.now)),
        "cranfield 180": ndcg(quality.hub_ranker(before, config, corpus.now)),
    }
    progress(f"cranfield: {out}")
    return out


def sessions_rows(eval_dir: Path, embedder: CachedEmbedder) -> dict[str, str]:
    corpora = sessions.load(eval_dir)
    as_quality = [
        quality.Corpus(c.name, c.texts, c.drafts, c.keys, c.now) for c in corpora
    ]
    built = [quality.build(c, embedder) for c in as_quality]
    whole = one_vector(lambda: [quality.build(c, embedder) for c in as_quality])
    embedder.save()
    config = RecallConfig()

    def row(rankers) -> str:  # type: ignore[no-untyped-def]
        found = sessions.scores(rankers, corpora)
        return " / ".join(f"{found[m]:.3f}" for m in sessions.METRICS)

    def hub(stores, cfg):  # type: ignore[no-untyped-def]
        return [
            sessions.hub(b, cfg, c.now) for b, c in zip(stores, corpora, strict=True)
        ]

    words = [len(t.split()) for c in corpora for t in c.texts]
    out = {
        "sessions": row(hub(built, config)),
        "sessions plain": row([sessions.reference(c) for c in corpora]),
        "sessions fair": row([sessions.reference(c, fair=True) for c in corpora]),
        "sessions one vector": row(hub(whole, config)),
        "sessions vectors": row(hub(built, VECTORS)),
        "sessions words": f"{min(words):,}-{max(words):,}",
        "sessions questions": f"{sum(len(c.questions) for c in corpora):,}",
    }
    progress(f"sessions: {out}")
    return out


def code_rows(embedder: CachedEmbedder) -> dict[str, str]:
    tree = code.DATA / "tree"
    cases = code.build_set(tree, 600, 20)
    with tempfile.TemporaryDirectory() as folder:
        index = CodeIndex(Path(folder) / "index", lambda: embedder)
        index.update(tree)
        embedder.save()
        found = {}
        for label, weights in (
            ("fused", dict(WEIGHTS)),
            ("bm25", {"bm25": 1.0}),
            ("vectors", {"vector": 1.0}),
            ("symbols", {"symbol": 1.0}),
        ):
            chunk, files, _ = code.run_channel(index, cases, weights)
            found[label] = (code.scores(chunk), code.scores(files))
    out = {name: triple(list(chunk)) for name, (chunk, _) in found.items()}
    out["file fused"] = f"{found['fused'][1][1]:.3f}"
    out["file ripgrep"] = "(not measured: ripgrep is not installed)"
    if shutil.which("rg"):
        rg = code.scores(
            [
                code.rank_of(
                    [p == case.path for p in code.ripgrep_files(tree, case.query)[:10]]
                )
                for case in cases
            ]
        )
        out["file ripgrep"] = f"{rg[1]:.3f}"
    progress(f"code: {out}")
    return out


def table(n: dict[str, str]) -> list[str]:
    """The README's rows, in its words."""
    return [
        "| what | ctx (hybrid, defaults) | beside it, same run |",
        "| --- | --- | --- |",
        "| LoCoMo, categories 1-4, recall@5 / 10 / 25 / 50 |"
        f" {n['turns']} | plain BM25: {n['turns plain']}; MiniLM vectors alone:"
        f" {n['turns vectors']}; the same turns without reply context and speaker"
        f" tags: {n['turns alone']} |",
        f"| LoCoMo temporal questions, recall@10 | {n['temporal']} | plain BM25:"
        f" {n['temporal plain']} |",
        "| Cranfield nDCG@10 (abstracts of more than"
        f" {passages_module.WINDOW_WORDS} words as passages) | {n['cranfield']} |"
        f" plain BM25: {n['cranfield plain']}; one vector per abstract:"
        f" {n['cranfield one vector']}; passages past 180 words (before):"
        f" {n['cranfield 180']} |",
        "| LoCoMo sessions (long memories: one per session,"
        f" {n['sessions words']} words), any@5 / all@5 / any@10 / all@10 /"
        f" nDCG@10 | {n['sessions']} | BM25 (rank_bm25) over lower-cased"
        f" `[a-z0-9]+` tokens: {n['sessions fair']}; over words split at spaces"
        f" (punctuation kept): {n['sessions plain']}; one vector per session:"
        f" {n['sessions one vector']};"
        f" MiniLM passages alone: {n['sessions vectors']} |",
        "| LoCoMo questions asked of another conversation's store: recalls that"
        f' return nothing ("nothing relevant") | {n["foreign empty"]}, at a'
        f" recall@10 cost of {n['floor cost']} on the questions' own stores | the"
        f" floor off: 0% (recall@10 {n['floor off r10']}) |",
        "| `ctx find` on dulwich's sources, docstrings removed, 600 functions found"
        " by their docstring's first sentence: recall@1 / 5, MRR@10 |"
        f" {n['fused']} | BM25 alone {n['bm25']}; vectors alone {n['vectors']};"
        f" symbol names alone {n['symbols']}; by file, recall@5 {n['file fused']}"
        f" against ripgrep over the query's words {n['file ripgrep']} |",
    ]


def main() -> None:
    """Writes the report."""
    parser = quality.eval_parser(__doc__, "(unused)")
    args = parser.parse_args()
    os.environ["CTX_NO_HUB"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    began = time.perf_counter()
    loads = [os.getloadavg()[0]]
    eval_dir = args.eval_dir.resolve()
    embedder = CachedEmbedder(make_embedder({"kind": "minilm"}))
    numbers: dict[str, str] = {}
    for part in (
        lambda: cranfield(eval_dir, embedder),
        lambda: sessions_rows(eval_dir, embedder),
        lambda: turns(eval_dir, embedder),
        lambda: code_rows(embedder),
    ):
        numbers |= part()
        loads.append(os.getloadavg()[0])
    lines = [
        '# The README\'s "How good" table, measured in one run',
        "",
        "Generated by `benchmarks/bench_how_good.py`; do not edit by hand.",
        "",
        f"Date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {cpu_name()},"
        f" {os.cpu_count()} cores; Python {platform.python_version()};"
        f" {time.perf_counter() - began:.0f} s; {embedder.embedded} texts embedded"
        " this run (the rest from the cache). Embedder: MiniLM. Load average"
        f" (1 min) at start / most / end: {loads[0]:.1f} / {max(loads):.1f} /"
        f" {loads[-1]:.1f} (2 cores shared with other work).",
        "",
        *([f"Conditions: {args.note}", ""] if args.note else []),
        "Defaults of this commit: " + repr(RecallConfig()).replace("\n", " "),
        "",
        *table(numbers),
        "",
        "LoCoMo turns: 1,536 questions of categories 1-4 (overall recall@10"
        f" {numbers['turns r10']}); adversarial questions (category 5), recall@10:"
        f" {numbers['adversarial']} with the tag boost, {numbers['adversarial untagged']}"
        f" without it. LoCoMo sessions: {numbers['sessions questions']} questions.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    main()
