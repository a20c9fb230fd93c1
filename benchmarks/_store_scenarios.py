"""The store benchmark's measurement scenarios, numbered as in the report.

1, 2, 6: writes as the store grows (API, whole process, scaling); 3: batch
import; 4: blame and log over a long history; 5: diff between two branches.
Each ``bench_*`` function measures and adds its section to the report.
"""

from __future__ import annotations

import io
import itertools
import math
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _bench_common import (
    CTX,
    DATA,
    GIT,
    IMPORT,
    MAIN,
    OBSERVE,
    REFINE,
    WARMUP,
    Checkpoint,
    Config,
    Report,
    Stats,
    clock,
    draft,
    fresh,
    git_dir,
    grow,
    import_line,
    import_time,
    ms,
    progress,
    repeat,
    run,
    run_timed,
    timed,
)
from dulwich.object_store import commit_tree_changes
from dulwich.objects import Blob, Commit
from dulwich.pack import write_pack
from dulwich.refs import Ref
from dulwich.repo import Repo

from ctx import engine
from ctx.engine import Draft, Store
from ctx.engine.layout import memory_path
from ctx.engine.line_import import parse_lines

# -- 1, 2, 6: writes as the store grows -----------------------------------------


# Every write's text is new across the whole run: remember skips a text the
# branch already has, and the checkpoints write into one growing store.
_TEXTS = itertools.count()


def api_writes(path: Path, n: int) -> Stats:
    """``remember`` on one open store: ``n`` timed writes after a warm-up."""
    store = Store.open(path, clock=clock)
    counter = _TEXTS

    def write() -> None:
        engine.remember(store, Draft(text=f"API write {next(counter)}"), OBSERVE)

    stats = repeat(write, n, warmup=WARMUP)
    store.close()
    return stats


def open_api_writes(path: Path, n: int) -> Stats:
    """``Store.open`` + ``remember`` + ``close`` per write."""
    counter = _TEXTS

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


# -- 3: batch import ------------------------------------------------------------


def bench_import(config: Config, report: Report) -> None:
    n = config.import_n
    progress(f"importing {n:,} memories into a fresh store")
    lines = [import_line(i) for i in range(n)]
    parse = timed(lambda: parse_lines(lines))
    path = fresh(DATA / "import")
    store = Store.init(path, clock=clock)
    seconds = timed(lambda: engine.import_memories(store, lines, IMPORT))
    tip = store.branch_tip("main")
    snap = store.snapshot(tip)
    files = [(p, snap.read_blob(b)) for p, b in snap.files("memory")]
    store.close()
    assert len(files) == n, len(files)
    rate = n / seconds
    progress(f"  import_memories {seconds:.1f} s ({rate:,.0f}/s)")

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
`ctx.engine.import_memories` of {n:,} JSON lines (~{len(files[0][1])} bytes
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
                "ctx `import_memories` (parse + validate + write)",
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
