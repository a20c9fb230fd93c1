"""Commands for remotes: remote add/remove/ls, push, fetch, pull, clone."""

from __future__ import annotations

from pathlib import Path

import click

from ctx import engine, hub
from ctx.engine import Intent, plural
from ctx.porcelain._options import (
    CtxState,
    echo_json,
    intent_options,
    json_option,
    now,
    pass_state,
)
from ctx.porcelain.commands.merge import merge_options, warn_secrets
from ctx.porcelain.commands.store import NOT_COMMITTED, write_config
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_merge, render_redaction, render_transfer

__all__ = ["COMMANDS"]


ignore_redactions_option = click.option(
    "--ignore-redactions",
    is_flag=True,
    help="Move what a redaction removed anyway (it brings the text back).",
)


def _access() -> engine.Access:
    from ctx.hub import remote_access

    return remote_access()


@click.group()
def remote() -> None:
    """Add, remove and list the remotes memory travels through

    A remote is a git remote in the store's git config: a path, file://,
    git://, ssh://, user@host:path or http(s)://.

    \b
    Example:
      ctx remote add origin https://git.example.com/team/memory.git
      ctx remote ls
    """


@remote.command("add")
@click.argument("name")
@click.argument("url", required=False)
@click.option(
    "--with-code",
    is_flag=True,
    help="The code repository's own remote NAME (or URL): memory branches "
    "go under ctx/ there, beside the code's.",
)
@json_option
@pass_state
def remote_add(
    state: CtxState, name: str, url: str | None, with_code: bool, as_json: bool
) -> None:
    """Add remote NAME at URL, or the code's own remote NAME with --with-code

    With --with-code, branch main is pushed to ctx/main on the code's
    remote, agent/claude to ctx/agent/claude, and only branches under ctx/
    are fetched: the code's branches are never touched (docs/remotes.md).

    \b
    Example:
      ctx remote add origin git@github.com:team/memory.git
      ctx remote add backup /mnt/backup/memory.git
      ctx remote add origin --with-code
    """
    if with_code:
        result = hub.add_code_remote(state.workspace(), name, Path.cwd(), url)
    elif url is None:
        raise click.UsageError("Give the remote's URL, or --with-code.")
    else:
        result = engine.add_remote(state.store(write=True), name, url)
    if as_json:
        echo_json(result)
    else:
        echo(f"Added remote {result.name} at {result.url}{_under(result)}.")


def _under(item: engine.RemoteInfo) -> str:
    return f" (branches under {item.namespace})" if item.namespace else ""


@remote.command("remove")
@click.argument("name")
@json_option
@pass_state
def remote_remove(state: CtxState, name: str, as_json: bool) -> None:
    """Remove remote NAME and its fetched branches (not the commits)

    \b
    Example:
      ctx remote remove backup
    """
    result = engine.remove_remote(state.store(write=True), name)
    if as_json:
        echo_json(result)
    else:
        echo(f"Removed remote {result.name} ({result.url}).")


@remote.command("ls")
@json_option
@pass_state
def remote_ls(state: CtxState, as_json: bool) -> None:
    """List remotes, their addresses and fetched branches

    \b
    Example:
      ctx remote ls
    """
    remotes = engine.list_remotes(state.store())
    if as_json:
        echo_json(remotes)
        return
    if not remotes:
        echo("No remotes; `ctx remote add NAME URL` adds one.")
    width = max((len(r.name) for r in remotes), default=0)
    for item in remotes:
        fetched = ", ".join(item.branches) or "nothing fetched yet"
        echo(f"{item.name:<{width}}  {item.url}{_under(item)}  ({fetched})")


@click.command()
@click.argument("remote_name", metavar="[REMOTE]", default="origin")
@click.argument("branches", metavar="[BRANCH]...", nargs=-1)
@click.option("--all", "all_branches", is_flag=True, help="Push every branch.")
@click.option("--force", is_flag=True, help="Overwrite remote work we do not have.")
@click.option(
    "--force-with-lease",
    is_flag=True,
    help="Overwrite a branch only where the remote has it as last fetched "
    "(after `ctx redact`: the history the redaction replaced).",
)
@ignore_redactions_option
@json_option
@pass_state
def push(
    state: CtxState,
    remote_name: str,
    branches: tuple[str, ...],
    all_branches: bool,
    force: bool,
    force_with_lease: bool,
    ignore_redactions: bool,
    as_json: bool,
) -> None:
    """Push branches (default: the current one) to REMOTE (default: origin)

    A branch the remote has moved past (not a fast forward) is refused and
    nothing is pushed, with exit 5: `ctx pull` first, or `--force`. A remote
    that still holds history `ctx redact` replaced is named, with the
    `--force-with-lease` push that replaces it; a push that would send what
    a redaction removed is refused.

    \b
    Example:
      ctx push
      ctx push origin main agent/claude
      ctx push --all
      ctx push origin --force-with-lease main
    """
    if all_branches and branches:
        raise click.UsageError("Give branches or --all, not both.")
    result = engine.push(
        state.store(write=True),
        remote_name,
        branches,
        all_branches=all_branches,
        force=force,
        force_with_lease=force_with_lease,
        ignore_redactions=ignore_redactions,
        access=_access(),
    )
    if as_json:
        echo_json(result)
        return
    if not result.updated:
        echo(f"{result.remote} is up to date ({', '.join(result.up_to_date)}).")
        return
    echo(f"Pushed {plural(len(result.updated), 'branch')} to {result.remote}:")
    render_transfer(result.updated)


@click.command()
@click.argument("remote_name", metavar="[REMOTE]", default="origin")
@ignore_redactions_option
@json_option
@pass_state
def fetch(
    state: CtxState, remote_name: str, ignore_redactions: bool, as_json: bool
) -> None:
    """Fetch REMOTE's branches (default: origin) as REMOTE/BRANCH

    Nothing local changes but the fetched branches: `ctx diff main
    origin/main` shows what came, `ctx merge origin/main` takes it.

    \b
    Example:
      ctx fetch
      ctx diff main origin/main
    """
    result = engine.fetch(
        state.store(write=True),
        remote_name,
        access=_access(),
        ignore_redactions=ignore_redactions,
    )
    if as_json:
        echo_json(result)
        return
    if not result.updated:
        echo(f"{result.remote} has nothing new.")
        return
    moved = plural(len(result.updated), "branch")
    echo(f"Fetched {moved} from {result.remote}:")
    render_transfer(result.updated, prefix=f"{result.remote}/")


@click.command()
@click.argument("remote_name", metavar="[REMOTE]", default="origin")
@click.argument("branch", required=False)
@merge_options
@intent_options("merge", secrets=False)
@ignore_redactions_option
@json_option
@pass_state
def pull(
    state: CtxState,
    remote_name: str,
    branch: str | None,
    into: str | None,
    prefer: str | None,
    who: Intent,
    ignore_redactions: bool,
    as_json: bool,
) -> None:
    """Fetch REMOTE, then merge its BRANCH (default: same name) into a branch

    The merge is ctx's own, as `ctx merge`: tags and links union, real
    clashes are stored as conflicts for `ctx resolve`; a pull that leaves
    conflicts is committed, printed, and exits with 5. Secrets in the text
    it brings are named in a warning. A redaction made in another clone
    comes too, and is applied to this store's history first.

    \b
    Example:
      ctx pull
      ctx pull origin agent/claude --into main
    """
    from ctx.hub import pull as hub_pull

    result = hub_pull(
        state.store(write=True),
        who,
        remote_name,
        branch,
        into=into,
        prefer=prefer,
        access=_access(),
        ignore_redactions=ignore_redactions,
    )
    if as_json:
        echo_json(result)
    else:
        for applied in result.redactions:
            render_redaction(applied, applied=True)
        render_merge(result.merge)
        if result.merge.fast_forward:
            _brought_conflicts(state, result.merge.target)
    warn_secrets(result.merge)
    if result.merge.conflicts:
        click.get_current_context().exit(engine.ConflictError.exit_code)


def _brought_conflicts(state: CtxState, branch: str) -> None:
    """Says the conflicts a fast-forward brought: another store left them so."""
    waiting = engine.conflicted_ids(state.store(), branch)
    if waiting:
        echo(
            f"  {plural(len(waiting), 'conflict')} left unsettled where it "
            f"came from, now on {branch}: settle each with `ctx resolve ID "
            "--take ours|theirs|both`."
        )


@click.command()
@click.argument("url", required=False)
@click.argument("folder", default=".", type=click.Path(file_okay=False))
@click.option("--user", "user_store", is_flag=True, help="Make the user store instead.")
@click.option(
    "--from-code",
    is_flag=True,
    help="From the code repository's remote origin (its ctx/ branches), into "
    ".ctx/ at the top of the code's work tree.",
)
@json_option
@pass_state
def clone(
    state: CtxState,
    url: str | None,
    folder: str,
    user_store: bool,
    from_code: bool,
    as_json: bool,
) -> None:
    """Make a store from the one at URL: .ctx/ in FOLDER (default: here)

    The remote becomes origin, its branches become branches here. An empty
    remote cannot be cloned: fill it from a store with `ctx remote add` and
    `ctx push`. In a checkout of code whose remote carries memory (`ctx
    remote add origin --with-code`), `ctx clone --from-code` gets it.

    \b
    Example:
      ctx clone https://git.example.com/team/memory.git
      ctx clone git@github.com:team/memory.git ~/work/api
      ctx clone /mnt/shared/memory.git --user
      git clone git@github.com:team/api.git && cd api && ctx clone --from-code
    """
    if from_code and url is not None:
        if folder != ".":
            raise click.UsageError("Give a URL or --from-code, not both.")
        folder, url = url, None  # `ctx clone --from-code FOLDER`
    if not from_code and url is None:
        raise click.UsageError("Give the URL to clone, or --from-code.")
    if user_store:
        from ctx.hub import Workspace

        path = Workspace.user_store_path()
    elif state.explicit:
        path = Path(state.explicit)
    elif from_code:
        path = hub.code_store_path(Path(folder))
    else:
        path = Path(folder) / ".ctx"
    if from_code:
        result = engine.clone_from_code(
            path.absolute(), Path(folder), clock=now, access=_access()
        )
    else:
        assert url is not None
        result = engine.clone(path.absolute(), url, clock=now, access=_access())
    write_config(Path(result.path))  # as init does: settings are not cloned
    if as_json:
        echo_json(result)
    else:
        count = plural(len(result.branches), "branch")
        echo(f"Cloned {result.url} into {result.path} ({count}, on {result.head}).")
        if not (user_store or state.explicit):  # .ctx/ in a project's folder
            echo(NOT_COMMITTED)


COMMANDS = [remote, push, fetch, pull, clone]
