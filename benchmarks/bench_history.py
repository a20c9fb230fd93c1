"""Cold history: ``ctx log -n 50`` and ``ctx blame ID`` with no history cache.

A store of 20,001 single-memory commits (every 100th an edit of one target
memory) is built once into ``benchmarks/.data/history-20k`` (about 12 minutes
here; reused by later runs) and copied once into ``history-20k-packed``, its
loose objects packed as ``ctx gc --auto`` packs them. On each, with
``cache/history.jsonl`` deleted before every run, this times ``ctx log -n
50`` and ``ctx blame ID`` as processes (wall and CPU), for this tree and,
with ``--against REV``, for ctx as committed at REV (its sources first on
``PYTHONPATH``), interleaved, next to ``git log -n 50`` and ``git log --
PATH`` on the same repository. Goals (issue 30): ``ctx log -n 50`` within 2x
(``git log -n 50`` + 1 s), ``ctx blame ID`` within 2x ``git log -- PATH``.

Usage::

    .venv/bin/python benchmarks/bench_history.py --against 740529f --runs 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from _bench_common import (
    DATA,
    GIT,
    LOADS,
    OBSERVE,
    REFINE,
    ROOT,
    clock,
    draft,
    machine_lines,
    progress,
)
from bench_startup import LAUNCH, PYTHON, extract, timed

from ctx import engine
from ctx.engine import Draft, Store

RESULTS = ROOT / "benchmarks" / "results" / "history.md"
LOOSE = DATA / "history-20k"
PACKED = DATA / "history-20k-packed"


def build(path: Path, commits: int, touch_every: int = 100) -> None:
    """Makes ``commits`` single-memory commits; every ``touch_every``th edits one."""
    building = path.with_name(path.name + ".build")
    shutil.rmtree(building, ignore_errors=True)
    store = Store.init(building, clock=clock)
    target = engine.remember(store, Draft(text="target, version 0"), OBSERVE).ids[0]
    for i in range(1, commits):
        if i % touch_every == 0:
            engine.edit(store, target, REFINE, body=f"target, version {i}\nline two")
        else:
            engine.remember(store, draft(i), OBSERVE)
        if i % 1000 == 0:
            progress(f"  {i:,} commits")
    store.close()
    (building / "target").write_text(target)
    building.rename(path)


def packed_copy(source: Path, path: Path) -> None:
    """Copies the store and packs its loose objects."""
    building = path.with_name(path.name + ".build")
    shutil.rmtree(building, ignore_errors=True)
    shutil.copytree(source, building, symlinks=True)
    store = Store.open(building, clock=clock)
    engine.pack_loose(store)
    store.close()
    building.rename(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="also time ctx as committed at REV")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--commits", type=int, default=20_001)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    started = datetime.now(UTC)
    progress("start")
    if not LOOSE.exists():
        progress(f"building {args.commits:,} commits into {LOOSE}")
        build(LOOSE, args.commits)
    if not PACKED.exists():
        progress(f"packing a copy into {PACKED}")
        packed_copy(LOOSE, PACKED)
    work = Path(tempfile.mkdtemp(prefix="ctx-history-"))
    env = {**os.environ, "CTX_HUB_AUTOSTART": "0", "HOME": str(work)}
    sides = {"this tree": env}
    if args.against:
        commit = extract(args.against, work / "src")
        sides[f"commit {commit}"] = {**env, "PYTHONPATH": str(work / "src")}
    target = (LOOSE / "target").read_text().strip()
    samples: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    counts: dict[tuple[str, str], int] = {}
    for i in range(args.runs):
        for label, store in (("loose", LOOSE), ("packed", PACKED)):
            git_dir = str(store / "git")
            path = _path_of(git_dir, target)
            gits = {
                "`git log -n 50`": [GIT, "--git-dir", git_dir, "log", "-n", "50"],
                "`git log -- PATH`": [GIT, "--git-dir", git_dir, "log", "--", path],
            }
            for name, argv in gits.items():
                samples.setdefault((label, name, "git"), []).append(timed(argv, env))
            ctx = {
                "`ctx log -n 50`": ["log", "-n", "50"],
                "`ctx blame ID`": ["blame", target],
            }
            for name, argv in ctx.items():
                for side, side_env in sides.items():
                    (store / "cache" / "history.jsonl").unlink(missing_ok=True)
                    got = timed(
                        [PYTHON, "-c", LAUNCH, "--store", str(store), *argv], side_env
                    )
                    samples.setdefault((label, name, side), []).append(got)
                    progress(f"run {i + 1} {label} {name} {side}: {got[0]:.2f} s")
            counts[(label, "entries")] = len(engine_blame(store, target))
    shutil.rmtree(work, ignore_errors=True)
    progress("done")
    text = report(started, args, samples, counts, sides)
    print(text)
    if not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")


def _path_of(git_dir: str, target: str) -> str:
    names = subprocess.run(
        [GIT, "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return next(n for n in names if target in n)


def engine_blame(store: Path, target: str) -> list[engine.LogEntry]:
    s = Store.open(store, clock=clock)
    try:
        return engine.blame(s, target)
    finally:
        s.close()


def report(
    started: datetime,
    args: argparse.Namespace,
    samples: dict[tuple[str, str, str], list[tuple[float, float]]],
    counts: dict[tuple[str, str], int],
    sides: dict[str, dict[str, str]],
) -> str:
    def med(key: tuple[str, str, str]) -> tuple[float, float]:
        got = samples[key]
        return statistics.median(w for w, _ in got), statistics.median(
            c for _, c in got
        )

    lines = [
        "# Cold history: `ctx log -n 50` and `ctx blame ID` with no cache",
        "",
        "Generated by `benchmarks/bench_history.py`; do not edit by hand. A store",
        f"of {args.commits:,} single-memory commits, every 100th an edit of one",
        "target memory, as written (all objects loose) and with its loose objects",
        "packed (what `ctx gc --auto` leaves). `cache/history.jsonl` is deleted",
        "before every ctx run. Each command runs as a fresh process, the sides",
        f"interleaved; {args.runs} runs each, medians. Goals (issue 30): `ctx log",
        "-n 50` within 2x (`git log -n 50` + 1 s); `ctx blame ID` within 2x `git",
        "log -- PATH`. The goal ratios are given for wall time and, as a",
        "check on a machine that other work shares, for CPU time (user + system).",
        "",
        *machine_lines(started, LOADS),
        "",
        "| store | command | ctx | wall (s) | CPU (s) | goal ratio, wall | CPU |",
        "|---|---|---|---|---|---|---|",
    ]
    for label in ("loose", "packed"):
        git_n = med((label, "`git log -n 50`", "git"))
        git_path = med((label, "`git log -- PATH`", "git"))
        for name in ("`git log -n 50`", "`git log -- PATH`"):
            wall, cpu = med((label, name, "git"))
            lines.append(f"| {label} | {name} | | {wall:.3f} | {cpu:.3f} | | |")
        for name, goal in (
            ("`ctx log -n 50`", (git_n[0] + 1.0, git_n[1] + 1.0)),
            ("`ctx blame ID`", git_path),
        ):
            for side in sides:
                wall, cpu = med((label, name, side))
                lines.append(
                    f"| {label} | {name} | {side} | {wall:.2f} | {cpu:.2f} "
                    f"| {wall / goal[0]:.2f}x | {cpu / goal[1]:.2f}x |"
                )
    lines += [
        "",
        f"`ctx blame ID` lists {counts[('packed', 'entries')]} commits (the",
        "target's creation and its edits). A goal ratio divides ctx's time by",
        "`git log -n 50`'s + 1 s for the log, by `git log -- PATH`'s for blame:",
        "the goal is 2.00x or less.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
