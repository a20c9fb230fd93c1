"""Speed of the ctx store, side by side with plain dulwich and stock git.

Usage::

    .venv/bin/python benchmarks/bench_store.py --rev HEAD # full run (5-20 min)
    .venv/bin/python benchmarks/bench_store.py --quick    # small run (~1 min)
    .venv/bin/python benchmarks/bench_store.py --profile  # + cProfile listings

What it measures, in one run (stores under ``benchmarks/.data/``, rebuilt at
every run; results in ``benchmarks/results/store.md``):

1. One ``remember`` through the Python API with 1k / 100k / 1M memories
   stored: median and p95, next to a plain dulwich commit of one file at the
   same kind of path in the same repository, and a stock git plumbing write.
2. ``ctx remember`` as a whole process, next to three git processes and the
   bare interpreter; ``python -X importtime`` shows where start-up goes.
3. Importing 100k memories in one batch into a fresh store, next to dulwich
   writing the same blobs as one pack and ``git fast-import``.
4. ``ctx blame ID`` / ``ctx log ID`` over 10,000 commits, cold and warm,
   in-process and as processes, next to ``git log -- PATH``.
5. ``ctx diff`` of two branches that differ in 10 memories out of 100k, next
   to ``git diff --stat``.
6. The median write cost at every decade from 1k to 1M memories.

One store grows from the smallest size to the largest through
``remember_many`` (chunks of at most 100k, one commit and one pack each);
the write measurements run at each checkpoint on the way.
"""

from __future__ import annotations

import argparse
import io
import os
import pstats
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _bench_common import (
    CTX,
    DATA,
    FROZEN_ENV,
    HERE,
    IMPORT,
    OBSERVE,
    WARMUP,
    Checkpoint,
    Config,
    Report,
    clock,
    compile_ctx,
    fresh,
    import_line,
    machine_info,
    profile_text,
    progress,
    run,
    run_frozen,
    tidy_profile,
)
from _store_scenarios import bench_history, bench_import, bench_writes

from ctx import engine
from ctx.engine import Draft, Store


def parse_args(argv: Sequence[str] | None = None) -> tuple[Config, Path, str | None]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default=None,
        help="memory counts to measure writes at (default 1000,100000,1000000; "
        "every power of ten in between is added for the scaling table)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a small run (sizes 1000,10000)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also profile the slow paths with cProfile (adds a few minutes)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=HERE / "results" / "store.md",
        help="the Markdown results file (default benchmarks/results/store.md)",
    )
    parser.add_argument(
        "--rev",
        default=None,
        help="measure ctx as committed at this git revision (e.g. HEAD), from a "
        "copy of its sources, instead of the installed working tree",
    )
    args = parser.parse_args(argv)
    default_sizes = "1000,10000" if args.quick else "1000,100000,1000000"
    sizes = tuple(int(s) for s in (args.sizes or default_sizes).split(","))
    if args.quick:
        config = Config(
            sizes=sizes,
            writes=50,
            runs=5,
            chunk=10_000,
            import_n=10_000,
            history_commits=1_000,
            touch_every=10,
            diff_size=10_000,
            profile=args.profile,
        )
    else:
        config = Config(sizes=sizes, profile=args.profile)
    return config, args.out, args.rev


# -- profiles -------------------------------------------------------------------


def bench_profiles(
    config: Config, report: Report, sizes: dict[int, Checkpoint]
) -> None:
    progress("profiling")
    report.heading("Profiles (cProfile, cumulative; times inflated by the profiler)")
    path = DATA / "scale"
    store = Store.open(path, clock=clock)
    for i in range(WARMUP):
        engine.remember(store, Draft(text=f"profile warm-up {i}"), OBSERVE)
    report.text(f"{config.writes} API `remember` calls at {max(sizes):,} memories:")
    report.code(
        profile_text(
            lambda: [
                engine.remember(store, Draft(text=f"profiled {i}"), OBSERVE)
                for i in range(config.writes)
            ]
        )
    )
    store.close()
    lines = [import_line(i) for i in range(config.import_n)]
    import_store = Store.init(fresh(DATA / "import-profile"), clock=clock)
    report.text(
        f"`import_memories` of {config.import_n:,} memories into a fresh store:"
    )
    report.code(
        profile_text(lambda: engine.import_memories(import_store, lines, IMPORT))
    )
    import_store.close()
    shutil.rmtree(DATA / "import-profile", ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "remember.prof"
        remember = ["--store", str(path), "remember", "--agent", "bench", "profiled"]
        run([sys.executable, "-m", "cProfile", "-o", str(out), CTX, *remember])
        text = io.StringIO()
        pstats.Stats(str(out), stream=text).sort_stats("cumulative").print_stats(25)
        report.text("One `ctx remember` process:")
        report.code(tidy_profile(text.getvalue()))


# -- main -----------------------------------------------------------------------


def render(config: Config, report: Report, started: float) -> str:
    head = [
        "# ctx store benchmark",
        "",
        "Generated by `benchmarks/bench_store.py`; do not edit by hand.",
        "",
        "Command: `" + shlex.join(["python", *sys.argv]) + "`",
        "",
        f"Total run time: {(time.perf_counter() - started) / 60:.1f} min. "
        "Times are milliseconds unless marked; medians unless marked.",
        "",
        "| machine | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in machine_info()),
        "",
        "## Targets",
        "",
        "| target | goal | measured | result |",
        "|---|---|---|---|",
        *(
            f"| {t.name} | {t.goal} | {t.measured} | {'PASS' if t.ok else 'FAIL'} |"
            for t in sorted(report.targets, key=lambda t: t.name[:2])
        ),
    ]
    return "\n".join(head) + "\n" + report.body()


def main(argv: Sequence[str] | None = None) -> int:
    config, out, rev = parse_args(argv)
    DATA.mkdir(exist_ok=True)
    if rev and not os.environ.get(FROZEN_ENV):
        run_frozen(rev)  # does not return
    started = time.perf_counter()
    compile_ctx()
    report = Report()
    results = bench_writes(config, report)
    bench_import(config, report)
    bench_history(config, report)
    if config.profile:
        bench_profiles(config, report, results)
    text = render(config, report, started)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    progress(f"results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
