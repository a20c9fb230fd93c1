"""Code search quality: does `ctx find` point at the function a sentence describes?

The set is built from real source that is installed here: dulwich's own
Python modules (its tests left out). Each query is the first sentence of a
function's docstring; every docstring (of functions, classes and modules) is
removed from the copy that is indexed, so the words of the query are not in
the text searched; the answer is that function's file and its ``def`` line.
A hit is right when it is the answer's file and its line range holds that
line (a short class's chunk holds its methods). Sentences that describe two
functions alike are left out.

Compared, over the same index: ``ctx find`` (every channel, fused), each
channel alone (BM25 over code, vectors, symbol names, paths), and ripgrep
over the query's words (files ranked by how many lines match any word; a
file-level answer, so ``ctx find`` is also scored by file).

    python benchmarks/bench_code_quality.py [--functions N] [--seed S]

The index (and its vectors: MiniLM, the default embedder) is kept under
benchmarks/.data/code_quality/ and reused by the next run.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import dulwich
from _bench_common import cpu_name

from ctx.hub.code.index import CodeIndex
from ctx.hub.code.search import WEIGHTS, find
from ctx.hub.retrieval.embedders import make_embedder

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "code_quality"
RESULTS = HERE / "results" / "code_quality.md"
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "by",
        "with",
        "from",
        "this",
        "that",
        "it",
        "its",
        "as",
        "at",
        "if",
        "not",
        "into",
        "given",
        "which",
        "when",
        "return",
        "returns",
        "get",
        "gets",
        "set",
        "sets",
    ]
)


@dataclass(frozen=True)
class Case:
    query: str
    path: str
    line: int
    name: str


def first_sentence(doc: str) -> str:
    paragraph = doc.strip().split("\n\n")[0].replace("\n", " ")
    sentence = re.split(r"(?<=[.!?])\s", paragraph)[0].strip()
    return sentence.rstrip(".").strip()


def _docstring_spans(tree: ast.AST) -> list[tuple[int, int, bool]]:
    """(first line, last line, only statement) of every docstring."""
    spans = []
    for node in ast.walk(tree):
        if isinstance(
            node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        ):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                first = body[0]
                spans.append(
                    (first.lineno, first.end_lineno or first.lineno, len(body) == 1)
                )
    return spans


def strip_docstrings(source: str) -> str:
    lines = source.split("\n")
    for start, end, alone in sorted(_docstring_spans(ast.parse(source)), reverse=True):
        indent = re.match(r"\s*", lines[start - 1]).group()
        lines[start - 1 : end] = [f"{indent}pass"] if alone else []
    return "\n".join(lines)


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def build_set(tree: Path, wanted: int, seed: int) -> list[Case]:
    source_root = Path(dulwich.__file__).parent
    if tree.exists():
        shutil.rmtree(tree)
    cases: list[Case] = []
    for path in sorted(source_root.rglob("*.py")):
        relative = path.relative_to(source_root)
        if "tests" in relative.parts:
            continue
        source = path.read_text("utf-8")
        stripped = strip_docstrings(source)
        target = tree / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(stripped, "utf-8")
        before = _functions(ast.parse(source))
        after = _functions(ast.parse(stripped))
        assert [f.name for f in before] == [f.name for f in after], path
        for old, new in zip(before, after, strict=True):
            doc = ast.get_docstring(old)
            if not doc:
                continue
            query = first_sentence(doc)
            if len(query.split()) < 4:
                continue
            cases.append(Case(query, relative.as_posix(), new.lineno, old.name))
    counts: dict[str, int] = {}
    for case in cases:
        key = case.query.lower()
        counts[key] = counts.get(key, 0) + 1
    unique = [c for c in cases if counts[c.query.lower()] == 1]
    random.Random(seed).shuffle(unique)
    return unique[:wanted]


def build_identifier_set(
    tree: Path, wanted: int, seed: int, *, plain: bool = False
) -> list[Case]:
    """Functions named as code (``_`` inside), each name defined once: the query
    is the bare name, the answer its definition (issue 29's identifier channel).

    With ``plain``: those named by one plain word ("parse", "urlopen"), which
    a question can hold as a word of the language, asked alone.
    """
    found: dict[str, list[Case]] = {}
    for path in sorted(tree.rglob("*.py")):
        relative = path.relative_to(tree).as_posix()
        for node in _functions(ast.parse(path.read_text("utf-8"))):
            found.setdefault(node.name, []).append(
                Case(node.name, relative, node.lineno, node.name)
            )
    cases = [
        defined[0]
        for name, defined in sorted(found.items())
        if len(defined) == 1
        and (name.isalpha() and name.islower() if plain else "_" in name.strip("_"))
    ]
    random.Random(seed).shuffle(cases)
    return cases[:wanted]


def right(case: Case, path: str, start: int, end: int) -> bool:
    return path == case.path and start <= case.line <= end


def scores(ranks: Sequence[int | None]) -> tuple[float, float, float]:
    n = len(ranks)
    at1 = sum(1 for r in ranks if r == 1) / n
    at5 = sum(1 for r in ranks if r is not None and r <= 5) / n
    mrr = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return at1, at5, mrr


def rank_of(found: Sequence[bool]) -> int | None:
    return next((i for i, ok in enumerate(found, start=1) if ok), None)


def query_words(query: str) -> list[str]:
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", query)
    return list(dict.fromkeys(w.lower() for w in words if w.lower() not in STOPWORDS))


def ripgrep_files(tree: Path, query: str) -> list[str]:
    words = query_words(query)
    if not words:
        return []
    argv = ["rg", "--count", "--ignore-case", "--word-regexp", "--fixed-strings"]
    for word in words:
        argv += ["-e", word]
    out = subprocess.run([*argv, "."], cwd=tree, capture_output=True, text=True)
    counted = []
    for line in out.stdout.splitlines():
        path, _, count = line.rpartition(":")
        counted.append((-int(count), path.removeprefix("./")))
    return [path for _, path in sorted(counted)]


def run_channel(
    index: CodeIndex, cases: list[Case], weights: dict[str, float]
) -> tuple[list[int | None], list[int | None], list[float]]:
    chunk_ranks, file_ranks, times = [], [], []
    for case in cases:
        started = time.perf_counter()
        hits = find(index, case.query, limit=10, weights=weights).hits
        times.append(time.perf_counter() - started)
        chunk_ranks.append(
            rank_of(
                [right(case, h.chunk.path, h.chunk.start, h.chunk.end) for h in hits]
            )
        )
        files = list(dict.fromkeys(h.chunk.path for h in hits))
        file_ranks.append(rank_of([p == case.path for p in files]))
    return chunk_ranks, file_ranks, times


def load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--functions", type=int, default=600)
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    started = time.perf_counter()
    loads = [load()]
    tree = DATA / "tree"
    cases = build_set(tree, args.functions, args.seed)
    lines = sum(p.read_text().count("\n") for p in tree.rglob("*.py"))
    index = CodeIndex(DATA / "index", lambda: make_embedder({}))
    t0 = time.perf_counter()
    report = index.update(tree)
    index_seconds = time.perf_counter() - t0
    loads.append(load())
    variants: list[tuple[str, dict[str, float]]] = [
        ("ctx find (fused)", dict(WEIGHTS)),
        ("BM25 over code alone", {"bm25": 1.0}),
        ("vectors alone", {"vector": 1.0}),
        ("symbol names alone", {"symbol": 1.0}),
        ("paths alone", {"path": 1.0}),
    ]
    rows = []
    for label, weights in variants:
        chunk, files, times = run_channel(index, cases, weights)
        rows.append((label, scores(chunk), scores(files), statistics.median(times)))
        loads.append(load())
    # The identifier channel (issue 29), on and off, side by side.
    named = build_identifier_set(tree, args.functions // 2, args.seed)
    plain = build_identifier_set(tree, args.functions // 2, args.seed, plain=True)
    without = {**WEIGHTS, "ident": 0.0}
    identifier_rows = []
    for label, set_cases, weights in (
        ("docstring sentences, ctx find (fused)", cases, dict(WEIGHTS)),
        ("docstring sentences, without the identifier channel", cases, without),
        ("exact names, ctx find (fused)", named, dict(WEIGHTS)),
        ("exact names, without the identifier channel", named, without),
        (
            f"plain one-word names ({len(plain)}), ctx find (fused)",
            plain,
            dict(WEIGHTS),
        ),
        ("plain one-word names, without the identifier channel", plain, without),
    ):
        chunk, files, _ = run_channel(index, set_cases, weights)
        identifier_rows.append((label, scores(chunk), scores(files)))
    loads.append(load())
    rg_ranks, rg_times = [], [float("nan")]
    for case in cases if shutil.which("rg") else []:  # ripgrep may be missing
        t = time.perf_counter()
        listed = ripgrep_files(tree, case.query)
        rg_times.append(time.perf_counter() - t)
        rg_ranks.append(rank_of([p == case.path for p in listed[:10]]))
    rg = scores(rg_ranks) if rg_ranks else (float("nan"),) * 3
    loads.append(load())
    write_report(
        args,
        cases,
        lines,
        report,
        index_seconds,
        rows,
        rg,
        statistics.median(rg_times),
        loads,
        time.perf_counter() - started,
        (len(named), identifier_rows),
    )


def _f(x: float) -> str:
    return f"{x:.3f}"


def write_report(
    args, cases, lines, report, index_seconds, rows, rg, rg_ms, loads, total, named
):
    rg_version = subprocess.run(
        ["rg", "--version"] if shutil.which("rg") else ["true"],
        capture_output=True,
        text=True,
    )
    cpu = cpu_name()
    fused = rows[0]
    best_single = max(r[1][1] for r in rows[1:])
    text = [
        "# Code search quality: `ctx find` against each channel and ripgrep",
        "",
        "Generated by `benchmarks/bench_code_quality.py`; do not edit by hand.",
        "",
        f"Command: `python benchmarks/bench_code_quality.py --functions {args.functions}"
        f" --seed {args.seed}` ({total / 60:.1f} min)",
        "",
        "| machine |  |",
        "|---|---|",
        f"| Date | {datetime.now(UTC):%Y-%m-%d %H:%M UTC} |",
        f"| CPU | {cpu} |",
        f"| Cores | {os.cpu_count()} ({len(os.sched_getaffinity(0))} usable), shared with other work |",
        f"| Python | {platform.python_version()} |",
        f"| dulwich (the source searched) | {dulwich.__version__ if hasattr(dulwich, '__version__') else '?'} |",
        f"| ripgrep | {rg_version.stdout.splitlines()[0] if rg_version.stdout else '?'} |",
        f"| Load average (1 min) at start / most / end | {loads[0]:.2f} / {max(loads):.2f} / {loads[-1]:.2f} |",
        "",
        "## The set",
        "",
        f"dulwich's Python modules (tests left out), every docstring removed: "
        f"{report.files} files, {lines:,} lines, {report.chunks:,} chunks. "
        f"{len(cases)} functions drawn (seed {args.seed}) among those whose "
        "docstring's first sentence has 4 words or more and describes no other "
        "function alike. Query: that sentence; answer: the function's file and "
        "`def` line. Chunk-level: a hit is right when it is that file and its "
        "lines hold the `def` line. File-level: the answer's file is among the "
        "first k distinct files of the hits (ripgrep: of the files it lists, "
        "ranked by matching lines).",
        "",
        f"Index built in {index_seconds:.1f} s ({report.embedded:,} chunks embedded "
        "this run with MiniLM; 0 when the index under benchmarks/.data was kept).",
        "",
        "## Results",
        "",
        "| method | recall@1 | recall@5 | MRR@10 | file recall@1 | file recall@5 | file MRR@10 | p50 ms/query |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, chunk, files, median in rows:
        text.append(
            f"| {label} | {_f(chunk[0])} | {_f(chunk[1])} | {_f(chunk[2])} | "
            f"{_f(files[0])} | {_f(files[1])} | {_f(files[2])} | {median * 1000:.1f} |"
        )
    if rg_version.stdout:
        text.append(
            f"| ripgrep over the query's words | - | - | - | {_f(rg[0])} | "
            f"{_f(rg[1])} | {_f(rg[2])} | {rg_ms * 1000:.1f} |"
        )
    else:
        text.append(
            "| ripgrep over the query's words | not installed on this machine |"
        )
    count, identifier_rows = named
    text += [
        "",
        "## The identifier channel (issue 29)",
        "",
        "An exact identifier in the query ranks the chunk that defines it first. "
        f"Exact names: {count} functions of the same tree named as code (`_` "
        "inside) whose name is defined once, drawn with the same seed; the query "
        "is the bare name. Plain one-word names: functions named by one "
        "lower-case word (`parse`, `urlopen`), defined once, asked alone. Each "
        "set with the channel and without it (the fusion before it), one run.",
        "",
        "| set, method | recall@1 | recall@5 | MRR@10 | file recall@1 | file recall@5 | file MRR@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, chunk, files in identifier_rows:
        text.append(
            f"| {label} | {_f(chunk[0])} | {_f(chunk[1])} | {_f(chunk[2])} | "
            f"{_f(files[0])} | {_f(files[1])} | {_f(files[2])} |"
        )
    text += [
        "",
        "## Goals (issue 20)",
        "",
        f"- recall@5 of ctx find at least 0.5: {_f(fused[1][1])} "
        f"({'met' if fused[1][1] >= 0.5 else 'not met'}).",
        f"- above every single channel (best single channel's recall@5: "
        f"{_f(best_single)}): {'met' if fused[1][1] > best_single else 'not met'}.",
        f"- above ripgrep (file recall@5: ctx find {_f(fused[2][1])}, ripgrep "
        f"{_f(rg[1])}): {'met' if fused[2][1] > rg[1] else 'not met'}."
        if rg_version.stdout
        else "- above ripgrep: not measured (ripgrep is not installed here).",
        "",
        f"Weights of the fusion: {dict(WEIGHTS)} (k = 10, as recall).",
        "",
    ]
    RESULTS.write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
