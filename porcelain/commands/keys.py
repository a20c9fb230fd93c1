"""API keys for `ctx serve`: ctx keys create, ls, revoke."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ctx.porcelain._options import CtxState, echo_json, json_option, pass_state
from ctx.porcelain.output import echo

if TYPE_CHECKING:
    from datetime import datetime

    from ctx.hub import ApiKey

__all__ = ["COMMANDS"]


@click.group(name="keys")
def keys_group() -> None:
    """Manage the API keys that `ctx serve` asks for

    A key is a bearer token scoped to branch patterns: it reads the
    branches its --read and --write patterns match and writes those its
    --write patterns match. The store keeps only a hash of each token, in
    its private folder, never in its git history.

    \b
    Example:
      ctx keys create claude --read main --write 'agent/claude*'
      ctx keys ls
      ctx keys revoke claude
    """


@keys_group.command(name="create")
@click.argument("label")
@click.option(
    "--read",
    "read",
    multiple=True,
    metavar="PATTERN",
    help="A branch pattern the key may read, e.g. main, 'agent/*' (can be repeated).",
)
@click.option(
    "--write",
    "write",
    multiple=True,
    metavar="PATTERN",
    help="A branch pattern the key may write and read (can be repeated).",
)
@click.option("--admin", is_flag=True, help="The key may manage keys over HTTP.")
@json_option
@pass_state
def create(
    state: CtxState,
    label: str,
    read: tuple[str, ...],
    write: tuple[str, ...],
    admin: bool,
    as_json: bool,
) -> None:
    """Create a key and print its token, once

    The token alone goes to stdout, so a script can capture it; copy it
    now: ctx keeps only its hash and cannot show it again. Patterns are
    branch names with * and ? (a * also matches /).

    \b
    Example:
      ctx keys create ci --read main --write 'agent/*'
      TOKEN=$(ctx keys create reviewer --read '*')
    """
    from ctx.hub import create_key

    made = create_key(state.workspace(), label, read=read, write=write, admin=admin)
    if as_json:
        echo_json(made)
        return
    echo(f"Created key {_describe(made.key)}.", err=True)
    echo(made.token)
    echo(
        "Warning: This is the only time the token is shown; ctx keeps only its hash.",
        err=True,
    )


@keys_group.command(name="ls")
@json_option
@pass_state
def ls(state: CtxState, as_json: bool) -> None:
    """List the store's keys, revoked ones too

    Each line shows the key's id, label and scopes, and when it was made
    or revoked; tokens are never shown.

    \b
    Example:
      ctx keys ls --json
    """
    from ctx.hub import list_keys

    keys = list_keys(state.workspace())
    if as_json:
        echo_json(keys)
        return
    if not keys:
        echo("No keys; `ctx keys create LABEL --read PATTERN` makes one.")
    for key in keys:
        when = (
            f"revoked {_time(key.revoked_at)}"
            if key.revoked_at
            else f"created {_time(key.created_at)}"
        )
        echo(f"{_describe(key)}  {when}")


@keys_group.command(name="revoke")
@click.argument("key", metavar="ID|LABEL")
@json_option
@pass_state
def revoke(state: CtxState, key: str, as_json: bool) -> None:
    """Revoke a key: its token stops working at once

    A label names the key not yet revoked that has it. The key stays
    listed by `ctx keys ls`, as revoked.

    \b
    Example:
      ctx keys revoke ci
      ctx keys revoke 3f9a1c2b
    """
    from ctx.hub import revoke_key

    revoked = revoke_key(state.workspace(), key)
    if as_json:
        echo_json(revoked)
    elif revoked.changed:
        echo(f"Revoked key {_describe(revoked.key)}.")
    else:
        assert revoked.key.revoked_at is not None
        when = _time(revoked.key.revoked_at)
        echo(f"Key {_describe(revoked.key)} was already revoked ({when}).")


def _describe(key: ApiKey) -> str:
    scopes = [
        f"{what} {', '.join(patterns)}"
        for what, patterns in (("reads", key.read), ("writes", key.write))
        if patterns
    ]
    if key.admin:
        scopes.append("admin")
    return f"{key.id} {key.label!r} ({'; '.join(scopes)})"


def _time(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S}"


COMMANDS = [keys_group]
