"""``ctx hook`` through the running hub: the host's call relayed, its answer printed.

A host runs ``ctx hook`` at every prompt and waits for it; importing what
answers a hook costs several times what starting Python does. With the
user's hub running, :func:`relayed` hands the call to it instead (a
``hook`` request, :class:`~ctx.hub.server.wire.HookAsk`): the host's bytes,
``--store`` and ``--agent``, the working folder, and the environment the
hook reads, ``CTX_DIR`` and ``--store`` made absolute here. The hub answers
it as this process would have (:mod:`ctx.porcelain.hooks.relayed`) and sends back
what to print.

Anything else, and the process answers itself, as before: ``CTX_NO_HUB``
set, no hub (no private folder, no socket, nothing listening), a hub run by
another user, one too old to know the request, one that refuses it (its
environment differs from the hook's), dies, says anything but the answer,
or none in time (:data:`WAIT_S`).

Tiny on purpose: only modules of the interpreter written in C beside
``os`` and ``sys`` (``_socket``, ``_json``, ``binascii``); ``json``,
``socket`` and msgspec alone would double what starting Python costs. The
hub, who reads the request with the protocol's types, and a test that
decodes what this module sends with them, keep the two in step. The hub's
folder is found and checked as :mod:`ctx.hub.server.private` finds it, and
its reply believed as :mod:`ctx.hub.server.client` believes one: a private
folder, a server run by this user, a reply of the request's type.
"""

from __future__ import annotations

import _json
import _socket
import os
import sys
from binascii import b2a_base64

__all__ = ["HOOK_ENVIRON", "PROCESS", "WAIT_S", "hook_request", "relayed"]

WAIT_S = 60.0
"""Seconds to wait for the hub's answer once it took the call up (the host's
own limit). The hub says at once that it did, within
:data:`_CONNECT_TIMEOUT_S`, or it is hung and the process answers; then it
keeps the hook's deadline (``[hooks] timeout``, 10 s by default) and
answers with its failure line past it, as the process would."""

HOOK_ENVIRON = (
    "CTX_DIR",
    "CTX_BRANCH",
    "CTX_AGENT",
    "CTX_SESSION",
    "GEMINI_PROJECT_DIR",
)
"""Every variable the hook reads from the environment it is given
(:func:`ctx.porcelain.hooks.run_hook`'s ``environ``: the store, who works where, the
host), sent as they are here; the hub's own values of them do not count."""

PROCESS = (
    "HOME",
    "LOGNAME",
    "TEMP",
    "TMP",
    "TMPDIR",
    "TZ",
    "USER",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "XDG_STATE_HOME",
)
"""The variables, beside every other ``CTX_*`` one, that the hook reads from
its process (the time zone, the user's folders and name): the hub answers
only where its own are the same."""

_CONNECT_TIMEOUT_S = 2.0
_POLL_S = 1.0


def relayed(
    event: str, data: bytes, *, store: str | None, agent: str | None
) -> str | None:
    """Returns the running hub's answer to the hook, or None to answer here.

    Args:
        event: The event, as ``ctx hook`` was given it.
        data: What the host wrote on stdin.
        store: ``--store``, if given.
        agent: ``--agent``, if given.
    """
    if os.environ.get("CTX_NO_HUB"):
        return None
    path = _socket_path()
    if path is None:
        return None
    try:
        request = hook_request(event, data, store=store, agent=agent)
    except OSError:  # no working folder (deleted): answered here, as before
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    chunks: list[bytes] = []
    try:
        conn.settimeout(_CONNECT_TIMEOUT_S)
        conn.connect(path)
        if not _same_user(conn) or _stopped(conn):
            return None  # before the call is sent
        conn.sendall(request)
        conn.shutdown(_socket.SHUT_WR)
        chunks.append(conn.recv(65536))  # taken up at once, or hung
        if not _waited(conn, chunks):
            return None  # stopped since, or hung: answered here
    except OSError:
        return None  # no hub (a stale socket), a hung one, or one that died
    finally:
        conn.close()
    return _answer(b"".join(chunks))


def _waited(conn: _socket.socket, chunks: list[bytes]) -> bool:
    """Reads the hub's answer into ``chunks``; False if it stopped or hung.

    Waited for :data:`WAIT_S` at most, and looked at every second: a hub
    stopped (Ctrl-Z, SIGSTOP) after it took the call up would keep the
    hook past the host's own limit, to be killed with nothing said.
    """
    conn.settimeout(_POLL_S)
    waited = 0.0
    while True:
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            waited += _POLL_S
            if waited >= WAIT_S or _stopped(conn):
                return False
            continue
        if not chunk:
            return True
        chunks.append(chunk)


def hook_request(
    event: str, data: bytes, *, store: str | None, agent: str | None
) -> bytes:
    """Returns the ``hook`` request for the call, as the hub reads it.

    Raises:
        OSError: The working folder is gone.
    """
    quoted = _json.encode_basestring_ascii
    cwd = os.getcwd()
    environ = {n: os.environ.get(n) for n in HOOK_ENVIRON}
    if environ["CTX_DIR"]:
        environ["CTX_DIR"] = _absolute(environ["CTX_DIR"], cwd)
    process: dict[str, str | None] = {n: os.environ.get(n) for n in PROCESS}
    for name, value in os.environ.items():
        if name.startswith("CTX_") and name not in HOOK_ENVIRON:
            process[name] = value

    def text(value: str | None) -> str:
        return "null" if value is None else quoted(value)

    def mapping(values: dict[str, str | None]) -> str:
        return "{" + ",".join(f"{quoted(k)}:{text(v)}" for k, v in values.items()) + "}"

    fields = (
        ('"op"', '"hook"'),
        ('"event"', quoted(event)),
        ('"data"', '"' + b2a_base64(data, newline=False).decode("ascii") + '"'),
        ('"store_option"', text(_absolute(store, cwd) if store else store)),
        ('"agent"', text(agent)),
        ('"cwd"', quoted(cwd)),
        ('"environ"', mapping(environ)),
        ('"process"', mapping(process)),
    )
    return ("{" + ",".join(f"{k}:{v}" for k, v in fields) + "}").encode("ascii")


def _absolute(path: str, cwd: str) -> str:
    """Returns ``path`` as the hook's process reads it: ``~`` expanded, absolute."""
    return os.path.join(cwd, os.path.expanduser(path))


def _socket_path() -> str | None:
    """Returns the hub's socket in the user's private folder, or None.

    The folder :mod:`ctx.hub.server.private` uses: ``$XDG_RUNTIME_DIR/ctx``
    where that is a real folder of this user's that nobody else can enter,
    else ``/tmp/ctx-<uid>`` (where no ``TMPDIR``, ``TEMP`` or ``TMP`` names
    another temporary folder: then None, and the process finds it). None
    too when the folder is missing or not private (mode 0700, this user's).
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and _private(runtime, exact_mode=False):
        folder = os.path.join(runtime, "ctx")
    elif any(os.environ.get(n) for n in ("TMPDIR", "TEMP", "TMP")):
        return None
    else:
        folder = f"/tmp/ctx-{os.getuid()}"
    if not _private(folder, exact_mode=True):
        return None
    return os.path.join(folder, "hub.sock")


def _private(folder: str, *, exact_mode: bool) -> bool:
    """Returns whether ``folder`` is a real folder of this user, closed to others."""
    import stat

    try:
        st = os.lstat(folder)
    except OSError:
        return False
    mode = stat.S_IMODE(st.st_mode)
    private = mode == 0o700 if exact_mode else not mode & 0o077
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and private


def _same_user(conn: _socket.socket) -> bool:
    """Returns whether the process serving ``conn`` runs as this user."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:  # not Linux: the private folder is the only guard
        return True
    creds = conn.getsockopt(_socket.SOL_SOCKET, option, 12)
    uid = int.from_bytes(creds[4:8], sys.byteorder)  # pid, uid, gid
    return uid == os.geteuid()


def _stopped(conn: _socket.socket) -> bool:
    """Whether the process that serves ``conn`` is stopped (Ctrl-Z, SIGSTOP).

    The kernel accepts its connections all the same, and it answers none:
    the process answers at once instead of waiting for the hub to take the
    call up. As :mod:`ctx.hub.server.client` judges it.
    """
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return False
    pid = int.from_bytes(
        conn.getsockopt(_socket.SOL_SOCKET, option, 12)[:4], sys.byteorder
    )
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return False
    try:
        stat = os.read(fd, 4096)
    finally:
        os.close(fd)
    end = stat.rfind(b")")
    return stat[end + 2 : end + 3] in (b"T", b"t")


class _Decoding:
    """What ``_json``'s scanner reads its options from (as ``json`` gives them)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def _answer(reply: bytes) -> str | None:
    """Returns the answer in the hub's last line, or None if it is not one."""
    # The stub asks for a JSONDecoder-like object: the scanner reads only these.
    scan = _json.make_scanner(_Decoding())  # type: ignore[arg-type]
    try:
        last = reply.rstrip(b"\n").rpartition(b"\n")[2].decode("utf-8")
        value, end = scan(last, 0)
    # UnicodeDecodeError is a ValueError. A line cut off or not JSON makes
    # the bare scanner fail with SystemError (it raises json's own error
    # only as json.decoder sets it up): the process answers then, as for
    # any reply that is not one.
    except (ValueError, StopIteration, SystemError):
        return None
    if not isinstance(value, dict) or end != len(last):
        return None
    output = value.get("output")
    hook = value.get("reply") == "hook" and value.get("store") == ""
    return output if hook and isinstance(output, str) else None
