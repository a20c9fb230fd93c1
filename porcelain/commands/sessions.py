"""Sessions and what agents learned: ctx session ls/show/end, review, brief."""

from __future__ import annotations

from datetime import datetime

import click

from ctx import engine
from ctx.porcelain._options import (
    CtxState,
    allow_secret_option,
    branch_option,
    echo_json,
    json_option,
    now,
    pass_state,
)
from ctx.porcelain.output import echo
from ctx.porcelain.render import commit_line, render_diff, render_log, render_shown

__all__ = ["COMMANDS"]


def _when(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M}"


@click.group(name="session")
def session_group() -> None:
    """See what agents' working sessions wrote, recalled and decided

    A session is every commit that carries its Ctx-Session trailer: hooks
    sign writes with the host's session id, `ctx mcp` with CTX_SESSION or
    one made per process, `ctx serve` with a client's Ctx-Session header.
    What a session concluded is kept under sessions/<id>/ (docs/sessions.md).

    \b
    Example:
      ctx session ls
      ctx session show 9f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f
      ctx session end mcp-1a2b3c4d5e6f --summary "Moved the queue to Postgres"
    """


@session_group.command(name="ls")
@branch_option
@json_option
@pass_state
def session_ls(state: CtxState, branch: str | None, as_json: bool) -> None:
    """List the sessions seen in a branch's history, latest first

    Each line: the session id, its agent, its first and last commit times
    (UTC), how many commits and memory writes it made, and "summarized"
    once sessions/<id>/summary was written.

    \b
    Example:
      ctx session ls
      ctx session ls --branch agent/claude --json
    """
    sessions = engine.list_sessions(state.store(), branch)
    if as_json:
        echo_json(sessions)
        return
    if not sessions:
        echo("No sessions: no commit here carries a Ctx-Session trailer.")
    for s in sessions:
        done = "  summarized" if s.summarized else ""
        echo(
            f"{s.id}  {s.agent}  {_when(s.first)} .. {_when(s.last)}  "
            f"{engine.plural(s.commits, 'commit')}, "
            f"{engine.plural(s.writes, 'write')}{done}"
        )


@session_group.command(name="show")
@click.argument("session_id", metavar="ID")
@branch_option
@json_option
@pass_state
def session_show(
    state: CtxState, session_id: str, branch: str | None, as_json: bool
) -> None:
    """Show what a session wrote, recalled and decided

    Its summary (if written), its commits, the memories it wrote (the
    decisions among them apart) and the memories it was shown: each
    injection (a hook's context, an MCP or HTTP recall) with its time,
    branch@commit and agent, from the store's private record.

    \b
    Example:
      ctx session show mcp-1a2b3c4d5e6f
      ctx session show mcp-1a2b3c4d5e6f --json
    """
    from ctx.hub import session_report

    detail = session_report(state.workspace(), session_id, branch)
    if as_json:
        echo_json(detail)
        return
    shown = detail.shown
    s = detail.session
    echo(f"Session {s.id} ({s.agent}), {_when(s.first)} .. {_when(s.last)} UTC")
    if detail.summary:
        echo("\nSummary:\n" + detail.summary)
    echo(f"\nCommits ({len(detail.commits)}):")
    for commit in detail.commits:
        echo("  " + commit_line(commit))
    echo(f"\nMemories ({len(detail.memories)}):")
    for m in detail.memories:
        echo(f"  {m.status:<8} {m.kind or '-':<13} {m.id}  {m.title or ''}")
    if detail.decisions:
        echo(f"\nDecisions ({len(detail.decisions)}):")
        for m in detail.decisions:
            echo(f"  {m.id}  {m.title or ''}")
    if detail.recalls:
        echo(f"\nRecalled ({len(detail.recalls)}): " + ", ".join(detail.recalls))
    if shown:
        echo(f"\nShown ({len(shown)}), when, how, at, agent, memories:")
        render_shown(shown)


@session_group.command(name="end")
@click.argument("session_id", metavar="ID")
@click.option(
    "--summary",
    metavar="TEXT",
    help="What the session did (default: one made from its history).",
)
@allow_secret_option
@branch_option
@json_option
@pass_state
def session_end(
    state: CtxState,
    session_id: str,
    summary: str | None,
    branch: str | None,
    as_json: bool,
) -> None:
    """End a session: write its summary and drop its hook state

    The summary goes to sessions/<id>/summary as one commit; without
    --summary it lists what the session's history shows.

    \b
    Example:
      ctx session end mcp-1a2b3c4d5e6f --summary "Moved the queue to Postgres"
    """
    from ctx.hub import end_session

    result = end_session(state.workspace(), session_id, summary=summary, branch=branch)
    if as_json:
        echo_json(result)
    elif result.commit is None:
        echo(f"Session {session_id} already has this summary: nothing to commit.")
    else:
        echo(f"Ended session {session_id}: {result.paths[0]} in {result.commit[:10]}.")


@click.command()
@click.argument("branch")
@click.option(
    "--base",
    metavar="BRANCH",
    help="The branch to compare with (default: HEAD's branch).",
)
@json_option
@pass_state
def review(state: CtxState, branch: str, base: str | None, as_json: bool) -> None:
    """Show what a branch learned since it split off, ready to merge

    The memory-level diff BASE...BRANCH (what the branch changed since the
    merge base, not what the base did meanwhile), then the branch's commits
    that the base lacks.

    \b
    Example:
      ctx review agent/claude
      ctx review agent/claude && ctx merge agent/claude
    """
    result = engine.review(state.store(), branch, base)
    if as_json:
        echo_json(result)
        return
    echo(
        f"{branch} since it split from {result.base}: "
        f"{engine.plural(len(result.log), 'commit')}"
        + (f"; {result.base} moved {result.behind} on" if result.behind else "")
    )
    if result.log:
        echo("")
        render_diff(result.diff)
        echo("")
        render_log(result.log, show_changes=False)
        # Into the branch it was reviewed against: an agent's branch for a
        # code branch is not merged into the one checked out here.
        into = (
            ""
            if result.base == state.store().head_branch()
            else f" --into {result.base}"
        )
        echo(f"\nMerge it with `ctx merge {branch}{into}`.")


@click.command()
@click.option(
    "--budget",
    default=1500,
    show_default=True,
    type=click.IntRange(50, 100_000),
    help="Tokens the briefing may take.",
)
@branch_option
@json_option
@pass_state
def brief(state: CtxState, budget: int, branch: str | None, as_json: bool) -> None:
    """Print a briefing on the project for a person or a subagent

    The pinned memories, reference decisions, working memories and open
    questions (as `ctx compose` picks them), then the latest sessions with
    their summaries, within the budget.

    \b
    Example:
      ctx brief
      ctx brief --budget 800 --json
    """
    result = engine.brief(state.store(), budget=budget, now=now(), rev=branch)
    if as_json:
        echo_json(result)
    elif result.text:
        echo(result.text)
    else:
        echo("Nothing to brief on yet: the store holds no memories or sessions.")


COMMANDS = [session_group, review, brief]
