"""The memory of one hub serving one store against the same hub serving four.

Usage::

    .venv/bin/python benchmarks/bench_hub_memory.py            # 5-15 min
    .venv/bin/python benchmarks/bench_hub_memory.py --embedder hashing

One run, in order (results in ``benchmarks/results/hub_memory.md``):

1. Four small stores of ``--size`` (300) memories each (bench_recall's
   generated memories, a different slice for each store), the default
   embedder (MiniLM), indexed and embedded in this process beforehand
   (``ctx reindex`` with ``CTX_NO_HUB=1``), so that a hub only loads them.
   HOME and a private runtime folder are temporary; autostart is off.
2. One store: ``ctx hub start`` on store 1, then ``--rounds`` (3) rounds of
   ``--queries`` (5) ``ctx recall`` processes on it; the hub's resident
   memory (``ctx hub status --json``: ``rss_bytes``, VmRSS) after each round.
   The hub is stopped.
3. Four stores: a fresh ``ctx hub start`` on store 1, then the same rounds,
   each recalling in all four stores; the same reading.
4. For comparison, one hub per store as before one hub served every store:
   four hubs, each in a runtime folder of its own, each asked the same
   recalls of its one store; their resident memory added up.

Each figure is the last round's (memory settles after the first). Goal
(issue 30): four stores through one hub at most 1.3x one store's hub.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

from _bench_common import isolated_env, machine_lines
from bench_backlog import ctx as timed_ctx
from bench_recall import drafts

from ctx.engine import Intent, Store, remember_many

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "hub_memory.md"
CTX = Path(sys.executable).parent / "ctx"
IMPORT = Intent(agent="bench", intent="import")
STORES = 4
QUERIES = (
    "what did we decide about the queue",
    "deploy key rotation",
    "retry webhooks payment",
    "database migration plan",
    "who reviews the release",
)


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def ctx(store: Path, env: dict[str, str], *args: str) -> str:
    return timed_ctx(store, env, *args)[1]


def make_stores(
    root: Path, size: int, embedder: str, env: dict[str, str]
) -> list[Path]:
    """Returns ``STORES`` fresh stores of ``size`` memories, embedded."""
    made = list(drafts(size * STORES))
    stores = []
    for i in range(STORES):
        path = root / f"store{i + 1}" / ".ctx"
        store = Store.init(path, clock=lambda: datetime.now(UTC))
        remember_many(store, made[i * size : (i + 1) * size], IMPORT)
        store.close()
        (path / "config.toml").write_text(f'[embedder]\nkind = "{embedder}"\n')
        ctx(path, {**env, "CTX_NO_HUB": "1"}, "reindex")
        stores.append(path)
    return stores


class Hub:
    """``ctx hub start`` on a store, in a runtime folder given by ``env``."""

    def __init__(self, store: Path, env: dict[str, str]) -> None:
        self.store, self.env = store, env
        self.proc = subprocess.Popen(
            [str(CTX), "--store", str(store), "hub", "start"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError(f"the hub did not start: {line!r}")

    def status(self) -> dict[str, object]:
        status: dict[str, object] = json.loads(
            ctx(self.store, self.env, "hub", "status", "--json")
        )
        return status

    def rss(self) -> int:
        rss = self.status()["rss_bytes"]
        assert isinstance(rss, int)
        assert rss > 0
        return rss

    def stop(self) -> None:
        ctx(self.store, self.env, "hub", "stop")
        self.proc.communicate(timeout=60)


def recall_round(stores: list[Path], env: dict[str, str], queries: int) -> None:
    for store in stores:
        for query in islice(QUERIES * (queries // len(QUERIES) + 1), queries):
            ctx(store, env, "recall", query, "--json")


def measure(
    stores: list[Path], env: dict[str, str], rounds: int, queries: int
) -> tuple[list[int], dict[str, object]]:
    """Returns the hub's RSS after each round of recalls in ``stores``."""
    hub = Hub(stores[0], env)
    try:
        seen = []
        for _ in range(rounds):
            recall_round(stores, env, queries)
            seen.append(hub.rss())
        status = hub.status()
    finally:
        hub.stop()
    if len(status["stores"]) != len(stores):  # type: ignore[arg-type]
        raise RuntimeError(f"the hub holds {status['stores']}, not {len(stores)}")
    return seen, status


def runtime_env(base: dict[str, str], root: Path, name: str) -> dict[str, str]:
    folder = root / name
    folder.mkdir(mode=0o700)
    return {**base, "XDG_RUNTIME_DIR": str(folder)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    root = Path(tempfile.mkdtemp(prefix="hubmem-", dir="/tmp"))
    try:
        home = root / "home"
        home.mkdir()
        base = isolated_env(home)
        progress(f"making {STORES} stores of {args.size} memories ({args.embedder})")
        stores = make_stores(root, args.size, args.embedder, base)
        loads.append(os.getloadavg()[0])
        progress("one hub, one store")
        one, _ = measure(
            stores[:1], runtime_env(base, root, "r1"), args.rounds, args.queries
        )
        loads.append(os.getloadavg()[0])
        progress("one hub, four stores")
        four, status = measure(
            stores, runtime_env(base, root, "r4"), args.rounds, args.queries
        )
        loads.append(os.getloadavg()[0])
        progress("four hubs, one store each")
        separate = []
        for i, store in enumerate(stores):
            rss, _ = measure(
                [store], runtime_env(base, root, f"s{i}"), args.rounds, args.queries
            )
            separate.append(rss[-1])
        loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ratio = four[-1] / one[-1]
    mb = [f"{x / 1e6:.0f}" for x in (one[-1], four[-1], sum(separate))]
    lines = [
        "# One hub for every store: its memory",
        "",
        "`benchmarks/bench_hub_memory.py` "
        f"(`--size {args.size} --rounds {args.rounds} --queries {args.queries} "
        f"--embedder {args.embedder}`). Resident memory (VmRSS, from `ctx hub "
        "status --json`) after the last round of `ctx recall` processes; every "
        "round's figure in MB in brackets.",
        "",
        *machine_lines(started, loads, [("Embedder", args.embedder)]),
        "",
        "| hub | stores | resident MB | rounds (MB) |",
        "|---|---|---|---|",
        f"| one hub | 1 | {mb[0]} | {', '.join(f'{x / 1e6:.0f}' for x in one)} |",
        f"| one hub | {STORES} | {mb[1]} | {', '.join(f'{x / 1e6:.0f}' for x in four)} |",
        f"| {STORES} hubs, one store each (as before) | {STORES} | {mb[2]} "
        f"| {', '.join(f'{x / 1e6:.0f}' for x in separate)} (each hub) |",
        "",
        f"Four stores through one hub: **{ratio:.2f}x** one store's hub "
        f"(goal: at most 1.3x); {sum(separate) / four[-1]:.1f}x less than one hub "
        f"per store. The four-store hub held {status['embedders']} embedder(s).",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if ratio <= 1.3 else 1


if __name__ == "__main__":
    sys.exit(main())
