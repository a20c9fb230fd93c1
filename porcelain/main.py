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
from ctx.porcelain._options import CtxState
from ctx.porcelain.commands import (
    agents,
    blame,
    branches,
    diff,
    exports,
    hub,
    imports,
    keys,
    links,
    log,
    memory,
    merge,
    prime,
    provenance,
    recall,
    remotes,
    store,
    tags,
    views,
)
from ctx.porcelain.output import echo

__all__ = ["cli", "main"]


class CtxGroup(click.Group):
    """A click group that turns ctx errors into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        """Runs the command, reporting a CtxError on stderr."""
        try:
            return super().invoke(ctx)
        except CtxError as exc:
            echo(f"Error: {exc.message}", err=True)
            if exc.hint:
                echo(f"Hint: {exc.hint}", err=True)
            ctx.exit(exc.exit_code)


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


def _set_store(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value:
        state = ctx.find_object(CtxState)
        assert state is not None
        state.explicit = value


def _add_store_option(command: click.Command) -> None:
    # `--store` is accepted after the command too: `ctx ls --store PATH`.
    command.params.append(
        click.Option(
            ["--store"],
            metavar="PATH",
            expose_value=False,
            is_eager=True,
            callback=_set_store,
            help="The store folder (as `ctx --store PATH ...`).",
        )
    )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _add_store_option(sub)


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
    keys,
):
    for command in module.COMMANDS:
        _add_store_option(command)
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
