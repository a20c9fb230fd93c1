"""The command that opens the lens: ``ctx lens``."""

from __future__ import annotations

import click

from ctx.porcelain._options import CtxState, branch_name_option, pass_state

__all__ = ["COMMANDS"]


@click.command()
@branch_name_option
@pass_state
def lens(state: CtxState, branch: str | None) -> None:
    """Browse history, memories, the link graph, recall and review in the terminal

    Five screens on the number keys: 1 history (branches, log, a commit's
    diff), 2 memories (browse and filter; a memory's versions, blame and
    links), 3 the link graph, 4 recall as you type, 5 review (a branch
    against the current one: merge preview, merge, resolve). ? lists the
    keys; q quits. Writes made here carry the intent `review`.

    \b
    Example:
      ctx lens
      ctx lens --branch agent/claude
    """
    # Textual costs ~0.4 s to import: only this command loads it.
    from ctx.lens import run_lens

    code = run_lens(state.workspace(), branch=branch)
    if code:
        raise SystemExit(code)


COMMANDS = [lens]
