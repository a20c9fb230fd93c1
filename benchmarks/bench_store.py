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
import compileall
import cProfile
import hashlib
import importlib.util
import io
import math
import os
import platform
import pstats
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import msgspec
from dulwich.object_store import commit_tree_changes
from dulwich.objects import Blob, Commit
from dulwich.pack import write_pack
from dulwich.refs import Ref
from dulwich.repo import Repo

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.engine.layout import memory_path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / ".data"
GIT = "/usr/bin/git"
CTX = str(Path(sys.executable).parent / "ctx")
MAIN = Ref(b"refs/heads/main")
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@ctx",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@ctx",
}
OBSERVE = Intent(agent="bench", intent="observe")
IMPORT = Intent(agent="bench", intent="import")
REFINE = Intent(agent="bench", intent="refine")
WARMUP = 5


def clock() -> datetime:
    """The store's clock: the current time in UTC."""
    return datetime.now(UTC)


# -- configuration --------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """How big and how long each part of the run is."""

    sizes: tuple[int, ...]
    writes: int = 200
    runs: int = 20
    chunk: int = 100_000
    import_n: int = 100_000
    history_commits: int = 10_000
    touch_every: int = 100
    diff_size: int = 100_000
    diff_changes: int = 10
    profile: bool = False

    @property
    def checkpoints(self) -> list[int]:
        """The sizes, every power of ten between them, and the diff size."""
        points = set(self.sizes) | {self.diff_size}
        low, high = min(points), max(points)
        k = 10 ** math.ceil(math.log10(low))
        while k <= high:
            points.add(k)
            k *= 10
        return sorted(points)


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


# -- measuring ------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    """Summary of timing samples, in seconds."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        ordered = sorted(self.samples)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def n(self) -> int:
        return len(self.samples)


def ms(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.1f} s"
    return f"{seconds * 1000:.2f}" if seconds < 0.1 else f"{seconds * 1000:.0f}"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def repeat(fn: Callable[[], object], n: int, warmup: int = 0) -> Stats:
    os.sync()  # dirty pages left by earlier steps would land in our fsyncs
    for _ in range(warmup):
        fn()
    return Stats(tuple(timed(fn) for _ in range(n)))


def run(
    argv: Sequence[str], *, data: bytes | None = None, env: dict[str, str] | None = None
) -> bytes:
    result = subprocess.run(
        argv, input=data, capture_output=True, check=False, env=env or GIT_ENV
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"{shlex.join(argv)} exited {result.returncode}: "
            f"{result.stderr.decode(errors='replace').strip()}"
        )
    return result.stdout


def run_timed(argv: Sequence[str], data: bytes | None = None) -> float:
    return timed(lambda: run(argv, data=data))


LOADS: list[float] = []


def progress(message: str) -> None:
    LOADS.append(os.getloadavg()[0])
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- the report -----------------------------------------------------------------


@dataclass
class Target:
    """A target and whether the run met it."""

    name: str
    goal: str
    measured: str
    ok: bool


@dataclass
class Report:
    """The Markdown results, built as the run goes; sections sort by heading."""

    sections: dict[str, list[str]] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    current: str = ""

    @property
    def parts(self) -> list[str]:
        return self.sections.setdefault(self.current, [])

    def heading(self, text: str) -> None:
        self.current = text
        self.parts.append(f"\n## {text}\n")

    def body(self) -> str:
        return "\n".join("\n".join(self.sections[k]) for k in sorted(self.sections))

    def text(self, text: str) -> None:
        self.parts.append(text.strip("\n") + "\n")

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
        lines = [
            "| " + " | ".join(headers) + " |",
            "|" + "|".join("---" for _ in headers) + "|",
        ]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        self.parts.append("\n".join(lines) + "\n")

    def code(self, text: str) -> None:
        self.parts.append("```\n" + text.rstrip("\n") + "\n```\n")

    def target(self, name: str, goal: str, measured: str, ok: bool) -> None:
        """Records a target under the current section (listed in section order)."""
        self.targets.append(Target(f"{self.current[:2]} {name}", goal, measured, ok))


def machine_info() -> list[tuple[str, str]]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "unknown"
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    frozen = os.environ.get(_FROZEN_ENV)
    if frozen:
        ctx_rev = f"commit {frozen} (frozen copy)"
    else:
        try:
            head = run([GIT, "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
            ctx_rev = f"working tree on {head.decode().strip()}"
        except RuntimeError:
            ctx_rev = "working tree, no commit yet"
    return [
        ("Date", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("CPU", cpu),
        ("Cores", f"{os.cpu_count()} ({len(os.sched_getaffinity(0))} usable)"),
        ("Memory", mem),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
        ("dulwich", version("dulwich")),
        ("msgspec", version("msgspec")),
        ("git", run([GIT, "--version"]).decode().strip()),
        ("ctx", f"{version('ctx-memory')}, {ctx_rev}"),
        ("ctx loaded from", str(_package_dir("ctx.engine").parent)),
        ("engine + porcelain sources (sha1)", source_fingerprint()),
        ("Bytecode", "ctx modules compiled (compileall) before timing"),
        (
            "Load average (1 min)",
            f"{LOADS[0]:.2f} at start, {max(LOADS):.2f} at most during the run "
            "(this run alone makes about 1; more means other work shared the CPU)",
        ),
    ]


def compile_ctx() -> None:
    """Writes the bytecode of ctx's modules, as ``pip install`` would.

    Without it (PYTHONDONTWRITEBYTECODE set, or a fresh editable install)
    every ``ctx`` process compiles ctx's sources again (~20 ms here).
    """
    for name in ("ctx.engine", "ctx.porcelain"):
        compileall.compile_dir(_package_dir(name), quiet=1)


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"cannot find package {name}")
    return Path(spec.origin).parent


def source_fingerprint() -> str:
    """A short hash of the engine and porcelain sources that ran."""
    digest = hashlib.sha1()
    for name in ("ctx.engine", "ctx.porcelain"):
        folder = _package_dir(name)
        for file in sorted(folder.rglob("*.py")):
            digest.update(f"{name}/{file.relative_to(folder)}".encode() + b"\0")
            digest.update(file.read_bytes())
    return digest.hexdigest()[:12]


_FROZEN_ENV = "CTX_BENCH_FROZEN"


def run_frozen(rev: str) -> None:
    """Re-runs this script on a copy of the ctx sources as committed at ``rev``.

    The sources are extracted with ``git archive`` under ``.data/src``, ahead
    of the installed package on PYTHONPATH (for this process and every ``ctx``
    process it starts), so edits made to the working tree while the benchmark
    runs cannot change what is measured.
    """
    commit = run([GIT, "-C", str(ROOT), "rev-parse", "--short", rev]).decode().strip()
    src = fresh(DATA / "src")
    (src / "ctx").mkdir(parents=True)
    folders = ["engine", "porcelain", "hub", "lens"]
    archive = run([GIT, "-C", str(ROOT), "archive", "--format=tar", commit, *folders])
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(src / "ctx", filter="data")
    paths = [str(src), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), _FROZEN_ENV: commit}
    progress(f"measuring ctx as committed at {commit} (copy in {src})")
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


# -- data -----------------------------------------------------------------------

_KINDS = ("fact", "observation", "decision", "pattern")


def draft(i: int) -> Draft:
    """The i-th synthetic memory: ~150 bytes of body, one tag."""
    return Draft(
        text=(
            f"Memory {i}: the service on node-{i % 97} answered in {i % 500} ms "
            f"under load level {i % 13}; the cache hit rate was {i % 100}%."
        ),
        kind=_KINDS[i % len(_KINDS)],
        tags=(f"project:bench{i % 7}",),
    )


def import_line(i: int) -> bytes:
    d = draft(i)
    return msgspec.json.encode({"text": d.text, "kind": d.kind, "tags": d.tags})


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    return path


def git_dir(store: Path) -> str:
    return str(store / "git")


# -- 1, 2, 6: writes as the store grows -----------------------------------------


@dataclass
class Checkpoint:
    """Write measurements at one store size."""

    size: int
    api: Stats
    open_api: Stats
    dulwich: Stats
    git_plumbing: Stats
    process: Stats | None = None
    log_ctx: Stats | None = None
    log_git: Stats | None = None


def grow(store: Store, have: int, want: int, chunk: int, log: list[tuple]) -> int:
    while have < want:
        n = min(chunk, want - have)
        drafts = [draft(i) for i in range(have, have + n)]
        seconds = timed(
            lambda d=drafts: engine.remember_many(store, d, IMPORT, summary="bench")
        )
        log.append((have, n, seconds))
        progress(f"  +{n:,} memories on {have:,} in {seconds:.1f} s")
        have += n
    return have


def api_writes(path: Path, n: int) -> Stats:
    """``remember`` on one open store: ``n`` timed writes after a warm-up."""
    store = Store.open(path, clock=clock)
    counter = iter(range(10**9))

    def write() -> None:
        engine.remember(store, Draft(text=f"API write {next(counter)}"), OBSERVE)

    stats = repeat(write, n, warmup=WARMUP)
    store.close()
    return stats


def open_api_writes(path: Path, n: int) -> Stats:
    """``Store.open`` + ``remember`` + ``close`` per write."""
    counter = iter(range(10**9))

    def write() -> None:
        store = Store.open(path, clock=clock)
        engine.remember(store, Draft(text=f"Open+write {next(counter)}"), OBSERVE)
        store.close()

    return repeat(write, n, warmup=2)


def dulwich_writes(path: Path, n: int) -> Stats:
    """A plain dulwich commit of one small file at a sharded memory path.

    Same repository, its own branch: blob + ``commit_tree_changes`` (loose
    objects) + commit + compare-and-swap of the ref. No ctx code runs.
    """
    repo = Repo(git_dir(path))
    ref = Ref(b"refs/heads/bench/dulwich")
    repo.refs[ref] = repo.refs[MAIN]  # start from the same tree as ctx
    counter = iter(range(10**9))

    def write() -> None:
        i = next(counter)
        now = clock()
        old = repo.refs[ref]
        parent = repo.object_store[old]
        assert isinstance(parent, Commit)
        blob = Blob.from_string(b'{\n  "body": "dulwich write %d"\n}\n' % i)
        repo.object_store.add_object(blob)
        path = memory_path("general", engine.new_memory_id(now)).encode()
        tree = commit_tree_changes(
            repo.object_store, parent.tree, [(path, 0o100644, blob.id)]
        )
        commit = Commit()
        commit.tree = tree
        commit.parents = [old]
        commit.author = commit.committer = b"bench <bench@ctx>"
        commit.author_time = commit.commit_time = int(now.timestamp())
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"dulwich write %d\n" % i
        repo.object_store.add_object(commit)
        if not repo.refs.set_if_equals(ref, old, commit.id):
            raise RuntimeError("the dulwich baseline branch moved")

    stats = repeat(write, n, warmup=WARMUP)
    repo.close()
    return stats


def git_plumbing_writes(path: Path, n: int) -> Stats:
    """Three git processes: ``hash-object -w``, ``commit-tree``, ``update-ref``.

    For context only: the commit reuses the tip's tree (the blob is written
    but not placed in a tree; git has no one-process nested tree update).
    """
    gd = git_dir(path)
    ref = "refs/heads/bench/git"
    run([GIT, "--git-dir", gd, "update-ref", ref, "refs/heads/main"])
    counter = iter(range(10**9))

    git = [GIT, "--git-dir", gd]

    def write() -> None:
        i = next(counter)
        run([*git, "hash-object", "-w", "--stdin"], data=b"git write %d\n" % i)
        tree = f"{ref}^{{tree}}"
        new = run([*git, "commit-tree", tree, "-p", ref, "-m", f"git write {i}"])
        run([*git, "update-ref", ref, new.decode().strip()])

    return repeat(write, n, warmup=2)


def process_remembers(path: Path, n: int) -> Stats:
    counter = iter(range(10**9))
    argv = [CTX, "--store", str(path), "remember", "--agent", "bench"]
    return repeat(lambda: run([*argv, f"process write {next(counter)}"]), n, warmup=2)


def bench_writes(config: Config, report: Report) -> dict[int, Checkpoint]:
    path = fresh(DATA / "scale")
    store = Store.init(path, clock=clock)
    have = 0
    grow_log: list[tuple] = []
    results: dict[int, Checkpoint] = {}
    for size in config.checkpoints:
        progress(f"growing the store to {size:,} memories")
        have = grow(store, have, size, config.chunk, grow_log)
        store.close()
        progress(f"measuring writes at {size:,}")
        point = Checkpoint(
            size=size,
            api=api_writes(path, config.writes),
            open_api=open_api_writes(path, config.runs),
            dulwich=dulwich_writes(path, config.writes),
            git_plumbing=git_plumbing_writes(path, config.runs),
        )
        if size in (min(config.sizes), max(config.sizes)):
            point.process = process_remembers(path, config.runs)
            progress(f"  ctx remember process median {ms(point.process.median)} ms")
        point.log_ctx = repeat(
            lambda: run([CTX, "--store", str(path), "log", "-n", "5"]), 3, warmup=1
        )
        point.log_git = repeat(
            lambda: run([GIT, "--git-dir", git_dir(path), "log", "-n", "5"]), 3
        )
        progress(
            f"  API median {ms(point.api.median)} ms, p95 {ms(point.api.p95)} ms; "
            f"dulwich {ms(point.dulwich.median)} ms"
        )
        results[size] = point
        if size == config.diff_size:
            bench_diff(path, config, report)
        store = Store.open(path, clock=clock)
    store.close()
    report_writes(config, report, results, grow_log, path)
    return results


def report_writes(
    config: Config,
    report: Report,
    results: dict[int, Checkpoint],
    grow_log: list[tuple],
    path: Path,
) -> None:
    sizes = [s for s in config.checkpoints if s in config.sizes]
    small, large = results[min(sizes)], results[max(sizes)]
    report.heading("1. One `remember` through the Python API")
    report.text(
        f"""
`ctx.engine.remember(store, Draft(text=...), Intent(agent="bench",
intent="observe"))` on a store opened once with `Store.open`, {config.writes}
timed writes after {WARMUP} untimed ones, at each size (milliseconds). The
store was filled by `remember_many` in chunks of at most {config.chunk:,} (one
commit and one pack per chunk), so at {max(sizes):,} it holds
{math.ceil(max(sizes) / config.chunk) + 1} packs or so, plus the loose
objects of the writes measured at smaller sizes.

Baselines in the same repository: *dulwich* is a plain dulwich commit of one
small file at a path of the same shape (`memory/general/x/y/z/ID.json`):
blob, `commit_tree_changes`, commit, `set_if_equals` on its own branch, no
ctx code. *git plumbing* is `git hash-object -w` + `git commit-tree` +
`git update-ref` ({config.runs} runs; three processes; for context only: it
reuses the tip's tree instead of placing the blob in it). *open + remember*
is `Store.open` + `remember` + `close` per write ({config.runs} runs).
"""
    )
    report.table(
        [
            "memories stored",
            "remember median",
            "remember p95",
            "open + remember median",
            "dulwich commit median",
            "dulwich p95",
            "git plumbing (3 procs) median",
        ],
        [
            (
                f"{s:,}",
                ms(results[s].api.median),
                ms(results[s].api.p95),
                ms(results[s].open_api.median),
                ms(results[s].dulwich.median),
                ms(results[s].dulwich.p95),
                ms(results[s].git_plumbing.median),
            )
            for s in sizes
        ],
    )
    ratio = large.api.median / small.api.median
    dul_ratio = large.dulwich.median / small.dulwich.median
    report.text(
        f"Ratio {max(sizes):,} / {min(sizes):,} (median): ctx {ratio:.2f}x, "
        f"plain dulwich {dul_ratio:.2f}x. ctx overhead over plain dulwich at "
        f"{max(sizes):,}: {ms(large.api.median - large.dulwich.median)} ms."
    )
    for s in sizes:
        report.target(
            f"remember median at {s:,}",
            "< 3 ms",
            f"{ms(results[s].api.median)} ms",
            results[s].api.median < 0.003,
        )
    report.target(
        f"remember median {max(sizes):,} / {min(sizes):,}",
        "<= 1.5x",
        f"{ratio:.2f}x",
        ratio <= 1.5,
    )

    report.heading("2. `ctx remember` as a whole process")
    floor = repeat(lambda: run([sys.executable, "-c", "pass"]), config.runs, 2)
    imports = repeat(
        lambda: run([sys.executable, "-c", "import ctx.porcelain.main"]),
        config.runs,
        2,
    )
    version_run = repeat(lambda: run([CTX, "--version"]), config.runs, 2)
    rows = []
    for label, point in (("smallest", small), ("largest", large)):
        if point.process is not None:
            rows.append(
                (
                    f"`ctx --store S remember TEXT` ({label}: {point.size:,})",
                    ms(point.process.median),
                    ms(point.process.p95),
                )
            )
    rows += [
        (
            f"git hash-object + commit-tree + update-ref ({min(sizes):,})",
            ms(small.git_plumbing.median),
            ms(small.git_plumbing.p95),
        ),
        ("`python -c pass` (interpreter floor)", ms(floor.median), ms(floor.p95)),
        (
            "`python -c 'import ctx.porcelain.main'` (import floor)",
            ms(imports.median),
            ms(imports.p95),
        ),
        ("`ctx --version`", ms(version_run.median), ms(version_run.p95)),
    ]
    report.text(
        f"Wall time of the whole process, {config.runs} runs each after 2 "
        "untimed ones (milliseconds)."
    )
    report.table(["command", "median", "p95"], rows)
    worst = max(p.process.median for p in (small, large) if p.process is not None)
    report.target(
        "`ctx remember` whole process median",
        "< 150 ms",
        f"{ms(worst)} ms",
        worst < 0.150,
    )
    report.text(
        "`python -X importtime` for one `ctx remember` (minimum over 5 "
        "processes; modules of 2 ms or more; a module's imports are listed "
        "above it, indented one step more):"
    )
    report.code(import_time(path))

    report.heading("6. Write cost against store size")
    report.text(
        "Median time of one API `remember` (the table of section 1 at every "
        "power of ten), with the plain dulwich commit in the same store. "
        "`log -n 5` is the whole-process read of the newest five commits "
        "(3 runs): ctx reads its commit-history cache, git walks commits."
    )
    base = results[config.checkpoints[0]].api.median
    report.table(
        [
            "memories stored",
            "remember median",
            "p95",
            "vs smallest",
            "dulwich median",
            "`ctx log -n 5`",
            "`git log -n 5`",
        ],
        [
            (
                f"{s:,}",
                ms(p.api.median),
                ms(p.api.p95),
                f"{p.api.median / base:.2f}x",
                ms(p.dulwich.median),
                ms(p.log_ctx.median) if p.log_ctx else "",
                ms(p.log_git.median) if p.log_git else "",
            )
            for s, p in sorted(results.items())
        ],
    )
    report.text("How the store was filled (`remember_many`, one commit per chunk):")
    report.table(
        ["memories before", "chunk", "seconds", "memories/s"],
        [(f"{b:,}", f"{n:,}", f"{t:.1f}", f"{n / t:,.0f}") for b, n, t in grow_log],
    )
    sizes_on_disk = {
        name: sum(f.stat().st_size for f in (path / name).rglob("*") if f.is_file())
        for name in ("git", "cache")
    }
    report.text(
        f"Largest store on disk: git/ {sizes_on_disk['git'] / 2**20:,.0f} MiB, "
        f"cache/ (commit-history cache) {sizes_on_disk['cache'] / 2**20:,.0f} MiB."
    )


def import_time(path: Path, runs: int = 5, floor_us: int = 2000) -> str:
    """``python -X importtime`` of one ``ctx remember``: the import tree.

    Each module's times are the minimum over ``runs`` processes (start-up
    times are noisy); modules under ``floor_us`` cumulative are left out.
    Children come before their parent, as Python prints them.
    """
    remember = ["--store", str(path), "remember", "--agent", "bench", "probe"]
    order: list[str] = []
    best: dict[str, tuple[int, int]] = {}
    for _ in range(runs):
        result = subprocess.run(
            [sys.executable, "-X", "importtime", CTX, *remember],
            capture_output=True,
            check=True,
        )
        for line in result.stderr.decode().splitlines():
            match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (.*)$", line)
            if not match:
                continue
            name, own, cumulative = match[3], int(match[1]), int(match[2])
            if name not in best:
                order.append(name)
                best[name] = (own, cumulative)
            else:
                old = best[name]
                best[name] = (min(old[0], own), min(old[1], cumulative))
    top_level = sum(best[n][1] for n in order if not n.startswith(" "))
    lines = [f"{'self':>8} {'cumul.':>8}  module (microseconds)"]
    lines += [
        f"{best[n][0]:>8} {best[n][1]:>8}  {n}" for n in order if best[n][1] >= floor_us
    ]
    lines.append(f"sum of top-level imports: {top_level / 1000:.0f} ms")
    return "\n".join(lines)


# -- 3: batch import ------------------------------------------------------------


def bench_import(config: Config, report: Report) -> None:
    n = config.import_n
    progress(f"importing {n:,} memories into a fresh store")
    lines = [import_line(i) for i in range(n)]
    parse = timed(lambda: engine.parse_lines(lines))
    path = fresh(DATA / "import")
    store = Store.init(path, clock=clock)
    seconds = timed(lambda: engine.import_lines(store, lines, IMPORT))
    tip = store.branch_tip("main")
    snap = store.snapshot(tip)
    files = [(p, snap.read_blob(b)) for p, b in snap.files("memory")]
    store.close()
    assert len(files) == n, len(files)
    rate = n / seconds
    progress(f"  import_lines {seconds:.1f} s ({rate:,.0f}/s)")

    raw = fresh(DATA / "import-dulwich")
    repo = Repo.init_bare(str(raw), mkdir=True)
    object_format = repo.object_store.object_format
    blobs: list[Blob] = []
    make = timed(lambda: blobs.extend(Blob.from_string(d) for _, d in files))
    add = timed(lambda: repo.object_store.add_objects([(b, None) for b in blobs]))
    repo.close()
    direct = fresh(DATA / "import-pack")
    direct.mkdir(parents=True)
    pack = timed(
        lambda: write_pack(
            str(direct / "pack-bench"),
            [(b, None) for b in blobs],
            object_format,
            deltify=False,
        )
    )

    fast = fresh(DATA / "import-git")
    run([GIT, "init", "--bare", "-q", str(fast)])
    stream = io.BytesIO()
    stream.write(
        b"commit refs/heads/main\ncommitter bench <bench@ctx> 1700000000 +0000\n"
        b"data 7\nimport\n"
    )
    for p, data in files:
        stream.write(
            b"M 100644 inline %s\ndata %d\n%s\n" % (p.encode(), len(data), data)
        )
    fast_import = run_timed(
        [GIT, "--git-dir", str(fast), "fast-import", "--quiet"], stream.getvalue()
    )
    report.heading(f"3. Importing {n:,} memories in one batch")
    report.text(
        f"""
`ctx.engine.import_lines` of {n:,} JSON lines (~{len(files[0][1])} bytes
per stored memory) into a fresh store: one commit, one pack. Baselines take the
very blobs ctx wrote: dulwich `object_store.add_objects` of the {n:,} blobs as
one pack (no trees, no commit) into a fresh repository, dulwich
`pack.write_pack` (pack + index written directly, no re-reading), and
`git fast-import` of the same blobs at the same paths in one commit.
"""
    )
    report.table(
        ["what", "seconds", "memories/s"],
        [
            (
                "ctx `import_lines` (parse + validate + write)",
                f"{seconds:.2f}",
                f"{rate:,.0f}",
            ),
            ("  of which `parse_lines` alone", f"{parse:.2f}", f"{n / parse:,.0f}"),
            ("dulwich: build Blob objects", f"{make:.2f}", f"{n / make:,.0f}"),
            ("dulwich: `add_objects` (one pack)", f"{add:.2f}", f"{n / add:,.0f}"),
            ("dulwich: `write_pack` (pack + idx)", f"{pack:.2f}", f"{n / pack:,.0f}"),
            (
                "git fast-import (blobs + trees + commit)",
                f"{fast_import:.2f}",
                f"{n / fast_import:,.0f}",
            ),
        ],
    )
    report.target(
        f"import {n:,} memories", ">= 20,000/s", f"{rate:,.0f}/s", rate >= 20_000
    )
    for folder in (raw, direct, fast):
        shutil.rmtree(folder, ignore_errors=True)


# -- 4: blame and log over a long history ---------------------------------------


def bench_history(config: Config, report: Report) -> None:
    n = config.history_commits
    path = fresh(DATA / "history")
    progress(f"making {n:,} single-memory commits")
    store = Store.init(path, clock=clock)
    start = time.perf_counter()
    target = engine.remember(store, Draft(text="target, version 0"), OBSERVE).ids[0]
    for i in range(1, n):
        if i % config.touch_every == 0:
            engine.edit(store, target, REFINE, body=f"target, version {i}\nline two")
        else:
            engine.remember(store, draft(i), OBSERVE)
    build = time.perf_counter() - start
    mpath = engine.show(store, target).path
    store.close()
    progress(f"  built in {build:.1f} s")
    cache = path / "cache" / "history.jsonl"
    gd = git_dir(path)
    git_log = [GIT, "--git-dir", gd, "log", "--format=%H%x09%an%x09%s", "--", mpath]
    ctx_blame = [CTX, "--store", str(path), "blame", target]
    ctx_log = [CTX, "--store", str(path), "log", target]

    def in_process(fn: Callable[[Store], object]) -> tuple[float, float, Stats]:
        cache.unlink()
        s = Store.open(path, clock=clock)
        cold = timed(lambda: fn(s))  # rebuilds the cache from git
        s.close()
        s = Store.open(path, clock=clock)
        first = timed(lambda: fn(s))  # reads the cache file
        warm = repeat(lambda: fn(s), config.runs)
        s.close()
        return cold, first, warm

    blame_cold, blame_first, blame_warm = in_process(lambda s: engine.blame(s, target))
    log_cold, log_first, log_warm = in_process(lambda s: engine.log(s, target))
    check = Store.open(path, clock=clock)
    entries = len(engine.blame(check, target))
    check.close()

    cache.unlink()
    blame_proc_cold = run_timed(ctx_blame)
    blame_proc = repeat(lambda: run(ctx_blame), config.runs, warmup=1)
    log_proc = repeat(lambda: run(ctx_log), config.runs, warmup=1)
    git_lines = run(git_log).decode().count("\n")
    git_warm = repeat(lambda: run(git_log), config.runs, warmup=1)
    run(
        [
            GIT,
            "--git-dir",
            gd,
            "commit-graph",
            "write",
            "--reachable",
            "--changed-paths",
        ]
    )
    git_graph = repeat(lambda: run(git_log), config.runs, warmup=1)
    Path(gd, "objects", "info", "commit-graph").unlink(missing_ok=True)
    report.heading(f"4. `blame` and `log` of one memory over {n:,} commits")
    report.text(
        f"""
{n:,} single-memory commits made through the API ({build:.1f} s, so
{build / n * 1000:.2f} ms per commit on a small store), every
{config.touch_every}th an `edit` of one target memory: it has {entries}
entries in `ctx blame` and {git_lines} in `git log -- PATH`. *Cold* deletes
`cache/history.jsonl` first, so the history is rebuilt from git (a tree diff
per commit); *first* opens a fresh Store with the cache file present; *warm*
repeats the call on that Store ({config.runs} runs). Processes: {config.runs}
runs after one untimed. git runs without a commit-graph (as a store written by
ctx or dulwich has none) and, for reference, with `git commit-graph write
--reachable --changed-paths` (bloom filters).
"""
    )
    report.table(
        ["what", "cold", "first", "warm median", "warm p95"],
        [
            (
                "`engine.blame(store, ID)` in-process",
                ms(blame_cold),
                ms(blame_first),
                ms(blame_warm.median),
                ms(blame_warm.p95),
            ),
            (
                "`engine.log(store, ID)` in-process",
                ms(log_cold),
                ms(log_first),
                ms(log_warm.median),
                ms(log_warm.p95),
            ),
            (
                "`ctx blame ID` process",
                ms(blame_proc_cold),
                "",
                ms(blame_proc.median),
                ms(blame_proc.p95),
            ),
            ("`ctx log ID` process", "", "", ms(log_proc.median), ms(log_proc.p95)),
            (
                "`git log --format=... -- PATH`",
                "",
                "",
                ms(git_warm.median),
                ms(git_warm.p95),
            ),
            (
                "same, with commit-graph + bloom filters",
                "",
                "",
                ms(git_graph.median),
                ms(git_graph.p95),
            ),
        ],
    )
    report.target(
        f"`ctx blame ID` process vs `git log -- PATH` ({n:,} commits)",
        "faster than git",
        f"{ms(blame_proc.median)} vs {ms(git_warm.median)} ms",
        blame_proc.median < git_warm.median,
    )
    report.target(
        f"`ctx log ID` process vs `git log -- PATH` ({n:,} commits)",
        "faster than git",
        f"{ms(log_proc.median)} vs {ms(git_warm.median)} ms",
        log_proc.median < git_warm.median,
    )
    report.target(
        "`engine.blame` in-process, warm, vs `git log -- PATH`",
        "faster than git",
        f"{ms(blame_warm.median)} vs {ms(git_warm.median)} ms",
        blame_warm.median < git_warm.median,
    )


# -- 5: diff between two branches -----------------------------------------------


def bench_diff(path: Path, config: Config, report: Report) -> None:
    progress(f"diff of two branches, {config.diff_changes} memories apart")
    store = Store.open(path, clock=clock)
    engine.create_branch(store, "bench/diff-a", "main")
    engine.create_branch(store, "bench/diff-b", "main")
    changes = config.diff_changes
    edits, forgets = changes - 2 * (changes // 3), changes // 3
    adds = changes - edits - forgets
    snap = store.snapshot(store.branch_tip("main"))
    picked: list[str] = []
    for p, _ in snap.files("memory"):
        picked.append(p.rsplit("/", 1)[1][:-5])
        if len(picked) == edits + forgets:
            break
    b = "bench/diff-b"
    for mid in picked[:edits]:
        engine.edit(store, mid, REFINE, body="edited for the diff benchmark", branch=b)
    for mid in picked[edits:]:
        engine.forget(store, mid, REFINE, branch=b)
    for i in range(adds):
        engine.remember(store, Draft(text=f"added on branch b {i}"), OBSERVE, branch=b)
    store.close()

    def diff_once() -> engine.Diff:
        s = Store.open(path, clock=clock)
        try:
            return engine.diff(s, "bench/diff-a", "bench/diff-b")
        finally:
            s.close()

    result = diff_once()
    found = len(result.added) + len(result.removed) + len(result.changed)
    first = timed(diff_once)
    warm_store = Store.open(path, clock=clock)
    warm = repeat(
        lambda: engine.diff(warm_store, "bench/diff-a", "bench/diff-b"), config.runs, 1
    )
    warm_store.close()
    fresh_open = repeat(diff_once, config.runs)
    proc = repeat(
        lambda: run(
            [CTX, "--store", str(path), "diff", "bench/diff-a", "bench/diff-b"]
        ),
        config.runs,
        warmup=1,
    )
    git = repeat(
        lambda: run(
            [
                GIT,
                "--git-dir",
                git_dir(path),
                "diff",
                "--stat",
                "bench/diff-a",
                "bench/diff-b",
            ]
        ),
        config.runs,
        warmup=1,
    )
    report.heading(
        f"5. `diff` of two branches {changes} memories apart, "
        f"{config.diff_size:,} memories"
    )
    report.text(
        f"""
Branch b = branch a + {edits} edits, {forgets} forgets and {adds} new memories
(the diff finds {len(result.changed)} changed, {len(result.removed)} removed,
{len(result.added)} added = {found}). {config.runs} runs each (milliseconds).
"""
    )
    report.table(
        ["what", "median", "p95"],
        [
            ("`engine.diff` in-process, Store open", ms(warm.median), ms(warm.p95)),
            (
                "`Store.open` + `engine.diff` + close",
                ms(fresh_open.median),
                ms(fresh_open.p95),
            ),
            ("`ctx diff A B` process", ms(proc.median), ms(proc.p95)),
            ("`git diff --stat A B`", ms(git.median), ms(git.p95)),
        ],
    )
    report.text(f"First call after the branches were written: {ms(first)} ms.")
    report.target(
        f"`Store.open` + `engine.diff` ({changes} of {config.diff_size:,})",
        "< 50 ms",
        f"{ms(fresh_open.median)} ms",
        fresh_open.median < 0.050,
    )
    report.target(
        f"`ctx diff` whole process ({changes} of {config.diff_size:,})",
        "< 50 ms",
        f"{ms(proc.median)} ms",
        proc.median < 0.050,
    )


# -- profiles -------------------------------------------------------------------


def profile_text(fn: Callable[[], object], limit: int = 25) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(limit)
    return tidy_profile(out.getvalue())


def tidy_profile(text: str) -> str:
    text = re.sub(r"/\S*/site-packages/", "", text)
    text = re.sub(r"/\S*/(ctx/\w+/)", r"\1", text)
    return "\n".join(line for line in text.splitlines()[4:] if line.strip())


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
    report.text(f"`import_lines` of {config.import_n:,} memories into a fresh store:")
    report.code(profile_text(lambda: engine.import_lines(import_store, lines, IMPORT)))
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
    if rev and not os.environ.get(_FROZEN_ENV):
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
