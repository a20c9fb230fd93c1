"""Graph walks over 100k memories and 300k links, next to a full link scan.

Usage::

    .venv/bin/python benchmarks/bench_graph.py            # 100k / 300k
    .venv/bin/python benchmarks/bench_graph.py --quick    # 10k / 30k

Builds one store (under ``benchmarks/.data/graph``): N memories in one batch,
then 3N links in one commit (each memory links to three random others:
DERIVED_FROM, DEPENDS_ON or RELATES_TO). Then, in one run:

- building the adjacency index from the links tree (cold), loading it from
  its cache file, and catching it up after one more link (one commit);
- the catalog (id -> path, kind, headline) the walks read, cold and loaded;
- ``trace`` (default depth 5, depth 10, depth 3), ``trace --reverse``, ``related``
  (depth 2) and ``links --in``, in-process and warm: p50 and p95 over random
  start memories;
- the baseline: finding one memory's incoming links by reading every link
  file (what the index replaces).

Results go to ``benchmarks/results/graph.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.engine.adjacency import adjacency
from ctx.engine.catalog import catalog
from ctx.engine.layout import link_path
from ctx.engine.model import Link, encode

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "graph"
WHO = Intent(agent="bench", intent="import")
TYPES = ("DERIVED_FROM", "DEPENDS_ON", "RELATES_TO")


def clock() -> datetime:
    return datetime.now(UTC)


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def build(n: int, seed: int) -> tuple[Store, list[str]]:
    shutil.rmtree(DATA, ignore_errors=True)
    store = Store.init(DATA / ".ctx", clock=clock)
    start = time.perf_counter()
    result = engine.remember_many(
        store,
        [Draft(text=f"memory {i}: a fact about part {i % 97}") for i in range(n)],
        WHO,
    )
    ids = list(result.ids)
    print(f"  {n} memories written in {time.perf_counter() - start:.1f} s")
    rng = random.Random(seed)
    link = encode(Link(version=1, agent="bench", created_at=clock()))
    changes: dict[str, bytes | None] = {}
    for source in ids:
        for _ in range(3):
            target = ids[rng.randrange(n)]
            if target != source:
                changes[link_path(source, rng.choice(TYPES), target)] = link  # type: ignore[arg-type]
    start = time.perf_counter()
    store.write("main", WHO, f"Link {len(changes)} pairs", lambda snap: changes)
    print(f"  {len(changes)} links written in {time.perf_counter() - start:.1f} s")
    return store, ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="10k memories, 30k links")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "graph.md")
    args = parser.parse_args()
    n = 10_000 if args.quick else 100_000
    print(f"building {n} memories and ~{3 * n} links")
    store, ids = build(n, seed=7)
    rng = random.Random(11)
    rows: list[tuple[str, str]] = []

    def note(name: str, value: str) -> None:
        rows.append((name, value))
        print(f"  {name}: {value}")

    tip = store.branch_tip("main")
    snap = store.snapshot(tip)
    (DATA / ".ctx" / "cache" / "links.msgpack").unlink(missing_ok=True)
    store.caches.clear()
    start = time.perf_counter()
    adj = adjacency(store, snap)
    note(
        "adjacency index, built from the links tree (cold)",
        f"{time.perf_counter() - start:.2f} s",
    )
    links = sum(1 for _ in adj.edges())
    fresh = Store.open(DATA / ".ctx", clock=clock)
    start = time.perf_counter()
    loaded = adjacency(fresh, fresh.snapshot(tip))
    loaded.superseded()
    note(
        "adjacency index, loaded from its cache file (enough for ls/status)",
        f"{(time.perf_counter() - start) * 1000:.0f} ms",
    )
    start = time.perf_counter()
    loaded.outgoing(ids[0])
    note(
        "first walk after loading (unpacks every edge)",
        f"{(time.perf_counter() - start) * 1000:.0f} ms",
    )
    engine.link(store, ids[0], ids[1], "CHILD_OF", WHO)
    start = time.perf_counter()
    adjacency(store, store.snapshot(store.branch_tip("main")))
    note(
        "catch-up after one new link (one commit)",
        f"{(time.perf_counter() - start) * 1000:.1f} ms",
    )
    cache = DATA / ".ctx" / "cache" / "links.msgpack"
    note("index file size", f"{cache.stat().st_size / 1e6:.1f} MB for {links} links")
    (DATA / ".ctx" / "cache" / "catalog.msgpack").unlink(missing_ok=True)
    store.caches.pop("catalog", None)
    start = time.perf_counter()
    catalog(store, store.snapshot(store.branch_tip("main")))
    note(
        "catalog (id -> path, kind, headline), built cold",
        f"{time.perf_counter() - start:.2f} s",
    )
    fresh = Store.open(DATA / ".ctx", clock=clock)
    start = time.perf_counter()
    catalog(fresh, fresh.snapshot(fresh.branch_tip("main")))
    note(
        "catalog, loaded from its cache file",
        f"{(time.perf_counter() - start) * 1000:.0f} ms",
    )

    starts = [rng.choice(ids) for _ in range(args.runs)]
    it = iter(starts * 10)
    ops: list[tuple[str, Callable[[], object]]] = [
        ("trace (default depth 5)", lambda: engine.trace(store, next(it))),
        ("trace --depth 10", lambda: engine.trace(store, next(it), depth=10)),
        ("trace --depth 3", lambda: engine.trace(store, next(it), depth=3)),
        ("trace --reverse", lambda: engine.trace(store, next(it), reverse=True)),
        ("related (depth 2)", lambda: engine.related(store, next(it), depth=2)),
        ("links --in", lambda: engine.list_links(store, next(it), direction="in")),
    ]
    sizes = {
        "trace (default depth 5)": _count(engine.trace(store, starts[0])),
        "trace --depth 10": _count(engine.trace(store, starts[0], depth=10)),
        "related (depth 2)": len(engine.related(store, starts[0], depth=2)),
    }
    for name, fn in ops:
        fn()  # warm
        p50, p95 = timed(fn, args.runs)
        note(f"{name}, warm, in-process", f"p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    for name, size in sizes.items():
        note(f"{name}: nodes in one answer (first start)", str(size))

    def scan() -> object:
        target = rng.choice(ids)
        return [r for r in snap.links() if r.target == target]

    p50, _ = timed(scan, 3)
    note("baseline: incoming links by reading every link file", f"{p50:.0f} ms")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    lines = [
        "# Graph walks",
        "",
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: {cpu}, {os.cpu_count()} cores; Python {platform.python_version()}",
        f"- command: `.venv/bin/python benchmarks/bench_graph.py{' --quick' if args.quick else ''}`",
        f"- store: {n} memories, {links} links; {args.runs} random start memories per row",
        "- target (issue 4): trace/related under 100 ms in-process at 100k memories / 300k links",
        "",
        "| measurement | result |",
        "| --- | --- |",
        *(f"| {name} | {value} |" for name, value in rows),
        "",
    ]
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


def _count(node: engine.TraceNode) -> int:
    return 1 + sum(_count(c) for c in node.children)


if __name__ == "__main__":
    main()
