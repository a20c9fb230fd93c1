"""How recall's one-hop link expansion should treat Dream's links, on LoCoMo.

Usage::

    .venv/bin/python benchmarks/bench_dream_expand.py                    # 10 conversations
    .venv/bin/python benchmarks/bench_dream_expand.py --conversations 1  # a quick check

Writes ``benchmarks/results/dream_expand.md`` (with all 10 conversations;
``--out`` for another file). Each conversation is stored and scored as part
2 of ``bench_dream.py`` does: recall@10 (categories 1-4) with the default
ranking before Dream, then one cycle over every turn, every proposal
accepted and merged, and recall@10 after under each way of expanding:

- D: as recall expands now (``ranking._expand``: each neighbour of the five
  best hits enters at the hit's score times ``expand``, 0.5, or is raised
  to it; through a RELATES_TO link also times the neighbour's cosine to the
  query, or its share of the query's words without vectors);
- V0: the rule before D, every link alike: the hit's score times 0.5;
- V1: no expansion (``expand`` 0; superseded memories still hidden);
- V2: the neighbour's score also times ``max(0, cosine)`` of its stored
  vector to the query's;
- V3: only neighbours whose cosine to the query is at least
  :data:`MIN_COSINE` enter or are raised, at the hit's score times 0.5;
- V4: raise only: a neighbour some channel found is raised as now, a new
  one never enters;
- V5: ``expand`` 0.25.

Every variant ranks the same fused, tagged and gravity-weighed hits: the
ranking's ``_expand`` is replaced, in this process only, by one that expands
a copy of them each way and keeps each copy's top 10 before doing what
recall does, so one ``rank`` call per question scores them all. D's copy is
checked against what ``rank`` returned. Also counted: the share of top-10
slots held by a memory that expansion entered or raised (``Ranked.via``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _bench_common import ctx_revision, machine_lines
from bench_dream import accept_and_merge, conversation_store
from bench_quality import CATEGORIES, Corpus, load_locomo, load_reference

from ctx import engine
from ctx.engine import Adjacency
from ctx.hub.config import RecallConfig
from ctx.hub.dream.cycle import run_cycle
from ctx.hub.retrieval import ranking
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.searcher import Searcher
from ctx.hub.retrieval.index.view import LiveView
from ctx.hub.retrieval.ranking import Ranked, rank
from ctx.hub.retrieval.sources import open_sources

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "dream_expand.md"
TOP = 10
MIN_COSINE = 0.30
VARIANTS = {
    "D": "rank() as committed (RELATES_TO x bearing)",
    "V0": "0.5 on every link (the rule before)",
    "V1": "no expansion",
    "V2": "x cosine to the query",
    "V3": f"cosine >= {MIN_COSINE:.2f} only",
    "V4": "raise only, none enters",
    "V5": "expand 0.25",
}
Weigh = Callable[[str], float | None]
"""A neighbour's factor on its expanded score, or None to skip it."""


def expand(
    strong: Sequence[Ranked],
    ranked: dict[str, Ranked],
    links: Sequence[Adjacency],
    view: LiveView,
    superseded: set[str],
    damping: float,
    weigh: Weigh,
    enter: bool,
) -> None:
    """Recall's one-hop expansion (``ranking._expand``), with a factor per
    neighbour and, unless ``enter``, raising only the memories already ranked."""
    entries = view.catalog.entries
    for hit, (link_type, other, direction) in ranking.neighbours(
        strong, links, entries, superseded
    ):
        factor = weigh(other)
        if factor is not None:
            score = hit.score * damping * factor
            via = (link_type, hit.id, direction)
            ranking.lift(ranked, other, score, via, enter=enter)


def one(_: str) -> float:
    """Every neighbour counts in full (recall's expansion)."""
    return 1.0


class Variants:
    """Stands in for ``ranking._expand``: keeps each variant's top 10."""

    def __init__(self, searcher: Searcher) -> None:
        self.searcher = searcher
        self.tops: dict[str, list[Ranked]] = {}
        self._cosines: dict[str, float] = {}

    def ask(self) -> None:
        """Starts a question."""
        self.tops = {}
        self._cosines = {}

    def cosine(self, memory_id: str) -> float:
        """The cosine of the memory's stored vector to the query's (0 if none)."""
        if memory_id not in self._cosines:
            blob = self.searcher.view.catalog.entries[memory_id].blob
            # The question's vector is the one rank's vector channel made.
            self._cosines[memory_id] = self.searcher.cosine(blob) or 0.0
        return self._cosines[memory_id]

    def __call__(
        self,
        strong: list[Ranked],
        ranked: dict[str, Ranked],
        links: Sequence[Adjacency],
        searcher: Searcher,
        text: str,
        superseded: set[str],
        damping: float,
    ) -> None:
        view = searcher.view
        ways: dict[str, tuple[float, Weigh, bool] | None] = {
            "V0": (damping, one, True),
            "V1": None,
            "V2": (0.5, lambda m: max(0.0, self.cosine(m)), True),
            "V3": (0.5, lambda m: 1.0 if self.cosine(m) >= MIN_COSINE else None, True),
            "V4": (0.5, one, False),
            "V5": (0.25, one, True),
        }
        for name in VARIANTS:
            copy = {k: dataclasses.replace(r) for k, r in ranked.items()}
            strong_copy = [copy[h.id] for h in strong]
            way = ways.get(name)
            if name == "D":
                ORIGINAL(strong_copy, copy, links, searcher, text, superseded, damping)
            elif way is not None:
                expand(strong_copy, copy, links, view, superseded, *way)
            self.tops[name] = sorted(
                (r for r in copy.values() if r.id not in superseded),
                key=lambda r: (-r.score, r.id),
            )[:TOP]
        ORIGINAL(strong, ranked, links, searcher, text, superseded, damping)


ORIGINAL = ranking._expand


@dataclasses.dataclass
class Scores:
    """Recall@10 per question, and expansion's top-10 slots, of one run."""

    recall: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    by_category: dict[tuple[str, int], list[float]] = dataclasses.field(
        default_factory=dict
    )
    slots: Counter[str] = dataclasses.field(default_factory=Counter)

    def add(self, name: str, category: int, value: float) -> None:
        self.recall.setdefault(name, []).append(value)
        self.by_category.setdefault((name, category), []).append(value)


def score(
    projection: Projection, corpus: Corpus, key_of: dict[Any, str], out: Scores
) -> int:
    """Scores recall@10 before (no links) or after under every variant.

    Returns how many questions' D copy differed from ``rank``'s answer.
    """
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    graph = [engine.link_graph(projection.store, source.commit)]
    variants = Variants(searcher)
    ranking._expand = variants
    mismatched = 0
    try:
        for q in corpus.questions:
            if q.category not in CATEGORIES:
                continue
            variants.ask()
            found = rank(
                searcher, q.text, config=RecallConfig(), now=corpus.now, links=graph
            )
            tops = variants.tops or dict.fromkeys(VARIANTS, found.hits[:TOP])
            if [h.id for h in tops["D"]] != [h.id for h in found.hits[:TOP]]:
                mismatched += 1
            for name, top in tops.items():
                keys = {key_of.get(h.id) for h in top}
                out.add(
                    name,
                    q.category,
                    sum(e in keys for e in q.evidence) / len(q.evidence),
                )
                out.slots[f"{name} slots"] += len(top)
                out.slots[f"{name} via"] += sum(h.via is not None for h in top)
                out.slots[f"{name} entered"] += sum(
                    h.via is not None and not h.channels for h in top
                )
    finally:
        ranking._expand = ORIGINAL
    return mismatched


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def machine(started: datetime, loads: list[float]) -> list[str]:
    return machine_lines(started, loads, [("ctx", ctx_revision())])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval"
    )
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    started = datetime.now(UTC)
    began = time.perf_counter()
    loads = [os.getloadavg()[0]]
    embedder = make_embedder({})
    corpora = load_locomo(args.eval_dir, load_reference(args.eval_dir))
    corpora = corpora[: args.conversations]
    rows = []
    before_all, after_all = Scores(), Scores()
    kinds: Counter[str] = Counter()
    turns = mismatched = 0
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in corpora:
            with conversation_store(Path(tmp), corpus, embedder) as (
                store,
                key_of,
                projection,
            ):
                before, after = Scores(), Scores()
                score(projection, corpus, key_of, before)
                run_cycle(store, projection, "main", budget=10**6, now=corpus.now)
                merged = accept_and_merge(store, embedder, corpus.now)
                mismatched += score(projection, corpus, key_of, after)
            kinds += merged
            turns += len(corpus.drafts)
            for scores, into in ((before, before_all), (after, after_all)):
                for key, values in scores.by_category.items():
                    into.by_category.setdefault(key, []).extend(values)
                for name, values in scores.recall.items():
                    into.recall.setdefault(name, []).extend(values)
                into.slots += scores.slots
            row = [
                corpus.name,
                str(len(before.recall["V0"])),
                f"{merged['link']:,}",
                f"{mean(before.recall['V0']):.3f}",
                *(f"{mean(after.recall[v]):.3f}" for v in VARIANTS),
            ]
            rows.append("| " + " | ".join(row) + " |")
            loads.append(os.getloadavg()[0])
            print(" ".join(row), f"{time.perf_counter() - began:.0f} s", flush=True)
    loads.append(os.getloadavg()[0])
    seconds = time.perf_counter() - began
    questions = len(before_all.recall["V0"])
    base = mean(before_all.recall["V0"])
    command = "benchmarks/bench_dream_expand.py" + (
        f" --conversations {args.conversations}" if args.conversations != 10 else ""
    )
    lines = [
        "# Dream's links and recall's one-hop expansion",
        "",
        "Generated by `benchmarks/bench_dream_expand.py`; do not edit by hand.",
        "",
        f"Command: `.venv/bin/python {command}`; {seconds:,.0f} s "
        "(a quality run: no timings are compared).",
        "",
        *machine(started, loads),
        "",
        f"LoCoMo, {len(corpora)} conversations, {questions:,} questions "
        "(categories 1-4), recall@10 as `bench_dream.py` part 2 scores it "
        "(MiniLM, default ranking): before Dream, then after one Dream cycle "
        "over every turn with every proposal accepted and merged, under each "
        "way of expanding (the module doc of the script says how each works). "
        "Proposals merged: "
        + ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))
        + f" ({kinds['link'] / turns:.2f} links a turn, {turns:,} turns).",
        "",
        "## Recall@10",
        "",
        "| conversation | questions | links | before | "
        + " | ".join(f"{v} {d}" for v, d in VARIANTS.items())
        + " |",
        "|---|---:|---:|---:|" + "---:|" * len(VARIANTS),
        *rows,
        f"| **all** | {questions:,} | {kinds['link']:,} | **{base:.3f}** | "
        + " | ".join(f"**{mean(after_all.recall[v]):.3f}**" for v in VARIANTS)
        + " |",
        "| ratio to before | | | 1.000 | "
        + " | ".join(f"{mean(after_all.recall[v]) / base:.3f}" for v in VARIANTS)
        + " |",
        "",
        "## By category (all conversations)",
        "",
        "| category | questions | before | " + " | ".join(VARIANTS) + " |",
        "|---|---:|---:|" + "---:|" * len(VARIANTS),
    ]
    for category, label in CATEGORIES.items():
        got = before_all.by_category.get(("V0", category), [])
        lines.append(
            f"| {category} {label} | {len(got):,} | {mean(got):.3f} | "
            + " | ".join(
                f"{mean(after_all.by_category.get((v, category), [])):.3f}"
                for v in VARIANTS
            )
            + " |"
        )
    slots = after_all.slots
    lines += [
        "",
        "## Top-10 slots held through expansion (after Dream)",
        "",
        "via: a memory whose `Ranked.via` is set (expansion raised it or "
        "entered it); entered: of those, one no channel found.",
        "",
        "| variant | slots | via | share | entered | share |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for v, d in VARIANTS.items():
        n = slots[f"{v} slots"]
        via, entered = slots[f"{v} via"], slots[f"{v} entered"]
        lines.append(
            f"| {v} {d} | {n:,} | {via:,} | {via / n:.3f} | {entered:,} | "
            f"{entered / n:.3f} |"
        )
    lines += [
        "",
        "## Question by question (paired, all conversations)",
        "",
        "How many questions' recall@10 after is above or below its own before, "
        "and above or below V0's (the same questions, the same store).",
        "",
        "| variant | above before | below before | above V0 | below V0 |",
        "|---|---:|---:|---:|---:|",
    ]
    first, current = before_all.recall["V0"], after_all.recall["V0"]
    for v, d in VARIANTS.items():
        got = after_all.recall[v]
        lines.append(
            f"| {v} {d} | {sum(map(float.__gt__, got, first))} | "
            f"{sum(map(float.__lt__, got, first))} | "
            f"{sum(map(float.__gt__, got, current))} | "
            f"{sum(map(float.__lt__, got, current))} |"
        )
    lines += [
        "",
        f"Check: D's copy differed from what `rank` returned on {mismatched} "
        f"of {questions:,} questions.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    out = args.out or (RESULTS if args.conversations == 10 else None)
    if out is not None:
        out.write_text(text)


if __name__ == "__main__":
    main()
