"""The ``ctx`` program: ``ctx hook`` alone, every other command through the group.

``ctx --version`` answers at once, as click's option would word it.

An agent's host runs ``ctx hook`` at every prompt and every stop, and waits
for it. The group (:mod:`ctx.porcelain.main`) and click itself are more
than a hook needs: ``ctx hook ...`` reads its few arguments here
(:func:`hook_arguments`) and hands the call to the running hub
(:mod:`ctx.porcelain.hook_relay`), or with none calls the hub's hook
runner in this process, importing neither click nor any command module.
``ctx hook --help`` and anything else, ``ctx --store PATH hook`` included,
go through the group.

The garbage collector is kept out of what a short command does not need.
No collection runs while the command's modules are imported (tens of
thousands of objects, no garbage worth one), and what they made is frozen
out of later collections (:func:`gc.freeze`); every object is frozen once
the command has finished, the last thing before the interpreter ends, whose
shutdown otherwise collects them all. On two cores, ``ctx ls`` went 154 ->
124 ms and ``ctx remember`` 158 -> 129 ms, interleaved
(``benchmarks/results/startup.md``). Nothing of
ctx waits on a collection to write: every file is closed, and every commit
made, before a command ends.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

from ctx.porcelain.version import VERSION

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: importing typing costs ~10 ms
if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["hook_arguments", "main"]


def main() -> None:
    """Runs the command line."""
    atexit.register(gc.freeze)  # registered first: run after every other
    args = sys.argv[1:]
    if args == ["--version"]:
        sys.stdout.write(f"ctx, version {VERSION}\n")
        return
    hook = hook_arguments(args[1:]) if args[:1] == ["hook"] else None
    if hook is not None:
        from ctx.porcelain.hook_relay import relayed

        event, store, agent = hook
        data = sys.stdin.buffer.read()
        answer = relayed(event, data, store=store, agent=agent)
        if answer is None:  # no hub to answer: this process does
            # As the group's main() does, before numpy can load: see there.
            os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
            run_hook = _imported("ctx.porcelain.hooks").run_hook
            answer = run_hook(event, data, store=store, agent=agent)
        if answer:
            sys.stdout.write(answer + "\n")
    else:
        _imported("ctx.porcelain.main").main()


def _imported(name: str) -> ModuleType:
    """Imports module ``name`` with no collection meanwhile; freezes what it made.

    A command's imports make tens of thousands of objects and no garbage
    worth a collection; what they made is kept out of the later ones.
    """
    import importlib  # here: not for `--version` or a relayed hook

    gc.disable()
    try:
        return importlib.import_module(name)
    finally:
        gc.freeze()
        gc.enable()


def hook_arguments(args: list[str]) -> tuple[str, str | None, str | None] | None:
    """Returns ``ctx hook ARGS`` as (event, store, agent), or None for the group.

    ``--store PATH`` and ``--agent NAME`` (or ``--opt=value``) are read
    wherever they stand; every other word is part of the event's name, as
    the command does (``stop --now`` is an unknown event, logged). Help, or
    an option without its value, is the group's to answer.
    """
    event: list[str] = []
    options: dict[str, str] = {}
    words = iter(args)
    for word in words:
        name, equals, value = word.partition("=")
        if word in ("--help", "-h"):
            return None
        if name in ("--store", "--agent"):
            if not equals:
                value = next(words, "")
                if not value:
                    return None
            options[name] = value
        else:
            event.append(word)
    return " ".join(event), options.get("--store"), options.get("--agent")
