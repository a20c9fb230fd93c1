"""Mutation testing of the engine's write path, one mutant at a time.

Each mutant flips one thing in one function of the write path (a comparison,
``and``/``or``, a ``not``, a number or boolean, an ``if``, ``break`` and
``continue``, or removes one call statement or ``raise``), is put in a copy of
the engine that shadows the installed one through ``PYTHONPATH``, and is run
against the tests. A mutant that no test notices "survives"; each survivor is
either killed by a new test or explained in docs/storage.md.

mutmut 3 cannot run here: it imports mutated code under the file's own path
(``engine.store``), while the package is ``ctx.engine`` through setuptools'
``package-dir`` mapping. This script needs nothing but the standard library.

Usage (from the repository root, with the dev install in ``.venv``)::

    .venv/bin/python scripts/mutate_write_path.py --quick --report quick.json
    .venv/bin/python scripts/mutate_write_path.py --only N,M,...  # survivors
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The write path: Store.write and everything that moves a ref (functions, and
# the module's constants they read).
SCOPE = {
    "engine/store.py": [
        "_PACK_THRESHOLD",
        "_STALE_REF_LOCK_NS",
        "Store.move_branch",
        "Store._moving",
        "Store._wait_for_ref_lock",
        "Store._clear_dead_writers_lock",
        "Store.locked",
        "Store.write",
        "Store._commit_changes",
        "Store.merge_commit",
        "Store._store_objects",
    ],
    "engine/_lock.py": ["HeldLock.__init__", "HeldLock.announce", "write_lock"],
    "engine/branches.py": ["create_branch", "delete_branch"],
    "engine/operations.py": ["undo"],
    "engine/merge.py": ["merge"],
}

# Fast, targeted tests first: with -x a mutant dies at its first failure.
# (Files, not folders: pytest drops a folder named after one of its files.)
_FIRST = ["test_store.py", "test_branches.py", "test_merge.py", "test_history.py"]
ENGINE_TESTS = [f"tests/engine/{name}" for name in _FIRST] + sorted(
    str(path.relative_to(ROOT))
    for path in (ROOT / "tests" / "engine").glob("test_*.py")
    if path.name not in _FIRST
)
TESTS = [
    *ENGINE_TESTS,
    "tests/integration/test_crash.py",
    "tests/integration/test_concurrency.py",
]
# A first sieve: the engine tests and the quick integration tests of the write
# path (seconds, not a minute); survivors are then run against TESTS.
QUICK = [
    *ENGINE_TESTS,
    "tests/integration/test_crash.py::test_a_killed_writers_ref_lock_is_cleared_at_once",
    "tests/integration/test_crash.py::test_a_slow_stock_git_keeps_its_ref_lock",
    "tests/integration/test_crash.py::test_an_abandoned_ref_lock_is_removed_once_old",
    "tests/integration/test_crash.py::test_a_young_ref_lock_held_too_long_fails_the_write",
    "tests/integration/test_crash.py::"
    "test_a_ref_lock_the_dead_writer_did_not_make_is_kept",
    "tests/integration/test_concurrency.py::"
    "test_a_write_is_rebuilt_when_stock_git_moves_the_branch_mid_write",
]

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


@dataclass(frozen=True)
class Mutant:
    """One change to one file.

    Attributes:
        number: The mutant's number, stable for one version of the code.
        path: The file, relative to the repository root.
        function: The function it is in.
        line: The line changed.
        what: What changed, for people.
        source: The whole mutated file.
    """

    number: int
    path: str
    function: str
    line: int
    what: str
    source: str


def _functions(
    tree: ast.Module, names: list[str]
) -> Iterator[tuple[str, ast.FunctionDef | ast.Assign]]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in names:
                yield target.id, node
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    name = f"{node.name}.{item.name}"
                    if name in names:
                        yield name, item
        elif isinstance(node, ast.FunctionDef) and node.name in names:
            yield node.name, node


def _changes(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Yields ``(description, replacement)`` for each mutation of ``node``."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            flipped = _FLIP.get(type(op))
            if flipped is not None:
                new = copy.deepcopy(node)
                new.ops[i] = flipped()
                yield f"{type(op).__name__} -> {flipped.__name__}", new
    elif isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield f"{type(node.op).__name__} -> {type(new.op).__name__}", new
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "drop `not`", node.operand
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield f"{node.value} -> {not node.value}", ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        value = node.value
        if isinstance(value, int) and abs(value) <= 2:
            yield f"{value!r} -> {value + 1!r}", ast.Constant(value + 1)
        else:
            smaller = value // 10 if isinstance(value, int) else value / 10
            yield f"{value!r} -> {value * 10!r}", ast.Constant(value * 10)
            yield f"{value!r} -> {smaller!r}", ast.Constant(smaller)
    elif isinstance(node, ast.If | ast.While):
        new = copy.deepcopy(node)
        new.test = ast.UnaryOp(ast.Not(), node.test)
        yield f"negate the `{type(node).__name__.lower()}` test", new
    elif isinstance(node, ast.Break):
        yield "break -> continue", ast.Continue()
    elif isinstance(node, ast.Continue):
        yield "continue -> break", ast.Break()
    elif isinstance(node, ast.Raise):
        yield "drop the raise", ast.Pass()
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield "drop the call", ast.Pass()


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        return super().visit(node)


def mutants() -> list[Mutant]:
    """Returns every mutant of the scope, in a stable order."""
    out: list[Mutant] = []
    for path, names in SCOPE.items():
        text = (ROOT / path).read_text()
        tree = ast.parse(text)
        for name, function in _functions(tree, names):
            if isinstance(function, ast.Assign):
                body: list[ast.stmt] = [function]
            else:
                body = function.body
                if body and isinstance(body[0], ast.Expr):
                    body = body[1:]  # not the docstring
            for statement in body:
                for node in ast.walk(statement):
                    for what, replacement in _changes(node):
                        _Replace(node, replacement).visit(tree)
                        source = ast.unparse(ast.fix_missing_locations(tree))
                        _Replace(replacement, node).visit(tree)  # put it back
                        line = getattr(node, "lineno", function.lineno)
                        out.append(Mutant(len(out) + 1, path, name, line, what, source))
    return out


def run(mutant: Mutant, timeout: float, tests: list[str]) -> tuple[str, float, str]:
    """Runs the tests against ``mutant``; returns its fate, time and a clue."""
    work = Path(tempfile.mkdtemp(prefix=f"mutant{mutant.number}-"))
    try:
        engine = work / "ctx" / "engine"
        shutil.copytree(ROOT / "engine", engine, ignore=shutil.ignore_patterns("*.pyc"))
        (engine / Path(mutant.path).name).write_text(mutant.source)
        env = dict(os.environ, PYTHONPATH=str(work), PYTHONDONTWRITEBYTECODE="1")
        started = time.monotonic()
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
        try:
            proc = subprocess.run(
                [*command, *tests],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return "killed (timeout)", time.monotonic() - started, ""
        elapsed = time.monotonic() - started
        lines = [line for line in proc.stdout.splitlines() if line.startswith("FAILED")]
        if proc.returncode == 0:
            return "survived", elapsed, ""
        return "killed", elapsed, lines[0] if lines else proc.stdout[-200:]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    """Lists or runs the mutants; writes a JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="comma-separated mutant numbers")
    parser.add_argument("--list", action="store_true", help="list, run nothing")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--quick", action="store_true", help="the QUICK tests only")
    parser.add_argument("--report", type=Path, default=Path("mutants.json"))
    args = parser.parse_args()
    todo = mutants()
    if args.only:
        wanted = {int(n) for n in args.only.split(",")}
        todo = [m for m in todo if m.number in wanted]
    if args.list:
        for m in todo:
            sys.stdout.write(f"{m.number:4} {m.path}:{m.line} {m.function}: {m.what}\n")
        return
    results = []
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = [
            (m, pool.submit(run, m, args.timeout, QUICK if args.quick else TESTS))
            for m in todo
        ]
        for m, future in futures:
            fate, elapsed, clue = future.result()
            sys.stdout.write(
                f"{m.number:4} {fate:17} {elapsed:6.1f}s "
                f"{m.path}:{m.line} {m.function}: {m.what}  {clue}\n"
            )
            sys.stdout.flush()
            results.append(
                {
                    "number": m.number,
                    "fate": fate,
                    "path": m.path,
                    "line": m.line,
                    "function": m.function,
                    "what": m.what,
                    "clue": clue,
                }
            )
    args.report.write_text(json.dumps(results, indent=1) + "\n")
    survived = [r for r in results if r["fate"] == "survived"]
    sys.stdout.write(
        f"{len(results) - len(survived)} killed, {len(survived)} survived\n"
    )


if __name__ == "__main__":
    main()
