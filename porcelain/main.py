"""The ``ctx`` command: a group of commands over the engine.

Errors: every :class:`~ctx.engine.CtxError` is caught here, once, and shown
as ``Error: ...`` (and ``Hint: ...``) on stderr with the error's exit code:
1 general, 2 usage, 3 not found, 4 invalid input, 5 conflict, 6 store,
7 store busy, 8 remote.
"""

from __future__ import annotations

import os
from typing import Any

import click

from ctx.engine import CtxError
from ctx.porcelain._options import CtxState, add_store_option
from ctx.porcelain.commands import (
    agents,
    blame,
    branches,
    code,
    diff,
    dream,
    exports,
    feedback,
    hooks,
    hub,
    imports,
    install,
    keys,
    lens,
    links,
    log,
    memory,
    merge,
    prime,
    provenance,
    recall,
    remotes,
    sessions,
    store,
    tags,
    views,
)
from ctx.porcelain.output import echo

__all__ = ["cli", "main"]


class CtxGroup(click.Group):
    """A click group that turns ctx errors into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        """Runs the command, reporting a CtxError on stderr.

        A command that wrote or recalled in the user store ends with a notice
        saying so, also when it exits with a code of its own (a merge that
        left conflicts): with no project store, memories of every project
        would otherwise mix unseen.
        """
        try:
            result = super().invoke(ctx)
        except CtxError as exc:
            echo(f"Error: {exc.message}", err=True)
            if exc.hint:
                echo(f"Hint: {exc.hint}", err=True)
            ctx.exit(exc.exit_code)
        except click.exceptions.Exit:
            self._notice(ctx)
            raise
        self._notice(ctx)
        return result

    @staticmethod
    def _notice(ctx: click.Context) -> None:
        state = ctx.find_object(CtxState)
        notice = state.user_store_notice() if state is not None else None
        if notice is not None:
            echo(notice, err=True)


@click.group(cls=CtxGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--store",
    "store_path",
    metavar="PATH",
    help="The store folder (default: CTX_DIR, then .ctx/ above, then the user store).",
)
@click.version_option(package_name="ctx-memory", prog_name="ctx")
@click.pass_context
def cli(ctx: click.Context, store_path: str | None) -> None:
    """Versioned, branching memory for AI agents.

    Every write is a git commit that says who wrote it, why and how sure.
    Branch, diff, blame, merge and undo work on memories as git does on code.

    \b
    Example:
      ctx init
      ctx remember "We chose Postgres for the queue" --kind decision
      ctx log
    """
    ctx.obj = CtxState(store_path)
    ctx.call_on_close(ctx.obj.close)


for module in (
    store,
    memory,
    prime,
    imports,
    exports,
    links,
    tags,
    provenance,
    views,
    log,
    blame,
    diff,
    branches,
    merge,
    remotes,
    recall,
    hub,
    agents,
    hooks,
    install,
    sessions,
    keys,
    feedback,
    lens,
    code,
    dream,
):
    for command in module.COMMANDS:
        add_store_option(command)
        cli.add_command(command)


def main() -> None:
    """Runs the command line.

    BLAS is held to one thread unless the environment says otherwise (set
    here, by the program, not by importing a module): on a small machine
    OpenBLAS threads and onnxruntime's fight over the cores, which doubled
    the cost of embedding a query (DESIGN.md, "Measured facts"), and a
    vector search is one matrix-vector product a second thread barely speeds
    up. It takes effect because numpy is not loaded yet.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    cli(prog_name="ctx")
