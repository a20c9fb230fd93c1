"""Dream, memory that tidies itself: ctx dream run/status/review/accept/reject/merge.

Each makes Dream's typed call of its name (:mod:`ctx.hub.calls`), as the
MCP tools do; ``run`` without ``--once`` loops over cycles in this process.
"""

from __future__ import annotations

import click

from ctx.engine import PROPOSAL_STATUSES, ConflictError, InvalidInputError
from ctx.hub import calls, dream
from ctx.porcelain._options import (
    CtxState,
    branch_option,
    echo_json,
    json_option,
    pass_state,
)
from ctx.porcelain.render_dream import (
    render_cycle,
    render_dream_merge,
    render_dream_status,
    render_proposals,
    render_review_result,
)

__all__ = ["COMMANDS"]


@click.group(name="dream")
def dream_group() -> None:
    """Let Dream propose tidying a branch, then review and merge it

    Dream reads a branch and proposes fixes as commits on dream/<branch>,
    never on the branch it reads: duplicates and updates (SUPERSEDES),
    links (RELATES_TO, DEPENDS_ON), contradictions (CONTRADICTS),
    recurrences (recurs:weekly ...) and tiers. Nothing reaches the branch
    until `ctx dream merge` (docs/dream.md).

    \b
    Example:
      ctx dream run --once
      ctx dream review
      ctx dream accept --all && ctx dream merge
    """


@dream_group.command(name="run")
@click.option("--once", is_flag=True, help="Run one cycle, then stop.")
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    metavar="N",
    help="Memories examined per cycle (default: [dream] budget, 200).",
)
@branch_option
@json_option
@pass_state
def dream_run(
    state: CtxState, once: bool, budget: int | None, branch: str | None, as_json: bool
) -> None:
    """Examine due memories and write proposals on dream/<branch>

    Without --once, cycles go on until interrupted, resting ([dream]
    interval seconds) whenever nothing is due.

    \b
    Example:
      ctx dream run --once --budget 500
      ctx dream run --branch agent/claude
    """
    ws = state.workspace()
    state.used("wrote to")

    def show(report: dream.CycleReport) -> None:
        if as_json:
            echo_json(report)
        else:
            render_cycle(report, named=branch is not None)

    if once:
        request = calls.DreamRunRequest(branch=branch, budget=budget)
        show(state.call(calls.dream_run, request))
        return
    try:
        dream.loop(ws, branch=branch, budget=budget, report=show)
    except KeyboardInterrupt:
        return


@dream_group.command(name="status")
@branch_option
@json_option
@pass_state
def dream_status(state: CtxState, branch: str | None, as_json: bool) -> None:
    """Show the queue, the back-off, the last cycle and the proposals

    \b
    Example:
      ctx dream status
    """
    result = state.call(calls.dream_status, calls.DreamStatusRequest(branch=branch))
    if as_json:
        echo_json(result)
    else:
        render_dream_status(result)


@dream_group.command(name="review")
@click.option(
    "--status",
    type=click.Choice([*PROPOSAL_STATUSES, "all"]),
    default="proposed",
    show_default=True,
    help="Which proposals to show.",
)
@branch_option
@json_option
@pass_state
def dream_review(
    state: CtxState, status: str, branch: str | None, as_json: bool
) -> None:
    """Show each proposal with its evidence and what it would change

    \b
    Example:
      ctx dream review
      ctx dream review --status rejected --json
    """
    request = calls.DreamReviewRequest(branch=branch, status=status)
    review = state.call(calls.dream_review, request)
    if as_json:
        echo_json(review)
    else:
        render_proposals(review, status)


_memory_option = click.option(
    "--memory",
    "memories",
    multiple=True,
    metavar="ID",
    help="Only this memory of one proposal that lists many, such as the tier "
    "proposal (can be repeated).",
)


@dream_group.command(name="accept")
@click.argument("ids", metavar="[ID]...", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Accept every waiting proposal.")
@_memory_option
@branch_option
@json_option
@pass_state
def dream_accept(
    state: CtxState,
    ids: tuple[str, ...],
    every: bool,
    memories: tuple[str, ...],
    branch: str | None,
    as_json: bool,
) -> None:
    """Accept proposals, to be merged by `ctx dream merge`

    \b
    Example:
      ctx dream accept 3f9c2a1b7d0e
      ctx dream accept 7b01de --memory 01JD2X9K7M
      ctx dream accept --all
    """
    if bool(ids) == every:
        raise InvalidInputError(
            "Give proposal ids or --all, not both or neither.",
            hint="`ctx dream review` lists the waiting proposals.",
        )
    state.used("wrote to")
    request = calls.DreamAcceptRequest(
        ids=ids, all=every, memories=memories, branch=branch
    )
    result = state.call(calls.dream_accept, request)
    if as_json:
        echo_json(result)
    else:
        render_review_result(result)


@dream_group.command(name="reject")
@click.argument("ids", metavar="ID...", nargs=-1, required=True)
@click.option("--reason", metavar="TEXT", help="Why (kept with the proposal).")
@_memory_option
@branch_option
@json_option
@pass_state
def dream_reject(
    state: CtxState,
    ids: tuple[str, ...],
    reason: str | None,
    memories: tuple[str, ...],
    branch: str | None,
    as_json: bool,
) -> None:
    """Reject proposals: Dream never makes them again

    With --memory, only that memory's change inside the proposal is
    declined; the proposal waits on for its other memories.

    \b
    Example:
      ctx dream reject 3f9c2a1b7d0e --reason "different projects"
      ctx dream reject 7b01de --memory 01JD2X9K7M
    """
    state.used("wrote to")
    request = calls.DreamRejectRequest(
        ids=ids, reason=reason, memories=memories, branch=branch
    )
    result = state.call(calls.dream_reject, request)
    if as_json:
        echo_json(result)
    else:
        render_review_result(result)


@dream_group.command(name="merge")
@click.option(
    "--yes",
    is_flag=True,
    help="Merge even when it hides more than 3 memories from recall.",
)
@branch_option
@json_option
@pass_state
def dream_merge(state: CtxState, yes: bool, branch: str | None, as_json: bool) -> None:
    """Merge the accepted proposals into the branch they were made for

    Proposals whose memories changed since are checked again first; those
    that no longer hold are marked stale. A merge that would hide more than
    3 memories from recall (duplicates, updates) is refused unless --yes
    confirms it. The merge is the normal one (conflicts as data, exit 5
    when some are kept); `ctx undo` takes it back.

    \b
    Example:
      ctx dream merge
      ctx dream merge --yes
    """
    state.used("wrote to")
    result = state.call(
        calls.dream_merge, calls.DreamMergeRequest(branch=branch, yes=yes)
    )
    if as_json:
        echo_json(result)
    else:
        render_dream_merge(result)
    if result.merge is not None and result.merge.conflicts:
        click.get_current_context().exit(ConflictError.exit_code)


COMMANDS = [dream_group]
