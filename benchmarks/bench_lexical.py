"""Speed of ctx's lexical channel (Tantivy) against a plain-Python BM25.

Usage::

    .venv/bin/python benchmarks/bench_lexical.py           # ~1-2 min
    .venv/bin/python benchmarks/bench_lexical.py --quick   # a few seconds
    .venv/bin/python benchmarks/bench_lexical.py --note "..."  # say what else ran

What it measures, in one run (results in ``benchmarks/results/lexical.md``):

1. Index build: 100k generated documents through ``LexicalWriter.add`` in
   batches of 10,000 and one commit (documents/s, size on disk), and the cost
   of adding one document + commit + the next search seeing it.
2. Query latency, top 20, at 10k and 100k documents: ``LexicalIndex.search``
   (reload check, query analysis, Tantivy, reading the 20 blob ids), the same
   restricted to an allowed set of 1,000 ids and of half the index (both
   filter an over-fetched ranking), ``fuzzy_search``, and Tantivy's own search
   call alone.
3. Baseline: a tiny BM25 in pure Python (dict postings, k1 1.2, b 0.75, same
   documents and queries, regex words without stemming), build and top 20.

Documents: bodies of 20-80 words drawn from a Zipf-distributed vocabulary of
30,000 generated words, a title of 3-8 words, two tags. Queries: three words
taken from a random document's body, so every query has matches. No timing
here is a test: the test suite asserts behaviour only.
"""

from __future__ import annotations

import argparse
import heapq
import importlib.metadata
import itertools
import math
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
from _bench_common import cpu_name

from ctx.hub.retrieval.index.lexical import LexicalDoc, LexicalIndex

RESULTS = Path(__file__).parent / "results" / "lexical.md"
SEED = 20261122
VOCABULARY = 30_000
QUERIES = 300
BATCH = 10_000

SYLLABLES = [
    c + v
    for c in ["b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "z"]
    for v in ["a", "e", "i", "o", "u", "an", "er", "in", "on", "us"]
]


def make_vocabulary(rng: random.Random) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        words["".join(rng.choices(SYLLABLES, k=rng.randint(1, 4)))] = None
    return list(words)


def make_docs(count: int, rng: random.Random) -> list[LexicalDoc]:
    vocabulary = make_vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    cumulative = list(itertools.accumulate(weights))
    start = datetime(2024, 1, 1, tzinfo=UTC)
    docs = []
    for i in range(count):
        body = rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(20, 80))
        title = rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(3, 8))
        docs.append(
            LexicalDoc(
                blob=f"{rng.getrandbits(160):040x}",
                memory_id=f"m{i:08d}",
                kind=rng.choice(["note", "decision", "fact", "preference"]),
                context=rng.choice(["", "billing", "search", "mobile"]),
                title=" ".join(title),
                body=" ".join(body),
                tags=(f"project:{rng.choice(vocabulary[:50])}", "tier:working"),
                created_at=start + timedelta(minutes=i),
            )
        )
    return docs


def make_queries(docs: list[LexicalDoc], rng: random.Random) -> list[str]:
    queries = []
    for _ in range(QUERIES):
        words = rng.choice(docs).body.split()
        queries.append(" ".join(rng.sample(words, 3)))
    return queries


class PlainBM25:
    """BM25 over dict postings, the way one would write it without a library."""

    K1 = 1.2
    B = 0.75

    def __init__(self, docs: list[LexicalDoc]) -> None:
        self.postings: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
        self.lengths: list[int] = []
        self.blobs: list[str] = []
        for number, doc in enumerate(docs):
            words = self.tokens(f"{doc.title or ''} {doc.body}")
            counts: dict[str, int] = {}
            for word in words:
                counts[word] = counts.get(word, 0) + 1
            for word, count in counts.items():
                self.postings[word].append((number, count))
            self.lengths.append(len(words))
            self.blobs.append(doc.blob)
        self.average = sum(self.lengths) / max(1, len(self.lengths))

    @staticmethod
    def tokens(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        total = len(self.lengths)
        scores: defaultdict[int, float] = defaultdict(float)
        for word in set(self.tokens(query)):
            postings = self.postings.get(word)
            if not postings:
                continue
            idf = math.log(1 + (total - len(postings) + 0.5) / (len(postings) + 0.5))
            for number, count in postings:
                norm = self.K1 * (
                    1 - self.B + self.B * self.lengths[number] / self.average
                )
                scores[number] += idf * count * (self.K1 + 1) / (count + norm)
        best = heapq.nlargest(limit, scores.items(), key=lambda item: item[1])
        return [(self.blobs[number], score) for number, score in best]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def timed(call, queries: list[str]) -> tuple[float, float]:
    for query in queries[:20]:  # warm up
        call(query)
    samples = []
    for query in queries:
        began = time.perf_counter()
        call(query)
        samples.append((time.perf_counter() - began) * 1000)
    return percentiles(samples)


def folder_bytes(path: Path) -> int:
    return sum(entry.stat().st_size for entry in path.iterdir() if entry.is_file())


def build(docs: list[LexicalDoc], folder: Path) -> tuple[LexicalIndex, float]:
    index = LexicalIndex.open(folder)
    began = time.perf_counter()
    with index.writer() as writer:
        for start in range(0, len(docs), BATCH):
            writer.add(docs[start : start + BATCH])
        writer.commit()
    return index, time.perf_counter() - began


def measure(
    size: int, docs: list[LexicalDoc], queries: list[str], workdir: Path
) -> dict:
    docs = docs[:size]
    row: dict = {"size": size}
    index, seconds = build(docs, workdir / f"index-{size}")
    row["build_docs_s"] = size / seconds
    row["build_s"] = seconds
    row["bytes"] = folder_bytes(workdir / f"index-{size}")

    rng = random.Random(SEED + size)
    small = {doc.blob for doc in rng.sample(docs, min(1000, size))}
    half = {doc.blob for doc in rng.sample(docs, size // 2)}
    row["search"] = timed(lambda q: index.search(q, limit=20), queries)
    row["allowed_1k"] = timed(
        lambda q: index.search(q, limit=20, allowed=small), queries
    )
    row["allowed_half"] = timed(
        lambda q: index.search(q, limit=20, allowed=half), queries
    )
    row["fuzzy"] = timed(lambda q: index.fuzzy_search(q, limit=20), queries)
    searcher = index._index.searcher()
    built = {q: index._bm25_query(q) for q in queries}
    row["tantivy_only"] = timed(
        lambda q: searcher.search(built[q], 20, count=False), queries
    )

    began = time.perf_counter()
    plain = PlainBM25(docs)
    row["plain_build_docs_s"] = size / (time.perf_counter() - began)
    row["plain"] = timed(lambda q: plain.search(q, 20), queries)

    # Agreement of the top 10 (Tantivy stems, and weighs title and tags apart).
    overlap = []
    for query in queries[:100]:
        ours = {blob for blob, _ in index.search(query, limit=10)}
        theirs = {blob for blob, _ in plain.search(query, 10)}
        overlap.append(len(ours & theirs) / max(1, len(theirs)))
    row["overlap"] = statistics.mean(overlap)

    # The same on bodies alone (no title, tags or context): a check that the
    # two compute the same BM25, apart from stemming.
    bare = [msgspec.structs.replace(d, title=None, tags=(), context="") for d in docs]
    bare_index, _ = build(bare, workdir / f"bare-{size}")
    bare_plain = PlainBM25(bare)
    overlap = []
    for query in queries[:100]:
        ours = {blob for blob, _ in bare_index.search(query, limit=10)}
        theirs = {blob for blob, _ in bare_plain.search(query, 10)}
        overlap.append(len(ours & theirs) / max(1, len(theirs)))
    row["bare_overlap"] = statistics.mean(overlap)

    row["add_one"] = add_one_cost(index)
    return row


def add_one_cost(index: LexicalIndex) -> tuple[float, float]:
    """Returns p50/p95 ms of one new document, committed and then found."""
    samples = []
    with index.writer() as writer:
        for i in range(30):
            doc = LexicalDoc(
                blob=f"new{i:037d}",
                memory_id=f"new{i}",
                kind="note",
                context="",
                title=None,
                body=f"freshly added zzuniq{i} memory",
                tags=(),
                created_at=datetime(2025, 1, 1, tzinfo=UTC),
            )
            began = time.perf_counter()
            writer.add([doc])
            writer.commit()
            hits = index.search(f"zzuniq{i}", limit=1)
            samples.append((time.perf_counter() - began) * 1000)
            if not hits or hits[0][0] != doc.blob:
                raise SystemExit(f"a new document was not found: {hits}")
    return percentiles(samples)


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def render(
    rows: list[dict],
    generated_s: float,
    total_s: float,
    quick: bool,
    tmpfs_add_one: tuple[float, float] | None,
    load_at_start: float,
    note: str | None,
) -> str:
    load = os.getloadavg()[0]
    lines = [
        "# ctx lexical channel benchmark",
        "",
        "Generated by `benchmarks/bench_lexical.py`; do not edit by hand.",
        "",
        f"Command: `python benchmarks/bench_lexical.py{' --quick' if quick else ''}`"
        f" ({total_s:.0f} s, of which generating documents {generated_s:.0f} s)",
        "",
        "| machine | |",
        "|---|---|",
        f"| Date | {datetime.now(UTC):%Y-%m-%d %H:%M} UTC |",
        f"| CPU | {cpu_name()} |",
        f"| Cores | {os.cpu_count()} ({len(os.sched_getaffinity(0))} usable) |",
        f"| OS | {platform.platform()} |",
        f"| Python | {platform.python_version()} |",
        f"| tantivy | {version('tantivy')} |",
        f"| Load average (1 min) at start / end | {load_at_start:.2f} / {load:.2f} |",
        "",
        *([f"Conditions: {note}", ""] if note else []),
        "Documents: bodies of 20-80 words (Zipf over 30,000 generated words), titles of",
        f"3-8 words, two tags. {QUERIES} queries of three words taken from a random",
        "document's body; p50/p95 over all of them after 20 warm-up queries, top 20.",
        "",
        "## Build",
        "",
        "| documents | ctx LexicalIndex (docs/s) | build (s) | size on disk | plain-Python BM25 (docs/s) | add one + commit + search p50 / p95 (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['size']:,} | {row['build_docs_s']:,.0f} | {row['build_s']:.2f} |"
            f" {row['bytes'] / 1e6:.1f} MB | {row['plain_build_docs_s']:,.0f} |"
            f" {row['add_one'][0]:.1f} / {row['add_one'][1]:.1f} |"
        )
    lines += [
        "",
        "Build: documents/s of `LexicalWriter.add` in batches of 10,000 plus one commit,"
        " on the disk that holds the temporary folder. The add-one column is one `add`, `commit`"
        " and the `search` that finds it, on the built index. Tantivy's commit fsyncs"
        " its files, so it depends on the disk and on other I/O at the time (one run"
        " beside another I/O-heavy benchmark measured ~80 ms).",
    ]
    if tmpfs_add_one is not None:
        lines.append(
            f"The same on an empty index in /dev/shm (tmpfs, no fsync cost):"
            f" p50 {tmpfs_add_one[0]:.1f} ms, p95 {tmpfs_add_one[1]:.1f} ms."
        )
    lines += [
        "",
        "## Top-20 query latency, p50 / p95 (ms)",
        "",
        "| documents | `search` | `search`, allowed 1,000 ids | `search`, allowed half | `fuzzy_search` | Tantivy search call alone | plain-Python BM25 |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [
            f"{row[key][0]:.3f} / {row[key][1]:.3f}"
            for key in (
                "search",
                "allowed_1k",
                "allowed_half",
                "fuzzy",
                "tantivy_only",
                "plain",
            )
        ]
        lines.append(f"| {row['size']:,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "`allowed 1,000 ids` is a sparse live set (1% at 100k documents): the over-fetch"
        " reads the blob id of about 3,000 hits (2-3 µs each). Filtering inside Tantivy"
        " instead was slower or not much faster in one-off checks: a term-set filter of"
        " 1,000 ids took 5.5 ms on 5,000 documents; 1,000 should-term queries 4.9 ms"
        " p50 at 100k.",
        "",
        "Top-10 agreement with the plain BM25 (share of its top 10 that `search` also",
        "returns, first 100 queries). With titles and tags they differ by design",
        "(title boost 2, tags, stemming):",
        ", ".join(f"{row['size']:,} docs {row['overlap']:.2f}" for row in rows) + ".",
        "On bodies alone (a check that both compute the same BM25; only stemming",
        "differs):",
        ", ".join(f"{row['size']:,} docs {row['bare_overlap']:.2f}" for row in rows)
        + ".",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 5k documents")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--note", help="a line on the conditions of the run")
    args = parser.parse_args()
    sizes = [1_000, 5_000] if args.quick else [10_000, 100_000]

    load_at_start = os.getloadavg()[0]
    began = time.perf_counter()
    rng = random.Random(SEED)
    docs = make_docs(max(sizes), rng)
    queries = make_queries(docs[: min(sizes)], rng)
    generated_s = time.perf_counter() - began

    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for size in sizes:
            rows.append(measure(size, docs, queries, Path(workdir)))
            print(f"{size:,} documents measured", file=sys.stderr)
    tmpfs_add_one = None
    if Path("/dev/shm").is_dir():
        with tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
            tmpfs_add_one = add_one_cost(LexicalIndex.open(shm))
    report = render(
        rows,
        generated_s,
        time.perf_counter() - began,
        args.quick,
        tmpfs_add_one,
        load_at_start,
        args.note,
    )
    print(report)
    if not args.quick and not args.no_write:
        RESULTS.write_text(report)


if __name__ == "__main__":
    main()
