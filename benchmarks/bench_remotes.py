"""Speed of ctx push, clone and pull, side by side with stock git.

Usage::

    .venv/bin/python benchmarks/bench_remotes.py               # 10k memories
    .venv/bin/python benchmarks/bench_remotes.py --size 100000
    .venv/bin/python benchmarks/bench_remotes.py --rev HEAD --out remotes-before.md
    .venv/bin/python benchmarks/bench_remotes.py --rev HEAD --against 437efc8

With ``--against REV`` every ctx timing is taken twice in the same run, side
by side: with ctx as measured, and with ctx as committed at REV (a frozen
copy, put first on PYTHONPATH of those processes), each on targets of its
own, so that both share the same load.

What it measures, in one run (stores under ``benchmarks/.data/remotes/``,
rebuilt at every run; results in ``benchmarks/results/remotes.md``):

1. ``ctx push`` of a store of N memories (one pack, after ``ctx gc``) into an
   empty bare repository, next to ``git push`` of the same repository into
   another; both through a local path, and again over ``git://`` to a
   ``git daemon`` on loopback.
2. ``ctx clone`` of that remote, next to ``git clone --bare --no-local``
   (a ctx store is a bare repository; a checkout would write one file per
   memory; without ``--no-local`` git hard-links the objects of a local
   path instead of transferring them).
3. A pull of 10 new memories (10 commits) into the clone: ``ctx pull``
   next to ``git fetch origin main:main`` in a bare clone of the remote.
4. The index catch-up after that pull: the first recall after the pull
   (which indexes the 10 new blobs), next to a recall with nothing to catch
   up, in-process, with the hashing embedder (the embedder's own cost is
   measured in bench_embedders.py).

Every ctx number is a whole ``ctx`` process, as a user runs it.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from _bench_common import (
    CTX,
    DATA,
    FROZEN_ENV,
    GIT,
    GIT_ENV,
    HERE,
    IMPORT,
    ahead_on_path,
    clock,
    compile_ctx,
    draft,
    fresh,
    frozen_copy,
    machine_info,
    ms,
    progress,
    run,
    run_frozen,
    timed,
)

from ctx import engine
from ctx.engine import Store

ROOT = DATA / "remotes"
RUNS = 3
BASE_PATH: str | None = None
"""With --against: the frozen copy of the baseline's sources."""


def ctx(*args: str, store: Path | None = None, base: bool = False) -> bytes:
    """Runs ``ctx ARGS``; ``base``: as committed at the --against revision."""
    argv = [CTX, *(["--store", str(store)] if store else []), *args]
    env = {**os.environ, "CTX_HUB_AUTOSTART": "0"}
    if base:
        assert BASE_PATH is not None
        env["PYTHONPATH"] = ahead_on_path(BASE_PATH)
    return run(argv, env=env)


def sides() -> tuple[bool, ...]:
    """The ctx versions timed: the one measured, and the baseline if any."""
    return (False, True) if BASE_PATH else (False,)


def git(*args: str, cwd: Path | None = None) -> bytes:
    prefix = ["-C", str(cwd)] if cwd else []
    return run([GIT, *prefix, *args])


def best(fn: object, runs: int = RUNS) -> float:
    """Returns the best of ``runs`` timings of ``fn`` (each on a fresh target)."""
    return min(timed(fn) for _ in range(runs))  # type: ignore[arg-type]


def build(size: int) -> Path:
    path = fresh(ROOT / "a") / ".ctx"
    store = Store.init(path, clock=clock)
    for start in range(0, size, 100_000):
        n = min(100_000, size - start)
        engine.remember_many(
            store, [draft(i) for i in range(start, start + n)], IMPORT, summary="bench"
        )
    store.close()
    ctx("gc", store=path)
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    return path


def row(name: str, ctx_s: list[float], git_s: float | None = None) -> list[str]:
    """A row of the table: ctx's time (and the baseline's), git's, the ratios."""
    cells = [name, *(ms(t) for t in ctx_s)]
    if git_s is None:
        return [*cells, "-", *("-" for _ in ctx_s)]
    return [*cells, ms(git_s), *(f"{t / git_s:.1f}x" for t in ctx_s)]


def bare(path: Path) -> Path:
    fresh(path)
    git("init", "-q", "--bare", "-b", "main", str(path))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def daemon(base: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [
            GIT,
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={base}",
            str(base),
        ],
        env=GIT_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # git-daemon is its child: killed as a group
    )
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, port


def push_times(store: Path, url_for: dict[str, str], srv: Path) -> list[list[str]]:
    rows = []
    for where, template in url_for.items():
        ctx_s: dict[bool, list[float]] = {side: [] for side in sides()}
        git_s = []
        for i in range(RUNS):
            for side in sides():
                name = f"{where.split()[0].strip(':/')}-{i}{'-base' if side else ''}"
                bare(srv / f"ctx-{name}.git")
                ctx(
                    "remote",
                    "add",
                    name,
                    template.format(f"ctx-{name}.git"),
                    store=store,
                )
                ctx_s[side].append(
                    timed(lambda n=name, b=side: ctx("push", n, store=store, base=b))
                )
                ctx("remote", "remove", name, store=store)
            bare(srv / f"git-{where.split()[0].strip(':/')}-{i}.git")
            target = template.format(f"git-{where.split()[0].strip(':/')}-{i}.git")
            git_s.append(
                timed(
                    lambda t=target: git(
                        "--git-dir", str(store / "git"), "push", "-q", t, "main"
                    )
                )
            )
        rows.append(row(f"push, {where}", [min(v) for v in ctx_s.values()], min(git_s)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="timings of push, clone")
    parser.add_argument("--out", default="remotes.md", help="file in results/")
    parser.add_argument(
        "--against",
        default=None,
        help="also time every ctx step as committed at this revision, side by "
        "side in the same run",
    )
    parser.add_argument(
        "--rev",
        default=None,
        help="measure ctx as committed at this git revision (e.g. HEAD), from a "
        "copy of its sources, instead of the installed working tree",
    )
    args = parser.parse_args()
    if args.rev and not os.environ.get(FROZEN_ENV):
        run_frozen(args.rev)  # does not return
    global RUNS, BASE_PATH
    RUNS = args.runs
    base_commit = None
    if args.against:
        base_src, base_commit = frozen_copy(args.against)
        run([sys.executable, "-m", "compileall", "-q", str(base_src)])
        BASE_PATH = str(base_src)
    size = args.size
    started = time.monotonic()
    os.environ["CTX_HUB_AUTOSTART"] = "0"  # in-process recalls start no hub
    compile_ctx()
    progress(f"building a store of {size:,} memories")
    build_s = timed(lambda: build(size))
    store = ROOT / "a" / ".ctx"
    srv = fresh(ROOT / "srv")
    srv.mkdir(parents=True)
    rows: list[list[str]] = []

    progress("push")
    proc, port = daemon(srv)
    try:
        rows += push_times(
            store,
            {
                "local path": str(srv) + "/{}",
                "git:// (git daemon)": f"git://127.0.0.1:{port}/{{}}",
            },
            srv,
        )
        origin = bare(srv / "origin.git")
        ctx("remote", "add", "origin", str(origin), store=store)
        ctx("push", store=store)
        if BASE_PATH:  # the baseline pushes and pulls through a remote of its own
            ctx("remote", "add", "base", str(bare(srv / "base.git")), store=store)
            ctx("push", "base", store=store, base=True)

        progress("clone")
        clone_rows = []
        for where, url in (
            ("local path", str(origin)),
            ("git:// (git daemon)", f"git://127.0.0.1:{port}/origin.git"),
        ):
            ctx_s = [
                best(
                    lambda u=url, b=side: ctx(
                        "clone", u, str(fresh(ROOT / "c-tmp")), base=b
                    )
                )
                for side in sides()
            ]
            bare_s = best(
                lambda u=url: git(
                    "clone",
                    "-q",
                    "--bare",
                    "--no-local",
                    u,
                    str(fresh(ROOT / "g-tmp")),
                )
            )
            clone_rows.append(row(f"clone, {where}", ctx_s, bare_s))
        rows += clone_rows
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    progress("pull of 10 new memories")
    clone_at = fresh(ROOT / "b")
    ctx("clone", str(origin), str(clone_at))
    b = clone_at / ".ctx"
    (b / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    base_clone = fresh(ROOT / "b-base") / ".ctx"
    if BASE_PATH:
        ctx("clone", str(srv / "base.git"), str(base_clone.parent), base=True)
    mirror = fresh(ROOT / "g.git")
    git("clone", "-q", "--bare", str(origin), str(mirror))
    from ctx.hub import Workspace, recall

    ws = Workspace(b, clock=clock)
    index_s = timed(lambda: recall(ws, "service answered under load"))
    ws.close()
    for i in range(10):
        ctx("remember", draft(size + i).text, store=store)
    push10_s = [
        timed(lambda r=remote, b=side: ctx("push", r, store=store, base=b))
        for side, remote in zip(sides(), ("origin", "base"), strict=False)
    ]
    pull_s = [
        timed(lambda s=at, b=side: ctx("pull", store=s, base=b))
        for side, at in zip(sides(), (b, base_clone), strict=False)
    ]
    gitpull_s = timed(
        lambda: git("--git-dir", str(mirror), "fetch", "-q", "origin", "main:main")
    )
    rows.append(row("push of 10 new commits, local path", push10_s))
    start_s = [
        best(lambda s=side: ctx("remote", "ls", store=b, base=s)) for side in sides()
    ]
    rows.append(
        row("(for scale: `ctx remote ls`, a process that transfers nothing)", start_s)
    )
    rows.append(row("pull of 10 new memories (fast forward)", pull_s, gitpull_s))

    progress("index catch-up")
    ws = Workspace(b, clock=clock)
    catch_up = timed(lambda: recall(ws, "service answered under load"))
    ws.close()
    ws = Workspace(b, clock=clock)
    cold = timed(lambda: recall(ws, "service answered under load"))
    steady = min(
        timed(lambda: recall(ws, "service answered under load")) for _ in range(5)
    )
    ws.close()
    got = engine.list_memories(Store.open(b, clock=clock))
    assert len(got) == size + 10, len(got)

    out = HERE / "results" / args.out
    total = time.monotonic() - started
    lines = [
        "# ctx remotes benchmark",
        "",
        "Generated by `benchmarks/bench_remotes.py`; do not edit by hand.",
        "",
        f"Command: `python benchmarks/bench_remotes.py {' '.join(sys.argv[1:])}`",
        "",
        f"Store: {size:,} memories (one pack after `ctx gc`), built in "
        f"{build_s:.1f} s. Total run time: {total / 60:.1f} min. Times are "
        f"milliseconds unless marked; best of {RUNS} for push and clone, one "
        "run for the pull (it changes the stores).",
        "",
        "| machine | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in machine_info()],
        "",
        "## Push, clone, pull: ctx beside stock git",
        "",
        "Every ctx time is a whole `ctx` process, start-up included (the last "
        "row shows what a process that transfers nothing costs); every git "
        "time a whole `git` process. A store is a bare repository, so git's "
        "side is `git clone --bare --no-local` (without `--no-local`, a clone "
        "from a local path hard-links the objects instead of copying them) "
        "and, for the pull, `git fetch origin main:main` in a bare clone (a "
        "pull without a working tree); a clone with a checkout would also "
        "write one file per memory. The last column is ctx's time over git's.",
        "",
        *(
            [
                f"With `--against {args.against}`: every ctx step is also timed as "
                f"committed at {base_commit} (column `ctx@{base_commit}`), in the "
                "same run, one beside the other, each on targets of its own.",
                "",
            ]
            if base_commit
            else []
        ),
        "| operation | ctx | "
        + (f"ctx@{base_commit} | " if base_commit else "")
        + "git | ctx / git |"
        + (f" ctx@{base_commit} / git |" if base_commit else ""),
        "|---|---|---|---|" + ("---|---|" if base_commit else ""),
        *[f"| {' | '.join(r)} |" for r in rows],
        "",
        "## Index catch-up after the pull",
        "",
        "In-process recall on the clone, hashing embedder (bench_embedders.py "
        "measures the embedders):",
        "",
        "| | ms |",
        "|---|---|",
        f"| first recall on the fresh clone (indexes all {size:,} memories) | {ms(index_s)} |",
        f"| first recall after pulling 10 memories (indexes the 10 new blobs) | {ms(catch_up)} |",
        f"| the same recall again, fresh workspace, nothing to catch up | {ms(cold)} |",
        f"| catch-up of the 10 pulled memories (the difference) | {ms(catch_up - cold)} |",
        f"| a recall with nothing to catch up, warm (best of 5) | {ms(steady)} |",
        "",
    ]
    out.write_text("\n".join(lines))
    progress(f"wrote {out}")
    print(out.read_text())


if __name__ == "__main__":
    sys.exit(main())
