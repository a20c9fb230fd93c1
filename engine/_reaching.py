"""Reaching a remote: how the caller lets ctx reach it, and what goes wrong.

:class:`Access` is what the caller knows of its environment (the engine
reads none); :func:`reach` runs one call with dulwich's client for an
address, asks once for credentials when an http(s) remote answers 401, and
turns what dulwich and the network raise into one
:class:`~ctx.engine.errors.RemoteError` that says what happened and that
nothing was changed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from dulwich.client import GitClient
from dulwich.config import ConfigDict
from dulwich.errors import GitProtocolError, HangupException, NotGitRepository

from ctx.engine.errors import RemoteError
from ctx.engine.remotes import check_url, display_url, transport_location

if TYPE_CHECKING:
    from dulwich.client import AbstractHttpGitClient, HTTPResponse

__all__ = ["NO_ACCESS", "Access", "Credentials", "reach"]

Credentials = Callable[[str], "tuple[str, str] | None"]
"""Returns a user name and password for an address that asked for them."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Access:
    """How to reach remotes: what the caller knows of its environment.

    The engine reads no environment; the command line fills this in from
    it (``ctx.hub.remote_access``).

    Attributes:
        credentials: Asked once when an http(s) remote answers 401.
        timeout: Seconds an http(s) remote may stay silent.
        ssh_command: The ssh program to run (``GIT_SSH_COMMAND``), if not ``ssh``.
    """

    credentials: Credentials | None = None
    timeout: float = 30.0
    ssh_command: str | None = None


NO_ACCESS = Access()

T = TypeVar("T")


def _client(
    url: str,
    access: Access,
    username: str | None = None,
    password: str | None = None,
) -> tuple[GitClient, str]:
    from urllib.parse import urlparse

    from dulwich.client import get_transport_and_path

    config = ConfigDict()
    config.set((b"http",), b"timeout", str(access.timeout).encode())
    location = transport_location(url)
    parsed = urlparse(location)
    if parsed.scheme in ("http", "https"):
        client = _smart_http_client().from_parsedurl(
            parsed, config=config, username=username, password=password
        )
        return client, parsed.path
    return get_transport_and_path(
        location,
        config=config,
        username=username,
        password=password,
        ssh_command=access.ssh_command,
    )


def _not_smart(kind: str) -> str:
    """Says why an http(s) answer of content type ``kind`` was refused."""
    sent = kind.split(";")[0].strip() or "no content type"
    return (
        f"it sent {sent}, not git's own content type: a web page (a login, a "
        "wrong address) or a server of git's dumb HTTP protocol (files, no "
        "git-upload-pack behind them), which ctx does not fetch from or push to"
    )


@functools.cache
def _smart_http_client() -> type[AbstractHttpGitClient]:
    """Returns dulwich's http(s) client class, made to talk to smart servers only.

    A server that answers the first request (``info/refs?service=...``)
    with anything but git's own content type is a dumb one (files served
    as they are), or not git at all (a login page a redirect led to). From
    a dumb one dulwich would read its whole ref list, and fetch every
    object and pack it names, into memory before any of ctx's bounds
    (:mod:`ctx.engine._receiving`) sees a byte: a hostile one could send
    gigabytes. Such an answer is refused before its body is read. Made on
    first use: urllib3 costs other transports a tenth of a second.
    """
    from dulwich.client import Urllib3HttpGitClient

    class SmartHttpGitClient(Urllib3HttpGitClient):
        def _http_request(
            self,
            url: str,
            headers: dict[str, str] | None = None,
            data: bytes | Iterator[bytes] | None = None,
            raise_for_status: bool = True,
        ) -> tuple[HTTPResponse, Callable[[int], bytes]]:
            resp, read = super()._http_request(url, headers, data, raise_for_status)
            kind = resp.content_type or ""
            if "/info/refs?service=" in url and not kind.startswith(
                "application/x-git-"
            ):
                resp.close()
                raise GitProtocolError(_not_smart(kind))
            return resp, read

    return SmartHttpGitClient


def reach(
    url: str,
    access: Access,
    call: Callable[[GitClient, str], T],
) -> T:
    """Runs ``call`` with a client for ``url``, asking once for credentials."""
    from dulwich.client import HTTPUnauthorized

    check_url(url)
    with _translated(url):
        try:
            return _call(_client(url, access), call)
        except HTTPUnauthorized:
            ask = access.credentials
            found = ask(display_url(url)) if ask else None
            if found is None:
                raise RemoteError(
                    f"{display_url(url)} asked for credentials.",
                    hint="Put them in the URL, CTX_GIT_USERNAME and "
                    "CTX_GIT_PASSWORD, or a git credential helper.",
                ) from None
        try:
            return _call(_client(url, access, *found), call)
        except HTTPUnauthorized:
            raise RemoteError(
                f"{display_url(url)} refused the credentials.",
                hint="Check the user name and token (or password).",
            ) from None


def _call(client: tuple[GitClient, str], call: Callable[[GitClient, str], T]) -> T:
    try:
        return call(*client)
    finally:
        client[0].close()


@contextlib.contextmanager
def _translated(url: str) -> Iterator[None]:
    """Turns what dulwich and the network raise into one RemoteError."""
    shown = display_url(url)
    try:
        yield
    except NotGitRepository:
        raise RemoteError(
            f"{shown} is not a git repository.",
            hint="Check the address; `ctx remote ls` shows it.",
        ) from None
    except HangupException as exc:
        raise RemoteError(
            f"{shown} hung up: {_reason(exc)}",
            hint="Nothing was changed; try again.",
        ) from exc
    except GitProtocolError as exc:
        cause = _network_cause(exc)
        if cause is not None:
            raise RemoteError(
                f"Cannot reach {shown}: {_reason(cause)}",
                hint="Check the address and the network; nothing was changed.",
            ) from exc
        raise RemoteError(
            f"{shown} answered in a way ctx cannot use: {_reason(exc)}",
            hint="Nothing was changed; check the address and try again.",
        ) from exc
    except _http_errors() as exc:
        raise RemoteError(
            f"Cannot reach {shown}: {_reason(exc)}",
            hint="Check the address and the network; nothing was changed.",
        ) from exc
    except OSError as exc:
        raise RemoteError(
            f"Cannot reach {shown}: {_reason(exc)}",
            hint="Check the address and the network; nothing was changed.",
        ) from exc


def _http_errors() -> tuple[type[Exception], ...]:
    """Returns urllib3's error class, once an http(s) client has loaded it.

    Only dulwich's http client uses urllib3, and importing it costs every
    other transfer a tenth of a second; an error of a module not loaded
    cannot have been raised.
    """
    loaded = sys.modules.get("urllib3.exceptions")
    return (loaded.HTTPError,) if loaded is not None else ()


def _network_cause(exc: BaseException) -> OSError | None:
    """Returns the socket error under a protocol error, if one caused it.

    dulwich wraps urllib3's errors (which wrap the socket's) in a
    GitProtocolError; the socket's own words say best what went wrong.
    """
    found: OSError | None = None
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        if isinstance(current, OSError) and current.strerror:
            found = current
        reason = getattr(current, "reason", None)
        if isinstance(reason, BaseException):
            current = reason
        else:
            current = current.__cause__ or current.__context__
    return found


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    else:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        text = text or type(exc).__name__
    text = text.rstrip(".")
    return f"{text[0].upper()}{text[1:]}." if text else "The connection failed."
