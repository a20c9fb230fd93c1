"""The test command: golden questions a branch must still answer."""

from __future__ import annotations

from pathlib import Path

import click

from ctx.porcelain._options import (
    CtxState,
    branch_name_option,
    echo_json,
    json_option,
    pass_state,
)
from ctx.porcelain.output import echo

__all__ = ["COMMANDS"]


@click.command(name="test")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@branch_name_option
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
    if as_json:
        echo_json(report)
    else:
        for result in report.results:
            if result.passed:
                ranks = ", ".join(f"{i} at {r}" for i, r in result.ranks.items())
                echo(f"ok    {result.ask}" + (f"  ({ranks})" if ranks else ""))
                continue
            missing = [*result.missing_ids, *(repr(w) for w in result.missing_words)]
            echo(
                f"MISS  {result.ask}  (not in the first {result.k}: "
                f"{', '.join(missing)})"
            )
        share = report.passed / report.total
        echo(
            f"{report.passed} of {report.total} questions passed on "
            f"{report.branch} ({share:.0%}; needed {report.min_pass:.0%})."
        )
    if not report.ok:
        click.get_current_context().exit(1)


COMMANDS = [test_command]
