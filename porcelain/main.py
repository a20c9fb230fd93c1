"""The ``ctx`` command: a group of commands over the engine.

Errors: every :class:`~ctx.engine.CtxError` is caught here, once, and shown
as ``Error: ...`` (and ``Hint: ...``) on stderr with the error's exit code:
1 general, 2 usage, 3 not found, 4 invalid input, 5 conflict, 6 store,
7 store busy, 8 remote.
"""

from __future__ import annotations

import importlib
import os
import traceback
from typing import Any, NoReturn

import click

from ctx.engine import CtxError
from ctx.porcelain._options import CtxState, add_store_option
from ctx.porcelain.output import echo
from ctx.porcelain.version import VERSION

__all__ = ["COMMAND_MODULES", "cli", "main"]

COMMAND_MODULES: dict[str, str] = {
    "blame": "blame",
    "branch": "branches",
    "branches": "branches",
    "brief": "sessions",
    "chunk": "code",
    "clone": "remotes",
    "code": "code",
    "compose": "views",
    "deps": "code",
    "diff": "diff",
    "doctor": "install",
    "dream": "dream",
    "edit": "memory",
    "expand": "provenance",
    "export": "exports",
    "feedback": "feedback",
    "fetch": "remotes",
    "find": "code",
    "forget": "memory",
    "fsck": "store",
    "gc": "store",
    "hook": "hooks",
    "hub": "hub",
    "import": "imports",
    "index": "recall",
    "ingest": "imports",
    "init": "store",
    "install": "install",
    "keys": "keys",
    "lens": "lens",
    "link": "links",
    "links": "links",
    "log": "log",
    "ls": "memory",
    "mcp": "agents",
    "merge": "merge",
    "op": "branches",
    "prime": "prime",
    "pull": "remotes",
    "push": "remotes",
    "query": "views",
    "recall": "recall",
    "redact": "redaction",
    "reindex": "recall",
    "related": "provenance",
    "remember": "memory",
    "remote": "remotes",
    "resolve": "merge",
    "review": "sessions",
    "search": "recall",
    "serve": "agents",
    "session": "sessions",
    "show": "memory",
    "status": "store",
    "summarize": "provenance",
    "supersede": "provenance",
    "switch": "branches",
    "symbols": "code",
    "sync": "sync",
    "tag": "tags",
    "tags": "tags",
    "test": "golden",
    "trace": "provenance",
    "undo": "branches",
    "uninstall": "install",
    "unlink": "links",
    "untag": "tags",
    "view": "views",
}
"""Each command and the module of ``ctx.porcelain.commands`` that defines it.

A command's module is imported only when that command runs (click's lazy
group), so ``ctx remember`` never imports the lens, the MCP SDK's commands
or the code index's. A test checks this table against every module's
``COMMANDS``.
"""


class CtxGroup(click.Group):
    """A click group that turns ctx errors into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        """Runs the command, reporting a CtxError on stderr.

        A command that wrote or recalled in the user store ends with a notice
        saying so, also when it exits with a code of its own (a merge that
        left conflicts): with no project store, memories of every project
        would otherwise mix unseen.
        """
        damage = None
        try:
            result = super().invoke(ctx)
        except CtxError as exc:
            self._error(ctx, exc)
        except click.exceptions.Exit:
            self._notice(ctx)
            raise
        except (click.ClickException, click.exceptions.Abort):
            raise
        except Exception as exc:
            # Bad bytes in the store's objects or refs, met anywhere: one
            # line and exit 6, as for any damage the engine names itself;
            # so is a file of the store the system will not let us read or
            # write (a folder of it made unreadable).
            from ctx.engine import store_damage

            damage = store_damage(exc) or self._unusable(ctx, exc)
            if damage is None:
                raise
            # Its frames hold views of the pack's memory map, which closing
            # the store at exit would fail on: they go first.
            traceback.clear_frames(exc.__traceback__)
        if damage is not None:
            self._error(ctx, damage)
        self._notice(ctx)
        return result

    @staticmethod
    def _unusable(ctx: click.Context, exc: Exception) -> CtxError | None:
        """Returns the error for an OSError on a file of the store, else None."""
        from pathlib import Path

        from ctx.engine import StoreError

        state = ctx.find_object(CtxState)
        ws = state.opened() if state is not None else None
        name = getattr(exc, "filename", None)
        if not isinstance(exc, OSError) or ws is None or not isinstance(name, str):
            return None
        if not Path(name).absolute().is_relative_to(Path(ws.path).absolute()):
            return None
        return StoreError(
            f"The store's file {name} cannot be used: {exc.strerror or exc}.",
            hint="Check the file and its folder's permissions; `ctx fsck` checks "
            "the rest.",
        )

    @staticmethod
    def _error(ctx: click.Context, exc: CtxError) -> NoReturn:
        echo(f"Error: {exc.message}", err=True)
        if exc.hint:
            echo(f"Hint: {exc.hint}", err=True)
        ctx.exit(exc.exit_code)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Returns every command's name, sorted, importing none of them."""
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Returns the command, importing its module the first time."""
        found = self.commands.get(cmd_name)
        if found is not None or cmd_name not in COMMAND_MODULES:
            return found
        module = importlib.import_module(
            f"ctx.porcelain.commands.{COMMAND_MODULES[cmd_name]}"
        )
        for command in module.COMMANDS:
            if command.name not in self.commands:
                add_store_option(command)
                self.add_command(command)
        return self.commands.get(cmd_name)

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
@click.version_option(VERSION, prog_name="ctx")
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
