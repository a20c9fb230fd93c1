"""The report of ``bench_recall.py``: goals, tables and the run before.

Kept apart from the measuring so that each reads in one sitting.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
from datetime import UTC, datetime
from pathlib import Path

from _bench_common import cpu_name

from ctx.hub.retrieval.index.vectors import CROSSOVER

NOW = datetime(2026, 11, 22, tzinfo=UTC)
SPAN_DAYS = 730
LONG_EVERY = 50
"""Every 50th memory is long: 2% of the store."""
LONG_LINES = (40, 160)
"""A long memory's lines of 10-25 words: 700-2,800 words, a session or a
document, embedded as passages (hub/retrieval/index/passages.py)."""
TIME_PHRASES = ("last week", "in March", "last month", "yesterday")
LOADS: list[float] = []

PREVIOUS = {
    (10_000, "minilm"): (8.95, 1.68),
    (100_000, "minilm"): (18.33, 0.97),
    (100_000, "hashing"): (14.05, 0.93),
    (1_000_000, "minilm"): (45.61, 0.40),
    (1_000_000, "hashing"): (40.70, 0.37),
}
"""recall() p50 (ms) and p50 over the baseline's, per size and query embedder,
of the run in results/recall.md before long memories (2026-11-24, sources
139be390327f, load 1.5-1.8; at 10,000 its vectors were MiniLM's). That run
had no 1,000,000 row: those are of the run three hours before it (sources
eb6b2236f70a, load 1.1-1.9), whose 100,000 rows were 1.08x and 1.07x."""

GOALS_MS = {10_000: 10.0, 100_000: 20.0, 1_000_000: 50.0}


def f2(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.2f} / {pair[1]:.2f}"


def table(headers: str, rows: list[list[object]]) -> str:
    out = [
        f"| {headers.replace('|', ' | ')} |",
        "|" + "---|" * (headers.count("|") + 1),
    ]
    return "\n".join(out + ["| " + " | ".join(map(str, row)) + " |" for row in rows])


INTRO = """\
Memories: bodies of 20-80 words drawn Zipf-like from 30,000 generated words
(bench_lexical's generator; every {long_every}th memory is long: 700-2,800 words in lines
of 10-25, a session or a document, embedded as passages), a title of 3-8 words on half, two tags, four kinds
and contexts, `created_at` uniform over the {span} days before {now:%Y-%m-%d}.
Queries: 3-6 words sampled from a random memory's body; ~10% end with a time
phrase ({phrases}). Stores of more than {minilm_max:,} memories are indexed with
the hashing embedder (384 dims, like MiniLM): MiniLM embeds these generated
texts (~200 word pieces each) at only ~37 texts/s here, so 100k would take
45 min. Their latency rows embed the queries with MiniLM anyway (swapped in
after the catch-up; the vector search cost depends on the dimensions and count,
not the model), and a second row embeds them with the hashing embedder."""

LATENCY = """\
One Projection per store, caught up, reused; {queries} queries after {warmup}
warm-up ones. Per query, in turn: `recall()` (default budget, `now` fixed), the
query embedding alone, the baseline, a no-op `open_sources()`. Baseline:
`embedder.embed` + brute-force cosine (`matrix @ q`, argpartition, top 100) over
every stored vector (in RAM) + `LexicalIndex.search` (ctx's Tantivy BM25 with its
query analysis, no allowed-set filter, top 100), fused by plain RRF (k 60). ctx
also runs the fuzzy channel, temporal parsing, gravity, link expansion, and
reads and packs the hits. At >= 100,000 vectors ctx searches HNSW (approximate),
the baseline is exact."""

NOTES = """\
## 3. Full index build (`reindex`)

{builds}

A build reads every blob from git, adds it to Tantivy and embeds it in batches
of 512 (committed and saved every 5 s), then, at >= {crossover:,}
vectors, converts flat to HNSW (the "after the last batch" column). These
builds run `reindex --re-embed`; a plain `ctx reindex` keeps the vectors the
same embedder made (copied by blob from the index it replaces), measured
right after on the same stores:

{kept}

## 4. Catch-up of one new commit

`remember` one memory, then `open_sources(projection)`; {catchup} runs each;
`projection.last_catch_up.indexed == 1` asserted every time.

{catches}

## 5. Index size and resident memory

Peak RSS (VmHWM, min of 3) of a fresh process that opens the store and answers
one recall with the store's embedder, minus that of one that only imports the
same modules (numpy, hnswlib and the embedder module included).

{mem}
"""


# fmt: off
def render(args, rows, builds, kept, clis, catches, mem, total_s, started) -> str:
    goals = []
    for r in rows:
        goal = GOALS_MS.get(r["size"] - r["size"] % 10_000)
        if goal:
            ok = r["recall"][0] < goal and r["recall"][1] < 2 * goal
            goals.append([f"`recall()` at {r['size']:,} ({r['embedder']}): p50 < {goal:.0f} ms, p95 < {2 * goal:.0f} ms", f"{f2(r['recall'])} ms", "met" if ok else "missed"])
    for c in clis:
        ok = c["recall"][0] < 300
        goals.append([f"`ctx recall` process on {c['name']}, no hub (`CTX_NO_HUB=1`): < 300 ms", f"median {c['recall'][0]:.0f} ms, p95 {c['recall'][1]:.0f} ms", "met" if ok else "missed"])
        ok = c["recall_hub"][0] < 300
        goals.append([f"`ctx recall` process on {c['name']}, hub running: < 300 ms", f"median {c['recall_hub'][0]:.0f} ms, p95 {c['recall_hub'][1]:.0f} ms", "met" if ok else "missed"])
        ok = c["recall_auto"][0] < 300
        goals.append([f"`ctx recall` process on {c['name']}, defaults (the first call starts a hub): < 300 ms", f"first call {c['recall_first']:.0f} ms; later calls median {c['recall_auto'][0]:.0f} ms, p95 {c['recall_auto'][1]:.0f} ms", "met after the first call" if ok else "missed"])
    for c in catches:
        goals.append([f"catch-up of one commit on {c['name']} indexes one blob", f"`indexed == 1` in all {2 * args.catchup} runs", "met"])
    machine = [
        ["Date", f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"],
        ["CPU", cpu_name()],
        ["Cores", f"{os.cpu_count()} ({len(os.sched_getaffinity(0))} usable)"],
        ["OS", platform.platform()],
        ["Python", platform.python_version()],
        [
            "hub + engine sources (sha1)",
            f"{started} at start, {fingerprint()} at end",
        ],
        [
            "Load average (1 min) at start / most / end",
            f"{LOADS[0]:.2f} / {max(LOADS):.2f} / {os.getloadavg()[0]:.2f}",
        ],
    ]
    out = [
        "# ctx recall benchmark\n\nGenerated by `benchmarks/bench_recall.py`; do not edit by hand.\n",
        f"Command: `{args.command}` ({total_s / 60:.1f} min; stores cached, and the indexes of section 3's cached rows)\n",
        table("machine|", machine) + "\n",
        *([f"Conditions: {args.note}\n"] if args.note else []),
        INTRO.format(
            span=SPAN_DAYS,
            now=NOW,
            phrases=", ".join(TIME_PHRASES),
            minilm_max=args.minilm_max,
            long_every=LONG_EVERY,
        )
        + "\n",
        "## Goals\n\n" + table("goal|measured|met?", goals) + "\n",
        PREVIOUS_TEXT + "\n\n" + table("memories|vectors / queries embedded by|`recall()` p50 before (ms)|now (ms)|now / before|over the baseline before|now|now / before|within 10%?", against_previous(rows)) + "\n",
        "## 1. Warm recall latency in-process (ms, p50 / p95)\n",
        LATENCY.format(queries=args.queries, warmup=args.warmup) + "\n",
        table(
            "memories|vectors / queries embedded by|vector index|`recall()`|of which query embedding|baseline|recall / baseline (p50)|no-op `open_sources()`|top-10 shared with baseline|time phrases recognised",
            [
                [
                    f"{r['size']:,}",
                    r["embedder"],
                    r["vector_index"],
                    f2(r["recall"]),
                    f2(r["embed"]),
                    f2(r["base"]),
                    f"{r['recall'][0] / r['base'][0]:.2f}x",
                    f2(r["open"]),
                    f"{r['overlap']:.2f}",
                    f"{r['temporal']} of {r['queries']}",
                ]
                for r in rows
            ],
        )
        + "\n",
    ]
    out += [f"`recall()` at {r['size']:,} ({r['embedder']}), cProfile of 50 queries, by own time:\n\n```\n{r['profile']}\n```\n" for r in rows if r["profile"]]
    out.append(
        f"## 2. `ctx recall` as a process\n\n`ctx --store STORE recall QUERY --json`, index built; {args.runs} runs with different"
        " queries after one warm-up; bytecode compiled first. The store's own embedder embeds the query (the 100k store's is"
        " hashing: no model load; the MiniLM store shows what loading the model adds).\n"
    )
    if clis:
        procs = [[f"`{name}`", *(f"{v:.0f}" for v in clis[0][key])] for name, key in (("python -c pass", "python"), ("ctx --version", "version"))]
        procs += [[f"`ctx recall` on {c['name']}, `CTX_NO_HUB=1`", *(f"{v:.0f}" for v in c["recall"])] for c in clis]
        procs += [[f"`ctx recall` on {c['name']}, `ctx hub start` running", *(f"{v:.0f}" for v in c["recall_hub"])] for c in clis]
        procs += [[f"`ctx recall` on {c['name']}, first call with no hub (answers, starts one; it was ready {c['hub_ready_s']:.1f} s after the call began)", f"{c['recall_first']:.0f}", "-"] for c in clis]
        procs += [[f"`ctx recall` on {c['name']}, later calls (the hub that first call started)", *(f"{v:.0f}" for v in c["recall_auto"])] for c in clis]
        out.append(table("command|median (ms)|p95 (ms)", procs) + "\n")
    for c in clis:
        if "importtime" in c:
            out.append(f"Over 300 ms on {c['name']}: `python -X importtime` of one run:\n\n```\n{c['importtime']}\n```\n\ncProfile of one run (cumulative):\n\n```\n{c['profile']}\n```\n")
    out.append(NOTES.format(
        crossover=CROSSOVER, catchup=args.catchup,
        builds=table("store|embedder|vector index|memories|seconds|memories/s|after the last batch|last 10k memories/s|index size|measured|load start / end",
                     [[n, b["embedder"], b["kind"], f"{b['memories']:,}", f"{b['seconds']:.1f}", f"{b['per_s']:,.0f}", f"{b['after_last_batch_s']:.1f} s", f"{b['last_10k_per_s']:,.0f}", f"{b['size_bytes'] / 1e6:,.0f} MB", b["date"] + (" (this run)" if b.get("this_run") else " (cached)"), b["load"]] for n, b in builds.items()]),
        kept=table("store|memories|full build (s)|reindex keeping vectors (s)|embedded|kept",
                   [[n, f"{k['memories']:,}", f"{builds[n]['seconds']:.1f}", f"{k['seconds']:.1f}", f"{k['embedded']:,}", f"{k['reused']:,}"] for n, k in kept.items()]),
        catches=table("store|warm process (Projection reused)|fresh process: `for_store` + `open_sources`|fresh process: whole wall",
                      [[c["name"], *(f2(c[k]) + " ms" for k in ("warm", "fresh_open", "fresh"))] for c in catches]),
        mem=table("memories|vector index|index on disk|per 100k|imports only|open + one recall|difference|difference per 100k",
                  [[f"{m['memories']:,} ({m['embedder']})", m["vectors"], f"{m['size_bytes'] / 1e6:,.0f} MB ({m['all_bytes'] / 1e6:,.0f} MB with stale folders)", f"{m['size_bytes'] * 1e5 / m['memories'] / 1e6:,.0f} MB" if m["memories"] >= 10_000 else "-",
                    f"{m['base_kib'] / 1024:.0f} MiB", f"{m['recall_kib'] / 1024:.0f} MiB", f"{(m['recall_kib'] - m['base_kib']) / 1024:.0f} MiB", f"{(m['recall_kib'] - m['base_kib']) / 1024 * 1e5 / m['memories']:.0f} MiB" if m["memories"] >= 100_000 else "- (the model dominates)"] for m in mem]),
    ))
    return "\n".join(out)
# fmt: on


PREVIOUS_TEXT = """\
### Against the run before long memories

`recall()` p50 beside that of results/recall.md before long memories were in
the mix (2026-11-24, load 1.5-1.8; at 1,000,000 the run three hours before
it), and, since this machine's load differs
from run to run, p50 over the baseline measured in the same run (section 1),
before and now. The baseline (brute-force cosine + Tantivy BM25) grows with
the same long memories, so "over the baseline" tells recall's own cost."""


def against_previous(rows: list[dict]) -> list[list[str]]:
    """Returns the rows of the comparison with :data:`PREVIOUS`."""
    out = []
    for r in rows:
        queries = (
            "minilm"
            if r["embedder"].split(" / ")[1].startswith("minilm")
            else "hashing"
        )
        before = PREVIOUS.get((r["size"] - r["size"] % 10_000, queries))
        if before is None:
            continue
        p50, over = r["recall"][0], r["recall"][0] / r["base"][0]
        ok = p50 <= 1.1 * before[0] or over <= 1.1 * before[1]
        out.append(
            [
                f"{r['size']:,}",
                r["embedder"],
                f"{before[0]:.2f}",
                f"{p50:.2f}",
                f"{p50 / before[0]:.2f}x",
                f"{before[1]:.2f}x",
                f"{over:.2f}x",
                f"{over / before[1]:.2f}x",
                "yes" if ok else "no",
            ]
        )
    return out


def fingerprint() -> str:
    """A short hash of the hub and engine sources that ran (others edit them)."""
    digest = hashlib.sha1()
    for name in ("ctx.hub", "ctx.engine"):
        spec = importlib.util.find_spec(name)
        assert spec is not None
        assert spec.origin is not None
        for file in sorted(Path(spec.origin).parent.rglob("*.py")):
            digest.update(file.read_bytes())
    return digest.hexdigest()[:12]
