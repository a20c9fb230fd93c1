"""Recall learns from use: ``ctx feedback``, ``ctx recall learn`` and ``weights``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.output import echo

if TYPE_CHECKING:
    from ctx.hub import Tuning

__all__ = ["COMMANDS", "learn", "weights"]


def _agent_option(func: click.decorators.FC) -> click.decorators.FC:
    return click.option(
        "--agent",
        metavar="NAME",
        help="The caller whose weights these are (default: CTX_AGENT, else default).",
    )(func)


@click.command()
@click.argument("recall_id", metavar="RECALL-ID")
@click.option(
    "--used",
    "used",
    multiple=True,
    required=True,
    metavar="ID",
    help="A memory of that recall that was used (can be repeated).",
)
@json_option
@pass_state
def feedback(
    state: CtxState, recall_id: str, used: tuple[str, ...], as_json: bool
) -> None:
    """Record which memories of a recall were used, for recall to learn from

    RECALL-ID is the recall_id of `ctx recall --json` (also in the MCP result
    and the hooks' context). `ctx recall learn` then moves the caller's
    weights and budget; the feedback is kept in the store's private state.

    \b
    Example:
      ctx feedback r01JD2X9K7M3Q4R5S6T7V8W9XYZ --used 01JD2X9K7M3Q4R5S6T7V8W9XYZ
    """
    from ctx.hub import feedback as hub_feedback

    result = hub_feedback(state.workspace(), recall_id, used)
    if as_json:
        echo_json(result)
    else:
        echo(
            f"Recorded {len(result.used)} of {result.returned} hits of "
            f"{result.recall} as used ({result.agent})."
        )


def _tuning_line(label: str, tuning: Tuning) -> str:
    return (
        f"{label:<8} bm25 {tuning.bm25:.3f}  vector {tuning.vector:.3f}  "
        f"fuzzy {tuning.fuzzy:.3f}  budget {tuning.budget:,}"
    )


@click.command()
@_agent_option
@json_option
@pass_state
def learn(state: CtxState, agent: str | None, as_json: bool) -> None:
    """Move a caller's fusion weights and budget one step by its new feedback

    Small steps (about 10% at most), within bounds (a quarter to four times
    the configured values); `ctx recall weights --undo` takes a step back.

    \b
    Example:
      ctx recall learn --agent claude
    """
    from ctx.hub import learn as hub_learn

    report = hub_learn(state.workspace(), agent=agent)
    if as_json:
        echo_json(report)
        return
    after = report.after
    echo(
        f"Learned from {after.feedback} feedback ({after.mistakes} ranking "
        f"mistakes) for {report.agent}:"
    )
    echo(_tuning_line("before", report.before))
    echo(_tuning_line("after", after))


@click.command()
@_agent_option
@click.option("--reset", is_flag=True, help="Go back to the configured values.")
@click.option("--undo", is_flag=True, help="Drop the last learning step or reset.")
@json_option
@pass_state
def weights(
    state: CtxState, agent: str | None, reset: bool, undo: bool, as_json: bool
) -> None:
    """Show a caller's learned weights and budget, with their history

    \b
    Example:
      ctx recall weights
      ctx recall weights --agent claude --reset
    """
    from ctx.hub import recall_weights

    report = recall_weights(state.workspace(), agent=agent, reset=reset, undo=undo)
    if as_json:
        echo_json(report)
        return
    echo(f"Weights of {report.agent} ({report.current.reason}):")
    echo(_tuning_line("now", report.current))
    low = "  ".join(f"{k} {lo:g}-{hi:g}" for k, (lo, hi) in report.bounds.items())
    echo(f"bounds   {low}")
    for entry in report.history:
        echo(_tuning_line(entry.reason, entry) + f"  ({entry.at:%Y-%m-%d %H:%M})")


COMMANDS = [feedback]
