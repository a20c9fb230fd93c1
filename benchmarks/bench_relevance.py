"""Where recall's relevance floor goes: questions a store answers, and ones it cannot.

Recall and search return nothing when no hit's relevance (0..1, see
``ctx.hub.retrieval.ranking``, step 8) reaches ``[recall] floor``, and drop
the hits below the floor whose score falls below ``fall_off`` times the
best. This measures both on two sets, with the MiniLM embedder:

- LoCoMo (protocol of ``bench_quality.py``: one store per conversation, one
  memory per turn): every question of categories 1-4 asked of its own
  conversation's store (recall@10 of its evidence, with the floor and
  without it, in the same run) and of the next conversation's store
  ("foreign": nothing there is relevant; the share of recalls that return
  nothing).
- The prompts of ``bench_hook_floor.py``: 20 a store answers and 24 it does
  not (chat, requests about other things), on the ``docs`` and ``notes``
  stores: how many of each get an answer at each floor.

Run::

    .venv/bin/python benchmarks/bench_relevance.py [--quick]

It writes ``benchmarks/results/relevance_floor.md``.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import bench_hook_floor as hooks
import bench_quality as quality
from _bench_common import cpu_name

from ctx.hub import Workspace, search
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.floors import relevant
from ctx.hub.retrieval.ranking import Ranking, rank

RESULTS = Path(__file__).parent / "results" / "relevance_floor.md"
FLOORS = (0.0, 0.3, 0.35, 0.38, 0.4, 0.42, 0.45, 0.5)
FALL_OFFS = (0.0, 0.25, 0.4)


def recall_at_10(hits: Sequence[str], evidence: Sequence[str]) -> float:
    found = set(hits[:10])
    return sum(e in found for e in evidence) / len(evidence)


def locomo(eval_dir: Path, quick: bool) -> tuple[list[str], float]:
    """Returns the LoCoMo report lines, and the seconds spent building."""
    ref = quality.load_reference(eval_dir)
    corpora = quality.load_locomo(eval_dir, ref)[: 3 if quick else None]
    embedder = make_embedder({"kind": "minilm"})
    started = time.perf_counter()
    built = [quality.build(c, embedder) for c in corpora]
    build_s = time.perf_counter() - started
    config = RecallConfig()
    own: list[tuple[Ranking, quality.Built, list[str]]] = []
    foreign: list[Ranking] = []
    for number, corpus in enumerate(corpora):
        other = built[(number + 1) % len(built)]
        for question in corpus.questions:
            if question.category not in quality.CATEGORIES:
                continue
            mine = built[number]
            ranking = rank(mine.searcher, question.text, config=config, now=corpus.now)
            own.append((ranking, mine, question.evidence))
            asked = rank(other.searcher, question.text, config=config, now=corpus.now)
            foreign.append(asked)
    plain = [
        recall_at_10([b.key_of[r.id] for r in ranking.hits], evidence)
        for ranking, b, evidence in own
    ]
    baseline = sum(plain) / len(plain)
    lines = [
        f"## LoCoMo ({len(own)} questions of categories 1-4, each asked of its own"
        " store and of the next conversation's)",
        "",
        f"recall@10 without floor or fall-off (rank() as it is): {baseline:.4f}.",
        "",
        "| floor | fall-off | foreign: empty | own: empty | own R@10 | R@10 cost |"
        " own hits in the top 10 |",
        "|---|---|---|---|---|---|---|",
    ]
    default = (config.floor, config.fall_off)
    for floor in FLOORS:
        for fall_off in FALL_OFFS:
            empty = sum(not relevant(r, floor, fall_off)[0] for r in foreign)
            scores, kept, own_empty = [], 0, 0
            for ranking, b, evidence in own:
                hits = relevant(ranking, floor, fall_off)[0]
                own_empty += not hits
                kept += len(hits[:10])
                scores.append(recall_at_10([b.key_of[r.id] for r in hits], evidence))
            r10 = sum(scores) / len(scores)
            cells = [
                f"{floor:g}",
                f"{fall_off:g}",
                f"{empty / len(foreign):.1%}",
                f"{own_empty / len(own):.1%}",
                f"{r10:.4f}",
                f"{baseline - r10:.4f}",
                f"{kept / len(own):.2f}",
            ]
            if (floor, fall_off) == default:
                cells = [f"**{c}**" for c in cells]
            lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""], build_s


def prompts() -> list[str]:
    """Returns the report lines for the hook prompt sets."""
    rows: list[tuple[str, str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("docs", "notes"):
            ws = hooks.build(Path(tmp), name, "minilm")
            config = ws.path / "config.toml"
            config.write_text(
                config.read_text() + "\n[recall]\nfloor = 0.0\nfall_off = 0.0\n"
            )
            ws.close()
            ws = Workspace(ws.path)
            search(ws, "warm up")
            for kind, asked in (
                ("relevant", hooks.RELEVANT[name]),
                ("unrelated", hooks.UNRELATED),
            ):
                for prompt in asked:
                    found = search(ws, prompt, limit=25)
                    best = max((h.relevance or 0.0 for h in found.hits), default=0.0)
                    rows.append((name, kind, best))
            ws.close()
    lines = [
        "## The prompts of bench_hook_floor.py (docs and notes stores)",
        "",
        "A prompt gets an answer when its best hit's relevance reaches the floor.",
        "",
        "| floor | relevant prompts answered | unrelated prompts answered |",
        "|---|---|---|",
    ]
    relevant_best = [b for _, kind, b in rows if kind == "relevant"]
    unrelated_best = [b for _, kind, b in rows if kind == "unrelated"]
    for floor in FLOORS:
        answered = sum(b >= floor for b in relevant_best)
        idle = sum(b >= floor for b in unrelated_best)
        cells = [
            f"{floor:g}",
            f"{answered} of {len(relevant_best)}",
            f"{idle} of {len(unrelated_best)}",
        ]
        if floor == RecallConfig().floor:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Best relevance, relevant prompts: "
        + ", ".join(f"{b:.2f}" for b in sorted(relevant_best)),
        "",
        "Best relevance, unrelated prompts: "
        + ", ".join(f"{b:.2f}" for b in sorted(unrelated_best)),
        "",
    ]
    return lines


def main() -> None:
    """Writes (or with --quick prints) the report."""
    parser = quality.eval_parser(__doc__, "3 conversations, print")
    args = parser.parse_args()
    os.environ["CTX_NO_HUB"] = "1"  # answer in this process, start no hub
    began = time.perf_counter()
    hook_lines = prompts()
    locomo_lines, build_s = locomo(args.eval_dir.resolve(), args.quick)
    config = RecallConfig()
    report = [
        "# Recall's relevance floor",
        "",
        "Generated by `benchmarks/bench_relevance.py`; do not edit by hand.",
        "",
        f"Date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {cpu_name()},"
        f" {os.cpu_count()} cores; Python {platform.python_version()};"
        f" {time.perf_counter() - began:.0f} s (LoCoMo stores built in"
        f" {build_s:.0f} s). Embedder: MiniLM.",
        "",
        *([f"Conditions: {args.note}", ""] if args.note else []),
        f"Defaults: floor {config.floor:g}, fall-off {config.fall_off:g} (in bold).",
        "",
        *locomo_lines,
        *hook_lines,
    ]
    text = "\n".join(report)
    print(text)
    if not args.quick:
        RESULTS.write_text(text)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
