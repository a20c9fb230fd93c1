"""Agent hooks: ``ctx hook EVENT`` and the ``<ctx:*>`` commands (docs/hooks.md).

Coding agents (Claude Code; Codex and Gemini CLI alike) run a command at
fixed moments of a session, hand it JSON on stdin and take context back on
stdout. :func:`run_hook` answers one such call: ``events`` holds what each
moment does, ``actions`` carries out the ``<ctx:*>`` commands of an agent's
message (found by :mod:`ctx.hub.calls`' markup) through the typed calls
every door makes, ``blocks`` writes memories for the next prompt, and
``relayed`` answers in the running hub a call that ``ctx hook``'s process
relayed to it. What waits between calls (:mod:`ctx.hub.session_state`) and
the log of failures (:mod:`ctx.hub.hook_log`) are the hub's: Dream, session
reports and redaction read them too.
The names are listed once, in ``__init__.pyi``, and load on first use: a
hook with nothing to do never compiles the parser.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
