"""Nobody else can stand in for a user's hub, or write through its log (issue 12).

The socket and the log live in a folder only the user can enter; the client
checks who serves the socket (SO_PEERCRED) and which store each answer is for;
logs are opened without following symlinks and never truncated; only one of
several racing autostarts starts a hub.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
from integration_support import wait_for

import ctx.hub
from ctx import engine
from ctx.engine import Draft
from ctx.hub import Workspace
from ctx.hub.server.client import start_hub
from ctx.hub.server.private import HubFolderError, socket_path
from ctx.hub.server.wire import (
    RecallAsk,
    RecallReply,
    Reply,
    SearchReply,
)

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
TRUE = "We chose Postgres for the queue"


@pytest.fixture
def ws(tmp_path: Path, clock) -> Iterator[Workspace]:
    path = tmp_path / "project" / ".ctx"
    engine.Store.init(path, clock=clock).close()
    (path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[hub]\nidle_minutes = 0.05\n'
    )
    workspace = Workspace(path, clock=clock)
    store = workspace.store(write=True)
    for text in (TRUE, "The API listens on 8080"):
        engine.remember(store, Draft(text=text), workspace.intent("observe"))
    yield workspace
    workspace.close()


@pytest.fixture
def evil(ws: Workspace) -> bytes:
    """A reply line that claims the store holds a memory of an attacker's."""
    real = ctx.hub.recall(ws, "postgres", now=NOW)
    hit = msgspec.structs.replace(real.hits[0], body="EVIL")
    fake = msgspec.structs.replace(real, hits=(hit,))
    reply = RecallReply(result=fake, store=str(ws.path), pid=1)
    return msgspec.json.encode(reply) + b"\n"


class FakeHub:
    """A server on a Unix socket that answers every connection with one line."""

    def __init__(self, path: Path, line: bytes) -> None:
        self.line = line
        self.path = path
        self.requests: list[bytes] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                with contextlib.suppress(OSError):
                    while chunk := conn.recv(65536):
                        data += chunk
                self.requests.append(data)
                with contextlib.suppress(OSError):
                    conn.sendall(self.line)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        self.thread.join(5)
        self.path.unlink()


@pytest.fixture
def fallback(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No XDG_RUNTIME_DIR: the hub folder is <tmp>/ctx-<uid>, tmp a test folder."""
    base = tmp_path_factory.mktemp("t")  # short: socket paths have ~100 bytes
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    return base / f"ctx-{os.getuid()}"


def _planted(folder: Path) -> Path:
    """Where an attacker who can write ``folder`` puts the user's socket."""
    return folder / "hub.sock"


def _make_foreign(folder: Path, how: str) -> None:
    if how == "mode":
        folder.mkdir()
        folder.chmod(0o755)
    elif how == "symlink":
        target = folder.with_name("elsewhere")
        target.mkdir(mode=0o700)
        folder.symlink_to(target)
    else:
        if os.getuid() != 0:
            pytest.skip("only root can give a folder to another user")
        folder.mkdir(mode=0o700)
        os.chown(folder, 65534, 65534)


@pytest.mark.parametrize("how", ["mode", "symlink", "owner"])
def test_a_hub_folder_that_is_not_private_is_refused(
    ws: Workspace,
    evil: bytes,
    fallback: Path,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    _make_foreign(fallback, how)
    before = os.lstat(fallback)
    fake = FakeHub(_planted(fallback), evil)
    monkeypatch.setenv("CTX_HUB_AUTOSTART", "1")
    try:
        result = ctx.hub.recall(ws, "postgres", now=NOW)
    finally:
        fake.close()
    assert fake.requests == []  # the question never reached it
    assert result.hits[0].body == TRUE
    assert any("hub folder" in notice for notice in result.notices)
    with pytest.raises(HubFolderError, match=f"The hub folder {fallback} "):
        socket_path()
    with pytest.raises(HubFolderError):
        ctx.hub.run_hub(ws)
    after = os.lstat(fallback)
    assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid)
    assert list(fallback.iterdir()) == []  # no log, no lock: nothing was started


def test_the_fallback_folder_is_made_private(ws: Workspace, fallback: Path) -> None:
    old = os.umask(0o000)
    try:
        path = socket_path()
    finally:
        os.umask(old)
    assert path.parent == fallback
    assert stat.S_IMODE(os.lstat(fallback).st_mode) == 0o700


def test_the_runtime_folder_is_used_when_private(
    ws: Workspace, tmp_path_factory: pytest.TempPathFactory, monkeypatch
) -> None:
    runtime = tmp_path_factory.mktemp("r")
    runtime.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert socket_path().parent == runtime / "ctx"
    runtime.chmod(0o755)  # open to others: not a runtime folder
    assert socket_path().parent.parent == Path(tempfile.gettempdir())


def test_a_reply_for_another_store_is_ignored(
    ws: Workspace, evil: bytes, tmp_path: Path
) -> None:
    other = msgspec.json.decode(evil[:-1], type=RecallReply)
    other = msgspec.structs.replace(other, store=str(tmp_path / "other" / ".ctx"))
    assert _recalled_past(ws, other).hits[0].body == TRUE
    # The same reply naming this store would have been believed.
    fake = FakeHub(socket_path(), evil)
    try:
        assert ctx.hub.recall(ws, "postgres", now=NOW).hits[0].body == "EVIL"
    finally:
        fake.close()


def test_a_reply_of_another_type_is_ignored(ws: Workspace, evil: bytes) -> None:
    real = msgspec.json.decode(evil[:-1], type=RecallReply)
    search = SearchReply(result=real.result, store=real.store, pid=real.pid)
    assert _recalled_past(ws, search).hits[0].body == TRUE


def _recalled_past(ws: Workspace, reply: Reply) -> ctx.hub.RecallResult:
    """Recalls with a hub that answers ``reply``, asked once and not believed."""
    fake = FakeHub(socket_path(), msgspec.json.encode(reply) + b"\n")
    try:
        result = ctx.hub.recall(ws, "postgres", now=NOW)
    finally:
        fake.close()
    assert len(fake.requests) == 1
    return result  # answered in this process


def test_a_hub_of_another_uid_is_not_asked_without_root(
    ws: Workspace, evil: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This user's own hub, seen by a client that runs as another uid."""
    fake = FakeHub(socket_path(), evil)
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)
    try:
        result = ctx.hub.recall(ws, "postgres", now=NOW)
    finally:
        fake.close()
    # Connected, perhaps, but refused before the question was sent.
    assert set(fake.requests) <= {b""}
    assert result.hits[0].body == TRUE


_OTHER_UID_HUB = """
import os, socket, sys
path, reply = sys.argv[1], open(sys.argv[2], "rb").read()
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o777)
os.setgid(65534)
os.setuid(65534)
server.listen(8)  # the peer credentials are taken here
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    conn.settimeout(5)
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    sys.stdout.write(f"asked {len(data)}\\n")
    sys.stdout.flush()
    try:
        conn.sendall(reply)
    except OSError:
        pass
    conn.close()
"""


def test_a_hub_run_by_another_user_is_not_asked(
    ws: Workspace, evil: bytes, tmp_path: Path
) -> None:
    if os.getuid() != 0:
        pytest.skip("only root can run a server as another user")
    reply = tmp_path / "reply"
    reply.write_bytes(evil)
    proc = subprocess.Popen(
        [sys.executable, "-c", _OTHER_UID_HUB, str(socket_path()), str(reply)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        result = ctx.hub.recall(ws, "postgres", now=NOW)
    finally:
        proc.kill()
        out, _ = proc.communicate(timeout=30)
    assert result.hits[0].body == TRUE
    # Connected, perhaps, but refused before the question was sent.
    assert set(out.splitlines()) <= {"ready", "asked 0"}


def test_autostart_never_writes_through_a_symlinked_log(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    log = socket_path().with_suffix(".log")
    log.symlink_to(victim)
    monkeypatch.setenv("CTX_HUB_AUTOSTART", "1")
    result = ctx.hub.recall(ws, "postgres", now=NOW)
    assert result.hits[0].body == TRUE
    time.sleep(1.0)  # a hub started anyway would have written by now
    assert victim.read_text() == "precious\n"
    assert log.is_symlink()


@contextlib.contextmanager
def _hub_thread(ws: Workspace) -> Iterator[None]:
    ready = threading.Event()
    thread = threading.Thread(
        target=ctx.hub.run_hub,
        args=(Workspace(ws.path, clock=ws.clock),),
        kwargs={"ready": lambda _: ready.set()},
        daemon=True,
    )
    thread.start()
    assert ready.wait(30)
    try:
        yield
    finally:
        ctx.hub.stop_hub(ws)
        thread.join(30)


def test_a_losing_autostart_leaves_the_running_hubs_log_alone(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTX_HUB_AUTOSTART", "1")
    log = socket_path().with_suffix(".log")
    with _hub_thread(ws):
        log.write_text("the running hub's log\n")
        assert start_hub(ws.path, 0.05) is False  # a hub answers: none started
        time.sleep(1.0)
        assert log.read_text() == "the running hub's log\n"


def test_only_one_of_two_racing_autostarts_starts_a_hub(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTX_HUB_AUTOSTART", "1")
    started = [start_hub(ws.path, 0.05), start_hub(ws.path, 0.05)]
    try:
        assert started == [True, False]
    finally:
        wait_for(lambda: ctx.hub.hub_status(ws).running)
        ctx.hub.stop_hub(ws)
        wait_for(lambda: not socket_path().exists())
    log = socket_path().with_suffix(".log").read_text()
    assert log.count("listening on") == 1


def test_status_answers_while_every_worker_waits_for_the_index(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctx.hub.server.listener import WORKERS
    from ctx.hub.server.service import Answerer

    slow = threading.Event()
    answer = Answerer.answer

    def slowly(self, request, progress=None):
        if isinstance(request, RecallAsk):
            slow.wait(20)
        return answer(self, request, progress)

    monkeypatch.setattr(Answerer, "answer", slowly)
    with _hub_thread(ws):
        recalls = [
            threading.Thread(target=ctx.hub.recall, args=(ws, "postgres"), daemon=True)
            for _ in range(WORKERS + 1)
        ]
        for thread in recalls:
            thread.start()
        time.sleep(0.5)  # every worker holds a recall
        started = time.monotonic()
        status = ctx.hub.hub_status(ws)
        took = time.monotonic() - started
        slow.set()
        for thread in recalls:
            thread.join(30)
    assert status.running
    assert took < 1.0
