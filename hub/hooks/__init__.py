"""Agent hooks: ``ctx hook EVENT`` and the ``<ctx:*>`` commands (docs/hooks.md).

Coding agents (Claude Code; Codex and Gemini CLI alike) run a command at
fixed moments of a session, hand it JSON on stdin and take context back on
stdout. :func:`run_hook` answers one such call: ``events`` holds what each
moment does, ``commands`` finds the ``<ctx:*>`` commands in an agent's
message, ``actions`` carries them out through the agents' table of calls,
``session`` keeps what waits between calls in the store's private state,
``log`` the log of failures, and ``relayed`` answers in the running hub a
call that ``ctx hook``'s process relayed to it.
The names are listed once, in ``__init__.pyi``, and load on first use: a
hook with nothing to do never compiles the parser.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
