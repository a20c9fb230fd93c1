"""Git servers on loopback for the remote tests, started and stopped by them.

- :func:`git_daemon`: stock ``git daemon`` serving a folder over ``git://``,
  push enabled.
- :func:`http_server`: dulwich's smart-http server (``make_wsgi_chain`` over a
  ``DictBackend``) in a thread, optionally asking for a password.
- :func:`dumb_http_server`: Python's own file server over a folder: a bare
  repository there is served as git's dumb HTTP protocol serves it.
- :class:`CuttingProxy`: a TCP relay that drops the connection after a number
  of bytes, as a server killed mid-transfer would.
- :func:`openssh_server`: the distribution's OpenSSH server on loopback, one
  key let in, serving git's own ``git-upload-pack`` and ``git-receive-pack``.
- :func:`web_server`: the distribution's lighttpd running git's own
  ``git-http-backend`` as CGI, behind basic auth.

The last two need packages ``make check`` installs where it can (as root,
with apt-get); without them :func:`missing_servers` says why, and the
tests that need them skip saying so.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import socket
import socketserver
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from integration_support import GIT, git_env


def free_port() -> int:
    """Returns a loopback port nothing listens on (bound once, then freed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.2),
        ):
            return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("the server exited")
        time.sleep(0.02)
    raise RuntimeError(f"nothing listens on {port}")


@contextlib.contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    """Serves the repositories under ``base`` on ``git://127.0.0.1:PORT/``."""
    port = free_port()
    proc = subprocess.Popen(
        [
            GIT,
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={base}",
            str(base),
        ],
        env=git_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # `git daemon` runs git-daemon as a child: kill the whole group.
        start_new_session=True,
    )
    try:
        _wait_listening(port, proc)
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _basic_auth(app: Any, user: str, password: str) -> Any:
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("HTTP_AUTHORIZATION") != expected:
            start_response(
                "401 Unauthorized",
                [("WWW-Authenticate", 'Basic realm="ctx"'), ("Content-Length", "0")],
            )
            return [b""]
        return app(environ, start_response)

    return guarded


@contextlib.contextmanager
def http_server(
    repos: dict[str, Path], auth: tuple[str, str] | None = None
) -> Iterator[int]:
    """Serves bare repositories over smart http; ``repos`` maps ``/name.git``."""
    from dulwich.repo import Repo
    from dulwich.server import DictBackend
    from dulwich.web import make_wsgi_chain

    opened = {name: Repo(str(path)) for name, path in repos.items()}
    app = make_wsgi_chain(DictBackend(opened))  # type: ignore[arg-type]
    if auth is not None:
        app = _basic_auth(app, *auth)
    server: WSGIServer = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    try:
        with _in_a_thread(server) as port:
            yield port
    finally:
        for repo in opened.values():
            repo.close()


@contextlib.contextmanager
def _in_a_thread(server: socketserver.BaseServer) -> Iterator[int]:
    """Runs ``server`` (bound on loopback) in a thread; yields its port."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])  # type: ignore[index]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def dumb_http_server(folder: Path) -> Iterator[int]:
    """Serves ``folder``'s files as they are (git's dumb HTTP protocol).

    A bare repository under it is fetched from as
    ``http://127.0.0.1:PORT/NAME.git`` once ``git update-server-info`` has
    written its ``info/refs``.
    """
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Files(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Files, directory=str(folder))
    with _in_a_thread(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as port:
        yield port


class CuttingProxy:
    """Relays 127.0.0.1:port to a server; the first connection is cut.

    After ``limit`` bytes in the direction ``direction`` ("down": server to
    client, a fetch; "up": client to server, a push), both sockets are reset,
    as if the server had been killed. Later connections pass untouched.
    """

    def __init__(self, target: int, limit: int, direction: str) -> None:
        self.target = target
        self.limit = limit
        self.direction = direction
        self.cut = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._first = True
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self._sockets += [client, server]
            limit = self.limit if self._first else None
            self._first = False
            pair = (client, server)
            down = limit if self.direction == "down" else None
            up = limit if self.direction == "up" else None
            for src, dst, lim in ((server, client, down), (client, server, up)):
                threading.Thread(
                    target=self._pump, args=(src, dst, lim, pair), daemon=True
                ).start()

    def _pump(
        self,
        src: socket.socket,
        dst: socket.socket,
        limit: int | None,
        pair: Iterable[socket.socket],
    ) -> None:
        sent = 0
        try:
            while data := src.recv(4096):
                if limit is not None and sent + len(data) > limit:
                    dst.sendall(data[: limit - sent])
                    self.cut.set()
                    for s in pair:  # a reset, as from a killed process
                        s.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                        s.close()
                    return
                dst.sendall(data)
                sent += len(data)
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)
        except OSError:
            return

    def close(self) -> None:
        """Stops accepting connections and closes every relayed one."""
        with contextlib.suppress(OSError):  # wakes the thread blocked in accept
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(timeout=10)
        for s in self._sockets:
            s.close()


SSHD = Path("/usr/sbin/sshd")
LIGHTTPD = Path("/usr/sbin/lighttpd")
HTTP_BACKEND = Path("/usr/lib/git-core/git-http-backend")
SSH_KEYGEN = Path("/usr/bin/ssh-keygen")


def missing_servers() -> str | None:
    """Returns why the real ssh and web servers cannot run here, or None."""
    needed = (SSHD, SSH_KEYGEN, Path("/usr/bin/ssh"), LIGHTTPD, HTTP_BACKEND)
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        return (
            f"{', '.join(missing)} not installed (packages openssh-server, "
            "lighttpd and git: `make check` installs them as root with apt-get)"
        )
    return None


@contextlib.contextmanager
def openssh_server(folder: Path) -> Iterator[tuple[int, str]]:
    """Runs sshd on loopback; yields its port and the ``GIT_SSH_COMMAND`` to use.

    The server lets in one key, made here, for the user running the tests;
    the command names the key and the server's port-free known-hosts file,
    so nothing of the user's own ssh setup is read or written.
    """
    folder.mkdir(parents=True)
    for key in ("host", "client"):
        subprocess.run(
            [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(folder / key)],
            check=True,
        )
    (folder / "authorized_keys").write_bytes((folder / "client.pub").read_bytes())
    port = free_port()
    (folder / "sshd_config").write_text(
        f"Port {port}\n"
        "ListenAddress 127.0.0.1\n"
        f"HostKey {folder / 'host'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
        f"PidFile {folder / 'sshd.pid'}\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\n"
        "PermitRootLogin prohibit-password\n"
        "StrictModes no\n"
        "UsePAM no\n"
        f"SetEnv PATH={os.path.dirname(GIT)}:/usr/bin:/bin\n"
    )
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation
    with (folder / "sshd.log").open("wb") as log:
        proc = subprocess.Popen(
            [str(SSHD), "-D", "-e", "-f", str(folder / "sshd_config")],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    known = folder / "known_hosts"
    host_key = (folder / "host.pub").read_text().split()[:2]
    known.write_text(f"[127.0.0.1]:{port} {' '.join(host_key)}\n")
    try:
        _wait_listening(port, proc)
        yield (
            port,
            (
                f"ssh -F /dev/null -i {folder / 'client'} -o IdentitiesOnly=yes "
                f"-o BatchMode=yes -o UserKnownHostsFile={known} "
                "-o StrictHostKeyChecking=yes"
            ),
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def web_server(root: Path, folder: Path, user: str, password: str) -> Iterator[int]:
    """Serves the repositories under ``root`` at ``http://127.0.0.1:PORT/git/``.

    lighttpd runs git's ``git-http-backend`` for every path under ``/git/``,
    which asks for ``user`` and ``password`` (basic auth): fetches and
    pushes both (the backend accepts a push from an authenticated user).
    """
    folder.mkdir(parents=True)
    port = free_port()
    (folder / "users").write_text(f"{user}:{password}\n")
    (folder / "lighttpd.conf").write_text(
        'server.modules = ("mod_alias", "mod_auth", "mod_authn_file", '
        '"mod_cgi", "mod_setenv")\n'
        f'server.document-root = "{folder}"\n'
        f"server.port = {port}\n"
        'server.bind = "127.0.0.1"\n'
        f'server.errorlog = "{folder / "error.log"}"\n'
        f'server.pid-file = "{folder / "lighttpd.pid"}"\n'
        f'alias.url = ("/git/" => "{HTTP_BACKEND}/")\n'
        'cgi.assign = ("" => "")\n'
        "setenv.add-environment = (\n"
        f'  "GIT_PROJECT_ROOT" => "{root}",\n'
        '  "GIT_HTTP_EXPORT_ALL" => "1",\n'
        f'  "PATH" => "{os.path.dirname(GIT)}:/usr/bin:/bin",\n'
        ")\n"
        'auth.backend = "plain"\n'
        f'auth.backend.plain.userfile = "{folder / "users"}"\n'
        'auth.require = ("/git/" => ("method" => "basic", "realm" => "git", '
        '"require" => "valid-user"))\n'
    )
    with (folder / "lighttpd.log").open("wb") as log:
        proc = subprocess.Popen(
            [str(LIGHTTPD), "-D", "-f", str(folder / "lighttpd.conf")],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        _wait_listening(port, proc)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
