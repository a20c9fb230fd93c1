"""``ctx serve`` recall throughput with 1, 2 and 4 clients (issue 30).

Usage::

    .venv/bin/python benchmarks/bench_serve_reads.py            # 10k, MiniLM
    .venv/bin/python benchmarks/bench_serve_reads.py --embedder hashing

Makes a store of ``--size`` synthetic memories (one import), starts one
``ctx serve`` per ``--workers`` value (1 and 2 by default) on a copy of it
each, with a hub folder of its own (its indexes built before timing
starts), then for 1, 2 and 4 clients, each a thread asking ``POST
/api/recall`` over its own keep-alive connection for ``--seconds``, counts
the recalls answered. Every server and client count is measured in each
round, rounds interleaved, so the ratios are taken under the same load.
With workers, the kernel places each connection on one process at random
(``SO_REUSEPORT``'s hash): two clients on two processes meet on one half
the time, so their rounds vary. ``bench_agents.py`` measures 4 clients on
bench_recall's stores, MCP beside the plain API; this one the scaling from
one client to four.

Results in ``benchmarks/results/serve_reads.md``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from _bench_common import ctx_revision, machine_lines

from ctx import engine
from ctx.engine import Draft, Intent, Store

HERE = Path(__file__).resolve().parent
CTX = HERE.parent / ".venv" / "bin" / "ctx"
RESULTS = HERE / "results" / "serve_reads.md"
WORDS = """
    service cache queue deploy rollback billing database index token budget
    branch merge hook latency memory vector schema review release staging
    cluster node retry webhook payment invoice tenant auth session log metric
    alert dashboard backup restore migration shard replica gateway worker
""".split()  # noqa: SIM905


def make_store(size: int, embedder: str) -> Path:
    folder = HERE / ".data" / "serve_reads" / f"{size}-{embedder}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = random.Random(11)
    drafts = [
        Draft(
            text=f"Note {i}: the {rng.choice(WORDS)} team "
            + " ".join(rng.choice(WORDS) for _ in range(24))
            + "."
        )
        for i in range(size)
    ]
    store = Store.init(folder / ".ctx", clock=lambda: datetime.now(UTC))
    engine.remember_many(
        store, drafts, Intent(agent="bench", intent="import"), summary="import"
    )
    store.close()
    (folder / ".ctx" / "config.toml").write_text(f'[embedder]\nkind = "{embedder}"\n')
    return folder / ".ctx"


def start_serve(
    store: Path,
    *args: str,
    env: dict[str, str] | None = None,
    keyed: bool = True,
    cpus: set[int] | None = None,
) -> tuple[subprocess.Popen[str], str, str]:
    """Starts ``ctx serve`` (and ``args``) on ``store``: its process, its URL
    and the owner key it made (``keyed``; else "": the store needs none).

    ``cpus``: the cores it may run on, every thread of it (none: any).
    """
    env = {**os.environ, "CTX_HUB_AUTOSTART": "0", **(env or {})}
    proc = subprocess.Popen(
        [str(CTX), "--store", str(store), "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("Serving "), line
    url = line.split(" at ", 1)[1].split(" ", 1)[0]
    key = proc.stdout.readline().rsplit(": ", 1)[1].strip() if keyed else ""
    return proc, url, key


class Client:
    """One keep-alive connection asking for recalls."""

    def __init__(self, url: str, key: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        self.headers = {"Content-Type": "application/json"}
        if key:  # none where the server needs none
            self.headers["Authorization"] = f"Bearer {key}"

    def recall(self, query: str) -> None:
        body = json.dumps({"query": query, "budget": 800}).encode()
        self.conn.request("POST", "/api/recall", body=body, headers=self.headers)
        response = self.conn.getresponse()
        payload = response.read()
        assert response.status == 200, payload[:300]


def query(rng: random.Random) -> str:
    return "what about the " + " ".join(rng.choice(WORDS) for _ in range(3)) + "?"


def window(url: str, key: str, clients: int, seconds: float) -> int:
    """Returns the recalls ``clients`` threads got answered in ``seconds``."""
    done = [0] * clients
    until = time.monotonic() + seconds

    def work(k: int) -> None:
        client = Client(url, key)
        rng = random.Random(k)
        while time.monotonic() < until:
            client.recall(query(rng))
            done[k] += 1

    threads = [threading.Thread(target=work, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--workers",
        default="1,2",
        help="the servers to measure side by side, by their --workers",
    )
    args = parser.parse_args()
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    store = make_store(args.size, args.embedder)
    subprocess.run(
        [str(CTX), "--store", str(store), "reindex"], check=True, capture_output=True
    )
    workers = [int(w) for w in args.workers.split(",")]
    servers = {}
    try:
        for n in workers:
            # A store of its own each, a copy.
            copy = store.parent.parent / f"{store.parent.name}-w{n}" / ".ctx"
            shutil.rmtree(copy.parent, ignore_errors=True)
            shutil.copytree(store, copy)
            # And a hub folder of its own: a server is its user's one hub,
            # and a second one would stop the first.
            runtime = copy.parent / "run"
            runtime.mkdir(mode=0o700)
            servers[n] = start_serve(
                copy, "--workers", str(n), env={"XDG_RUNTIME_DIR": str(runtime)}
            )
        counts = {(n, c): [] for n in workers for c in (1, 2, 4)}
        for n in workers:
            window(*servers[n][1:], 4, 3.0)  # warm: the first recalls load
        for _ in range(args.rounds):
            for n, clients in counts:
                got = window(*servers[n][1:], clients, args.seconds)
                counts[n, clients].append(got)
                loads.append(os.getloadavg()[0])
                print(n, clients, got, file=sys.stderr)
    finally:
        for proc, _, _ in servers.values():
            proc.terminate()
            proc.communicate(timeout=60)
    one = sum(counts[workers[0], 1]) / len(counts[workers[0], 1])
    rows = []
    for (n, clients), got in counts.items():
        mine = sum(counts[n, 1]) / len(counts[n, 1])
        rate = sum(got) / len(got) / args.seconds
        rows.append(
            f"| {n} | {clients} | {rate:.1f} | {sum(got) / len(got) / mine:.2f}x | "
            f"{sum(got) / len(got) / one:.2f}x | {', '.join(str(g) for g in got)} |"
        )
    lines = [
        "# `ctx serve`: recall throughput with 1, 2 and 4 clients",
        "",
        "Generated by `benchmarks/bench_serve_reads.py`; do not edit by hand.",
        "",
        *machine_lines(started, loads, [("ctx", ctx_revision())]),
        "",
        f"Store: {args.size:,} synthetic memories of 26 words from a 40-word "
        f"vocabulary, one import, {args.embedder} vectors, indexed before the "
        "servers start (each server a copy of its own). Each client is a "
        "thread with its own keep-alive HTTP connection asking "
        "`POST /api/recall` (3 random words of the vocabulary, budget 800) for "
        f"{args.seconds:g} s; {args.rounds} rounds of 1, 2 and 4 clients on "
        f"each server ({', '.join(f'--workers {n}' for n in workers)}), "
        "interleaved, after a warm-up.",
        "",
        "| workers | clients | recalls/s | against one client | "
        f"against --workers {workers[0]}, one client | recalls per round |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "The issue's goal: 4 clients at least 1.7x one on 2 cores.",
        "",
    ]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
