"""Bounds on MCP's Streamable HTTP sessions, per key or per address.

A session costs the server a task and its streams (about 36 KB) until the
client deletes it or it sits idle for :data:`IDLE_TIMEOUT_S`. A client that
opens sessions and abandons them would, with one cap for the whole server,
lock every other client out until they expire. So the cap is per caller:
each key (or, where a loopback server answers without keys, each client
address) keeps at most :data:`SESSIONS_PER_CALLER` sessions, and opening
one more closes that caller's least recently used one, exactly as a client
closes its own (an HTTP ``DELETE``). A flood costs only the flooder its
older sessions; nobody else is ever refused.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["IDLE_TIMEOUT_S", "SESSIONS_PER_CALLER", "SessionBound"]

SESSIONS_PER_CALLER = 32
"""The most MCP sessions one key (or one address, without keys) keeps open."""

IDLE_TIMEOUT_S = 300.0
"""Seconds a session may go without a request before the server closes it
(clients open a new one when theirs answers 404, as the protocol says)."""

_SESSION_HEADER = b"mcp-session-id"


class SessionBound:
    """Closes a caller's least recently used session past its share.

    Args:
        app: The app that serves ``/mcp`` (the SDK's session manager).
        caller_of: Returns who a request's caller is (a key id, an address).
        path: The MCP endpoint.
        per_caller: The sessions each caller may keep open.
    """

    def __init__(
        self,
        app: ASGIApp,
        caller_of: Callable[[Scope], str],
        *,
        path: str = "/mcp",
        per_caller: int = SESSIONS_PER_CALLER,
    ) -> None:
        self.app = app
        self.caller_of = caller_of
        self.path = path
        self.per_caller = per_caller
        self._open: dict[str, OrderedDict[str, None]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serves the request, noting the session it opens or uses."""
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        who = self.caller_of(scope)
        given = _header(scope, _SESSION_HEADER)
        if given is not None:
            mine = self._open.get(who)
            if mine is not None and given in mine:
                mine.move_to_end(given)
                if scope["method"] == "DELETE":
                    del mine[given]
                    if not mine:
                        del self._open[who]
            await self.app(scope, receive, send)
            return
        opened: list[str] = []

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for name, value in message.get("headers", ()):
                    if name.lower() == _SESSION_HEADER:
                        opened.append(value.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, noting)
        if not opened:
            return  # a call without a session (the stateless protocol)
        mine = self._open.setdefault(who, OrderedDict())
        for session in opened:
            mine[session] = None
        while len(mine) > self.per_caller:
            oldest, _ = mine.popitem(last=False)
            await self._close(scope, oldest)

    async def _close(self, scope: Scope, session: str) -> None:
        """Deletes ``session`` as its client would (gone already: a 404)."""
        headers = [
            (name, value)
            for name, value in scope.get("headers", ())
            if name.lower() not in (_SESSION_HEADER, b"content-length")
        ]
        closing: Scope = {
            **scope,
            "method": "DELETE",
            "headers": [*headers, (_SESSION_HEADER, session.encode("latin-1"))],
        }

        async def nothing() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def dropped(message: Message) -> None:
            pass

        await self.app(closing, nothing, dropped)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None
