"""``ctx serve``: reads while writes go on (issue 30).

Usage::

    .venv/bin/python benchmarks/bench_serve_mixed.py --against HEAD~1

Makes a store of ``--size`` memories (one import, hashing vectors), then,
for the working tree and (``--against REV``) ctx as committed at REV (its
sources first on ``PYTHONPATH``), starts ``ctx serve`` on a copy of it and,
for ``--seconds`` each, runs four readers (two asking ``GET /api/log``, two
``POST /api/recall``, each over its own keep-alive connection) with no
writer, then with ``--writers`` threads writing ``POST /api/memories`` in a
loop. The sides alternate round by round. Reads should keep near their
idle latency: the server's lock lets reads run side by side and serialises
writes only (issue 30: two writers once slowed every read about 40 times).

Results in ``benchmarks/results/serve_mixed.md``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from _bench_common import (
    CTX,
    ahead_on_path,
    ctx_revision,
    frozen_copy,
    isolated_env,
    machine_lines,
    progress,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "serve_mixed.md"
READERS = (("log", "GET", "/api/log?limit=20"), ("recall", "POST", "/api/recall"))


def make_store(folder: Path, size: int, env: dict[str, str]) -> Path:
    store = folder / ".ctx"
    subprocess.run([CTX, "init", str(folder)], env=env, check=True, capture_output=True)
    with (store / "config.toml").open("a", encoding="utf-8") as f:
        f.write('\n[embedder]\nkind = "hashing"\n[serve]\nrequire_keys = false\n')
    lines = "\n".join(
        json.dumps({"text": f"Note {i}: service {i % 37} drains queue {i % 11}"})
        for i in range(size)
    )
    subprocess.run(
        [CTX, "--store", str(store), "import", "-"],
        input=lines.encode(),
        env=env,
        check=True,
        capture_output=True,
    )
    return store


def ask(conn: http.client.HTTPConnection, method: str, path: str, body: object) -> None:
    conn.request(
        method,
        path,
        body=json.dumps(body) if body is not None else None,
        headers={"Content-Type": "application/json"},
    )
    answer = conn.getresponse()
    answer.read()
    if answer.status != 200:
        raise RuntimeError(f"{method} {path}: {answer.status}")


class Server:
    def __init__(self, store: Path, port: int, env: dict[str, str]) -> None:
        self.port = port
        self.process = subprocess.Popen(
            [CTX, "--store", str(store), "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                conn = self.connect()
                ask(
                    conn, "POST", "/api/recall", {"query": "service 3"}
                )  # indexes built
                break
            except (OSError, RuntimeError, http.client.HTTPException):
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("ctx serve did not start") from None
                time.sleep(0.2)

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)


def round_of(server: Server, writers: int, seconds: float) -> dict[str, list[float]]:
    """Latencies (s) of each kind of call during one round."""
    stop = time.monotonic() + seconds
    times: dict[str, list[float]] = {"log": [], "recall": [], "write": []}

    def reader(kind: str, method: str, path: str) -> None:
        conn = server.connect()
        body = {"query": "queue 5 service"} if method == "POST" else None
        while time.monotonic() < stop:
            began = time.perf_counter()
            ask(conn, method, path, body)
            times[kind].append(time.perf_counter() - began)

    def writer(n: int) -> None:
        conn = server.connect()
        i = 0
        while time.monotonic() < stop:
            began = time.perf_counter()
            ask(conn, "POST", "/api/memories", {"text": f"writer {n} note {i}"})
            times["write"].append(time.perf_counter() - began)
            i += 1

    threads = [
        threading.Thread(target=reader, args=spec) for spec in (*READERS, *READERS)
    ]
    threads += [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="also measure ctx as committed at REV")
    parser.add_argument("--size", type=int, default=2_000)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    work = Path(tempfile.mkdtemp(prefix="ctx-serve-mixed-"))
    env = isolated_env(work / "home")
    sides = {ctx_revision(): env}
    if args.against:
        src, commit = frozen_copy(args.against)
        sides[f"commit {commit}"] = {**env, "PYTHONPATH": ahead_on_path(src)}
    progress(f"a store of {args.size:,} memories")
    seed = make_store(work / "seed", args.size, env)
    found: dict[tuple[str, int, str], list[float]] = {}
    try:
        for r in range(args.rounds):
            for n, (side, side_env) in enumerate(sides.items()):
                copy = work / f"run-{r}-{n}"
                shutil.copytree(seed.parent, copy)
                server = Server(copy / ".ctx", 18900 + n, side_env)
                try:
                    for writers in (0, args.writers):
                        got = round_of(server, writers, args.seconds)
                        loads.append(os.getloadavg()[0])
                        for kind, values in got.items():
                            found.setdefault((side, writers, kind), []).extend(values)
                        progress(f"round {r + 1}, {side}, {writers} writers")
                finally:
                    server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = report(started, args, loads, found, list(sides))
    print(text)
    if not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")


def report(
    started: datetime,
    args: argparse.Namespace,
    loads: list[float],
    found: dict[tuple[str, int, str], list[float]],
    sides: list[str],
) -> str:
    lines = [
        "# `ctx serve`: reads while writes go on",
        "",
        "Generated by `benchmarks/bench_serve_mixed.py`; do not edit by hand.",
        f"A store of {args.size:,} memories (hashing vectors); four readers "
        "(two `GET /api/log?limit=20`, two `POST /api/recall`), each on its "
        f"own keep-alive connection, for {args.seconds:g} s with no writer, "
        f"then with {args.writers} writers (`POST /api/memories` in a loop); "
        f"{args.rounds} rounds, the sides alternating, a fresh server and "
        "store copy each. Calls answered and latency (ms): median and the "
        "slowest.",
        "",
        *machine_lines(started, loads),
        "",
        "| ctx | writers | call | calls | p50 | max | p50 / idle p50 |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for side in sides:
        for writers in (0, args.writers):
            for kind in ("log", "recall", "write"):
                values = found.get((side, writers, kind))
                if not values:
                    continue
                p50 = statistics.median(values) * 1000
                idle = found.get((side, 0, kind))
                ratio = (
                    f"{p50 / (statistics.median(idle) * 1000):.1f}x"
                    if idle and writers
                    else ""
                )
                lines.append(
                    f"| {side} | {writers} | {kind} | {len(values):,} | {p50:.0f} "
                    f"| {max(values) * 1000:.0f} | {ratio} |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
