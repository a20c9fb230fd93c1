"""Code index speed: index, re-index after one change, and find through a hub.

Trees of about 100k and 1M lines are copied from the Python packages
installed beside ctx (their .py, .pyi, .md, .json, .toml and .yaml files, in
a fixed order), under benchmarks/.data/code_speed/. For each size, in fresh
processes, as a user runs them:

- ``ctx code index``: the whole tree, from no index, its vectors left to
  the hub (as a user runs it; no hub runs here) (time, peak memory of the
  process);
- ``ctx code index --no-vectors``: the same, no vectors wanted;
- ``ctx code index --wait`` with vectors from the hashing embedder (the
  store's config), which costs next to nothing to embed: what the
  chunking, Tantivy and the vector files cost;
- one file changed (a line appended), then ``ctx code index`` again (the
  median of three such runs), and the same change taken up inside a warm
  process (what ``ctx code watch`` does; the median of five);
- ``ctx find`` through a running hub (``ctx hub start``): p50 and p95 of
  the call as a client makes it, over 50 queries after 5 to warm up, once
  with the hashing embedder and once with MiniLM embedding each query. For
  the second, the index's vectors are the hashing embedder's, labelled as
  MiniLM's (both have 384 dimensions): MiniLM cannot embed 68,000 chunks
  in the time of a benchmark, and the exact search costs the same for any
  values of the same count and dimensions.

MiniLM, the default embedder, is timed on a sample of the tree's chunks
(the rate, and what a whole tree would take at that rate), and its one
query embedding is timed too.

The ``ctx`` processes run with bytecode caching on (as an installed
package has it), whatever ``PYTHONDONTWRITEBYTECODE`` says.

    python benchmarks/bench_code_speed.py [--sizes 100000,1000000]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from _bench_common import cpu_name

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "code_speed"
RESULTS = HERE / "results" / "code_speed.md"
CTX = str(Path(sys.executable).parent / "ctx")
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "CTX_HUB_AUTOSTART": "0",
}
KEEP = (".py", ".pyi", ".md", ".json", ".toml", ".yaml", ".yml")
QUERIES = [
    "parse the configuration file",
    "retry the request after a timeout",
    "compute the checksum of a pack",
    "read an integer from the stream",
    "format a number as a string",
    "validate the schema of a response",
    "where is the cache cleared",
    "load plugins from entry points",
    "convert an array to a list",
    "handle a keyboard interrupt",
]


def packages() -> Path:
    import dulwich

    return Path(dulwich.__file__).parent.parent


def build_tree(lines: int) -> tuple[Path, int, int]:
    tree = DATA / f"tree-{lines}"
    marker = tree / ".built"
    if marker.exists():
        files, have = map(int, marker.read_text().split())
        return tree, files, have
    shutil.rmtree(tree, ignore_errors=True)
    have = files = 0
    site = packages()
    for package in sorted(p for p in site.iterdir() if p.is_dir()):
        if (
            package.name.endswith((".dist-info", "__pycache__"))
            or package.name == "ctx"
        ):
            continue
        for path in sorted(package.rglob("*")):
            if have >= lines:
                break
            if not path.is_file() or path.suffix not in KEEP or path.is_symlink():
                continue
            try:
                text = path.read_text("utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            target = tree / path.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, "utf-8")
            have += text.count("\n")
            files += 1
        if have >= lines:
            break
    marker.write_text(f"{files} {have}")
    return tree, files, have


def store_for(name: str, embedder: str) -> Path:
    project = DATA / f"project-{name}"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    subprocess.run([CTX, "init", str(project)], check=True, capture_output=True)
    store = project / ".ctx"
    (store / "config.toml").write_text(f'[embedder]\nkind = "{embedder}"\n')
    return store


def peak_of(argv: list[str]) -> tuple[float, float]:
    """Runs a command under a python wrapper that reports its own peak memory."""
    code = (
        "import resource, subprocess, sys, time;"
        "t=time.perf_counter();"
        "subprocess.run(sys.argv[1:], check=True, capture_output=True);"
        "print(time.perf_counter()-t, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *argv],
        check=True,
        capture_output=True,
        text=True,
        env=ENV,
    )
    seconds, mb = out.stdout.split()
    return float(seconds), float(mb)


def touch_one(tree: Path, n: int) -> Path:
    files = sorted(tree.rglob("*.py"))
    path = files[len(files) // 2]
    with path.open("a", encoding="utf-8") as f:
        f.write(f"\n\ndef bench_changed_{n}():\n    return {n}\n")
    return path


def measure(lines: int) -> dict[str, object]:
    from ctx.hub import Workspace
    from ctx.hub.code_api import open_code_index

    tree, files, have = build_tree(lines)
    row: dict[str, object] = {"lines": have, "files": files}
    subprocess.run([CTX, "--help"], check=True, capture_output=True, env=ENV)
    backlog = store_for(f"{lines}-backlog", "hashing")
    row["index_backlog"] = peak_of(
        [CTX, "--store", str(backlog), "code", "index", str(tree)]
    )
    plain = store_for(f"{lines}-plain", "hashing")
    row["index_lexical"] = peak_of(
        [CTX, "--store", str(plain), "code", "index", str(tree), "--no-vectors"]
    )
    store = store_for(f"{lines}", "hashing")
    row["index_hashing"] = peak_of(
        [CTX, "--store", str(store), "code", "index", str(tree), "--wait"]
    )
    ws = Workspace.find(store)
    index = open_code_index(ws)
    row["chunks"] = sum(len(e.chunks) for e in index.manifest.files.values())
    runs = []
    for n in range(1, 4):  # the median of three: one run is at the load's mercy
        touch_one(tree, n)
        runs.append(peak_of([CTX, "--store", str(store), "code", "index"]))
    row["reindex_cli"] = sorted(runs)[1]
    warm = []
    index.update(tree, embed=False)  # warm: manifest and Tantivy loaded
    for n in range(4, 9):
        touch_one(tree, n)
        started = time.perf_counter()
        report = index.update(tree, embed=False)
        warm.append(time.perf_counter() - started)
        assert report.parsed == 1, report
    row["reindex_warm"] = statistics.median(warm)
    row["find"] = find_through_hub(ws, store)
    label_as_minilm(index)
    (store / "config.toml").write_text('[embedder]\nkind = "minilm"\n')
    row["find_minilm"] = find_through_hub(ws, store)
    row["minilm"] = minilm_rate(index)
    ws.close()
    return row


def row_count(ws) -> int:
    from ctx.hub import code_status

    return code_status(ws).chunks


def find_through_hub(ws, store: Path) -> tuple[float, float, float]:
    """(p50, p95) seconds of ``ctx find`` through a hub, once its backlog is done.

    And the seconds waited for its search graph (from GRAPH_MIN vectors).
    """
    from ctx.hub import code_status, find_code, hub_status
    from ctx.hub.code.vectors import GRAPH_MIN

    hub = subprocess.Popen(
        [CTX, "--store", str(store), "hub", "start"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    assert hub.stdout is not None
    hub.stdout.readline()  # listening
    try:
        assert hub_status(ws).running
        while code_status(ws).unembedded:  # the hub embeds what changed
            time.sleep(0.5)
        waited = time.perf_counter()
        if row_count(ws) >= GRAPH_MIN:  # then the hub builds its search graph
            while not code_status(ws).graph:
                time.sleep(1)
        graph_s = time.perf_counter() - waited
        for query in QUERIES[:5]:
            find_code(ws, query)
        times = []
        for i in range(50):
            started = time.perf_counter()
            result = find_code(ws, QUERIES[i % len(QUERIES)])
            times.append(time.perf_counter() - started)
            assert result.hits
            assert not result.unembedded
        times.sort()
        return statistics.median(times), times[int(len(times) * 0.95) - 1], graph_s
    finally:
        hub.terminate()
        hub.wait()


def label_as_minilm(index) -> None:
    """Names MiniLM as the maker of the index's (hashing) vectors: same dimensions."""
    import msgspec

    from ctx.hub.code.manifest import read_outline, write_outline
    from ctx.hub.retrieval.embedders import make_embedder

    minilm = make_embedder({})
    outline = read_outline(index.folder)
    assert outline.dimensions == minilm.dimensions
    write_outline(index.folder, msgspec.structs.replace(outline, embedder=minilm.name))


def minilm_rate(index) -> tuple[float, float]:
    """(chunk texts per second, ms per query) of MiniLM on this tree's chunks."""
    from ctx.hub.code.reading import embed_text
    from ctx.hub.code.search import read_lines
    from ctx.hub.retrieval.embedders import make_embedder

    root = Path(index.manifest.root)
    texts = []
    for _path, entry in sorted(index.manifest.files.items())[::7]:
        for chunk in entry.chunks[:2]:
            code = read_lines(root, chunk)
            if code:
                texts.append(embed_text(chunk, code))
        if len(texts) >= 128:
            break
    embedder = make_embedder({})
    embedder.embed(["warm up"])
    started = time.perf_counter()
    embedder.embed(texts)
    rate = len(texts) / (time.perf_counter() - started)
    queries = []
    for query in QUERIES * 3:
        started = time.perf_counter()
        embedder.embed([query])
        queries.append(time.perf_counter() - started)
    return rate, statistics.median(queries) * 1000


def load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100000,1000000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    loads = [load()]
    rows = []
    for size in sizes:
        rows.append(measure(size))
        loads.append(load())
    report(args, rows, loads, time.perf_counter() - started)


def report(args, rows, loads, total) -> None:
    cpu = cpu_name()
    out = [
        "# Code index speed: index, re-index one change, find through a hub",
        "",
        "Generated by `benchmarks/bench_code_speed.py`; do not edit by hand.",
        "",
        f"Command: `python benchmarks/bench_code_speed.py --sizes {args.sizes}` "
        f"({total / 60:.1f} min)",
        "",
        "| machine |  |",
        "|---|---|",
        f"| Date | {datetime.now(UTC):%Y-%m-%d %H:%M UTC} |",
        f"| CPU | {cpu} |",
        f"| Cores | {os.cpu_count()} ({len(os.sched_getaffinity(0))} usable), shared with other work |",
        f"| Python | {platform.python_version()} |",
        f"| Load average (1 min) at start / most / end | {loads[0]:.2f} / {max(loads):.2f} / {loads[-1]:.2f} |",
        "",
        "Trees: the .py, .pyi, .md, .json, .toml and .yaml files of the Python "
        "packages installed beside ctx, copied in a fixed order. Each `ctx` "
        "command ran in a fresh process (times include start-up); memory is "
        "the process's peak resident size. Vectors here are the hashing "
        "embedder's (the store's config), so that every channel runs at 1M "
        "lines; MiniLM's own cost is measured apart (last table). `ctx code "
        "index` leaves the vectors to the hub (none runs during these "
        "timings); `--wait` embeds them in the process.",
        "",
        "| lines | files | chunks | `ctx code index` (vectors to the hub): s (MB) | `--no-vectors`: s (MB) | `--wait`, hashing vectors: s (MB) | re-index one changed file, `ctx code index`: s (MB) | re-index one change, warm process (`ctx code watch`): ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        back, lex = r["index_backlog"], r["index_lexical"]
        hashed, cli = r["index_hashing"], r["reindex_cli"]
        out.append(
            f"| {r['lines']:,} | {r['files']:,} | {r['chunks']:,} | {back[0]:.1f} ({back[1]:.0f}) | "
            f"{lex[0]:.1f} ({lex[1]:.0f}) | "
            f"{hashed[0]:.1f} ({hashed[1]:.0f}) | {cli[0]:.2f} ({cli[1]:.0f}) | "
            f"{r['reindex_warm'] * 1000:.0f} |"
        )
    out += [
        "",
        "## `ctx find` through a running hub",
        "",
        "All chunks have a vector (384 dimensions): searched exactly below "
        "20,000 vectors, else through the hnswlib graph the hub builds once "
        "the backlog is done (its build, waited for before timing, in the last "
        "column). With MiniLM, the hub embeds each query with MiniLM; the "
        "stored vectors are the hashing embedder's, labelled as MiniLM's "
        "(module doc).",
        "",
        "| lines | vectors | hashing queries: p50 / p95 ms | MiniLM queries: p50 / p95 ms | graph built in: s |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        h, m = r["find"], r["find_minilm"]
        out.append(
            f"| {r['lines']:,} | {r['chunks']:,} | {h[0] * 1000:.1f} / {h[1] * 1000:.1f} | "
            f"{m[0] * 1000:.1f} / {m[1] * 1000:.1f} | {h[2]:.0f} / {m[2]:.0f} |"
        )
    out += [
        "",
        "## MiniLM (the default embedder) on the same chunks",
        "",
        "| lines | chunk texts per second | whole tree at that rate | one query embedded, ms p50 |",
        "|---|---|---|---|",
    ]
    for r in rows:
        rate, query_ms = r["minilm"]
        whole = r["chunks"] / rate
        out.append(
            f"| {r['lines']:,} | {rate:.1f} | {whole / 60:.0f} min | {query_ms:.1f} |"
        )
    big = rows[-1]
    out += [
        "",
        "## Goals (issue 20)",
        "",
        f"- Re-index after one changed file at {big['lines']:,} lines under 1 s: "
        f"warm (`ctx code watch`) {big['reindex_warm'] * 1000:.0f} ms "
        f"({'met' if big['reindex_warm'] < 1 else 'not met'}); a fresh `ctx code index` "
        f"process {big['reindex_cli'][0]:.2f} s "
        f"({'met' if big['reindex_cli'][0] < 1 else 'not met'}), "
        f"{big['reindex_cli'][0] / big['index_backlog'][0]:.3f}x the whole tree's "
        f"index in the same run ({big['index_backlog'][0]:.1f} s).",
        f"- `ctx find` p50 through a running hub at {big['lines']:,} lines under 50 ms: "
        f"{big['find_minilm'][0] * 1000:.1f} ms with MiniLM embedding the query "
        f"({'met' if big['find_minilm'][0] < 0.05 else 'not met'}); "
        f"{big['find'][0] * 1000:.1f} ms with the hashing embedder.",
        "",
    ]
    RESULTS.write_text("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
