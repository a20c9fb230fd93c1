"""The lens on a 100k-memory store: opening, key presses, recall and review.

Usage::

    flock /tmp/ctx-bench.lock .venv/bin/python benchmarks/bench_lens.py
    .venv/bin/python benchmarks/bench_lens.py --quick    # 10k memories

Builds one store under ``benchmarks/.data/lens`` (kept between runs; pass
``--rebuild`` to make it again): N memories in one batch, one link from
each memory to another (DERIVED_FROM, DEPENDS_ON or RELATES_TO, in one
commit), a hub memory with 300 links, a branch ``agent/reviewer`` (20 new
memories, 10 edits) whose merge into main conflicts on 5 memories, then
200 small commits (remember, tag, link) so that the log has a history to
move through. The caches a first command builds (history, catalog,
adjacency, the search indexes through one recall, which leaves the store's
hub running until the end) are warmed once, as the user's earlier
commands would have.

The baseline, measured in the same run, is the same app on a small store
(200 memories, the same commits and branch): each number is also given as
a ratio to it.

What the user waits for, measured:

- opening: ``ctx lens`` in tmux, from starting it to the log on the
  terminal; a fresh process (the interpreter, the command line's imports,
  the lens) to the first frame with the log, headless; in-process, from
  making the app to that frame and to the frame with the newest diff;
- key presses, in-process with Textual's Pilot (``App.run_test``): each key
  is sent as the terminal driver sends it and timed to the first frame the
  app puts on the terminal after it, and until the screen is still (its
  workers' data shown): down through the log, the memory list and the
  graph, Enter (recentre) and ``b`` (back) in the graph, a query typed on
  the recall screen (and the time to its hits, debounce included);
- first visits of the memories, graph and review screens (key to first
  frame, and to the data shown: for review, ``agent/reviewer``'s review
  and merge preview).

Goals (issue 18): first screen under 1 s; no key press waits over 100 ms.
Results go to ``benchmarks/results/lens.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from textual import events

from ctx import engine
from ctx.engine import CtxError, Draft, Intent, Store
from ctx.engine.layout import link_path
from ctx.engine.model import Link, encode
from ctx.hub import Workspace, recall, stop_hub
from ctx.lens import LensApp, Source

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "lens"
WHO = Intent(agent="bench", intent="import", reason="benchmark data")
TYPES = ("DERIVED_FROM", "DEPENDS_ON", "RELATES_TO")
COMMITS = 200
HUB_LINKS = 300
KEYS = 40
QUIET = 0.15
"""Seconds without a frame, workers done, after which a key's work is over
(three times the history's wait before it reads a diff)."""
QUERY = "part 42 fact"
REVIEWED = "agent/reviewer"
CTX = str(Path(sys.executable).with_name("ctx"))


def clock() -> datetime:
    return datetime.now(UTC)


def build(folder: Path, n: int) -> str:
    """Builds the store; returns the hub memory's id."""
    shutil.rmtree(folder, ignore_errors=True)
    store = Store.init(folder / ".ctx", clock=clock)
    (folder / ".ctx" / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    start = time.perf_counter()
    ids = list(
        engine.remember_many(
            store,
            [
                Draft(
                    text=f"memory {i}: a fact about part {i % 97}",
                    kind=("fact", "decision", "pattern", "observation")[i % 4],
                    context=f"area{i % 20}",
                )
                for i in range(n)
            ],
            WHO,
        ).ids
    )
    print(f"  {n} memories in {time.perf_counter() - start:.1f} s", flush=True)
    rng = random.Random(7)
    link = encode(Link(version=1, agent="bench", created_at=clock()))
    changes: dict[str, bytes | None] = {}
    for source in ids:
        target = ids[rng.randrange(n)]
        if target != source:
            changes[link_path(source, rng.choice(TYPES), target)] = link
    for target in rng.sample(ids[1:], min(HUB_LINKS, n - 1)):
        changes[link_path(ids[0], "RELATES_TO", target)] = link
    start = time.perf_counter()
    store.write("main", WHO, f"Link {len(changes)} pairs", lambda snap: changes)
    print(f"  {len(changes)} links in {time.perf_counter() - start:.1f} s", flush=True)
    reviewed_branch(store, ids)
    history(store, ids, rng)
    store.close()
    return ids[0]


def reviewed_branch(store: Store, ids: list[str]) -> None:
    """Makes the branch the review screen opens: 30 commits, 5 of them conflicting.

    On ``agent/reviewer``: 20 new memories and 10 edits; then on main, 5 of
    the same memories edited otherwise, so the merge preview has conflicts.
    """
    engine.create_branch(store, REVIEWED, "main")
    who = Intent(agent="reviewer", intent="observe", reason="review data")
    for i in range(20):
        engine.remember(
            store, Draft(text=f"learned {i} on part {i}"), who, branch=REVIEWED
        )
    for i in range(1, 11):
        engine.edit(
            store,
            ids[i],
            who,
            body=f"memory {i}, as the reviewer saw it",
            branch=REVIEWED,
        )
    for i in range(1, 6):
        engine.edit(
            store, ids[i], WHO, body=f"memory {i}, as main has it", branch="main"
        )


def history(store: Store, ids: list[str], rng: random.Random) -> None:
    """Makes the small commits the log is moved through."""
    start = time.perf_counter()
    for i in range(COMMITS):
        who = Intent(
            agent=f"agent{i % 3}", intent="observe", confidence=0.8, reason=f"step {i}"
        )
        if i % 3 == 0:
            engine.remember(store, Draft(text=f"note {i} on part {i % 97}"), who)
        elif i % 3 == 1:
            engine.tag(store, rng.choice(ids), [f"step:{i}"], who)
        else:
            engine.link(store, rng.choice(ids), rng.choice(ids), "RELATES_TO", who)
    print(f"  {COMMITS} commits in {time.perf_counter() - start:.1f} s", flush=True)


def warm(folder: Path) -> None:
    """Builds the disk caches once, as a user's earlier commands would."""
    store = Store.open(folder / ".ctx", clock=clock)
    tip = store.branch_tip("main")
    start = time.perf_counter()
    engine.live_catalog(store, tip)
    engine.link_graph(store, tip).superseded()
    engine.log(store, limit=1)
    store.close()
    ws = Workspace(folder / ".ctx", clock=clock, agent="bench")
    recall(ws, "warm the indexes", branch="main")  # the indexes caught up
    ws.close()
    print(f"  caches warmed in {time.perf_counter() - start:.1f} s", flush=True)


def app_on(folder: Path) -> LensApp:
    ws = Workspace(folder / ".ctx", clock=clock, agent="bench")
    return LensApp(Source.open(ws), poll_seconds=None)


async def workers_done(app: LensApp) -> None:
    """Waits until every worker has finished (a superseded one is cancelled)."""
    while not all(w.is_finished for w in app.workers):
        await asyncio.sleep(0.001)


class Frames:
    """When the app put a frame on the terminal, recorded as it happens.

    Headless, the app skips turning an update into the bytes a terminal is
    sent; here that is done too, so a frame costs what it costs in a
    terminal.
    """

    def __init__(self, app: LensApp) -> None:
        self.times: list[float] = []
        self.event = asyncio.Event()
        shown = app._display

        def display(screen: object, update: object) -> None:
            shown(screen, update)  # type: ignore[arg-type]
            if update is None or app._batch_count:
                return
            render = getattr(update, "render_segments", None)
            if render is not None:
                render(app.console)
            self.times.append(time.perf_counter())
            self.event.set()

        app._display = display  # type: ignore[method-assign]

    async def after(self, count: int, limit: float = 30) -> float:
        """Waits for frame number ``count``; returns when it was shown."""
        deadline = time.perf_counter() + limit
        while len(self.times) <= count:
            self.event.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no frame came")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.event.wait(), left)
        return self.times[count]

    async def quiet(self, app: LensApp, still: float = QUIET) -> float:
        """Waits until the workers are done and no frame came for ``still`` s."""
        while True:
            await workers_done(app)
            count = len(self.times)
            await asyncio.sleep(still)
            if len(self.times) == count and all(w.is_finished for w in app.workers):
                return self.times[-1] if self.times else time.perf_counter()


def rows(app: LensApp, selector: str) -> int:
    from textual.widgets import DataTable

    try:
        return app.screen.query_one(selector, DataTable).row_count
    except Exception:  # the screen is not up yet
        return 0


async def until(done: Callable[[], bool], limit: float = 300) -> None:
    deadline = time.perf_counter() + limit
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen never showed its data")
        await asyncio.sleep(0.001)


async def open_first_screen(
    folder: Path, started: float | None = None
) -> tuple[float, float]:
    """Returns the times to the first frame with the log, and with its diff."""
    start = time.perf_counter() if started is None else started
    app = app_on(folder)
    frames = Frames(app)
    async with app.run_test(size=(120, 40)):
        await until(lambda: rows(app, "#log") > 0)
        with_log = await frames.after(len(frames.times))
        await until(lambda: "commit " in str(app.screen.query_one("#diff").render()))
        with_diff = await frames.after(len(frames.times))
        return with_log - start, with_diff - start


def key_event(key: str) -> events.Key:
    char = {"enter": "\r", "space": " ", "backspace": "\x7f", "escape": "\x1b"}
    return events.Key(key, char.get(key, key if len(key) == 1 else None))


async def press(app: LensApp, frames: Frames, key: str) -> tuple[float, float]:
    """Presses a key as a terminal sends it; returns (first frame, quiet) times."""
    count = len(frames.times)
    start = time.perf_counter()
    app.post_message(key_event(key))
    first = await frames.after(count)
    last = await frames.quiet(app)
    return first - start, last - start


async def keys(
    folder: Path, screen_key: str, ready: Callable[[LensApp], bool], presses: list[str]
) -> tuple[list[float], list[float]]:
    """Returns each key's time to its first frame and until the screen is still."""
    app = app_on(folder)
    frames = Frames(app)
    first: list[float] = []
    last: list[float] = []
    async with app.run_test(size=(120, 40)):
        await until(lambda: rows(app, "#log") > 0)
        await frames.quiet(app)
        if screen_key:
            await press(app, frames, screen_key)
        await until(lambda: ready(app))
        await frames.quiet(app)
        for key in presses:
            a, b = await press(app, frames, key)
            first.append(a)
            last.append(b)
    return first, last


async def recall_keys(folder: Path) -> tuple[list[float], list[float], float]:
    """Types a query on the recall screen.

    Returns each typed key's time to its first frame, each until the screen
    is still (before the debounce ends), and the time from the last key to
    the hits shown (the 0.3 s debounce included).
    """
    from textual.widgets import Input

    app = app_on(folder)
    frames = Frames(app)
    typed: list[float] = []
    still: list[float] = []
    async with app.run_test(size=(120, 40)):
        await until(lambda: rows(app, "#log") > 0)
        await frames.quiet(app)
        await press(app, frames, "4")
        await until(lambda: len(app.screen.query("#query")) > 0)
        app.screen.query_one("#query", Input).cursor_blink = False
        await frames.quiet(app)
        for char in QUERY:
            count = len(frames.times)
            start = time.perf_counter()
            app.post_message(key_event("space" if char == " " else char))
            typed.append(await frames.after(count) - start)
            await workers_done(app)
            await asyncio.sleep(0.05)  # a quick typist, well inside the debounce
            still.append(frames.times[-1] - start)
        start = time.perf_counter() - 0.05
        await until(lambda: rows(app, "#hits") > 0)
        shown = await frames.after(len(frames.times))
    return typed, still, shown - start


async def visit(
    folder: Path, key: str, ready: Callable[[LensApp], bool]
) -> tuple[float, float]:
    """Returns the times from a screen's key, on its first visit, to its first
    frame and to the first frame with its data (``ready``)."""
    app = app_on(folder)
    frames = Frames(app)
    async with app.run_test(size=(120, 40)):
        await until(lambda: rows(app, "#log") > 0)
        await frames.quiet(app)
        count = len(frames.times)
        start = time.perf_counter()
        app.post_message(key_event(key))
        first = await frames.after(count) - start
        await until(lambda: ready(app))
        shown = await frames.after(len(frames.times)) - start
        await frames.quiet(app)
    return first, shown


def visits(
    folder: Path, key: str, ready: Callable[[LensApp], bool]
) -> tuple[float, float]:
    """Medians of three first visits."""
    runs = [asyncio.run(visit(folder, key, ready)) for _ in range(3)]
    return statistics.median(a for a, _ in runs), statistics.median(b for _, b in runs)


def recall_alone(folder: Path) -> float:
    """Returns the median time of the recall the screen makes, called directly."""
    ws = Workspace(folder / ".ctx", clock=clock, agent="bench")
    times = []
    for query in (QUERY, "part 43 memory", "part 44 decision"):
        start = time.perf_counter()
        recall(ws, query, branch="main", explain=True)
        times.append(time.perf_counter() - start)
    ws.close()
    return statistics.median(times)


def ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[max(0, int(len(values) * 0.95) - 1)]
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {values[-1] * 1000:.1f} ms"


def import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import ctx.lens; print(time.perf_counter() - t)"
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    ]
    return statistics.median(runs)


def open_in_a_fresh_process(folder: Path) -> float:
    """Returns the time from starting a process to the first frame with the log.

    The process imports what ``ctx lens`` imports (the command line, then the
    lens), then opens the lens headless; the clock starts before the
    interpreter does.
    """
    code = (
        "import time, asyncio, sys; "
        "import ctx.porcelain.main; "
        f"sys.path.insert(0, {str(HERE)!r}); import bench_lens; "
        "from pathlib import Path; "
        f"print(asyncio.run(bench_lens.open_first_screen(Path({str(folder)!r}), float(sys.argv[1])))[0])"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, str(start)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout)


def open_in_tmux(folder: Path) -> float | None:
    """Returns the time from ``ctx lens`` started in tmux to the log on its screen.

    A real terminal: the tmux server is up first; the screen is read with
    ``capture-pane`` every few milliseconds, which adds up to that much.
    """
    tmux = shutil.which("tmux")
    if tmux is None:
        return None
    # A socket of its own each time: a new server on the socket of one just
    # killed can find it still going away.
    socket = str(DATA / f"tmux-{time.monotonic_ns()}.sock")

    def run(*args: str) -> str:
        return subprocess.run(
            [tmux, "-S", socket, *args], capture_output=True, text=True, check=True
        ).stdout

    run("new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "sleep 600")
    try:
        start = time.perf_counter()
        run("new-window", "-t", "bench", "-n", "lens", "-c", str(folder), f"{CTX} lens")
        while "step 199" not in run("capture-pane", "-p", "-t", "bench:lens"):
            if time.perf_counter() - start > 60:
                raise TimeoutError("ctx lens never showed its log")
            time.sleep(0.003)
        return time.perf_counter() - start
    finally:
        subprocess.run([tmux, "-S", socket, "kill-server"], check=False)
        Path(socket).unlink(missing_ok=True)


def measure(folder: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    opens = [asyncio.run(open_first_screen(folder)) for _ in range(5)]
    out["open"] = statistics.median(t for t, _ in opens)
    out["open_diff"] = statistics.median(t for _, t in opens)
    out["fresh"] = statistics.median(open_in_a_fresh_process(folder) for _ in range(5))
    tmux = [open_in_tmux(folder) for _ in range(5)]
    out["tmux"] = None if None in tmux else statistics.median(tmux)  # type: ignore[type-var]
    hood = lambda app: getattr(app.screen, "hood", None) is not None  # noqa: E731
    out["log"] = asyncio.run(keys(folder, "", lambda app: True, ["down"] * KEYS))
    listed = lambda app: rows(app, "#memories") > 0  # noqa: E731
    out["list"] = asyncio.run(keys(folder, "2", listed, ["down"] * KEYS))
    out["graph"] = asyncio.run(keys(folder, "3", hood, ["down"] * KEYS))
    out["centre"] = asyncio.run(keys(folder, "3", hood, ["down", "enter", "b"] * 10))
    out["recall"] = asyncio.run(recall_keys(folder))
    out["recall_alone"] = recall_alone(folder)
    out["visit_list"] = visits(folder, "2", listed)
    out["visit_graph"] = visits(folder, "3", hood)
    out["review"] = visits(
        folder, "5", lambda app: getattr(app.screen, "state", None) is not None
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="10k memories")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "lens.md")
    args = parser.parse_args()
    n = 10_000 if args.quick else 100_000
    big, small = DATA / f"n{n}", DATA / "n200"
    for folder, size in ((big, n), (small, 200)):
        if args.rebuild or not (folder / ".ctx").exists():
            print(f"building {size} memories", flush=True)
            build(folder, size)
        warm(folder)
    started = datetime.now(UTC)
    imported = import_seconds()
    print(f"import ctx.lens: {imported * 1000:.0f} ms", flush=True)
    results = {}
    for name, folder in (("small", small), ("big", big)):
        print(f"measuring {name}", flush=True)
        results[name] = measure(folder)
    for folder in (small, big):  # the hubs the warming recall started
        with contextlib.suppress(CtxError):
            stop_hub(Workspace(folder / ".ctx", clock=clock, agent="bench"))
    write(args.out, n, started, imported, results)


def write(out: Path, n: int, started: datetime, imported: float, results: dict) -> None:
    from _bench_common import cpu_name

    big, small = results["big"], results["small"]
    load = Path("/proc/loadavg").read_text().split()[:3]

    def once(key: str, what: str) -> str:
        a, b = small[key], big[key]
        if a is None or b is None:
            return f"| {what} | - | - | - |"
        return f"| {what} | {a * 1000:.0f} ms | {b * 1000:.0f} ms | {b / a:.2f} |"

    def spread(a: list[float], b: list[float], what: str) -> str:
        ratio = statistics.median(b) / statistics.median(a)
        return f"| {what} | {ms(a)} | {ms(b)} | {ratio:.2f} |"

    lines = [
        "# The lens: opening and key presses",
        "",
        f"- date: {started:%Y-%m-%d %H:%M} UTC",
        f"- machine: {cpu_name()}, {os.cpu_count()} cores; Python {platform.python_version()}; textual {version('textual')}",
        f"- load average when it ended: {' '.join(load)} (the machine is shared)",
        f"- command: `flock /tmp/ctx-bench.lock .venv/bin/python benchmarks/bench_lens.py{'' if n == 100_000 else ' --quick'}`",
        f"- store: {n} memories, ~{n} links plus a hub memory with {HUB_LINKS}, "
        f"{COMMITS} small commits, a branch `{REVIEWED}` of 30 commits whose merge "
        "has 5 conflicts; baseline: 200 memories, the same commits and branch",
        "- goals (issue 18): first screen under 1 s; no key press over 100 ms",
        "",
        "| measurement | baseline (200) | 100k | ratio (p50) |",
        "| --- | --- | --- | --- |",
        f"| `import ctx.lens`, fresh process (median of 5) | {imported * 1000:.0f} ms | same | 1.0 |",
        once(
            "tmux",
            "**`ctx lens` in tmux: start to the log on the terminal** (median of 5)",
        ),
        once(
            "fresh",
            "a fresh process, interpreter and `ctx` imports included, to the first frame with the log (median of 5)",
        ),
        once(
            "open",
            "in-process: app start to the first frame with the log (median of 5)",
        ),
        once(
            "open_diff",
            "in-process: app start to the frame with the newest commit's diff (median of 5)",
        ),
    ]
    for key, what in (
        ("log", "down in the log"),
        ("list", "down in the memory list"),
        ("graph", "down in the graph"),
        ("centre", "graph down/Enter/b (back)"),
    ):
        lines.append(
            spread(small[key][0], big[key][0], f"**{what}: key to its frame**")
        )
        lines.append(
            spread(
                small[key][1],
                big[key][1],
                f"{what}: until the screen is still (workers' data shown)",
            )
        )
    lines += [
        spread(
            small["recall"][0],
            big["recall"][0],
            f"**recall: a typed key to its frame** (`{QUERY}`)",
        ),
        spread(
            small["recall"][1],
            big["recall"][1],
            "recall: a typed key until the screen is still",
        ),
        once_pair(
            small["recall"][2],
            big["recall"][2],
            "recall: the last key to the hits shown (the 0.3 s debounce included)",
        ),
        once_pair(
            small["recall_alone"],
            big["recall_alone"],
            "of which recall itself (`ctx.hub.recall`, explained, called directly; median of 3)",
        ),
        once_pair(
            small["review"][0],
            big["review"][0],
            "**review, first visit: key `5` to its first frame** (median of 3)",
        ),
        once_pair(
            small["review"][1],
            big["review"][1],
            f"review, first visit: key `5` to `{REVIEWED}`'s review and merge preview shown (median of 3)",
        ),
        once_pair(
            small["visit_list"][0],
            big["visit_list"][0],
            "**memories, first visit: key `2` to its first frame** (median of 3)",
        ),
        once_pair(
            small["visit_list"][1],
            big["visit_list"][1],
            "memories, first visit: key `2` to the list shown (median of 3)",
        ),
        once_pair(
            small["visit_graph"][0],
            big["visit_graph"][0],
            "**graph, first visit: key `3` to its first frame** (median of 3)",
        ),
        once_pair(
            small["visit_graph"][1],
            big["visit_graph"][1],
            "graph, first visit: key `3` to the busiest memory's neighbourhood drawn (median of 3)",
        ),
        "",
        "Each key is sent as the terminal driver sends it and timed to the first",
        "frame the app puts on the terminal after it (headless, the frame is also",
        "turned into terminal bytes, as a terminal costs): what the user waits to",
        "see. The next key waits until the screen is still (workers done, no frame",
        f"for {QUIET} s), the second time given. Pilot's `press` is not used: it",
        "waits for the process to be idle, twice, in 20 ms sleeps (40-65 ms of",
        "its own per key).",
    ]
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def once_pair(a: float, b: float, what: str) -> str:
    return f"| {what} | {a * 1000:.0f} ms | {b * 1000:.0f} ms | {b / a:.2f} |"


if __name__ == "__main__":
    main()
