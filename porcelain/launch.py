"""The ``ctx`` program: ``ctx hook`` alone, every other command through the group.

``ctx --version`` answers at once, as click's option would word it.

An agent's host runs ``ctx hook`` at every prompt and every stop, and waits
for it. The group (:mod:`ctx.porcelain.main`) imports the module of every
command, which a hook never needs: a hook with nothing to give took 110 ms
through the group and 86 ms alone (medians, docs/hooks.md), so ``ctx hook
...`` runs the hook command on its own. Anything else, ``ctx --store PATH
hook`` included, goes through the group.
"""

from __future__ import annotations

import os
import sys

__all__ = ["VERSION", "main"]

VERSION = "0.1.0"
"""ctx's version, as pyproject.toml says it (a test keeps the two equal):
``ctx --version`` answers from here, importing neither click nor package
metadata."""


def main() -> None:
    """Runs the command line."""
    args = sys.argv[1:]
    if args == ["--version"]:
        sys.stdout.write(f"ctx, version {VERSION}\n")
        return
    if args[:1] == ["hook"]:
        # As the group's main() does, before numpy can load: see there.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from ctx.porcelain.commands.hooks import run_alone

        run_alone(args[1:])
    else:
        from ctx.porcelain.main import main as run_group

        run_group()
