"""A hook relayed to the running hub: answered there as in ``ctx hook``'s process.

``ctx hook`` spends most of its time importing what answers the hook. With a
hub running, its process stays small (``ctx.porcelain.hook_relay``): it
sends the host's bytes, its options, its working folder and the environment
the hook reads (a :class:`~ctx.hub.server.wire.HookAsk`), and prints what
comes back. :func:`relayed_answer` runs the same :func:`run_hook` in a
thread of the hub with them, so that the answer is the one the process
would have given, byte for byte: the store found by the same rules
(``--store``, ``CTX_DIR``, ``.ctx/`` above the folder, the user store), the
same recall (through the hub, as the process asks it), the same record of
what was shown, the same log and deadline (kept without a signal: see
:func:`~ctx.porcelain.hooks.runner.run_hook`).

What the hook reads from the hub's own process rather than from the
environment it is given (the clock's time zone, the user's folders, the
hub's own switches: ``CTX_NO_HUB`` and the like) must be the same in both
processes: the relay sends those variables as it has them, and the hub
refuses a hook whose differ, which the process then answers itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctx.engine import InvalidInputError
from ctx.hub import HookAsk, HookReply
from ctx.porcelain.hooks.runner import run_hook

__all__ = ["relayed_answer"]


def relayed_answer(request: HookAsk) -> HookReply:
    """Returns what ``ctx hook`` would print for the relayed call.

    Raises:
        InvalidInputError: A variable the hook reads from the process differs
            between the hub and the hook's process (the process answers).
    """
    differs = _differing(request)
    if differs:
        raise InvalidInputError(
            f"The hub's environment differs from the hook's ({', '.join(differs)})."
        )
    output = run_hook(
        request.event,
        request.data,
        store=request.store_option,
        agent=request.agent,
        environ={n: v for n, v in request.environ.items() if v is not None},
        cwd=Path(request.cwd),
    )
    return HookReply(output=output, pid=os.getpid())


def _differing(request: HookAsk) -> list[str]:
    """Returns the process's variables that differ between hub and hook, sorted.

    Those the relay sent, and any ``CTX_*`` variable of the hub's that it did
    not send (the hook's process has none by that name). Those the hook is
    given as its environment (``request.environ``) are the hook's alone.
    """
    given = dict(request.process)
    for name in os.environ:
        if name.startswith("CTX_") and name not in request.environ:
            given.setdefault(name, None)
    return sorted(n for n, value in given.items() if os.environ.get(n) != value)
