"""How agents reach the store: ctx mcp and ctx serve."""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING

import click

from ctx.porcelain._options import CtxState, branch_option, now, pass_state
from ctx.porcelain.output import echo

if TYPE_CHECKING:
    from ctx.porcelain.agents.serve import Serving

__all__ = ["COMMANDS"]


@click.command()
@click.option(
    "--tools",
    metavar="SETS",
    default=None,
    help="The tools listed, comma-separated sets or names: default, memory, "
    "history, branches, code, dream, all (default: [mcp] tools in "
    "config.toml, else default).",
)
@branch_option
@pass_state
def mcp(state: CtxState, tools: str | None, branch: str | None) -> None:
    """Serve the store to an agent over MCP (stdio)

    An agent's MCP client starts it and talks to it over stdin and stdout.
    By default it lists the tools an agent needs in every session (recall,
    search, get, remember, edit, forget, supersede, link, feedback,
    summarize_session); --tools all lists every call (ls, log, diff, merge,
    find, dream_*, ...), each tool costing the agent's context its
    description. Also the resources ctx://memory/{id} and ctx://view/{name},
    and the prompt "context". Writes are signed with the client's name unless
    CTX_AGENT names the agent, and carry the session CTX_SESSION names, else
    one made for this process (mcp-<12 hex digits>). Logs go to stderr.

    It keeps the indexes loaded for as long as it runs: with no hub serving
    the store, it is the hub (`ctx recall` in a shell uses it); with one, it
    asks that hub.

    \b
    Example:
      claude mcp add ctx -- ctx mcp
      claude mcp add ctx -- ctx mcp --tools default,history
      claude mcp add ctx --env CTX_BRANCH=agent/claude -- ctx mcp
    """
    from ctx.hub import Caller
    from ctx.porcelain.agents.mcp_server import build_server, stdio_session
    from ctx.porcelain.agents.serve import host_hub

    ws = state.workspace()
    base = Caller(branch=branch, session=stdio_session(ws))
    server = build_server(ws, base, tools=tools)  # a bad --tools fails here
    hub = host_hub(ws)
    try:
        server.run("stdio")
    finally:
        if hub is not None:
            hub.stop()


@click.command()
@click.option(
    "--store",
    "stores",
    multiple=True,
    metavar="[NAME=]PATH",
    help="A store to serve, under the name given or its folder's name "
    "(can be repeated; default: as `ctx --store PATH`).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on (loopback by default).",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="The port (0: any free one, printed).",
)
@click.option(
    "--sync",
    metavar="REMOTE",
    help="Be a replica of REMOTE: fetch and merge its branches, and push "
    "those written here, every --every seconds (the first store's).",
)
@click.option(
    "--every",
    metavar="SECONDS",
    type=float,
    help="Seconds between two syncs with --sync (default: 60).",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Processes that answer requests side by side (each loads its own "
    "indexes and embedder).",
)
@branch_option
@pass_state
def serve(
    state: CtxState,
    stores: tuple[str, ...],
    host: str,
    port: int,
    sync: str | None,
    every: float | None,
    workers: int,
    branch: str | None,
) -> None:
    """Serve the store over HTTP: MCP at /mcp, a JSON API at /api

    One process that is also the user's hub: it keeps the indexes and the
    embedder loaded, and `ctx recall` in a shell uses it while it runs. The
    API's OpenAPI document is at /api/openapi.json; GET /health says it is
    up. Stop it with Ctrl-C, SIGTERM or `ctx hub stop`.

    Every request needs a key (Authorization: Bearer TOKEN), on loopback
    too: any local user can reach a loopback port. A store with no key gets
    an admin key at the first start, its token printed once; `ctx keys
    create` makes more, each held to its branches. On any other address the
    server will not start until the store has a key. Only with [serve]
    require_keys = false in the store's config.toml does a loopback server
    answer without a key, and then every local user may read, write and
    pin memories as you.

    With --store given more than once it serves each store under a name of
    its own: /s/NAME/mcp and /s/NAME/api (NAME=PATH names it, else its
    folder's name does; a project's .ctx is named after the project). Each
    store keeps its keys and key rules: a key opens its own store's URLs
    only. GET /health lists the stores.

    With --sync REMOTE it is a replica of a shared remote: every --every
    seconds it fetches REMOTE's branches, merges each into the branch of the
    same name (conflicts kept as data, as `ctx pull`), and pushes the
    branches written through it; a push another replica beat is merged and
    tried again. GET /health says how far behind it is (docs/remotes.md).
    With several stores, the first one is the replica.

    With --workers N, N processes answer requests side by side: this one
    and N - 1 it starts, each with its indexes loaded, the cores shared
    out. One process answers one recall at a time; on a machine of N cores,
    N workers answer up to N times as many. Each costs its own memory (an
    index and an embedder), and MCP over HTTP is served without sessions.
    With --sync, this process syncs, and each says in GET /health how far
    behind the store is.

    \b
    Example:
      ctx serve
      ctx serve --port 9000
      ctx serve --store ~/team/.ctx --store docs=~/notes/.ctx
      ctx serve --sync origin --every 30
      ctx serve --workers 2
      ctx serve --sync origin --workers 2
      claude mcp add --transport http ctx http://127.0.0.1:8765/mcp \\
        --header "Authorization: Bearer $TOKEN"
      curl -s localhost:8765/api/recall -H "Authorization: Bearer $TOKEN" \\
        -d '{"query": "how do we deploy?"}'
    """
    from ctx.hub import Caller, Workspace
    from ctx.porcelain.agents.serve import serve_http
    from ctx.porcelain.agents.served import name_stores, split_spec

    specs = [split_spec(spec) for spec in stores]
    if specs:
        state.explicit = specs[0][1]
    others = [Workspace.find(path, clock=now) for _, path in specs[1:]]
    named = name_stores(
        [state.workspace(), *others], [name for name, _ in specs] or [None]
    )
    signal.signal(signal.SIGTERM, _stopped)
    try:
        serve_http(
            named,
            host=host,
            port=port,
            base=Caller(branch=branch),
            ready=_echo_serving,
            sync=sync,
            every=every,
            notice=lambda line: echo(line, err=True),
            workers=workers,
        )
    except (KeyboardInterrupt, _TerminatedError):  # Ctrl-C or SIGTERM: as asked
        pass
    finally:
        for ws in others:
            ws.close()
    echo("Stopped.")


class _TerminatedError(Exception):
    """SIGTERM came: ``ctx serve`` stops as on Ctrl-C."""


def _stopped(*_: object) -> None:
    raise _TerminatedError


def _echo_serving(serving: Serving) -> None:
    """Says what ``ctx serve`` serves, where, and the keys it made."""
    several = len(serving.stores) > 1
    if several:
        echo(
            f"Serving {len(serving.stores)} stores at {serving.url} "
            f"(pid {serving.pid}):"
        )
        for one in serving.stores:
            echo(f"  {one.name}: {one.store} (MCP {one.mcp}, API {one.api})")
    else:
        echo(
            f"Serving {serving.store} at {serving.url} "
            f"(MCP {serving.mcp}, API {serving.api}; pid {serving.pid})."
        )
    if serving.stopped_hub is not None:
        echo(
            f"Notice: Stopped the hub (pid {serving.stopped_hub}) that "
            "served this store: this process serves it now.",
            err=True,
        )
    for one in serving.stores:
        if one.owner_key is not None:
            which = f" for {one.name}" if several else " for this store"
            echo(
                f"Made admin key {one.owner_key.key.label!r}{which} "
                f"(shown this once): {one.owner_key.token}"
            )
    if serving.sync is not None:
        synced = f"{serving.stores[0].name} " if several else ""
        echo(f"Syncing {synced}with {serving.sync} every {serving.every:g} s.")
    open_ = [one.name for one in serving.stores if not one.keys_required]
    if len(open_) < len(serving.stores):
        echo(
            "Every request needs a key"
            + (" of its store" if several else "")
            + " (Authorization: Bearer ...)."
            + (f" Except: {', '.join(open_)}." if open_ and several else "")
        )
    if serving.workers:
        pids = ", ".join(str(pid) for pid in serving.workers)
        echo(f"Workers answering beside this process: pids {pids}.")
    for name in open_:
        which = f"for {name} " if several else ""
        echo(
            f"No key is needed {which}([serve] require_keys = false): every local "
            "user may read and write this store through this server."
        )
    sys.stdout.flush()


COMMANDS = (mcp, serve)
