"""How an agent host reaches the store at fixed moments: ctx hook."""

from __future__ import annotations

import sys

import click

from ctx.porcelain._options import CtxState, pass_state

__all__ = ["COMMANDS"]


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("event", nargs=-1, metavar="EVENT")
@click.option(
    "--agent",
    metavar="NAME",
    help="Who writes (default: CTX_AGENT, then the host: claude-code, ...).",
)
@pass_state
def hook(state: CtxState, event: tuple[str, ...], agent: str | None) -> None:
    """Answer an agent host's hook: its JSON on stdin, context on stdout

    EVENT is session-start, prompt-submit, stop, subagent-start,
    subagent-stop, pre-compact or session-end. Made for Claude Code's hooks
    (Codex and Gemini CLI send the same JSON): the context goes back as
    hookSpecificOutput.additionalContext. A stop carries out the <ctx:*>
    commands of the agent's last message (docs/hooks.md). It always exits
    0 (an unknown event or argument too: exit 2 would block the user's
    prompt): a failure gives no context, and a line in the store's
    private/hooks.log.

    \b
    Example:
      echo '{"session_id": "s1", "prompt": "how do we deploy?"}' \\
        | ctx hook prompt-submit
    """
    from ctx.porcelain.hooks import run_hook

    name = " ".join(event)  # anything but one known event is logged, not refused
    answer = run_hook(name, sys.stdin.buffer.read(), store=state.explicit, agent=agent)
    if answer:
        sys.stdout.write(answer + "\n")


COMMANDS = (hook,)
