"""The MCP server: every call of :data:`~.calls.CALLS` as a tool.

Built with the official SDK's :class:`~mcp.server.MCPServer`. Each tool's
input schema is its request Struct's JSON schema and its output schema is
the Struct ``--json`` prints (a list wrapped as ``{"result": [...]}``), so
the three agree by construction. Arguments are decoded by msgspec, not by
the SDK's pydantic model: an unknown or mistyped argument is refused in one
line. An error reaches the model as a tool error with the command line's
message and hint, and nothing is written.

Tools run on the SDK's worker threads; the workspace's read-write lock lets
reads use the store side by side and serializes writes. Resources:
``ctx://memory/{id}`` and ``ctx://view/{name}``; the prompt ``context``
composes the pinned and working context. What a model reads of recalled or
composed memories is quoted data with no live ``<ctx:...>`` tag, as the
hooks give it (:func:`~ctx.hub.calls.defuse`). Importing this
module imports the SDK (over a second): only ``ctx mcp`` and ``ctx serve``
do.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import anyio.to_thread
import msgspec
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations

from ctx.engine import CtxError
from ctx.hub import Caller, RecallResult, Workspace
from ctx.hub.calls import CALLS, Call, invoke, structured, tool_names
from ctx.porcelain.agents.schemas import input_schema, output_schema

__all__ = ["INSTRUCTIONS", "build_server", "caller_of", "stdio_session"]

INSTRUCTIONS = (
    "ctx is your versioned memory. Call `recall` with the question before "
    "you answer or act, and `remember` what you learn that is worth keeping "
    "(decisions, facts, patterns), with a reason. When a memory is wrong or "
    "outdated, `edit`, `supersede` or `forget` it rather than adding another. "
    "Every write is a commit: history keeps who wrote what and why."
)

_JSON = msgspec.json.Encoder(order="deterministic")


class _RawArguments(FuncMetadata):
    """Hands a tool its arguments as sent: msgspec checks them instead."""

    def validate_arguments(
        self, arguments_to_validate: dict[str, Any]
    ) -> dict[str, Any]:
        return {"arguments": dict(arguments_to_validate)}


def caller_of(context: Context[Any, Any] | None, base: Caller) -> Caller:
    """Returns who makes a call: ``base``, named after the MCP client.

    The agent is the client's name (``clientInfo.name``) unless ``base``
    names one; the session is the transport's session id (HTTP's
    ``Mcp-Session-Id``), else a ``Ctx-Session`` header, else ``base``'s
    (for stdio: :func:`stdio_session`).
    """
    if context is None:
        return base
    agent = base.agent
    session = base.session
    with contextlib.suppress(AttributeError, RuntimeError, ValueError):
        params = context.session.client_params
        if agent is None and params is not None and params.client_info.name:
            agent = params.client_info.name
    with contextlib.suppress(AttributeError, RuntimeError, ValueError):
        headers = context.headers or {}
        # Streamable HTTP: the transport's session where the protocol version
        # has one, else the Ctx-Session header a client may send (the
        # 2026-07-28 protocol is stateless: no Mcp-Session-Id).
        session = headers.get("mcp-session-id") or headers.get("ctx-session") or session
    return Caller(agent=agent, session=session, scope=base.scope, branch=base.branch)


def stdio_session(ws: Workspace) -> str:
    """Returns the session of a ``ctx mcp`` process's writes.

    stdio carries no session id: it is ``CTX_SESSION`` when set, else one
    made for the process (``mcp-`` and 12 random hex digits), so that each
    run of ``ctx mcp`` is one session.
    """
    import secrets

    return ws.session or f"mcp-{secrets.token_hex(6)}"


def _text(value: Any) -> str:
    """Returns what a model reads of an answer: a prompt block, or JSON."""
    if isinstance(value, RecallResult):
        from ctx.hub import format_prompt
        from ctx.hub.calls import defuse

        # Recalled text never carries a live <ctx:...> tag: a model that
        # repeats it must not hand the Stop hook a command a memory planted.
        return defuse(
            format_prompt(
                value, overlay=any(h.branch != value.branch for h in value.hits)
            )
        )
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return text
    return _JSON.encode(value).decode("utf-8")


def _tool(
    ws: Workspace, call: Call, caller: Callable[[Context[Any, Any] | None], Caller]
) -> Callable[..., CallToolResult]:
    def run(arguments: dict[str, Any], context: Context[Any, Any]) -> CallToolResult:
        try:
            value = invoke(ws, caller(context), call, arguments)
        except CtxError as exc:
            hint = f" Hint: {exc.hint}" if exc.hint else ""
            raise ToolError(f"{exc.message}{hint}") from None
        return CallToolResult(
            content=[TextContent(type="text", text=_text(value))],
            structured_content=structured(value),
        )

    run.__name__ = call.name
    run.__doc__ = call.description
    return run


def build_server(
    ws: Workspace,
    base: Caller | None = None,
    *,
    caller: Callable[[Context[Any, Any] | None], Caller] | None = None,
    tools: str | None = None,
) -> MCPServer:
    """Returns the MCP server of the workspace's store.

    Args:
        ws: The workspace; its store is opened on the first call.
        base: Who calls when the client says nothing (default: the owner).
        caller: Returns the caller of a request (default: ``base`` named
            after the client); the HTTP app passes one that reads the key.
        tools: The tools it lists, as :func:`~.calls.tool_names` reads them
            (default: the store's ``[mcp] tools``, else the default set).

    Raises:
        InvalidInputError: ``tools`` names an unknown tool or set.
    """
    origin = base or Caller()
    find = caller or (lambda context: caller_of(context, origin))
    listed = tool_names(ws.config().mcp.tools if tools is None else tools)
    server: MCPServer = MCPServer("ctx", instructions=INSTRUCTIONS, version=_version())
    if not any(name.startswith("OTEL_") for name in os.environ):
        # The SDK wraps every message in an OpenTelemetry span, a no-op with
        # no exporter but 0.4-0.5 ms of each call; its documented opt-out
        # is to drop it from the chain. Kept where OpenTelemetry is set up
        # (its variables set: `opentelemetry-instrument ctx mcp`).
        server.middleware[:] = [
            m
            for m in server.middleware
            if type(m).__name__ != "OpenTelemetryMiddleware"
        ]
    for call in (CALLS[name] for name in listed):
        server.add_tool(
            _tool(ws, call, find),
            name=call.name,
            description=call.description,
            annotations=ToolAnnotations(
                read_only_hint=not call.writes,
                destructive_hint=call.name in ("forget", "merge", "resolve"),
                idempotent_hint=not call.writes,
                open_world_hint=False,
            ),
        )
        tool = server._tool_manager.get_tool(call.name)
        assert tool is not None
        tool.parameters = input_schema(call.request)
        tool.fn_metadata = _RawArguments(
            arg_model=tool.fn_metadata.arg_model,
            output_schema=output_schema(call.answer),
        )
    _add_resources(server, ws, find)
    return server


def _add_resources(
    server: MCPServer,
    ws: Workspace,
    find: Callable[[Context[Any, Any] | None], Caller],
) -> None:
    """Adds the resources and the prompt, each held to its request's caller."""

    def read(name: str, arguments: dict[str, Any], context: Context[Any, Any]) -> Any:
        try:
            return invoke(ws, find(context), CALLS[name], arguments)
        except CtxError as exc:
            raise ResourceError(exc.message) from None

    @server.resource(
        "ctx://memory/{memory_id}",
        name="memory",
        description="One memory, whole, as JSON (its id as listed).",
        mime_type="application/json",
    )
    async def memory(memory_id: str, ctx: Context[Any, Any]) -> str:
        shown = await anyio.to_thread.run_sync(read, "get", {"id": memory_id}, ctx)
        return _JSON.encode(shown).decode("utf-8")

    @server.resource(
        "ctx://view/{name}",
        name="view",
        description="A saved view, rendered within its budget.",
        mime_type="text/markdown",
    )
    async def view(name: str, ctx: Context[Any, Any]) -> str:
        def render() -> str:
            from ctx.hub import calls

            request = calls.ViewRenderRequest(name=name)
            try:
                return str(calls.view_render(ws, find(ctx), request).text)
            except CtxError as exc:
                raise ResourceError(exc.message) from None

        return await anyio.to_thread.run_sync(render)

    @server.prompt(
        name="context",
        description="The pinned and working context to start a task with.",
    )
    async def context(ctx: Context[Any, Any], budget: str = "2000") -> str:
        # A prompt's arguments are strings: checked by the call's own schema.
        def compose() -> Any:
            try:
                return invoke(ws, find(ctx), CALLS["compose"], {"budget": budget})
            except CtxError as exc:
                # An MCPError reaches the client as it is; any other error
                # became "Error rendering prompt context" and a traceback.
                raise MCPError(INVALID_PARAMS, exc.message) from None

        composed = await anyio.to_thread.run_sync(compose)
        return str(composed.text)  # defused by the compose call


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ctx-memory")
    except PackageNotFoundError:
        return "0"
