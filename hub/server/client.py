"""Asking the user's running hub instead of loading the indexes.

Imports nothing heavy: a recall answered by a hub costs this process only
the socket round trip. A user runs one hub for every store; each request
names its store. ``CTX_NO_HUB=1`` makes every command work in-process;
``CTX_HUB_AUTOSTART=0`` keeps recall from starting a hub whatever the store's
config says.

A hub is believed only when its socket is in the user's private folder
(:mod:`.private`), the process serving it runs as the same user (checked
with ``SO_PEERCRED`` before the question is sent), and its reply names the
store that was asked about and is of the type the request is answered with
(:mod:`.wire`). Anything else counts as no hub: the caller answers in its
own process.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import msgspec

from ctx.engine import CtxError
from ctx.hub.server.private import HubFolderError, hub_file, open_log, socket_path
from ctx.hub.server.wire import (
    AnyReply,
    AnyStoreAsk,
    Ask,
    Failure,
    FailureReply,
    ProgressReply,
    Reply,
    StoreAsk,
)

__all__ = [
    "HereAsk",
    "HubError",
    "answered_here",
    "ask",
    "ask_hub",
    "hub_answers",
    "hub_silence",
    "start_hub",
]

_CONNECT_TIMEOUT_S = 2.0  # a hub accepts at once; a full backlog fails at once
_TIMEOUT_S = 300.0  # a hub catching up a large import may take a while
_AT_ONCE_S = 60.0
"""Seconds a ping or stop may take. The hub's reading thread answers them at
once, touching no index, but starts only once the hub has warmed its own
store (a large one, a model to load: seconds), and the socket listens from
before that; a hub silent a minute is hung. A stopped one is not waited for
at all (:func:`_stopped`)."""
_START_STALE_S = 60.0  # an autostart that is not listening by then failed
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(AnyReply)

R = TypeVar("R", bound=Reply)


HereAsk = Callable[[AnyStoreAsk, float], Reply | None]
"""Hands a request to this process's own hub; its reply, or None past the seconds."""

_HERE: contextvars.ContextVar[HereAsk | None] = contextvars.ContextVar(
    "ctx_hub_here", default=None
)
"""Where the hub answers a relayed hook, how it answers a request of its own
(:func:`answered_here`); a thread the hook starts is given it with its context."""


@contextlib.contextmanager
def answered_here(ask_here: HereAsk) -> Iterator[None]:
    """Within: this thread's requests go to ``ask_here``, not to the hub's socket.

    The hub answers a relayed hook in a thread of its own, and the hook asks
    the hub for its recall as the hook's process would (:func:`ask`):
    through the socket it asked its own process, paying a connection, the
    request and the reply each written and read, and a worker woken by the
    socket (measured in the hub: 6.4 ms for the recall so asked, 4.7 of them
    answering it). ``ask_here`` hands the request to the same workers; the
    hook still stops waiting at its deadline.
    """
    token = _HERE.set(ask_here)
    try:
        yield
    finally:
        _HERE.reset(token)


class HubError(CtxError):
    """An error the hub raised that is not one of the engine's classes.

    It keeps the exit code it had there.
    """

    def __init__(self, message: str, *, hint: str | None, exit_code: int) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = exit_code


def _peer_creds(conn: socket.socket) -> tuple[int, int] | None:
    """Returns the pid and uid of the process that serves ``conn``, where Linux says."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid, uid


def _same_user(conn: socket.socket) -> bool:
    """Whether the process that serves ``conn`` runs as this user."""
    creds = _peer_creds(conn)
    if creds is None:  # not Linux: the private folder is the only guard
        return True
    return creds[1] == os.geteuid()  # the peer's effective uid, as ours


def _peer(conn: socket.socket) -> int | None:
    """Returns the pid of the process that serves ``conn``, where Linux says."""
    creds = _peer_creds(conn)
    return None if creds is None else creds[0]


def _stopped(pid: int | None) -> bool:
    """Whether process ``pid`` is stopped (Ctrl-Z, SIGSTOP, a debugger).

    A stopped hub accepts connections (the kernel does) and answers none: it
    is no hub until it runs again. Read from ``/proc``; elsewhere, never.
    """
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    end = stat.rfind(b")")  # the state follows "(comm) "
    return stat[end + 2 : end + 3] in (b"T", b"t")


def hub_silence() -> str | None:
    """Says why the user's hub gave no answer, where its socket is there.

    For a caller that got none (:func:`ask` returned ``None``) and tells the
    user so: ``None`` when no hub was ever there, or one listens and runs
    (it was busy or slow: the caller says how long it waited).
    """
    try:
        path = socket_path()
    except HubFolderError:
        return None
    if not path.exists():
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(_CONNECT_TIMEOUT_S)
    try:
        conn.connect(str(path))  # then closed, asking nothing
        pid = _peer(conn)
    except (ConnectionRefusedError, FileNotFoundError):
        return "the hub is not running (its socket was left behind)"
    except OSError:
        return "the hub took no call"
    finally:
        conn.close()
    return f"the hub (pid {pid}) is stopped" if _stopped(pid) else None


def _names(reply: Reply, store: str) -> bool:
    """Whether ``reply`` names the store asked about (``""``: the hub itself)."""
    if not reply.store or not store:
        return reply.store == store
    return Path(reply.store).resolve() == Path(store)


def hub_answers(path: Path) -> bool:
    """Returns whether a server listens on the socket at ``path``.

    A server too busy to accept (a full backlog, a timeout) still counts:
    it is alive, and a second one would only lose the socket to it.
    """
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(_CONNECT_TIMEOUT_S)
    try:
        probe.connect(str(path))
    except (BlockingIOError, TimeoutError):
        return True
    except OSError:
        return False  # no socket, or one that nothing listens on
    finally:
        probe.close()
    return True


def ask(
    store: Path,
    request: StoreAsk[R],
    expected: type[R],
    progress: Callable[[int, int], None] | None = None,
    *,
    timeout: float = _TIMEOUT_S,
) -> R | None:
    """Returns the hub's reply about ``store``, or ``None`` when no hub answers.

    The request is sent naming the store's resolved path. A hub that is not
    there, runs as another user, does not answer in time, answers for
    another store or with a reply of another type is no hub.

    Args:
        store: The store folder.
        request: What to ask.
        expected: The reply type ``request`` is answered with.
        progress: Called with (done, total) as the hub reports progress.
        timeout: Seconds to wait for the reply.

    Raises:
        HubError: The hub answered with an error.
        HubFolderError: The folder for the hub's socket is not private.
    """
    if os.environ.get("CTX_NO_HUB"):
        return None
    named = str(store.resolve())
    request = msgspec.structs.replace(request, store=named)
    ask_here = _HERE.get()
    if ask_here is not None:
        assert isinstance(request, AnyStoreAsk)
        return _believed(ask_here(request, timeout), expected)
    return _asked(request, named, expected, progress, timeout)


def ask_hub(
    request: Ask[R], expected: type[R], *, timeout: float = _AT_ONCE_S
) -> R | None:
    """Returns the hub's reply to a request about itself (``ping``, ``stop``).

    ``None`` when no hub answers, as for :func:`ask`. ``CTX_NO_HUB`` keeps a
    command's own calls from the hub, not the hub from being seen: under
    it, ``ctx hub status`` said a running hub did not answer, ``ctx hub
    stop`` that none ran, and ``ctx serve`` would not start beside it.

    Raises:
        HubError: The hub answered with an error.
        HubFolderError: The folder for the hub's socket is not private.
    """
    return _asked(request, "", expected, None, timeout)


def _asked(
    request: Ask[R],
    store: str,
    expected: type[R],
    progress: Callable[[int, int], None] | None,
    timeout: float,
) -> R | None:
    path = socket_path()
    if not path.exists():
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(_CONNECT_TIMEOUT_S)
    last: bytes | None = None
    try:
        conn.connect(str(path))
        if not _same_user(conn) or _stopped(_peer(conn)):
            return None  # before the question is sent
        conn.settimeout(timeout)
        conn.sendall(_ENCODER.encode(request))
        conn.shutdown(socket.SHUT_WR)
        for line in conn.makefile("rb"):
            if last is not None and progress is not None:
                _progress(last, store, progress)
            last = line
    except OSError:
        return None  # no hub (a stale socket), a busy one, or it died
    finally:
        conn.close()
    try:
        reply = _DECODER.decode(last or b"")
    except msgspec.DecodeError:
        return None
    if not _names(reply, store):
        return None
    return _believed(reply, expected)


def _believed(reply: Reply | None, expected: type[R]) -> R | None:
    """Returns ``reply`` if of the type asked for; raises the failure it says.

    Raises:
        HubError: The hub answered with an error (or the engine's own class).
    """
    if isinstance(reply, FailureReply):
        raise _error(reply.failure)
    return reply if isinstance(reply, expected) else None


def _error(failure: Failure) -> CtxError:
    """Returns the error the hub raised, of the same class where the engine's.

    A caller then catches the same errors whether a hub answered or not.
    """
    import ctx.engine

    kind = getattr(ctx.engine, failure.type, None)
    if isinstance(kind, type) and issubclass(kind, CtxError):
        error = kind(failure.message, hint=failure.hint)
        if error.exit_code == failure.exit_code:
            return error
    return HubError(failure.message, hint=failure.hint, exit_code=failure.exit_code)


def _progress(line: bytes, store: str, progress: Callable[[int, int], None]) -> None:
    with contextlib.suppress(msgspec.DecodeError):
        reply = _DECODER.decode(line)
        if isinstance(reply, ProgressReply) and _names(reply, store):
            progress(reply.done, reply.total)


def _take(lock: Path) -> bool:
    """Takes the start lock (``O_EXCL``); a lock left by a failed start expires."""
    for _ in range(2):
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            os.close(os.open(lock, flags, 0o600))
        except FileExistsError:
            try:
                age = time.time() - os.lstat(lock).st_mtime
            except FileNotFoundError:
                return False  # the hub it started listens now
            if age < _START_STALE_S:
                return False  # another recall is starting the hub
            lock.unlink(missing_ok=True)
        else:
            return True
    return False


BACKGROUND_HUB = "ctx.porcelain.background_hub"
"""The module a recall runs as the user's hub in the background.

An entry point of the doors, not of the hub: a hub answers the hooks that
``ctx hook``'s small process relays to it with the hooks' own code, which
lives with the other doors in the porcelain; the hub names the module to
start it and imports nothing of it.
"""


def start_hub(store: Path, idle_minutes: float) -> bool:
    """Starts the user's hub (``python -m`` :data:`BACKGROUND_HUB`) in the background.

    Only when no hub answers and no other recall is starting one: the first
    takes a lock (``hub.start``, removed by the hub once it listens, or taken
    over after a minute if it never does). The hub opens ``store`` first
    (the store of the recall that starts it) and serves every store after.
    It runs in its own session (a terminal's ^C does not reach it) and
    appends its output to ``hub.log`` beside its socket, which is never
    opened through a symlink.

    Returns:
        Whether a hub was started (not when ``CTX_NO_HUB`` is set,
        ``CTX_HUB_AUTOSTART`` is ``0``, a hub already answers or is being
        started, or the private folder or the log cannot be used).
    """
    if os.environ.get("CTX_NO_HUB") or os.environ.get("CTX_HUB_AUTOSTART") == "0":
        return False
    try:
        path, lock = socket_path(), hub_file(".start")
    except HubFolderError:
        return False
    if hub_answers(path) or not _take(lock):
        return False
    argv = [sys.executable, "-m", BACKGROUND_HUB, str(store), "--autostarted"]
    argv += ["--idle", f"{idle_minutes:g}"]
    try:
        log = open_log(hub_file(".log"))
    except (OSError, CtxError):
        lock.unlink(missing_ok=True)
        return False
    try:
        hub = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    except OSError:
        lock.unlink(missing_ok=True)
        return False
    finally:
        os.close(log)
    # Reaped when it exits, should this process (a lens, a server) outlive it.
    threading.Thread(target=hub.wait, name="hub-reaper", daemon=True).start()
    return True
