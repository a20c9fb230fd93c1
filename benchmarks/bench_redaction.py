"""What a redaction costs: the rewrite on the redacting store, the apply on a clone.

A store of ``--size`` single-memory commits (the synthetic memories of
``_bench_common.draft``) holds, from its 10th commit on, a memory with a
secret that is edited every ``--size``/10 commits, so a redaction rewrites
about nine tenths of the history; the store is pushed to a bare repository
(its branches are then fetched ones too: the record's shared versions are
computed) and cloned. Each measured side copies both, then times in one
process each:

- ``redact``: ``redact_text`` of the secret on the store (rewrite, record,
  refs, reflogs, prune);
- ``push``: ``push --force-with-lease`` of the rewritten branch;
- ``pull``: ``pull`` on the clone, which applies the redaction.

With ``--against REV`` the same steps run, in the same run and on copies
of the same stores, with ctx as committed at REV (a frozen copy of its
sources first on ``PYTHONPATH``), alternately, ``--runs`` times; the table
gives the best of each. Run::

    .venv/bin/python benchmarks/bench_redaction.py --against f53390e

It writes ``benchmarks/results/redaction.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from _bench_common import (
    DATA,
    OBSERVE,
    REFINE,
    ahead_on_path,
    clock,
    draft,
    frozen_copy,
    machine_lines,
    progress,
)

from ctx import engine
from ctx.engine import Draft, Store

RESULTS = Path(__file__).parent / "results" / "redaction.md"
SECRET = "zz-bench-secret-4242-zz"
STEPS = ("redact", "push", "pull")


def build(root: Path, size: int) -> None:
    """Makes the store, its bare remote and a clone under ``root``."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    store = Store.init(root / "a", clock=clock)
    every = max(size // 10, 1)
    target = None
    for i in range(size):
        if i == 10:
            written = engine.remember(
                store, Draft(text=f"the deploy key is {SECRET}"), OBSERVE
            )
            target = written.ids[0]
        elif target is not None and i % every == 0:
            body = f"the deploy key is {SECRET}, version {i}"
            engine.edit(store, target, REFINE, body=body)
        else:
            engine.remember(store, draft(i), OBSERVE)
        if i and i % 1000 == 0:
            progress(f"  {i:,} commits")
    bare = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    engine.add_remote(store, "origin", str(bare))
    engine.push(store, "origin")
    store.close()
    engine.clone(root / "b", str(bare), clock=clock)


def measure(root: Path) -> dict[str, float]:
    """Times the three steps on copies of the stores under ``root``."""
    work = root.with_name(root.name + f".run{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(root, work, symlinks=True)
    try:
        a = Store.open(work / "a", clock=clock)
        b = Store.open(work / "b", clock=clock)
        for store in (a, b):  # the copies' remote: the copied bare repository
            config = store.repo.get_config()
            url = str(work / "remote.git").encode()
            config.set((b"remote", b"origin"), b"url", url)
            config.write_to_path()
        times = {}
        began = time.perf_counter()
        engine.redact_text(a, SECRET)
        times["redact"] = time.perf_counter() - began
        began = time.perf_counter()
        engine.push(a, "origin", force_with_lease=True)
        times["push"] = time.perf_counter() - began
        began = time.perf_counter()
        engine.pull(b, OBSERVE, "origin")
        times["pull"] = time.perf_counter() - began
        a.close()
        b.close()
        return times
    finally:
        shutil.rmtree(work, ignore_errors=True)


def side(root: Path, rev: str | None) -> dict[str, float]:
    """Measures in a process of its own, with ctx at ``rev`` (None: this tree)."""
    env = dict(os.environ)
    if rev is not None:
        src, _ = frozen_copy(rev)
        env["PYTHONPATH"] = ahead_on_path(src)
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(root)],
        env=env,
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", help="also time ctx as committed at REV")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure))))
        return
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    root = DATA / f"redaction-{args.size}"
    began = time.perf_counter()
    build(root, args.size)
    built = time.perf_counter() - began
    sides: list[tuple[str, str | None]] = [("this tree", None)]
    if args.against:
        sides.append((f"commit {frozen_copy(args.against)[1]}", args.against))
    best: dict[str, dict[str, float]] = {name: {} for name, _ in sides}
    for run in range(args.runs):
        for name, rev in sides:
            times = side(root, rev)
            progress(f"run {run + 1}, {name}: {times}")
            for step, value in times.items():
                best[name][step] = min(value, best[name].get(step, value))
            loads.append(os.getloadavg()[0])
    lines = [
        "# What a redaction costs",
        "",
        "Generated by `benchmarks/bench_redaction.py`; do not edit by hand. "
        "What is measured is in its docstring.",
        "",
        *machine_lines(
            started,
            loads,
            [("Store", f"{args.size:,} commits, built in {built:.0f} s")],
        ),
        "",
        f"Best of {args.runs} runs, seconds, each step in one process.",
        "",
        "| step | "
        + " | ".join(name for name, _ in sides)
        + (" | ratio |" if len(sides) > 1 else ""),
        "|---|" + "---|" * (len(sides) + (len(sides) > 1)),
    ]
    for step in STEPS:
        cells = [f"{best[name][step]:.2f}" for name, _ in sides]
        if len(sides) > 1:
            base = best[sides[1][0]][step]
            cells.append(f"{best[sides[0][0]][step] / base:.2f}x")
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
