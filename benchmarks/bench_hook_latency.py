"""``ctx hook prompt-submit`` as the host runs it: a whole process, with a hub.

Usage::

    .venv/bin/python benchmarks/bench_hook_latency.py --against REV
    .venv/bin/python benchmarks/bench_hook_latency.py --size 100000 --against REV
    .venv/bin/python benchmarks/bench_hook_latency.py --cold       # issue 30

``--cold`` measures a store with no hub, never indexed since its import
(:func:`cold`): results in ``benchmarks/results/hook_cold.md``.

Without it: a synthetic store of ``--size`` memories (:func:`cold_store`,
kept under ``benchmarks/.data/hook_warm/``), indexed with hashing vectors,
served by ``ctx hub start`` in a runtime folder of the run's own (no other
hub is met), and timed, interleaved, per round:

- ``python -c pass`` and ``ctx --version`` (what any process costs here);
- ``ctx hook prompt-submit`` with a trivial prompt (nothing to search);
- ``ctx hook prompt-submit`` with a question one memory answers (a recall
  through the hub; the answer injected), a new session each time;

each hook on this tree and, with ``--against REV``, on ctx's sources as
committed at REV (as ``bench_startup.py`` does), each side asking a hub
of its own sources (``ctx hub start`` in a runtime folder of its own, both
serving the one store): what the hub does for a hook is timed too.
Wall and CPU time of the whole process; p50 and p95. Results in
``benchmarks/results/hook_latency.md`` (another ``--size``:
``hook_latency_SIZE.md``; ``--no-write`` prints them only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CTX = ROOT / ".venv" / "bin" / "ctx"
RESULTS = HERE / "results" / "hook_latency.md"
PYTHON = sys.executable
LAUNCH = "from ctx.porcelain.launch import main; main()"


def timed(args: list[str], stdin: bytes | None = None) -> tuple[float, bytes]:
    started = time.perf_counter()
    out = subprocess.run(args, input=stdin, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000, out.stdout


def run_timed(
    args: list[str], env: dict[str, str], stdin: bytes = b""
) -> tuple[float, float, bytes]:
    """Runs ``args``; returns its wall and CPU milliseconds and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    out = subprocess.run(args, input=stdin, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000, out.stdout


def warm_store(size: int) -> Path:
    """The store of ``size`` memories, indexed (built once, then reused)."""
    folder = HERE / ".data" / "hook_warm" / str(size)
    store = folder / ".ctx"
    if not (folder / "done").exists():
        cold_store(size, folder)
        env = {**os.environ, "CTX_DIR": str(store), "CTX_HUB_AUTOSTART": "0"}
        subprocess.run([str(CTX), "reindex"], env=env, check=True, capture_output=True)
        (folder / "done").write_text("")
    return store


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(int(len(ordered) * share) - 1, 0)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--against", help="also time the hook as committed at REV")
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if args.cold:
        cold(args.size if args.size != 2_000 else 10_000, args.rounds)
        return
    from bench_startup import extract

    store = warm_store(args.size)
    work = Path(tempfile.mkdtemp(prefix="ctx-hooks-"))
    # Each run starts with the logs the last one left gone (the recall log of
    # earlier runs would grow past its bound, and be trimmed during this one).
    for log in ("recall-log.jsonl", "shown.jsonl"):
        (store / "private" / log).unlink(missing_ok=True)
    # Bytecode is written and read as a user's shell would (as bench_startup
    # does): with PYTHONDONTWRITEBYTECODE set, this tree's modules would be
    # compiled from source at every start, and REV's (compiled) would not.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env = {**env, "CTX_DIR": str(store), "CTX_HUB_AUTOSTART": "0"}
    env.pop("CTX_NO_HUB", None)
    sides = {"this tree": env}
    if args.against:
        commit = extract(args.against, work / "src")
        sides[f"commit {commit}"] = {**env, "PYTHONPATH": str(work / "src")}
    hubs: list[subprocess.Popen[str]] = []
    loads = [os.getloadavg()[0]]
    rows: dict[str, list[tuple[float, float]]] = {}
    answered: dict[str, int] = {}

    def sample(name: str, n: int, got: tuple[float, float, bytes]) -> None:
        if n >= 3:  # warm-up rounds are left out
            rows.setdefault(name, []).append(got[:2])
            answered[name] = answered.get(name, 0) + (
                COLD_ANSWER[:40].encode() in got[2]
            )

    def hook_input(prompt: str) -> bytes:
        # A new session each time: a session is given a memory once.
        asked = {"session_id": f"warm-{time.time_ns()}", "cwd": str(store.parent)}
        return json.dumps({**asked, "prompt": prompt}).encode()

    hook = [PYTHON, "-c", LAUNCH, "hook", "prompt-submit"]
    try:
        for n, side_env in enumerate(sides.values()):
            runtime = work / f"run-{n}"
            runtime.mkdir(mode=0o700)
            side_env["XDG_RUNTIME_DIR"] = str(runtime)
            started = subprocess.Popen(
                [str(CTX), "hub", "start"],
                env=side_env,
                stdout=subprocess.PIPE,
                text=True,
            )
            hubs.append(started)  # stopped below, whatever fails next
            assert started.stdout is not None
            assert "listening" in started.stdout.readline()
        for n in range(args.rounds + 3):
            sample("python -c pass", n, run_timed([PYTHON, "-c", "pass"], env))
            sample(
                "ctx --version", n, run_timed([PYTHON, "-c", LAUNCH, "--version"], env)
            )
            for side, side_env in sides.items():
                trivial = run_timed(hook, side_env, hook_input("thanks!"))
                sample(f"hook, trivial prompt ({side})", n, trivial)
                question = run_timed(hook, side_env, hook_input(COLD_PROMPT))
                sample(f"hook, a question ({side})", n, question)
            loads.append(os.getloadavg()[0])
    finally:
        for hub in hubs:
            hub.terminate()
            hub.communicate(timeout=60)
        shutil.rmtree(store / "private" / "hooks", ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    version = statistics.median(w for w, _ in rows["ctx --version"])
    lines = [
        "# `ctx hook prompt-submit` with a warm hub, as a whole process",
        "",
        "Generated by `benchmarks/bench_hook_latency.py`; do not edit by hand.",
        "",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        "shared with other work; load average (1 min) "
        f"{loads[0]:.2f} at the start, {max(loads):.2f} at most, {loads[-1]:.2f} "
        "at the end.",
        f"Store: {args.size:,} synthetic memories (`cold_store`: 18 words from a "
        "40-word vocabulary, and one that answers the question), indexed with "
        "hashing vectors, `ctx hub start` serving it (a hub of each side's "
        "sources). Each round runs every "
        f"process in turn; {args.rounds} rounds after 3 of warm-up. The "
        "question is "
        f'"{COLD_PROMPT}", asked in a new session each time; "answered": the '
        "runs whose context held the memory that answers it.",
        "",
        "| process | p50 ms | p95 ms | CPU p50 ms | p50 / ctx --version | answered |",
        "|---|---|---|---|---|---|",
    ]
    for name, got in rows.items():
        walls = [w for w, _ in got]
        p50 = statistics.median(walls)
        cpu = statistics.median(c for _, c in got)
        hit = f"{answered[name]} of {len(got)}" if "question" in name else ""
        lines.append(
            f"| {name} | {p50:.1f} | {percentile(walls, 0.95):.1f} | {cpu:.1f} "
            f"| {p50 / version:.2f}x | {hit} |"
        )
    lines += [
        "",
        "The issue's goal: prompt-submit with a warm hub within 1.5x `ctx --version`.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        default = args.size == parser.get_default("size")
        where = RESULTS if default else RESULTS.with_stem(f"hook_latency_{args.size}")
        where.write_text(text)


COLD_RESULTS = HERE / "results" / "hook_cold.md"
COLD_ANSWER = (
    "The payment service retries webhooks 5 times with exponential backoff, "
    "then parks the event in the dead-letter queue."
)
COLD_PROMPT = "How many times does the payment service retry webhooks?"
_WORDS = [
    "service",
    "cache",
    "queue",
    "deploy",
    "rollback",
    "billing",
    "database",
    "index",
    "token",
    "budget",
    "branch",
    "merge",
    "hook",
    "latency",
    "memory",
    "vector",
    "schema",
    "review",
    "release",
    "staging",
    "cluster",
    "node",
    "retry",
    "webhook",
    "payment",
    "invoice",
    "tenant",
    "auth",
    "session",
    "log",
    "metric",
    "alert",
    "dashboard",
    "backup",
    "restore",
    "migration",
    "shard",
    "replica",
    "gateway",
    "worker",
]


def cold_store(size: int, folder: Path | None = None) -> Path:
    """A fresh store of ``size`` memories, imported in one commit, never indexed.

    Bodies of 18 words drawn from a small vocabulary (so most memories share
    the prompt's words: the ranking has work to do) and one memory that
    answers :data:`COLD_PROMPT`.
    """
    import random

    from ctx import engine
    from ctx.engine import Draft, Intent, Store

    folder = folder or HERE / ".data" / "hook_cold" / str(size)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = random.Random(7)
    drafts = []
    for i in range(size):
        words = " ".join(rng.choice(_WORDS) for _ in range(18))
        drafts.append(Draft(text=f"Note {i}: the {rng.choice(_WORDS)} team {words}."))
    drafts[size // 2] = Draft(text=COLD_ANSWER, kind="fact")
    store = Store.init(folder / ".ctx", clock=lambda: datetime.now(UTC))
    engine.remember_many(
        store, drafts, Intent(agent="bench", intent="import"), summary="import"
    )
    store.close()
    # The lexical answer uses no vectors; the reindex of the second phase
    # would embed every memory with MiniLM (minutes on a busy machine).
    (folder / ".ctx" / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    return folder / ".ctx"


def cold(size: int, rounds: int) -> None:
    """Times the hook on a cold store beside ``python -c pass`` and ``--version``.

    At first no hub runs and none is started (``CTX_HUB_AUTOSTART=0``); the index is
    never built, so every run ranks the tip in memory. Then the index is
    built (``ctx reindex``) and the hook timed again: the lexical answer from
    the Tantivy index. Then ``ctx hub start`` serves the store and the hook
    asks it. Each round runs every process in turn.
    """
    store = cold_store(size)
    env = {**os.environ, "CTX_DIR": str(store), "CTX_HUB_AUTOSTART": "0"}
    env.pop("CTX_NO_HUB", None)

    def hook(n: int) -> tuple[float, bytes]:
        # A new session each time: a session is given a memory once.
        asked = {"session_id": f"cold-{time.time_ns()}", "cwd": str(store.parent)}
        started = time.perf_counter()
        out = subprocess.run(
            [str(CTX), "hook", "prompt-submit"],
            input=json.dumps({**asked, "prompt": COLD_PROMPT}).encode(),
            capture_output=True,
            check=True,
            env=env,
        )
        return (time.perf_counter() - started) * 1000, out.stdout

    loads = [os.getloadavg()[0]]
    rows: dict[str, list[float]] = {
        "python -c pass": [],
        "ctx --version": [],
        "hook, cold store (ranked in memory)": [],
        "hook, index current (Tantivy), no hub": [],
        "hook, warm hub": [],
    }
    answered = {name: 0 for name in rows}

    def sample(name: str, n: int, ms: float, out: bytes = b"") -> None:
        if n >= 2:
            rows[name].append(ms)
            answered[name] += COLD_ANSWER[:40].encode() in out

    phases = list(rows)[2:]
    hub = None
    try:
        for phase in phases:
            if phase == phases[1]:
                subprocess.run(
                    [str(CTX), "reindex"], env=env, check=True, capture_output=True
                )
            if phase == phases[2]:
                hub = subprocess.Popen(
                    [str(CTX), "hub", "start"],
                    env=env,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert hub.stdout is not None
                assert "listening" in hub.stdout.readline()
            for n in range(rounds + 2):
                sample("python -c pass", n, timed([sys.executable, "-c", "pass"])[0])
                sample("ctx --version", n, timed([str(CTX), "--version"])[0])
                ms, out = hook(n)
                sample(phase, n, ms, out)
                loads.append(os.getloadavg()[0])
            shutil.rmtree(store / "private" / "hooks", ignore_errors=True)
    finally:
        if hub is not None:
            hub.terminate()
            hub.communicate(timeout=60)
    lines = [
        "# `ctx hook prompt-submit` on a cold store, and with a hub, as a whole process",
        "",
        "Generated by `benchmarks/bench_hook_latency.py --cold`; do not edit by hand.",
        "",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        "shared with other work; load average (1 min) "
        f"{loads[0]:.2f} at the start, {max(loads):.2f} at most, {loads[-1]:.2f} "
        "at the end.",
        f"Store: {size:,} synthetic memories of 18 words from a 40-word "
        "vocabulary (most hold the prompt's words), imported in one commit, "
        "and one that answers the prompt "
        f'("{COLD_PROMPT}"). At first no hub runs, none is started '
        "(`CTX_HUB_AUTOSTART=0`). First the index is never built (the hook "
        "reads the tip's memories and ranks them in memory); then `ctx "
        "reindex` builds it (hashing vectors: the lexical answer uses none) "
        "and the hook searches it; last, `ctx hub start` serves the store "
        "and the hook asks the hub. Each round runs the "
        f"processes in turn; {rounds} rounds per phase after 2 of warm-up.",
        "",
        "With the hub, the hook's floor is the hashing vectors' cosine (the "
        "answer, which holds the prompt's words, reaches it).",
        "",
        "| process | p50 ms | p95 ms | p50 / ctx --version | answered |",
        "|---|---|---|---|---|",
    ]
    version = statistics.median(rows["ctx --version"])
    for name, values in rows.items():
        values.sort()
        p95 = values[max(int(len(values) * 0.95) - 1, 0)]
        hit = f"{answered[name]} of {len(values)}" if name.startswith("hook") else ""
        p50 = statistics.median(values)
        lines.append(
            f"| {name} | {p50:.1f} | {p95:.1f} | {p50 / version:.2f}x | {hit} |"
        )
    lines += [
        "",
        "The issue's goals: on the cold store p95 under 1 s on 2 cores, with "
        "the memory that answers in the block; with a warm hub within 1.5x "
        "`ctx --version`.",
        "",
    ]
    COLD_RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
