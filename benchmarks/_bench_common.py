"""Shared parts of the store benchmark: setup, timing, reporting, helpers.

Constants and the run's configuration, timing and statistics helpers, the
git/subprocess helpers, the Markdown report, machine information, the
frozen-copy-of-sources mode (``--rev``), synthetic data, and the start-up
(``-X importtime``) and cProfile helpers. Used by ``bench_store.py`` and
``_store_scenarios.py``.
"""

from __future__ import annotations

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
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import msgspec
from dulwich.refs import Ref

from ctx import engine
from ctx.engine import Draft, Intent, Store

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
FROZEN_ENV = "CTX_BENCH_FROZEN"  # set in the re-run on a frozen copy (--rev)


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


def isolated_env(home: Path) -> dict[str, str]:
    """Returns this process's environment with ``home`` as HOME and every XDG
    folder under it, no ``CTX_`` setting, and no hub started by a command."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("CTX_")},
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "CTX_HUB_AUTOSTART": "0",
    }


def cpu_name() -> str:
    """Returns the CPU's model name (every benchmark's machine table shows it)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine_lines(
    started: datetime, loads: Sequence[float], extra: Sequence[tuple[str, str]] = ()
) -> list[str]:
    """Returns a short machine table: date, CPU, cores, Python, ``extra`` rows
    and the load averages (at start, the most, at end) of ``loads``."""
    rows = [
        ("Date", f"{started:%Y-%m-%d %H:%M} UTC"),
        ("CPU", cpu_name()),
        ("Cores", f"{os.cpu_count()} ({len(os.sched_getaffinity(0))} usable)"),
        ("Python", platform.python_version()),
        *extra,
        (
            "Load average (1 min) at start / most / end",
            f"{loads[0]:.2f} / {max(loads):.2f} / {loads[-1]:.2f}",
        ),
    ]
    return ["| machine |  |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]


def ctx_revision() -> str:
    """Says which ctx a run measures: a frozen commit's copy, or the working tree."""
    frozen = os.environ.get(FROZEN_ENV)
    if frozen:
        return f"commit {frozen} (frozen copy)"
    try:
        head = run([GIT, "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    except RuntimeError:
        return "working tree, no commit yet"
    return f"working tree on {head.decode().strip()}"


def machine_info() -> list[tuple[str, str]]:
    cpu = cpu_name()
    mem = "unknown"
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
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
        ("ctx", f"{version('ctx-memory')}, {ctx_revision()}"),
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


def frozen_copy(rev: str) -> tuple[Path, str]:
    """Extracts the ctx sources as committed at ``rev``; returns where, and the commit.

    They go under ``.data/src/COMMIT`` with ``git archive``: put the folder
    ahead of the installed package on PYTHONPATH to run that ctx.
    """
    commit = run([GIT, "-C", str(ROOT), "rev-parse", "--short", rev]).decode().strip()
    src = fresh(DATA / "src" / commit)
    (src / "ctx").mkdir(parents=True)
    folders = ["engine", "porcelain", "hub", "lens"]
    archive = run([GIT, "-C", str(ROOT), "archive", "--format=tar", commit, *folders])
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(src / "ctx", filter="data")
    return src, commit


def ahead_on_path(src: Path | str) -> str:
    """Returns ``PYTHONPATH`` with ``src`` first, ahead of this process's own."""
    return os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])


def run_frozen(rev: str) -> None:
    """Re-runs this script on a copy of the ctx sources as committed at ``rev``.

    The copy (:func:`frozen_copy`) comes ahead of the installed package on
    PYTHONPATH (for this process and every ``ctx`` process it starts), so
    edits made to the working tree while the benchmark runs cannot change
    what is measured, nor can a run of another revision started beside it
    (modules are imported lazily, late in a run).
    """
    src, commit = frozen_copy(rev)
    env = {**os.environ, "PYTHONPATH": ahead_on_path(src), FROZEN_ENV: commit}
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


# -- growing the store ----------------------------------------------------------


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


# -- start-up and profiles ------------------------------------------------------


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
