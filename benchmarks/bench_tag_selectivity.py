"""The tag boost by selectivity against the whole boost, on the same LoCoMo stores.

A named tag boosts a hit by ``tags x selectivity``, the share of the other
live memories that do not carry the tag (docs/recall.md, step 4); before,
by ``tags`` whatever the tag (both bounded: a tagged hit never passes a
clearly better match). LoCoMo's turns carry one speaker tag each, on about
half the turns of their conversation. Three rankings of the same stores,
in one run:

- selectivity (the default of this commit);
- the whole boost (selectivity taken as 1: the ranking before);
- no tag boost (``tags = 0``);
- selectivity as BM25 weighs a word that many memories hold (its idf,
  ``ln(1 + (N - n + 0.5) / (n + 0.5))``, scaled so that a tag one memory
  carries tells 1 and one every memory carries 0): a speaker's tag on half
  of a conversation's turns boosts by about 0.12, not 0.5;
- the bound at half its distance (:data:`~ctx.hub.retrieval.boost.CLEARLY_BETTER`
  0.15, not 0.3): a tagged hit passes fewer hits that hold more of the
  question's other words.

Scored: recall@10 of categories 1-4; of the questions that name exactly one
of the two speakers and hold evidence in the other's turn, recall@10 of
those turns (as ``bench_empty_answers.py`` counts them); adversarial
questions (category 5), recall@10.

Run::

    .venv/bin/python benchmarks/bench_tag_selectivity.py [--quick]

It writes ``benchmarks/results/tag_selectivity.md`` (``--quick``: 3
conversations, print only). Vectors are cached under ``benchmarks/.data``.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path

import bench_quality as quality
from _bench_common import cpu_name
from _embed_cache import CachedEmbedder

import ctx.hub.retrieval.boost as boost
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.ranking import rank

RESULTS = Path(__file__).parent / "results" / "tag_selectivity.md"
VARIANTS = (
    "selectivity (default)",
    "whole boost (before)",
    "no tag boost",
    "selectivity as idf",
    "bound at 0.15",
)


def idf_selectivity(holders: int, live: int) -> float:
    """Returns how much a tag tells as BM25's idf says it of a word."""
    if live <= 1:
        return 1.0

    def idf(n: int) -> float:
        return math.log(1 + (live - n + 0.5) / (n + 0.5))

    return max(0.0, min(1.0, (idf(holders) - idf(live)) / (idf(1) - idf(live))))


@contextmanager
def patched(name: str, value: object):  # type: ignore[no-untyped-def]
    """Sets ``boost.<name>`` to ``value`` for the block."""
    kept = getattr(boost, name)
    setattr(boost, name, value)
    try:
        yield
    finally:
        setattr(boost, name, kept)


def variant_context(variant: str):  # type: ignore[no-untyped-def]
    """Returns the block a variant's rankings run in."""
    if variant == VARIANTS[1]:
        return patched("selectivity", lambda holders, live: 1.0)
    if variant == VARIANTS[3]:
        return patched("selectivity", idf_selectivity)
    if variant == VARIANTS[4]:
        return patched("CLEARLY_BETTER", 0.15)
    return nullcontext()


def main() -> None:
    parser = quality.eval_parser(__doc__, "3 conversations, print")
    args = parser.parse_args()
    started = time.perf_counter()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    embedder = CachedEmbedder(make_embedder({"kind": "minilm"}))
    ref = quality.load_reference(args.eval_dir.resolve())
    corpora = quality.load_locomo(args.eval_dir.resolve(), ref)
    corpora = corpora[: 3 if args.quick else None]
    built = [quality.build(c, embedder) for c in corpora]
    embedder.save()
    print(f"stores built in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    scores: dict[str, dict[str, list[float]]] = {v: {} for v in VARIANTS}

    def add(variant: str, measure: str, value: float) -> None:
        scores[variant].setdefault(measure, []).append(value)

    for corpus, mine in zip(corpora, built, strict=True):
        others = quality.other_speakers_turns(corpus)
        for question, theirs in zip(corpus.questions, others, strict=True):
            for variant in VARIANTS:
                config = (
                    RecallConfig(tags=0) if variant == VARIANTS[2] else RecallConfig()
                )
                with variant_context(variant):
                    found = rank(
                        mine.searcher, question.text, config=config, now=corpus.now
                    )
                top = {mine.key_of[r.id] for r in found.hits[:10]}
                evidence = question.evidence
                share = sum(e in top for e in evidence) / len(evidence)
                if question.category in quality.CATEGORIES:
                    add(variant, "r10", share)
                else:
                    add(variant, "adversarial", share)
                if theirs:
                    add(variant, "other", sum(e in top for e in theirs) / len(theirs))
    total = time.perf_counter() - started
    write(scores, args.quick, total)


def write(scores: dict[str, dict[str, list[float]]], quick: bool, total: float) -> None:
    def mean(variant: str, measure: str) -> str:
        values = scores[variant][measure]
        return f"{sum(values) / len(values):.4f}"

    first = scores[VARIANTS[0]]
    lines = [
        "# The tag boost by selectivity, beside the whole boost and other bounds",
        "",
        "Generated by `benchmarks/bench_tag_selectivity.py`; do not edit by hand.",
        "",
        f"Date {datetime.now(UTC):%Y-%m-%d %H:%M UTC}; {cpu_name()}, "
        f"{os.cpu_count()} cores shared with other work (load {os.getloadavg()[0]:.1f}"
        f" at the end); Python {platform.python_version()}; {total:.0f} s. "
        "Embedder: MiniLM. LoCoMo, one memory per turn, tagged with its speaker; "
        "the same stores for every ranking.",
        "",
        f"| ranking | recall@10, categories 1-4 ({len(first['r10'])}) | "
        f"recall@10 of the other speaker's evidence turns ({len(first['other'])} "
        f"questions naming one speaker) | adversarial recall@10 "
        f"({len(first['adversarial'])}) |",
        "|---|---|---|---|",
        *[
            f"| {v} | {mean(v, 'r10')} | {mean(v, 'other')} | "
            f"{mean(v, 'adversarial')} |"
            for v in VARIANTS
        ],
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not quick:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
