"""Recall learns from use: simulated feedback on LoCoMo, learned and held out.

Vectors are cached by text under ``benchmarks/.data`` (``_embed_cache.py``).

Usage::

    .venv/bin/python benchmarks/bench_feedback.py              # ~5 min
    .venv/bin/python benchmarks/bench_feedback.py --steps 2    # shorter

One store on disk holds the ten LoCoMo conversations, each on a branch of its
own (``conv-1`` .. ``conv-10``; bench_quality's memories: one per turn, with
speaker tags and reply context; the default embedder, MiniLM; every memory
embedded before the first question). The hub's own answerer serves every
call, as for ``ctx recall`` with a running hub.

Each step: every question of conversations 1-5 (categories 1-4) is recalled
by the caller ``bench`` with its current weights and budget; the hits that are
the question's evidence are recorded as used (``ctx feedback``), and one
learning step runs (``ctx recall learn``). Then the questions of
conversations 6-10, never learned from, are ranked with the default weights
and with the learned ones: recall@5 and @10 over the ranking (bench_quality's
protocol) and recall@10 over what a recall returns within its budget (the
learned budget for the learned weights). Goal (issue 15): recall@10 on
conversations 6-10 does not drop.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _embed_cache import CachedEmbedder
from bench_backlog import machine_lines
from bench_quality import Corpus, load_locomo, load_reference

import ctx.hub.retrieval.index.projection as projection_module
from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.hub.config import RecallConfig, load_config
from ctx.hub.retrieval.feedback import record_feedback
from ctx.hub.retrieval.ranking import rank
from ctx.hub.retrieval.sources import open_sources
from ctx.hub.retrieval.tuning import Tuning, tuned
from ctx.hub.server.service import Answerer
from ctx.hub.server.wire import (
    LearnAsk,
    LearnReply,
    RecallAsk,
    RecallReply,
    ReindexAsk,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "feedback.md"
IMPORT = Intent(agent="bench", intent="import")
AGENT = "bench"
TRAIN, TEST = range(5), range(5, 10)


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def clock() -> datetime:
    return datetime.now(UTC)


def make_store(root: Path, corpora: list[Corpus]) -> tuple[Store, list[dict[str, str]]]:
    """Writes each conversation on its branch; returns the store and key maps."""
    store = Store.init(root / ".ctx", clock=clock)
    engine.remember_many(store, [Draft(text="LoCoMo conversations")], IMPORT)
    keys = []
    for n, corpus in enumerate(corpora, start=1):
        engine.create_branch(store, f"conv-{n}", "main")
        done = engine.remember_many(store, corpus.drafts, IMPORT, branch=f"conv-{n}")
        keys.append(dict(zip(done.ids, corpus.keys, strict=True)))
    return store, keys


def train(
    answerer: Answerer, corpora: list[Corpus], keys: list[dict[str, str]]
) -> tuple[int, int]:
    """Recalls every training question, records its evidence hits as used."""
    assert answerer.store.path is not None
    recalls = fed = 0
    for n in TRAIN:
        for question in corpora[n].questions:
            if question.category not in (1, 2, 3, 4):
                continue
            request = RecallAsk(
                query=question.text,
                branch=f"conv-{n + 1}",
                now=corpora[n].now,
                agent=AGENT,
            )
            reply = answerer.answer(request)
            assert isinstance(reply, RecallReply)
            result = reply.result
            assert result.recall_id is not None
            recalls += 1
            used = [h.id for h in result.hits if keys[n].get(h.id) in question.evidence]
            if used:
                record_feedback(answerer.store.path, result.recall_id, used, clock())
                fed += 1
    return recalls, fed


def evaluate(
    answerer: Answerer,
    corpora: list[Corpus],
    keys: list[dict[str, str]],
    tuning: Tuning | None,
) -> dict[str, float]:
    """Returns recall@5 and @10 over the ranking, and @10 within the budget."""
    projection = answerer.projection_now()
    config = tuned(RecallConfig(), tuning)
    sums = {"r@5": 0.0, "r@10": 0.0, "budget r@10": 0.0}
    count = 0
    for n in TEST:
        [source] = open_sources(projection, branch=f"conv-{n + 1}")
        searcher = projection.searcher(source.view)
        for question in corpora[n].questions:
            if question.category not in (1, 2, 3, 4):
                continue
            ranked = rank(searcher, question.text, config=config, now=corpora[n].now)
            top = [keys[n].get(r.id) for r in ranked.hits[:10]]
            request = RecallAsk(
                query=question.text,
                branch=f"conv-{n + 1}",
                now=corpora[n].now,
                agent=AGENT if tuning is not None else "nobody",
            )
            reply = answerer.answer(request)
            assert isinstance(reply, RecallReply)
            result = reply.result
            packed = [keys[n].get(h.id) for h in result.hits[:10]]
            evidence = question.evidence
            sums["r@5"] += sum(e in top[:5] for e in evidence) / len(evidence)
            sums["r@10"] += sum(e in top for e in evidence) / len(evidence)
            sums["budget r@10"] += sum(e in packed for e in evidence) / len(evidence)
            count += 1
    return {k: v / count for k, v in sums.items()} | {"questions": float(count)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--eval-dir", type=Path, default=HERE.parent.parent / "shared" / "eval"
    )
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    started_at, began = datetime.now(UTC), time.perf_counter()
    load = [os.getloadavg()[0]]
    corpora = load_locomo(args.eval_dir, load_reference(args.eval_dir))
    # The turns' vectors are those bench_quality.py makes: cached by text.
    make = projection_module.make_embedder
    cached: dict[str, CachedEmbedder] = {}

    def make_cached(config):  # type: ignore[no-untyped-def]
        key = repr(config)
        if key not in cached:
            cached[key] = CachedEmbedder(make(config))
        return cached[key]

    projection_module.make_embedder = make_cached  # type: ignore[assignment]
    root = Path(tempfile.mkdtemp(prefix="ctx-feedback-"))
    try:
        progress("writing the ten conversations")
        store, keys = make_store(root, corpora)
        answerer = Answerer(store, clock)
        progress("embedding every memory")
        answerer.answer(ReindexAsk())
        baseline = evaluate(answerer, corpora, keys, None)
        progress(f"default: {baseline}")
        rows = []
        for step in range(1, args.steps + 1):
            recalls, fed = train(answerer, corpora, keys)
            reply = answerer.answer(LearnAsk(agent=AGENT))
            assert isinstance(reply, LearnReply)
            learned = reply.learned
            scores = evaluate(answerer, corpora, keys, learned.after)
            load.append(os.getloadavg()[0])
            rows.append((step, recalls, fed, learned.after, scores))
            progress(f"step {step}: {learned.after} {scores}")
        assert load_config(store.path).recall == RecallConfig()
        store.close()
        for embedder in cached.values():
            embedder.save()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    minutes = (time.perf_counter() - began) / 60
    final = rows[-1][4]
    gain = final["r@10"] - baseline["r@10"]
    lines = [
        "# ctx feedback learning benchmark",
        "",
        "Generated by `benchmarks/bench_feedback.py`; do not edit by hand.",
        "",
        f"Command: `python benchmarks/bench_feedback.py --steps {args.steps}`"
        + (f" ({args.note})" if args.note else "")
        + f" ({minutes:.1f} min)",
        "",
        *machine_lines(started_at, load),
        "",
        "Learned from conversations 1-5 (their evidence hits marked used), scored "
        f"on conversations 6-10 ({int(baseline['questions'])} questions, "
        "categories 1-4). `r@k`: recall@k over the ranking; `budget r@10`: "
        "over the first 10 hits a recall returns within its budget.",
        "",
        "## Goal",
        "",
        "| goal | measured | met? |",
        "|---|---|---|",
        f"| recall@10 on conversations 6-10 does not drop | "
        f"{baseline['r@10']:.4f} -> {final['r@10']:.4f} ({gain:+.4f}) | "
        f"{'met' if gain >= 0 else 'missed'} |",
        "",
        "## Steps",
        "",
        "`train MRR`: the used hits' mean reciprocal rank over the step's own "
        "recalls (conversations 1-5) ranked again with the weights before the "
        "step and with those it kept (the step's validation).",
        "",
        "| step | recalls | with feedback | mistakes | train MRR | bm25 | vector | "
        "fuzzy | budget | r@5 | r@10 | budget r@10 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        f"| defaults | | | | | 1.000 | 1.500 | 0.750 | 1,500 | "
        f"{baseline['r@5']:.4f} | {baseline['r@10']:.4f} | "
        f"{baseline['budget r@10']:.4f} |",
    ]
    for step, recalls, fed, after, scores in rows:
        lines.append(
            f"| {step} | {recalls} | {fed} | {after.mistakes} | "
            f"{after.mrr_before} -> {after.mrr_after} | {after.bm25:.3f} | "
            f"{after.vector:.3f} | {after.fuzzy:.3f} | {after.budget:,} | "
            f"{scores['r@5']:.4f} | {scores['r@10']:.4f} | "
            f"{scores['budget r@10']:.4f} |"
        )
    lines.append("")
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
