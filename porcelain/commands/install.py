"""Wiring ctx into agent hosts: ctx install, ctx uninstall, ctx doctor."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.install import SHELLS
from ctx.porcelain.output import echo

if TYPE_CHECKING:
    from ctx.porcelain.install import InstallResult

__all__ = ["COMMANDS"]

_HOSTS = ("claude", "codex", "gemini", "cursor")
_WHAT = click.Choice((*_HOSTS, "completion"), case_sensitive=False)
_SHELL = click.argument(
    "shell", type=click.Choice(SHELLS), required=False, metavar="[SHELL]"
)


def _scope_option(func: Any) -> Any:
    func = click.option(
        "--user",
        "scope",
        flag_value="user",
        help="The host's files in your home folder (~/.claude/, ~/.codex/, ...).",
    )(func)
    return click.option(
        "--project",
        "scope",
        flag_value="project",
        default=True,
        help="The host's files in this folder (the default).",
    )(func)


_COMMAND = click.option(
    "--command",
    "program",
    metavar="PROGRAM",
    help="The ctx the host runs: `ctx` to have it found on the host's PATH "
    "(default: the absolute path of this ctx).",
)

_DRY_RUN = click.option(
    "--dry-run", is_flag=True, help="Print the changes as a diff; write nothing."
)


def _no_store() -> None:
    """Refuses ``--store``: the host's hooks find the store where they run."""
    state = click.get_current_context().find_object(CtxState)
    if state is not None and state.explicit:
        from ctx.engine import InvalidInputError

        raise InvalidInputError(
            "ctx install and uninstall take no --store: the hooks and the server "
            "find the store from the folder the host runs them in.",
            hint="A .ctx/ above that folder is found; or set CTX_DIR in the "
            "host's environment (docs/install.md).",
        )


def _report(result: InstallResult, as_json: bool) -> None:
    if as_json:
        echo_json(result)
        return
    for change in result.files:
        if result.dry_run:
            if change.diff:
                echo(change.diff, nl=False)
            continue
        line = f"{change.action:9} {change.path}"
        if change.backup:
            line += f" (backup: {change.backup})"
        echo(line)
    for note in result.notes:
        echo(f"Note: {note}")
    if not result.files or (result.dry_run and not any(c.diff for c in result.files)):
        echo("Nothing to change.")


def _completion(host: str, shell: str | None) -> str | None:
    """Returns the completion script asked for (``completion SHELL``), or None."""
    if host.lower() != "completion":
        if shell is not None:
            raise click.UsageError(f"{host} takes no shell; only completion does.")
        return None
    if shell is None:
        raise click.UsageError("Give the shell: completion bash, zsh or fish.")
    from click.shell_completion import get_completion_class

    from ctx.porcelain.main import cli

    kind = get_completion_class(shell)
    assert kind is not None  # every shell of _SHELLS is click's
    return kind(cli, {}, "ctx", "_CTX_COMPLETE").source()


@click.command()
@click.argument("host", type=_WHAT, metavar="HOST")
@_SHELL
@_scope_option
@_COMMAND
@_DRY_RUN
@json_option
def install(
    host: str,
    shell: str | None,
    scope: str,
    program: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Wire ctx into an agent host (claude, codex, gemini, cursor), or a shell

    Adds `ctx hook EVENT` to the host's hooks, the MCP server `ctx`
    (`ctx mcp`) to its servers and the skill `ctx` (Claude Code, Codex,
    Gemini CLI). Hosts run this ctx by its absolute path
    (a ctx in a .venv/bin works), or by name with --command ctx (a file
    shared with people whose ctx lives elsewhere; it must then be on the
    host's PATH). Everything else in those files is kept;
    a file that changes is backed up first as FILE.ctx-backup. Running it
    again changes nothing. A file that is not valid JSON or TOML stops it
    (exit 4) before anything is written (docs/install.md).

    `ctx install completion bash|zsh|fish` writes the shell's completion
    script where it loads it (in your home); with --dry-run it prints the
    script (`source <(ctx install completion bash --dry-run)`).

    \b
    Example:
      ctx install claude
      ctx install codex --user --dry-run
      ctx install claude --command ctx
      ctx install completion bash
    """
    script = _completion(host, shell)
    if script is not None:
        from ctx.porcelain.install import install_completion

        if dry_run and not as_json:
            echo(script, nl=False)
            return
        _report(install_completion(shell or "", script, dry_run=dry_run), as_json)
        return
    _no_store()
    from ctx.porcelain.install import HOSTS, apply_plan, plan_install, running_program

    plan = plan_install(
        HOSTS[host.lower()], scope, program or running_program(sys.argv[0])
    )
    _report(apply_plan(plan, dry_run=dry_run), as_json)


@click.command()
@click.argument("host", type=_WHAT, metavar="HOST")
@_SHELL
@_scope_option
@_COMMAND
@_DRY_RUN
@json_option
def uninstall(
    host: str,
    shell: str | None,
    scope: str,
    program: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Remove what `ctx install` added to an agent host, or a shell

    Only ctx's own entries go: hooks running `ctx hook`, the MCP server
    `ctx` as install writes it (running this ctx, or ctx by name), the
    skill as install wrote it. A file left holding nothing else is removed.
    `ctx uninstall completion SHELL` removes the completion script while it
    is the one install wrote.

    \b
    Example:
      ctx uninstall claude
      ctx uninstall gemini --user
      ctx uninstall completion zsh
    """
    script = _completion(host, shell)
    if script is not None:
        from ctx.porcelain.install import uninstall_completion

        _report(uninstall_completion(shell or "", script, dry_run=dry_run), as_json)
        return
    _no_store()
    from ctx.porcelain.install import HOSTS, apply_plan, plan_uninstall, running_program

    plan = plan_uninstall(
        HOSTS[host.lower()], scope, program or running_program(sys.argv[0])
    )
    _report(apply_plan(plan, dry_run=dry_run), as_json)


@click.command()
@json_option
@pass_state
def doctor(state: CtxState, as_json: bool) -> None:
    """Check the store, the hub, the agents' wiring, a hook and `ctx mcp`

    Each line is ok, warn or fail, with a hint; it exits 1 when a check
    fails.

    \b
    Example:
      ctx doctor
      ctx doctor --json
    """
    from ctx.porcelain.install import doctor as run_doctor
    from ctx.porcelain.install import running_program

    report = run_doctor(state.explicit, program=running_program(sys.argv[0]))
    if as_json:
        echo_json(report)
    else:
        for check in report.checks:
            echo(f"{check.status:4}  {check.name}: {check.detail}")
            if check.hint and check.status != "ok":
                echo(f"      Hint: {check.hint}")
    if not report.ok:
        click.get_current_context().exit(1)


COMMANDS = (install, uninstall, doctor)
