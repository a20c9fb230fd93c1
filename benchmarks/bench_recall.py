"""Recall latency, ``ctx recall`` wall, indexing, catch-up, index size and memory.

Usage::

    .venv/bin/python benchmarks/bench_recall.py                      # 10k, 100k, 1M
    .venv/bin/python benchmarks/bench_recall.py --sizes 10000,100000
    .venv/bin/python benchmarks/bench_recall.py --quick              # 2k, a minute
    .venv/bin/python benchmarks/bench_recall.py --build-only         # fill the cache

What it measures, in one run (results in ``benchmarks/results/recall.md``):

1. Warm in-process latency of the whole ``recall()`` pipeline (same Projection,
   index caught up) per size, p50/p95 over the queries, and its query-embedding
   part; beside it, per query, a baseline: brute-force numpy cosine over every
   vector (one matrix-vector product + argpartition) plus ``LexicalIndex.search``
   (Tantivy, no allowed-set filter), fused by RRF (k 60).
2. ``ctx recall`` as a process on the largest MiniLM store (and ``python -c
   pass``, ``ctx --version``), with -X importtime and cProfile if over 300 ms.
3. ``reindex`` throughput with MiniLM (smallest size) and hashing (100k).
4. Catch-up of one new commit (``open_sources`` after one ``remember``), warm
   and in a fresh process.
5. Index size on disk and the resident memory of a fresh process that answers
   one recall, against one that only imports.

Stores up to ``--minilm-max`` memories get MiniLM vectors; larger ones the
hashing embedder (384 dims) for both memories and queries. Stores and their
indexes are cached under ``benchmarks/.data/recall/``.
"""

from __future__ import annotations

import argparse
import compileall
import cProfile
import importlib.util
import io
import itertools
import json
import os
import pstats
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

# As importing ctx.hub does before numpy loads (hub/__init__.py): here numpy
# comes first, and two BLAS threads would fight onnxruntime's for the cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Only the scenario that measures it may start a hub (it clears CTX_*).
os.environ["CTX_HUB_AUTOSTART"] = "0"

import numpy as np
from _recall_report import (
    LOADS,
    LONG_EVERY,
    LONG_LINES,
    NOW,
    SPAN_DAYS,
    TIME_PHRASES,
    f2,
    fingerprint,
    render,
)
from bench_lexical import make_vocabulary

from ctx.engine import Draft, Intent, Store, remember, remember_many
from ctx.hub.config import load_config
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.index.maintenance import index_status, reindex
from ctx.hub.retrieval.index.passages import owner
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.sources import open_sources

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "recall"
RESULTS = HERE / "results" / "recall.md"
BIN = Path(sys.executable).parent
SEED = 20261122
KINDS = ("fact", "decision", "pattern", "observation")
CONTEXTS = ("general", "billing", "search", "mobile")
OBSERVE = Intent(agent="bench", intent="observe")


def progress(message: str) -> None:
    LOADS.append(os.getloadavg()[0])
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def pct(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[round(0.95 * (len(ordered) - 1))]


# -- data -----------------------------------------------------------------------


def drafts(count: int) -> Iterator[Draft]:
    """The generated memories, in order: the same prefix for every store size."""
    rng = random.Random(SEED)
    vocab = make_vocabulary(rng)
    cumulative = list(np.cumsum([1 / (r + 1) for r in range(len(vocab))]))
    for i in range(count):
        body = rng.choices(vocab, cum_weights=cumulative, k=rng.randint(20, 80))
        title = rng.choices(vocab, cum_weights=cumulative, k=rng.randint(3, 8))
        text = " ".join(body)
        if i % LONG_EVERY == LONG_EVERY - 1:
            # A long memory (a session, a document): lines of 10-25 words,
            # 700-2,800 words in all, embedded as several passages.
            lines = [
                " ".join(
                    rng.choices(vocab, cum_weights=cumulative, k=rng.randint(10, 25))
                )
                for _ in range(rng.randint(*LONG_LINES))
            ]
            text = "\n".join([text, *lines])
        yield Draft(
            text=text,
            title=" ".join(title) if rng.random() < 0.5 else None,
            kind=KINDS[i % len(KINDS)],
            context=CONTEXTS[i % len(CONTEXTS)],
            tags=(f"project:{rng.choice(vocab[:200])}", f"group:g{i % 3}"),
            when=NOW - timedelta(days=SPAN_DAYS * rng.random()),
        )


def make_queries(count: int) -> list[str]:
    rng = random.Random(SEED + 1)
    pool = list(drafts(2_000))
    queries = []
    for _ in range(count):
        words = rng.choice(pool).text.split()
        query = " ".join(rng.sample(words, rng.randint(3, 6)))
        if rng.random() < 0.1:
            query += " " + rng.choice(TIME_PHRASES)
        queries.append(query)
    return queries


def clock() -> datetime:
    return datetime.now(UTC)


def store_dir(size: int, kind: str) -> Path:
    return DATA / f"{size}-{kind}-long{LONG_EVERY}x{LONG_LINES[1]}"


def ensure_store(size: int, kind: str) -> Store:
    """Opens (writing first if missing) a store of ``size`` generated memories."""
    folder = store_dir(size, kind)
    path = folder / ".ctx"
    if (folder / "done").exists():
        return Store.open(path, clock=clock)
    if path.exists():
        raise SystemExit(f"{folder} is half-written: remove it and run again")
    store = Store.init(path, clock=clock)
    if kind == "hashing":
        (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    began = time.perf_counter()
    generated = drafts(size)
    for first in range(0, size, 100_000):
        chunk = list(itertools.islice(generated, 100_000))
        remember_many(store, chunk, OBSERVE, summary="bench")
        progress(f"  {folder.name}: {first + len(chunk):,} memories written")
    (folder / "done").write_text(f"{time.perf_counter() - began:.1f}\n")
    return store


def projection_of(store: Store, **kwargs) -> Projection:
    return Projection.for_store(store, load_config(store.path), **kwargs)


def build(store: Store, force: bool = False) -> dict:
    """Reindexes the store unless its index is current; returns the build record."""
    record_file = Path(store.path).parent / "build.json"
    projection = projection_of(store)
    status = index_status(projection)
    if not force and record_file.exists() and all(b.current for b in status.branches):
        return json.loads(record_file.read_text())
    ticks: list[tuple[float, int]] = []
    projection = projection_of(
        store, progress=lambda d, _t: ticks.append((time.perf_counter(), d))
    )
    load = os.getloadavg()[0]
    began = time.perf_counter()
    report = reindex(projection, re_embed=True)  # embedding throughput
    end = time.perf_counter()
    n = report.documents
    assert report.embedded == report.documents, report  # vectors: passages too
    last = ticks[-1][0] if ticks else end
    tail = [t for t in ticks if t[1] >= n - 10_000] or ticks
    record = {
        "memories": n,
        "vectors": report.vectors,
        "embedder": report.embedder,
        "seconds": end - began,
        "per_s": n / (end - began),
        "indexing_s": last - began,
        "after_last_batch_s": end - last,  # HNSW conversion at >= CROSSOVER
        "last_10k_per_s": (tail[-1][1] - tail[0][1] if len(tail) > 1 else float("nan"))
        / max(1e-9, tail[-1][0] - tail[0][0]),
        "kind": index_status(projection).vector_index,
        "size_bytes": live_bytes(store),
        "load": f"{load:.2f} / {os.getloadavg()[0]:.2f}",
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
    }
    record_file.write_text(json.dumps(record, indent=1))
    progress(f"  built {store.path}: {n:,} in {record['seconds']:.1f} s")
    return {**record, "this_run": True}


def rebuild_kept(store: Store) -> dict:
    """Times a reindex that keeps the vectors (the default) on a built store."""
    projection = projection_of(store)
    began = time.perf_counter()
    report = reindex(projection)
    return {
        "seconds": time.perf_counter() - began,
        "memories": report.documents,
        "embedded": report.embedded,
        "reused": report.reused,
    }


# -- 1. warm latency ------------------------------------------------------------


def rrf(channels: list[list[str]], k: float = 60.0, limit: int = 25) -> list[str]:
    scores: dict[str, float] = {}
    for hits in channels:
        for position, blob in enumerate(hits, start=1):
            scores[blob] = scores.get(blob, 0.0) + 1 / (k + position)
    return sorted(scores, key=scores.__getitem__, reverse=True)[:limit]


def latency(
    store: Store, queries: list[str], warmup: int, swap: bool, prof: bool = False
) -> dict:
    """Times recall() and the baseline; ``swap``: embed queries with MiniLM."""
    projection = projection_of(store)
    config = load_config(store.path).recall
    sources = open_sources(projection)
    vectors_by = projection.embedder.name
    if swap:  # after the catch-up: the name recorded in the index stays
        projection.embedder = make_embedder({"kind": "minilm"})
    view = sources[0].view
    vectors = projection.vectors
    assert vectors is not None
    keys = vectors.keys()
    matrix = vectors.vectors_of(keys)
    embed, lexical = projection.embedder.embed, projection.lexical

    def baseline(query: str) -> list[str]:
        q = embed([query])[0]
        scores = matrix @ q
        top = np.argpartition(-scores, config.depth)[: config.depth]
        top = top[np.argsort(-scores[top])]
        bm25 = [blob for blob, _ in lexical.search(query, limit=config.depth)]
        return rrf([list(dict.fromkeys(owner(keys[i])[0] for i in top)), bm25])

    times: dict[str, list[float]] = {"recall": [], "embed": [], "base": [], "open": []}
    overlap, temporal = [], 0
    for n, query in enumerate(queries[:warmup] + queries):
        t0 = time.perf_counter()
        result = recall(projection, sources, query, config=config, now=NOW)
        t1 = time.perf_counter()
        embed([query])
        t2 = time.perf_counter()
        fused = baseline(query)
        t3 = time.perf_counter()
        open_sources(projection)
        t4 = time.perf_counter()
        if n < warmup:
            continue
        for key, spent in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            times[key].append(spent * 1000)
        temporal += bool(result.temporal)
        ours = {view.catalog.entries[h.id].blob for h in result.hits[:10]}
        overlap.append(len(ours & set(fused[:10])) / 10)
    profiled = ""
    if prof:  # where recall() spends its time, over 50 queries
        profiler = cProfile.Profile()
        profiler.enable()
        for query in queries[:50]:
            recall(projection, sources, query, config=config, now=NOW)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
        profiled = re.sub(r"/\S*/(site-packages|ctx)/", r"\1/", out.getvalue())
        profiled = "\n".join(profiled.strip().splitlines()[3:])
    return {
        "profile": profiled,
        "size": len(view.blobs),
        "complete": view.complete,
        "vector_index": vectors.kind,
        "embedder": f"{vectors_by} / {projection.embedder.name}",
        "queries": len(queries),
        "temporal": temporal,
        "overlap": statistics.mean(overlap),
        **{key: pct(values) for key, values in times.items()},
    }


# -- 2, 4, 5. processes ---------------------------------------------------------


def compile_ctx() -> None:
    """Writes ctx's bytecode (PYTHONDONTWRITEBYTECODE may be set), as pip would."""
    for name in ("ctx.engine", "ctx.hub", "ctx.lens", "ctx.porcelain"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None:
            compileall.compile_dir(Path(spec.origin).parent, quiet=1)


def wall(argv: list[str], runs: int) -> tuple[float, float]:
    subprocess.run(argv, capture_output=True, check=True)  # warm the page cache
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        samples.append((time.perf_counter() - began) * 1000)
    return pct(samples)


def cli(store: Store, queries: list[str], runs: int) -> dict:
    folder = str(Path(store.path).parent)
    ctx = str(BIN / "ctx")
    out = {
        "python": wall([sys.executable, "-c", "pass"], runs),
        "version": wall([ctx, "--version"], runs),
    }
    alone = {**os.environ, "CTX_NO_HUB": "1"}

    def timed(env: dict[str, str]) -> tuple[float, float]:
        samples = []
        for query in queries[: runs + 1]:
            argv = [ctx, "--store", folder, "recall", query, "--json"]
            began = time.perf_counter()
            result = subprocess.run(argv, capture_output=True, check=True, env=env)
            samples.append((time.perf_counter() - began) * 1000)
        json.loads(result.stdout)
        return pct(samples[1:])

    out["recall"] = timed(alone)
    hub = subprocess.Popen(
        [ctx, "--store", folder, "hub", "start"], stdout=subprocess.PIPE, text=True
    )
    assert hub.stdout is not None
    assert "listening" in hub.stdout.readline()
    try:
        out["recall_hub"] = timed(dict(os.environ))
    finally:
        subprocess.run([ctx, "--store", folder, "hub", "stop"], capture_output=True)
        hub.communicate(timeout=60)
    # No hub: the first recall answers and starts one; the next ones use it.
    auto = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    argv = [ctx, "--store", folder, "recall", queries[-1], "--json"]
    began = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, env=auto)
    out["recall_first"] = (time.perf_counter() - began) * 1000
    status = [ctx, "--store", folder, "hub", "status", "--json"]
    while not json.loads(subprocess.run(status, capture_output=True).stdout)["running"]:
        assert time.perf_counter() - began < 300, "the hub did not start"
        time.sleep(0.05)
    out["hub_ready_s"] = time.perf_counter() - began
    try:
        out["recall_auto"] = timed(auto)
    finally:
        subprocess.run([ctx, "--store", folder, "hub", "stop"], capture_output=True)
    out["argv"] = f"ctx --store {folder} recall QUERY --json"
    out["name"] = Path(folder).name
    if out["recall"][0] > 300:
        argv = [ctx, "--store", folder, "recall", queries[0], "--json"]
        out["importtime"] = import_tree(argv)
        out["profile"] = profile(argv)
    return out


def import_tree(argv: list[str], top: int = 18) -> str:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, check=True
    )
    rows = []
    for line in result.stderr.decode().splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (.*)$", line)
        if match and match[3].count("  ") <= 1:  # top-level and one level down
            rows.append((int(match[2]), int(match[1]), match[3]))
    total = sum(c for c, _, name in rows if not name.startswith(" "))
    rows.sort(reverse=True)
    lines = [f"{'cumul.':>8} {'self':>8}  module (µs, top level and 1 deep)"]
    lines += [f"{c:>8} {s:>8}  {name}" for c, s, name in rows[:top]]
    return "\n".join([*lines, f"sum of top-level imports: {total / 1000:.0f} ms"])


def profile(argv: list[str], top: int = 25) -> str:
    target = DATA / "recall.prof"
    subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(target), *argv],
        capture_output=True,
        check=True,
    )
    code = (
        "import pstats,sys; pstats.Stats(sys.argv[1]).sort_stats('cumulative')"
        f".print_stats({top})"
    )
    text = subprocess.run(
        [sys.executable, "-c", code, str(target)], capture_output=True, check=True
    ).stdout.decode()
    text = re.sub(r"/\S*/site-packages/", "", text)
    text = re.sub(r"/\S*/(ctx/\w+/)", r"\1", text)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(line for line in lines[start - 2 :] if line.strip())


FRESH = """
import json, sys, time
from pathlib import Path
from datetime import datetime, UTC
from ctx.engine import Store
from ctx.hub.config import load_config
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.sources import open_sources
import ctx.hub.retrieval.embedders.{kind}, numpy, hnswlib
out = {{}}
if sys.argv[1] != "imports":
    store = Store.open(Path(sys.argv[2]), clock=lambda: datetime.now(UTC))
    config = load_config(store.path)
    began = time.perf_counter()
    projection = Projection.for_store(store, config)
    sources = open_sources(projection)
    out["open_s"] = time.perf_counter() - began
    out["indexed"] = projection.last_catch_up and projection.last_catch_up.indexed
    if sys.argv[1] == "recall":
        recall(projection, sources, sys.argv[3], config=config.recall,
               now=datetime.now(UTC))
status = Path("/proc/self/status").read_text()
out["maxrss_kib"] = int(status.split("VmHWM:")[1].split()[0])
print(json.dumps(out))
"""


def fresh(mode: str, store: Store, kind: str, query: str = "") -> dict:
    code = FRESH.format(kind="hashing" if kind == "hashing" else "minilm")
    argv = [sys.executable, "-c", code, mode, str(store.path), query]
    began = time.perf_counter()
    out = json.loads(subprocess.run(argv, capture_output=True, check=True).stdout)
    out["wall_s"] = time.perf_counter() - began
    return out


def catch_up(store: Store, kind: str, runs: int) -> dict:
    projection = projection_of(store)
    open_sources(projection)
    warm, fresh_open, fresh_wall = [], [], []
    for i in range(runs):
        remember(store, Draft(text=f"catch-up probe {i} at {clock()}"), OBSERVE)
        projection.last_catch_up = None
        began = time.perf_counter()
        open_sources(projection)
        warm.append((time.perf_counter() - began) * 1000)
        done = projection.last_catch_up
        assert done is not None, "nothing was indexed"
        assert done.indexed == 1, done
        remember(store, Draft(text=f"catch-up probe {i}b at {clock()}"), OBSERVE)
        out = fresh("open", store, kind)
        assert out["indexed"] == 1, out
        fresh_open.append(out["open_s"] * 1000)
        fresh_wall.append(out["wall_s"] * 1000)
    open_sources(projection)  # leave the index current
    return {"warm": pct(warm), "fresh_open": pct(fresh_open), "fresh": pct(fresh_wall)}


def live_bytes(store: Store) -> int:
    """Bytes of the index folders state.json names (a reindex leaves the old
    ones for up to 10 min, and ``index_status().size_bytes`` counts them)."""
    folder = Path(store.path) / "index"
    state = json.loads((folder / "state.json").read_text())
    files = [
        f for d in (state["lexical"], state["vectors"]) for f in (folder / d).rglob("*")
    ]
    return sum(f.stat().st_size for f in files if f.is_file())


def memory(store: Store, kind: str, query: str) -> dict:
    base = min(fresh("imports", store, kind)["maxrss_kib"] for _ in range(3))
    used = min(fresh("recall", store, kind, query)["maxrss_kib"] for _ in range(3))
    status = index_status(projection_of(store))
    return {
        "base_kib": base,
        "recall_kib": used,
        "size_bytes": live_bytes(store),
        "all_bytes": status.size_bytes,
        "memories": status.documents,
        "vectors": status.vector_index,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--quick", action="store_true", help="2k memories, few runs")
    parser.add_argument("--minilm-max", type=int, default=10_000)
    parser.add_argument("--minilm-build", type=int, default=2_000)
    parser.add_argument("--hashing-build", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--catchup", type=int, default=5)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--note", help="a line on the conditions of the run")
    args = parser.parse_args()
    args.command = " ".join(["python benchmarks/bench_recall.py", *sys.argv[1:]])
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.quick:
        sizes, args.hashing_build, args.minilm_max = [500, 5_000], 5_000, 500
        args.minilm_build = 500
        args.queries, args.warmup, args.runs, args.catchup = 30, 5, 3, 2
    began = time.perf_counter()
    started = fingerprint()
    progress(f"sizes {sizes}")
    compile_ctx()
    stores = {}
    for size in sizes:
        kind = "minilm" if size <= args.minilm_max else "hashing"
        stores[f"{size}-{kind}"] = (size, kind, ensure_store(size, kind))
    builds = {name: build(store) for name, (_, _, store) in stores.items()}
    if args.build_only:
        return
    fresh_builds = {}  # throughput, measured in this run
    for size, kind in ((args.minilm_build, "minilm"), (args.hashing_build, "hashing")):
        fresh_builds[f"{size}-{kind}"] = build(ensure_store(size, kind), force=True)
    builds.update(fresh_builds)
    kept = {}
    for size, kind in ((args.minilm_build, "minilm"), (args.hashing_build, "hashing")):
        kept[f"{size}-{kind}"] = rebuild_kept(ensure_store(size, kind))
        progress(
            f"  reindex keeping vectors on {size}-{kind}: {kept[f'{size}-{kind}']}"
        )
    queries = make_queries(args.queries)
    rows, mem, clis, catches = [], [], [], []
    for name, (size, kind, store) in stores.items():
        for swap in (True, False) if kind == "hashing" else (False,):
            progress(f"latency on {name}{' (MiniLM queries)' if swap else ''}")
            prof = swap and (size == 100_000 or args.quick)
            rows.append(latency(store, queries, args.warmup, swap, prof))
            progress(f"  recall p50/p95 {f2(rows[-1]['recall'])} ms")
        mem.append({**memory(store, kind, queries[0]), "embedder": kind})
        largest = max(s for s, k, _ in stores.values() if k == kind)
        if (kind == "minilm" and size == largest) or size == 100_000 or args.quick:
            progress(f"ctx recall processes and catch-up on {name}")
            clis.append(cli(store, queries, args.runs))
            catches.append({**catch_up(store, kind, args.catchup), "name": name})
    text = render(
        args,
        rows,
        builds,
        kept,
        clis,
        catches,
        mem,
        time.perf_counter() - began,
        started,
    )
    print(text)
    if not args.quick and not args.no_write:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
