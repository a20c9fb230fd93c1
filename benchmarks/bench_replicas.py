"""Two `ctx serve` replicas behind one address against one (issue 34).

Usage::

    .venv/bin/python benchmarks/bench_replicas.py             # 10k, MiniLM
    .venv/bin/python benchmarks/bench_replicas.py --embedder hashing

Makes a store of ``--size`` synthetic memories (``bench_serve_reads.py``'s),
pushes it to a bare repository, clones that into a second store, indexes
both, and starts each as a replica of the bare repository (``ctx serve
--sync origin``, each with a runtime folder of its own: every ``ctx serve``
is its user's hub). The distribution's lighttpd is the one address: one
instance balances ``mod_proxy`` round-robin over both replicas, another
forwards to the first alone, so that both paths pay the same proxy. Then,
rounds interleaved, ``--clients`` threads (each its own keep-alive
connection) ask ``POST /api/recall`` for ``--seconds`` through each.

Twice: with the replicas free to use every core (two replicas on one
machine share it), and with each replica held to a core of its own
(``sched_setaffinity``: as each would be on a machine of its own, the one
replica on the first core alone). A recall with MiniLM uses both cores of
this machine already, so the first placement measures the machine, the
second how reads scale out by replicas. The clients and the proxy run on
any core in both.

Results in ``benchmarks/results/replicas.md`` (``--out`` for another file;
``replicas_hashing.md`` holds a run with ``--embedder hashing``). The
issue's goal: two replicas at least 1.7x one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from _bench_common import ctx_revision, machine_lines
from bench_serve_reads import CTX, make_store, start_serve, window

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "replicas.md"
LIGHTTPD = Path("/usr/sbin/lighttpd")


def ctx(store: Path, *args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(
        [str(CTX), "--store", str(store), *args],
        check=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
    )


def replicas(size: int, embedder: str, folder: Path) -> list[Path]:
    """Returns two stores of the same memories, each cloned from one bare repo."""
    first = make_store(size, embedder)
    remote = folder / "memory.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True
    )
    ctx(first, "remote", "add", "origin", str(remote))
    ctx(first, "push")
    second = folder / "second" / ".ctx"
    ctx(second, "clone", str(remote))
    stores = [first, second]
    for store in stores:
        (store / "config.toml").write_text(
            f'[embedder]\nkind = "{embedder}"\n[serve]\nrequire_keys = false\n'
        )
        ctx(store, "reindex")
    return stores


@contextlib.contextmanager
def serving(store: Path, runtime: Path, cpus: set[int] | None) -> Iterator[int]:
    """Runs ``ctx serve --sync origin`` on ``store`` (on ``cpus``); yields its port."""
    runtime.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime)}  # each its own hub
    proc, url, _ = start_serve(
        store, "--sync", "origin", env=env, keyed=False, cpus=cpus
    )
    try:
        yield int(url.rsplit(":", 1)[1])
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


@contextlib.contextmanager
def balancer(folder: Path, ports: list[int]) -> Iterator[int]:
    """Runs lighttpd on loopback, balancing round-robin over ``ports``."""
    folder.mkdir()
    port = free_port()
    backends = ", ".join(f'("host" => "127.0.0.1", "port" => {p})' for p in ports)
    (folder / "lighttpd.conf").write_text(
        'server.modules = ("mod_proxy")\n'
        f'server.document-root = "{folder}"\n'
        f"server.port = {port}\n"
        'server.bind = "127.0.0.1"\n'
        f'server.errorlog = "{folder / "error.log"}"\n'
        'proxy.balance = "round-robin"\n'
        f'proxy.server = ("" => ({backends}))\n'
    )
    proc = subprocess.Popen(
        [str(LIGHTTPD), "-D", "-f", str(folder / "lighttpd.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), _connected(port):
                break
            time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def measure(
    folder: Path,
    stores: list[tuple[Path, set[int] | None]],
    args: argparse.Namespace,
    loads: list[float],
) -> dict[str, list[int]]:
    """Returns the recalls of each round, through one replica and through two."""
    folder.mkdir()
    counts: dict[str, list[int]] = {"one replica": [], "two replicas": []}
    (first, cpus_one), (second, cpus_two) = stores
    with (
        serving(first, folder / "run-1", cpus_one) as one,
        serving(second, folder / "run-2", cpus_two) as two,
        balancer(folder / "proxy-one", [one]) as to_one,
        balancer(folder / "proxy-two", [one, two]) as to_two,
    ):
        ports = {"one replica": to_one, "two replicas": to_two}
        for port in ports.values():  # warm: the first recalls load what they read
            window(f"http://127.0.0.1:{port}", "", args.clients, 3.0)
        for _ in range(args.rounds):
            for name, port in ports.items():
                url = f"http://127.0.0.1:{port}"
                counts[name].append(window(url, "", args.clients, args.seconds))
                loads.append(os.getloadavg()[0])
                print(name, counts[name][-1], file=sys.stderr)
    return counts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _connected(port: int) -> Iterator[None]:
    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
        yield


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not LIGHTTPD.exists():
        sys.exit(f"{LIGHTTPD} is not installed (the package lighttpd)")
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    folder = Path(tempfile.mkdtemp(prefix="ctx-replicas-"))
    cores = sorted(os.sched_getaffinity(0))
    placements: dict[str, tuple[set[int] | None, set[int] | None]] = {
        "any core": (None, None),
        "a core each": ({cores[0]}, {cores[-1]}),
    }
    counts: dict[tuple[str, str], list[int]] = {}
    try:
        first, second = replicas(args.size, args.embedder, folder)
        for n, (placement, (cpus_one, cpus_two)) in enumerate(placements.items()):
            measured = measure(
                folder / f"placement-{n}",
                [(first, cpus_one), (second, cpus_two)],
                args,
                loads,
            )
            for name, got in measured.items():
                counts[(placement, name)] = got
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = []
    for (placement, name), got in counts.items():
        one = sum(counts[(placement, "one replica")]) / args.rounds
        rows.append(
            f"| {placement} | {name} | {sum(got) / args.rounds / args.seconds:.1f} | "
            f"{sum(got) / args.rounds / one:.2f}x | {', '.join(map(str, got))} |"
        )
    lines = [
        "# Two `ctx serve` replicas behind one address, against one",
        "",
        "Generated by `benchmarks/bench_replicas.py`; do not edit by hand.",
        "",
        *machine_lines(started, loads, [("ctx", ctx_revision())]),
        "",
        f"Store: {args.size:,} synthetic memories (`bench_serve_reads.py`'s), "
        f"{args.embedder} vectors, pushed to a bare repository and cloned into a "
        "second store; both indexed, each served by `ctx serve --sync origin`. "
        "lighttpd's `mod_proxy` is the one address: round-robin over both "
        "replicas, or forwarding to the first alone (the same proxy either way). "
        f"{args.clients} clients, each a thread with its own keep-alive "
        f"connection asking `POST /api/recall` for {args.seconds:g} s; "
        f"{args.rounds} rounds, interleaved, after a warm-up. The replicas run on "
        "any core, then each on a core of its own (the one replica on the first "
        "core alone), as each would on a machine of its own; the clients and the "
        "proxy on any core.",
        "",
        "| replicas run on | behind the address | recalls/s | against one "
        "| recalls per round |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "The issue's goal: two replicas at least 1.7x one.",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
