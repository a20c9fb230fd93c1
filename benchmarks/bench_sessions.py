"""Long memories: LoCoMo at session granularity, one memory per conversation session.

Protocol (``shared/eval/README.md``): one store per conversation, one memory
per session, its turns joined as ``Speaker: text`` lines (plus
`` [image: caption]`` when a turn shares one), created at the session's date;
a question's gold is the set of sessions its evidence falls in. Questions of
categories 1-4 (1,536), ``now`` = the last session plus one day. Reported:
any@k (a gold session in the top k), all@k (every gold session in the top
k), for k = 5 and 10, and nDCG@10 (gain 1 per gold session).

Configurations, all in the same run:

- reference plain BM25: ``rank_bm25``'s BM25Okapi over lower-cased
  whitespace tokens (the issue's baseline: any@5 0.769, all@5 0.643);
- ctx's channels alone and hybrid (``rank()`` with the defaults, no floor),
  on stores whose long memories are embedded as passages
  (``ctx.hub.retrieval.index.passages``), the default;
- the same hybrid on stores embedded as before: one vector per memory, of
  the embedder's first window (256 word pieces) only.

Run::

    .venv/bin/python benchmarks/bench_sessions.py [--quick]

It writes ``benchmarks/results/sessions.md``.
"""

from __future__ import annotations

import math
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import bench_quality as quality
from _bench_common import cpu_name
from rank_bm25 import BM25Okapi

import ctx.hub.retrieval.index.passages as passages_module
from ctx.engine import Draft
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.index.passages import passages
from ctx.hub.retrieval.ranking import rank

RESULTS = Path(__file__).parent / "results" / "sessions.md"
SESSION_RE = re.compile(r"^session_(\d+)$")
_TOKEN = re.compile(r"[a-z0-9]+")
METRICS = ("any@5", "all@5", "any@10", "all@10", "nDCG@10")
GOALS = {"any@5": 0.92, "all@5": 0.80}
REFERENCE = "reference plain BM25 (rank_bm25)"
DEFAULT = "hybrid (defaults), passages"


@dataclass
class Question:
    text: str
    category: int
    gold: set[str]


@dataclass
class Sessions:
    name: str
    keys: list[str]  # session number, per memory
    texts: list[str]
    drafts: list[Draft]
    now: datetime
    questions: list[Question] = field(default_factory=list)


def load(eval_dir: Path) -> list[Sessions]:
    """Returns one corpus of sessions per LoCoMo conversation."""
    ref = quality.load_reference(eval_dir)
    data = ref.load(str(eval_dir / "locomo" / "locomo10.json"))
    corpora = []
    for sample in data:
        conv = sample["conversation"]
        numbers = sorted(int(m.group(1)) for k in conv if (m := SESSION_RE.match(k)))
        corpus = Sessions(sample["sample_id"], [], [], [], datetime.min)
        valid: set[str] = set()
        last = None
        for number in numbers:
            when = datetime.strptime(
                conv[f"session_{number}_date_time"], quality.DATE_FORMAT
            ).replace(tzinfo=UTC)
            last = when if last is None else max(last, when)
            lines = []
            for turn in conv[f"session_{number}"]:
                line = f"{turn['speaker']}: {turn['text']}"
                if "blip_caption" in turn:
                    line += f" [image: {turn['blip_caption']}]"
                lines.append(line)
                valid.add(turn["dia_id"])
            text = "\n".join(lines)
            corpus.keys.append(str(number))
            corpus.texts.append(text)
            corpus.drafts.append(Draft(text=text, when=when))
        assert last is not None
        corpus.now = last + timedelta(days=1)
        for qa in sample["qa"]:
            if qa["category"] not in quality.CATEGORIES:
                continue
            evidence, _ = ref.normalize_evidence(qa.get("evidence", []), valid)
            if evidence:
                gold = {e[1:].split(":")[0] for e in evidence}
                corpus.questions.append(Question(qa["question"], qa["category"], gold))
        corpora.append(corpus)
    return corpora


Ranker = Callable[[str], list[str]]


def scores(rankers: Sequence[Ranker], corpora: Sequence[Sessions]) -> dict[str, float]:
    """Returns each metric's mean over every question."""
    sums = dict.fromkeys(METRICS, 0.0)
    count = 0
    for ranker, corpus in zip(rankers, corpora, strict=True):
        for question in corpus.questions:
            top = ranker(question.text)
            gold = question.gold
            for k in (5, 10):
                found = gold & set(top[:k])
                sums[f"any@{k}"] += bool(found)
                sums[f"all@{k}"] += found == gold
            dcg = sum(1 / math.log2(i + 2) for i, s in enumerate(top[:10]) if s in gold)
            ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
            sums["nDCG@10"] += dcg / ideal
            count += 1
    return {name: total / count for name, total in sums.items()}


def reference(corpus: Sessions, *, fair: bool = False) -> Ranker:
    """Returns the plain BM25 baseline: words split at spaces, punctuation on.

    ``fair``: over lower-cased ``[a-z0-9]+`` runs instead (what
    ``bench_robustness.py`` calls BM25), so "Caroline:" and "caroline"
    are one word.
    """

    def split(text: str) -> list[str]:
        return _TOKEN.findall(text.lower()) if fair else text.lower().split()

    bm25 = BM25Okapi([split(text) for text in corpus.texts])

    def ranked(question: str) -> list[str]:
        values = bm25.get_scores(split(question))
        order = sorted(range(len(values)), key=lambda i: -values[i])
        return [corpus.keys[i] for i in order[:10]]

    return ranked


def hub(built: quality.Built, config: RecallConfig, now: datetime) -> Ranker:
    def ranked(question: str) -> list[str]:
        found = rank(built.searcher, question, config=config, now=now)
        return [built.key_of[r.id] for r in found.hits[:10]]

    return ranked


def main() -> None:
    """Writes (or with --quick prints) the report."""
    parser = quality.eval_parser(__doc__, "2 conversations, print")
    args = parser.parse_args()
    began = time.perf_counter()
    corpora = load(args.eval_dir.resolve())[: 2 if args.quick else None]
    embedder = make_embedder({"kind": "minilm"})
    as_quality = [
        quality.Corpus(c.name, c.texts, c.drafts, c.keys, c.now) for c in corpora
    ]
    started = time.perf_counter()
    with_passages = [quality.build(c, embedder) for c in as_quality]
    build_s = {"passages": time.perf_counter() - started}
    words = passages_module.WINDOW_WORDS
    passages_module.WINDOW_WORDS = 10**9  # one vector per memory, as before
    try:
        started = time.perf_counter()
        first_window = [quality.build(c, embedder) for c in as_quality]
        build_s["first window only"] = time.perf_counter() - started
    finally:
        passages_module.WINDOW_WORDS = words
    plain = RecallConfig()
    configs: dict[str, tuple[list[quality.Built], RecallConfig | None]] = {
        REFERENCE: ([], None),
        "BM25 (ctx Tantivy)": (
            with_passages,
            RecallConfig(vector=0, fuzzy=0, tags=0, gravity=0),
        ),
        "vectors, passages": (
            with_passages,
            RecallConfig(bm25=0, fuzzy=0, tags=0, gravity=0),
        ),
        "vectors, first window only": (
            first_window,
            RecallConfig(bm25=0, fuzzy=0, tags=0, gravity=0),
        ),
        DEFAULT: (with_passages, plain),
        "hybrid (defaults), first window only": (first_window, plain),
    }
    results = {}
    for name, (stores, config) in configs.items():
        if config is None:
            rankers = [reference(c) for c in corpora]
        else:
            rankers = [
                hub(b, config, c.now) for b, c in zip(stores, corpora, strict=True)
            ]
        results[name] = scores(rankers, corpora)
        print(f"{name}: {results[name]}", file=sys.stderr)
    count = sum(len(c.questions) for c in corpora)
    words_per = [len(t.split()) for c in corpora for t in c.texts]
    pieces = [len(passages(t)) for c in corpora for t in c.texts]
    lines = [
        "# LoCoMo at session granularity (long memories)",
        "",
        "Generated by `benchmarks/bench_sessions.py`; do not edit by hand.",
        "",
        f"Date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {cpu_name()},"
        f" {os.cpu_count()} cores; Python {platform.python_version()};"
        f" {time.perf_counter() - began:.0f} s (stores built: "
        + ", ".join(f"{n} {s:.0f} s" for n, s in build_s.items())
        + ").",
        "",
        *([f"Conditions: {args.note}", ""] if args.note else []),
        f"{len(corpora)} conversations, {len(words_per)} sessions of"
        f" {min(words_per)}-{max(words_per)} words (median"
        f" {sorted(words_per)[len(words_per) // 2]}), {sum(pieces)} passages"
        f" ({max(pieces)} at most per session); {count} questions of"
        " categories 1-4. MiniLM embedder; ranking without the relevance"
        " floor, as in `quality.md`.",
        "",
        "| configuration | " + " | ".join(METRICS) + " |",
        "|---|" + "---|" * len(METRICS),
    ]
    for name, row in results.items():
        cells = " | ".join(f"{row[m]:.3f}" for m in METRICS)
        lines.append(f"| {name} | {cells} |")
    lines += ["", "| goal | measured | met? |", "|---|---|---|"]
    for metric, target in GOALS.items():
        value = results[DEFAULT][metric]
        met = "met" if value >= target else "missed"
        lines.append(f"| {metric} >= {target:.2f} | {value:.3f} | {met} |")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
