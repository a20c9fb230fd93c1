"""How agents reach the store: ctx mcp (and ctx serve)."""

from __future__ import annotations

import click

from ctx.porcelain._options import CtxState, branch_option, pass_state

__all__ = ["COMMANDS"]


@click.command()
@branch_option
@pass_state
def mcp(state: CtxState, branch: str | None) -> None:
    """Serve the store to an agent over MCP (stdio)

    An agent's MCP client starts it and talks to it over stdin and stdout:
    tools for every call (remember, recall, search, ls, log, diff, merge,
    ...), the resources ctx://memory/{id} and ctx://view/{name}, and the
    prompt "context". Writes are signed with the client's name unless
    CTX_AGENT names the agent. Logs go to stderr.

    \b
    Example:
      claude mcp add ctx -- ctx mcp
      claude mcp add ctx --env CTX_BRANCH=agent/claude -- ctx mcp
    """
    from ctx.hub.agents.access import Caller
    from ctx.hub.agents.mcp_server import build_server

    server = build_server(state.workspace(), Caller(branch=branch))
    server.run("stdio")


COMMANDS = (mcp,)
