"""Agent hooks: ``ctx hook EVENT`` and the ``<ctx:*>`` commands (docs/hooks.md).

Coding agents (Claude Code; Codex and Gemini CLI alike) run a command at
fixed moments of a session, hand it JSON on stdin and take context back on
stdout. :func:`run_hook` answers one such call: ``events`` holds what each
moment does, ``commands`` finds the ``<ctx:*>`` commands in an agent's
message, ``actions`` carries them out through the agents' table of calls,
and ``session`` keeps what waits between calls in the store's private state.
"""

from ctx.hub.hooks.commands import MARKER, Command, Parsed, parse_commands
from ctx.hub.hooks.events import EVENTS, find_event
from ctx.hub.hooks.runner import MAX_CONTEXT, run_hook

__all__ = [
    "EVENTS",
    "MARKER",
    "MAX_CONTEXT",
    "Command",
    "Parsed",
    "find_event",
    "parse_commands",
    "run_hook",
]
