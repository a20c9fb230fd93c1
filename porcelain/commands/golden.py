"""The test command: golden questions a branch must still answer."""

from __future__ import annotations

from pathlib import Path

import click

from ctx.porcelain._options import (
    CtxState,
    echo_json,
    json_option,
    pass_state,
)
from ctx.porcelain.output import echo

__all__ = ["COMMANDS"]


@click.command(name="test")
# No checks of click's: a folder or a missing file is a file that cannot be
# read, which load_golden reports on one line with exit 4, as the docs say.
@click.argument("file", type=click.Path(path_type=Path))
# Not branch_name_option: its CTX_BRANCH default would beat the file's
# `branch =`, which only --branch may; run_golden falls back to CTX_BRANCH
# (the workspace's branch) after the file.
@click.option(
    "--branch",
    "-b",
    metavar="NAME",
    help="Branch to test (a name, not a revision); default: the file's "
    "branch, then CTX_BRANCH, then the current branch.",
)
@click.option(
    "--min",
    "min_pass",
    type=click.FloatRange(0.0, 1.0),
    default=1.0,
    show_default=True,
    metavar="SHARE",
    help="The share of questions that must pass (0.9: nine in ten).",
)
@json_option
@pass_state
def test_command(
    state: CtxState,
    file: Path,
    branch: str | None,
    min_pass: float,
    as_json: bool,
) -> None:
    """Run golden questions against a branch; exit 1 when recall misses

    FILE is TOML: [[question]] tables, each with ask = "...", the ids and
    words its first k hits must hold, and k (docs/remotes.md, "Memory has
    tests"). Each question runs as `ctx search` does.

    \b
    Example:
      ctx test memory-tests.toml
      ctx test memory-tests.toml --branch agent/claude --min 0.9
    """
    from ctx.hub import load_golden, run_golden

    report = run_golden(
        state.workspace(), load_golden(file), branch=branch, min_pass=min_pass
    )
    state.used("tested")  # no project store here: says it was the user store
    if as_json:
        echo_json(report)
    else:
        for result in report.results:
            if result.passed:
                ranks = ", ".join(f"{i} at {r}" for i, r in result.ranks.items())
                echo(f"ok    {result.ask}" + (f"  ({ranks})" if ranks else ""))
                continue
            why = []
            if result.absent_ids:
                absent = ", ".join(result.absent_ids)
                why.append(f"no such memory on {report.branch}: {absent}")
            missing = [
                *(i for i in result.missing_ids if i not in result.absent_ids),
                *(repr(w) for w in result.missing_words),
            ]
            if missing:
                why.append(f"not in the first {result.k}: {', '.join(missing)}")
            echo(f"MISS  {result.ask}  ({'; '.join(why)})")
        share = report.passed / report.total
        echo(
            f"{report.passed} of {report.total} questions passed on "
            f"{report.branch} ({share:.0%}; needed {report.min_pass:.0%})."
        )
        absent_count = sum(len(r.absent_ids) for r in report.results)
        if absent_count:
            names = "id names" if absent_count == 1 else "ids name"
            echo(
                f"{absent_count} {names} no memory on {report.branch}: "
                "the run fails, whatever --min allows."
            )
    if not report.ok:
        click.get_current_context().exit(1)


COMMANDS = [test_command]
