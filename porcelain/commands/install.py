"""Wiring ctx into agent hosts: ctx install, ctx uninstall, ctx doctor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.output import echo

if TYPE_CHECKING:
    from ctx.hub.install import InstallResult

__all__ = ["COMMANDS"]

_HOSTS = ("claude", "codex", "gemini", "cursor")


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


_DRY_RUN = click.option(
    "--dry-run", is_flag=True, help="Print the changes as a diff; write nothing."
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


@click.command()
@click.argument("host", type=click.Choice(_HOSTS, case_sensitive=False))
@_scope_option
@_DRY_RUN
@json_option
def install(host: str, scope: str, dry_run: bool, as_json: bool) -> None:
    """Wire ctx into an agent host: its hooks, its MCP server, a skill

    Adds `ctx hook EVENT` to the host's hooks, the MCP server `ctx`
    (`ctx mcp`) to its servers and, for Claude Code, the skill
    .claude/skills/ctx/SKILL.md. Everything else in those files is kept;
    a file that changes is backed up first as FILE.ctx-backup. Running it
    again changes nothing. A file that is not valid JSON or TOML stops it
    (exit 4) before anything is written (docs/install.md).

    \b
    Example:
      ctx install claude
      ctx install codex --user --dry-run
    """
    from ctx.hub.install import HOSTS, apply_plan, plan_install

    _report(
        apply_plan(plan_install(HOSTS[host.lower()], scope), dry_run=dry_run), as_json
    )


@click.command()
@click.argument("host", type=click.Choice(_HOSTS, case_sensitive=False))
@_scope_option
@_DRY_RUN
@json_option
def uninstall(host: str, scope: str, dry_run: bool, as_json: bool) -> None:
    """Remove what `ctx install` added to an agent host

    Only ctx's own entries go: hooks running `ctx hook`, the MCP server
    `ctx` as install writes it, the skill as install wrote it. A file left
    holding nothing else is removed.

    \b
    Example:
      ctx uninstall claude
      ctx uninstall gemini --user
    """
    from ctx.hub.install import HOSTS, apply_plan, plan_uninstall

    plan = plan_uninstall(HOSTS[host.lower()], scope)
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
    from ctx.hub.install import doctor as run_doctor

    report = run_doctor(state.explicit)
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
