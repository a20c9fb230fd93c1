"""The HTTP API and MCP's Streamable HTTP transport, as one ASGI app.

``/mcp`` is the MCP server (:mod:`.mcp_server`); ``/api/...`` serves the
same calls as JSON (:data:`ROUTES`), ``/api/openapi.json`` describes them
(generated from the same Structs) and ``/health`` says the server is up.

Arguments come from the path, the query string (a field given twice is a
list) and a JSON object body, decoded together into the call's request
Struct: an unknown field, a wrong type or an out-of-range value is a 400,
never clamped. Errors answer ``{"error": {"type", "message", "hint"}}``
with a status by kind (:func:`status_of`), and never a traceback. A body
over :data:`MAX_BODY_BYTES` is a 413.

Keys (:mod:`ctx.hub.keys` checks them): a request that presents
``Authorization: Bearer ...`` is held to that key, on loopback too; an
unknown, revoked or malformed one is a 401. With ``keys_required``, a
request without one is a 401 as well.

Several stores (:func:`build_stores_app`): each store's app answers under
``/s/<name>/`` and checks that store's keys only, so a key of one store is a
401 at every other; ``/health`` lists the stores.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ctx.engine import (
    ConflictError,
    CtxError,
    InvalidInputError,
    NotFoundError,
    ReadOnlyStoreError,
    StoreBusyError,
    key_twice,
)
from ctx.hub import AuthError, Caller, ForbiddenError, Workspace, is_loopback
from ctx.hub import Scope as KeyScope
from ctx.hub.calls import CALLS, GRAPH, KEYS, Call, invoke
from ctx.porcelain.agents.mcp_sessions import IDLE_TIMEOUT_S, SessionBound
from ctx.porcelain.agents.replica import ReplicaHealth
from ctx.porcelain.agents.served import PREFIX, ServedStore

__all__ = [
    "MAX_BODY_BYTES",
    "ROUTES",
    "ApiError",
    "StoreApp",
    "build_app",
    "build_stores_app",
    "status_of",
]

MAX_BODY_BYTES = 1_000_000
"""The largest request body accepted (a memory is at most 256 KiB of text)."""

ROUTES: tuple[tuple[str, str, Call], ...] = (
    ("GET", "/api/memories", CALLS["ls"]),
    ("POST", "/api/memories", CALLS["remember"]),
    ("POST", "/api/memories/query", CALLS["query"]),
    ("GET", "/api/memories/{id}", CALLS["get"]),
    ("PATCH", "/api/memories/{id}", CALLS["edit"]),
    ("DELETE", "/api/memories/{id}", CALLS["forget"]),
    ("GET", "/api/memories/{id}/blame", CALLS["blame"]),
    ("GET", "/api/memories/{id}/trace", CALLS["trace"]),
    ("GET", "/api/memories/{id}/related", CALLS["related"]),
    ("GET", "/api/memories/{id}/expand", CALLS["expand"]),
    ("POST", "/api/memories/{id}/resolve", CALLS["resolve"]),
    ("POST", "/api/prime", CALLS["prime"]),
    ("POST", "/api/recall", CALLS["recall"]),
    ("POST", "/api/feedback", CALLS["feedback"]),
    ("POST", "/api/search", CALLS["search"]),
    ("POST", "/api/code/find", CALLS["find"]),
    ("GET", "/api/code/symbols", CALLS["symbols"]),
    ("POST", "/api/links", CALLS["link"]),
    ("DELETE", "/api/links", CALLS["unlink"]),
    ("POST", "/api/supersede", CALLS["supersede"]),
    ("POST", "/api/summarize", CALLS["summarize"]),
    ("POST", "/api/sessions/summary", CALLS["summarize_session"]),
    ("GET", "/api/compose", CALLS["compose"]),
    ("GET", "/api/log", CALLS["log"]),
    ("GET", "/api/diff", CALLS["diff"]),
    ("GET", "/api/branches", CALLS["branches"]),
    ("POST", "/api/branches", CALLS["branch"]),
    ("POST", "/api/merge", CALLS["merge"]),
    ("GET", "/api/status", CALLS["status"]),
    ("GET", "/api/graph/ego", GRAPH),
    ("GET", "/api/keys", KEYS["keys"]),
    ("POST", "/api/keys", KEYS["key_create"]),
    ("DELETE", "/api/keys/{id}", KEYS["key_revoke"]),
    ("POST", "/api/dream/run", CALLS["dream_run"]),
    ("GET", "/api/dream/status", CALLS["dream_status"]),
    ("GET", "/api/dream/proposals", CALLS["dream_review"]),
    ("POST", "/api/dream/accept", CALLS["dream_accept"]),
    ("POST", "/api/dream/reject", CALLS["dream_reject"]),
    ("POST", "/api/dream/merge", CALLS["dream_merge"]),
)
"""Each API route: method, path, and the call it makes."""


class ApiError(msgspec.Struct, frozen=True, kw_only=True):
    """What went wrong, as the command line says it."""

    type: str
    message: str
    hint: str | None = None


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True):
    """The body of every error response."""

    error: ApiError


class Health(msgspec.Struct, frozen=True, kw_only=True):
    """``GET /health``; ``replica`` says how far behind a replica is, else None.

    ``store`` (and ``replica``) are the first store's; ``stores`` lists every
    store the server serves (a store's own ``/s/<name>/health`` lists none).
    """

    status: str
    store: str
    pid: int
    replica: ReplicaHealth | None = None
    stores: tuple[ServedStore, ...] = ()


def health_status(replica: ReplicaHealth | None) -> str:
    """Returns ``/health``'s status: ``ok``, or ``sync failing``.

    ``sync failing`` while a replica's last round failed: a plain health
    check need not read ``replica``.
    """
    return "sync failing" if replica is not None and replica.error else "ok"


_JSON = msgspec.json.Encoder(order="deterministic")

KeyCheck = Callable[[str | None], KeyScope | None]
"""Checks a request's ``Authorization`` header; returns its key's scope
(None: no key, the store's owner) or raises a CtxError with exit code 2."""


def status_of(exc: CtxError) -> int:
    """Returns the HTTP status of an error."""
    if isinstance(exc, InvalidInputError):
        return 400
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ConflictError):
        return 409
    if isinstance(exc, ReadOnlyStoreError | ForbiddenError):
        return 403
    if isinstance(exc, StoreBusyError):
        return 503
    if isinstance(exc, AuthError):
        return 401
    return 500


def _json(value: Any, status: int = 200) -> Response:
    return Response(_JSON.encode(value), status, media_type="application/json")


def error_response(exc: CtxError) -> Response:
    """Returns the response for ``exc``."""
    body = ErrorBody(
        error=ApiError(type=type(exc).__name__, message=exc.message, hint=exc.hint)
    )
    status = status_of(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    response = _json(body, status)
    if headers:
        response.headers.update(headers)
    return response


class BodyTooLargeError(InvalidInputError):
    """The body is over :data:`MAX_BODY_BYTES`."""


async def _body(request: Request) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise BodyTooLargeError(f"The body is larger than {MAX_BODY_BYTES:,} bytes.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise BodyTooLargeError(
                f"The body is larger than {MAX_BODY_BYTES:,} bytes."
            )
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise InvalidInputError(f"The body is not JSON ({exc}).") from None
    except UnicodeDecodeError:
        raise InvalidInputError("The body is not JSON (it is not UTF-8).") from None
    except RecursionError:  # msgspec recurses once per level of nesting
        raise InvalidInputError(
            "The body is not JSON ctx reads (nested too deeply)."
        ) from None
    if not isinstance(body, dict):
        raise InvalidInputError("The body must be a JSON object.")
    twice = key_twice(raw)
    if twice is not None:  # decoded, the last would win without a word
        raise InvalidInputError(f"The field {twice!r} is given twice.")
    return body


def _arguments(request: Request, call: Call, body: dict[str, Any]) -> dict[str, Any]:
    fields = {f.encode_name: f for f in msgspec.structs.fields(call.request)}
    args: dict[str, Any] = {}
    for name in request.query_params:
        values = request.query_params.getlist(name)
        field = fields.get(name)
        many = field is not None and "tuple" in str(field.type)
        if not many and len(values) > 1:
            raise InvalidInputError(f"The field {name!r} is given twice.")
        args[name] = values if many else values[0]
    # A field given in two places is refused as one given twice: whichever
    # won, the request could be read otherwise than it was meant.
    for place, given in (("body", body), ("path", request.path_params)):
        for name, value in given.items():
            if name in args:
                raise InvalidInputError(
                    f"The field {name!r} is given in the {place} and before it."
                )
            args[name] = value
    return args


def _endpoint(ws: Workspace, call: Call, base: Caller) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        try:
            body = await _body(request)
            caller = Caller(
                agent=base.agent,
                session=request.headers.get("ctx-session") or base.session,
                scope=request.scope[_KEY],
                branch=base.branch,
            )
            arguments = _arguments(request, call, body)
            value = await anyio.to_thread.run_sync(invoke, ws, caller, call, arguments)
        except BodyTooLargeError as exc:
            response = error_response(exc)
            response.status_code = 413
            return response
        except CtxError as exc:
            return error_response(exc)
        return _json(value)

    return endpoint


_KEY = "ctx.key"  # the ASGI scope's entry for the key GuardMiddleware checked


def _host_of(value: str) -> str:
    """Returns the host of a ``Host`` header or an origin, without its port."""
    value = value.split("://", 1)[-1].split("/", 1)[0].lower()
    if value.startswith("["):
        return value[: value.find("]") + 1]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class GuardMiddleware:
    """Refuses what a web page could send, then holds a request to its key.

    A page in the user's browser can make requests to a loopback server (a
    form's POST needs no CORS preflight), and a DNS-rebinding page can make
    them under its own host name. So a server bound to loopback answers only
    ``Host`` headers that name loopback (else 421), and any server refuses a
    request whose ``Origin`` is not a loopback origin (403): agents and curl
    send none. Then the key (see the module docstring), unless ``check``
    is None: the app it guards checks each store's keys itself.
    """

    def __init__(self, app: ASGIApp, check: KeyCheck | None, *, loopback: bool) -> None:
        self.app = app
        self.check = check
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        pairs = [
            (name.decode("latin-1").lower(), value.decode("latin-1"))
            for name, value in scope.get("headers", ())
        ]
        headers = dict(pairs)
        names = [name for name, _ in pairs]
        host, origin = headers.get("host"), headers.get("origin")
        refused = None
        twice = [n for n in _SINGLE_HEADERS if names.count(n) > 1]
        if twice:
            # Whichever copy a server took, a proxy that adds its own would
            # choose who calls: the last key given wrote as the owner.
            refused = (400, f"The {twice[0].title()} header is given twice.")
        elif self.loopback and host is not None and not is_loopback(_host_of(host)):
            refused = (421, f"This server answers loopback names, not {host!r}.")
        elif origin is not None and not is_loopback(_host_of(origin)):
            refused = (403, "Requests from web pages are refused.")
        if refused is not None:
            body = ErrorBody(error=ApiError(type="RefusedError", message=refused[1]))
            await _json(body, refused[0])(scope, receive, send)
            return
        if self.check is not None and scope["path"] != "/health":
            try:
                scope[_KEY] = self.check(headers.get("authorization"))
            except CtxError as exc:
                await error_response(exc)(scope, receive, send)
                return
        await self.app(scope, receive, send)


_SINGLE_HEADERS = ("authorization", "host", "origin")
"""The headers a request may carry once: who calls, and from where."""


def build_app(
    ws: Workspace,
    check: KeyCheck,
    *,
    base: Caller | None = None,
    host: str = "127.0.0.1",
    replica: Callable[[], ReplicaHealth] | None = None,
) -> ASGIApp:
    """Returns the ASGI app: ``/mcp``, ``/api/...``, ``/health``.

    Args:
        ws: The workspace served.
        check: Checks each request's key (see :data:`KeyCheck`).
        base: Who calls when a request names nobody.
        host: The address served (MCP's DNS-rebinding protection follows it).
        replica: Says how far behind its remote a replica is, for ``/health``.
    """
    return _store_app(ws, check, base=base, host=host, replica=replica)[0]


def _store_app(
    ws: Workspace,
    check: KeyCheck,
    *,
    base: Caller | None,
    host: str,
    replica: Callable[[], ReplicaHealth] | None,
    stateless: bool = False,
) -> tuple[ASGIApp, Starlette]:
    """Returns :func:`build_app`'s app, and the app whose lifespan it runs."""
    from ctx.porcelain.agents.mcp_server import build_server, caller_of
    from ctx.porcelain.agents.openapi import openapi

    origin = base or Caller()

    def mcp_caller(context: Any) -> Caller:
        # The key GuardMiddleware checked rides in the request's scope; a
        # call with no request behind it has no key to be held to, and is
        # refused rather than run as the store's owner.
        request = None
        with contextlib.suppress(AttributeError, RuntimeError, ValueError):
            request = context.request_context.request
        scope = getattr(request, "scope", None)
        if not isinstance(scope, dict) or _KEY not in scope:
            raise ForbiddenError(
                "This call came with no HTTP request to check its key against.",
                hint="Call it over /mcp, as tools are called.",
            )
        return caller_of(context, Caller(scope=scope[_KEY], branch=origin.branch))

    server = build_server(ws, origin, caller=mcp_caller)
    for method, path, call in ROUTES:
        server.custom_route(path, methods=[method])(_endpoint(ws, call, origin))
    described = openapi(ROUTES, error=ErrorBody, health=Health)
    spec = _JSON.encode(described)

    async def openapi_json(request: Request) -> Response:
        # Under `ctx serve --store NAME=PATH` twice, each store answers under
        # /s/NAME: the paths are relative to that server URL.
        root = request.scope.get(_PREFIX_KEY)
        if root:
            return Response(
                _JSON.encode({**described, "servers": [{"url": root}]}),
                media_type="application/json",
            )
        return Response(spec, media_type="application/json")

    async def health(request: Request) -> Response:
        lag = None if replica is None else await anyio.to_thread.run_sync(replica)
        return _json(
            Health(
                status=health_status(lag),
                store=str(ws.path),
                pid=os.getpid(),
                replica=lag,
            )
        )

    server.custom_route("/api/openapi.json", methods=["GET"])(openapi_json)
    server.custom_route("/health", methods=["GET"])(health)

    app = server.streamable_http_app(
        host=host,
        max_request_body_size=MAX_BODY_BYTES,
        stateless_http=stateless,
        json_response=True,
        session_idle_timeout=IDLE_TIMEOUT_S,
        max_sessions=None,  # bounded per caller instead: nobody is locked out
    )
    # A path or method no route takes answers in the API's error shape, as
    # every other error does, not Starlette's plain text.
    app.exception_handlers[404] = _no_route
    app.exception_handlers[405] = _no_route
    bounded = SessionBound(app, _session_owner)
    return GuardMiddleware(bounded, check, loopback=is_loopback(host)), app


async def _no_route(request: Request, exc: Exception) -> Response:
    """Answers a request no route takes: 404, or 405 for a method."""
    status = getattr(exc, "status_code", 404)
    if status == 405:
        error: CtxError = InvalidInputError(
            f"{request.url.path} does not take {request.method}.",
            hint="GET /api/openapi.json lists the routes and their methods.",
        )
    else:
        error = NotFoundError(
            f"No route {request.url.path} here.",
            hint="GET /api/openapi.json lists the routes.",
        )
    response = error_response(error)
    response.status_code = status
    return response


@dataclass(frozen=True)
class StoreApp:
    """A store :func:`build_stores_app` serves, and how.

    Attributes:
        name: Its name in the URLs (``/s/<name>/``).
        ws: Its workspace.
        check: Checks a request's key against its keys.
        replica: Says how far behind its remote it is, if it is a replica.
    """

    name: str
    ws: Workspace
    check: KeyCheck
    replica: Callable[[], ReplicaHealth] | None = None


_PREFIX_KEY = "ctx.store_prefix"
"""Where a request's scope keeps the ``/s/NAME`` its path was found under."""


def build_stores_app(
    stores: Sequence[StoreApp],
    *,
    base: Caller | None = None,
    host: str = "127.0.0.1",
    stateless: bool = False,
) -> ASGIApp:
    """Returns the ASGI app of one or more stores: each under ``/s/<name>/``.

    Each store's app (:func:`build_app`) answers under its prefix, the
    prefix taken off the path: ``/s/<name>/mcp``, ``/s/<name>/api/...``,
    ``/s/<name>/health``. A single store also answers at ``/mcp`` and
    ``/api/...``, as it always has; with several, those paths are a 404 that
    says where the stores are. ``GET /health`` lists every store.

    Args:
        stores: The stores, the first one first.
        base: Who calls when a request names nobody.
        host: The address served (MCP's DNS-rebinding protection follows it).
        stateless: Serve MCP without sessions, every request on its own: a
            session lives in one process, and ``ctx serve --workers`` hands
            each connection to whichever process takes it.
    """
    apps = {
        s.name: _store_app(
            s.ws,
            s.check,
            base=base,
            host=host,
            replica=s.replica,
            stateless=stateless,
        )
        for s in stores
    }
    first = stores[0]
    listed = tuple(ServedStore.of(s.name, s.ws.path) for s in stores)

    async def health() -> Response:
        lag = None
        if first.replica is not None:
            lag = await anyio.to_thread.run_sync(first.replica)
        return _json(
            Health(
                status=health_status(lag),
                store=str(first.ws.path),
                pid=os.getpid(),
                replica=lag,
                stores=listed,
            )
        )

    router = _StoreRouter(
        {name: app for name, (app, _) in apps.items()},
        [lifespan for _, lifespan in apps.values()],
        health,
        alone=apps[first.name][0] if len(stores) == 1 else None,
    )
    return GuardMiddleware(router, None, loopback=is_loopback(host))


class _StoreRouter:
    """Hands each request to its store's app (:func:`build_stores_app`)."""

    def __init__(
        self,
        apps: Mapping[str, ASGIApp],
        lifespans: Sequence[Starlette],
        health: Callable[[], Awaitable[Response]],
        *,
        alone: ASGIApp | None,
    ) -> None:
        self.apps = apps
        self.lifespans = lifespans
        self.health = health
        self.alone = alone

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope["path"]
        if scope["type"] == "http" and path == "/health":
            await (await self.health())(scope, receive, send)
            return
        if path.startswith(PREFIX):
            name, _, rest = path[len(PREFIX) :].partition("/")
            app = self.apps.get(name)
            if app is None:
                missing = NotFoundError(
                    f"No store named {name!r} is served here.",
                    hint="GET /health lists the stores served.",
                )
                await error_response(missing)(scope, receive, send)
                return
            inner = "/" + rest
            scope = {
                **scope,
                "path": inner,
                "raw_path": inner.encode(),
                _PREFIX_KEY: f"{PREFIX}{name}",
            }
            await app(scope, receive, send)
        elif self.alone is not None:
            await self.alone(scope, receive, send)
        else:
            several = NotFoundError(
                f"This server serves {len(self.apps)} stores, each under "
                f"{PREFIX}NAME/ ({PREFIX}NAME/mcp, {PREFIX}NAME/api).",
                hint="GET /health lists the stores served.",
            )
            await error_response(several)(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Runs every store's app's lifespan (MCP's session managers) as one."""
        await receive()  # lifespan.startup
        async with contextlib.AsyncExitStack() as stack:
            try:
                for app in self.lifespans:
                    await stack.enter_async_context(app.router.lifespan_context(app))
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})


def _session_owner(scope: Scope) -> str:
    """Whose share of MCP sessions a request counts in: its key, or address."""
    key = scope.get(_KEY)
    if key is not None:
        return f"key:{key.id}"
    client = scope.get("client")
    return f"address:{client[0] if client else ''}"
