"""`ctx hook` through the running hub: the same answer, from a small process.

With a hub running, the hook's process relays the call (porcelain/hook_relay.py)
and the hub answers it as the process would have (porcelain/hooks/relayed.py);
with no hub, or one that dies, answers garbage, is too old or refuses, the
process answers itself (issue 30).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from integration_support import run_ctx

from ctx.hub.server.private import socket_path
from ctx.hub.server.wire import AnyAsk, HookAsk
from ctx.porcelain.hook_relay import hook_request, relayed
from ctx.porcelain.hooks import run_hook

QUESTION = "Which database did we choose for the queue?"


@pytest.fixture
def hub_store(hub_store: Path) -> Path:
    """The hub's store, every hit given whatever its cosine (hashing vectors)."""
    with (hub_store / "config.toml").open("a", encoding="utf-8") as f:
        f.write("\n[hooks]\nfloor = -1.0\n")
    return hub_store


def hook_input(store: Path, session: str, **fields: object) -> bytes:
    asked = {"session_id": session, "cwd": str(store.parent), **fields}
    return json.dumps(asked).encode()


def steady(answer: str | None) -> str | None:
    """The answer without what differs from one recall to the next."""
    if answer is None:
        return None
    answer = re.sub(r"recall_id r[0-9A-Z]+", "recall_id R", answer)
    return re.sub(r"; \d+ ms -->", "; N ms -->", answer)


EVENTS = [
    ("session-start", {"source": "startup"}),
    ("prompt-submit", {"prompt": QUESTION}),
    ("prompt-submit", {"prompt": "thanks!"}),
    ("subagent-start", {"agent_type": "Explore"}),
    ("stop", {"last_assistant_message": "Done: the tests pass."}),
    ("pre-compact", {"trigger": "auto"}),
    ("session-end", {"reason": "other"}),
]


def test_the_hub_answers_every_event_as_the_process_would(
    hub_store: Path, hub: subprocess.Popen[str]
) -> None:
    given = []
    for n, (event, fields) in enumerate(EVENTS):
        # Two sessions, one a side: what one was given is not given again.
        there = relayed(
            event, hook_input(hub_store, f"hub-{n}", **fields), store=None, agent=None
        )
        here = run_hook(event, hook_input(hub_store, f"here-{n}", **fields))
        assert there is not None, event
        assert steady(there) == steady(here), event
        given.append(there)
    start, question, trivial, briefing, *silent = given
    assert (
        "The API listens on 8080"
        in json.loads(start)["hookSpecificOutput"]["additionalContext"]
    )
    assert "We chose Postgres" in question
    assert "subagent" in briefing
    assert [trivial, *silent] == ["", "", "", ""]
    assert hub.poll() is None


def test_a_stop_relayed_carries_out_its_commands(
    hub_store: Path, hub: subprocess.Popen[str]
) -> None:
    message = "Noted.\n<ctx:remember>Kites fly in the park on Sundays</ctx:remember>"
    data = hook_input(hub_store, "s-1", last_assistant_message=message)
    assert relayed("stop", data, store=str(hub_store), agent="tester") == ""
    found = run_ctx(hub_store, "search", "kites", "--json")
    first = json.loads(found.stdout)["hits"][0]
    assert first["body"] == "Kites fly in the park on Sundays"


_IMPORTS = """
import sys
from ctx.porcelain.launch import main
sys.argv = ["ctx", "hook", "prompt-submit"]
main()
modules = sorted(sys.modules)
import json  # not before: the hook's own modules are counted
sys.stderr.write(json.dumps(modules))
"""


def test_the_hook_process_relays_and_imports_little(
    hub_store: Path, hub: subprocess.Popen[str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS],
        input=hook_input(hub_store, "cli", prompt=QUESTION),
        capture_output=True,
        cwd=hub_store.parent,
        timeout=60,
        check=True,
    )
    here = run_hook("prompt-submit", hook_input(hub_store, "here", prompt=QUESTION))
    assert steady(done.stdout.decode()) == steady(here + "\n")
    modules = set(json.loads(done.stderr[done.stderr.rindex(b"[") :]))
    heavy = {"click", "dulwich", "numpy", "tantivy", "msgspec", "json", "socket"}
    assert not {m.split(".")[0] for m in modules} & heavy
    doors = ("ctx.hub", "ctx.porcelain.hooks", "ctx.porcelain.agents")
    assert not {m for m in modules if m.startswith(doors)}


def test_a_hub_whose_environment_differs_refuses(
    hub_store: Path, hub: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = hook_input(hub_store, "s-1", source="startup")
    assert relayed("session-start", data, store=None, agent=None) is not None
    monkeypatch.setenv("TZ", "Pacific/Auckland")  # the hub's clock is not the hook's
    assert relayed("session-start", data, store=None, agent=None) is None
    monkeypatch.delenv("TZ")
    monkeypatch.setenv("CTX_EXPERIMENT", "1")  # a switch the hub does not have
    assert relayed("session-start", data, store=None, agent=None) is None
    monkeypatch.delenv("CTX_EXPERIMENT")
    monkeypatch.setenv("CTX_NO_HUB", "1")  # never a hub: not even asked
    assert relayed("session-start", data, store=None, agent=None) is None
    assert hub.poll() is None


class FakeHub:
    """A socket where the hub's would be, answering every call with ``reply``.

    ``None``: it listens but never accepts (a hung hub).
    """

    def __init__(self, reply: bytes | None) -> None:
        self.reply = reply
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(socket_path()))
        self.server.listen()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        if reply is not None:
            self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return  # closed
            with conn:
                while conn.recv(65536):
                    pass
                conn.sendall(self.reply or b"")

    def close(self) -> None:
        self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        socket_path().unlink()


OLD_HUB = (  # a hub that does not know the request, as it answers one
    b'{"reply":"failure","store":"","pid":1,"failure":{"type":"InvalidInputError",'
    b'"message":"The hub could not read the request.","hint":null,"exit_code":4}}\n'
)


@pytest.fixture
def store(hub_store: Path) -> Path:
    return hub_store


@pytest.mark.parametrize(
    "reply",
    [
        b"",
        b"garbage\n",
        b'{"reply":"hook","store":"","pid":1}\n',
        OLD_HUB,
        None,
        b'{"reply":"hook","store":"","output":"<ctx:context>cut',
        b"[1,2",
        b"{not json}\n",
    ],
    ids=["dies", "garbage", "no-output", "too-old", "hung", "cut", "list", "not-json"],
)
def test_a_hub_that_fails_leaves_the_answer_to_the_process(
    store: Path, reply: bytes | None
) -> None:
    data = hook_input(store, "s-1", source="startup")
    assert relayed("session-start", data, store=None, agent=None) is None  # no hub
    fake = FakeHub(reply)
    try:
        assert relayed("session-start", data, store=None, agent=None) is None
        # A process of its own: the relay's bare JSON scanner fails
        # otherwise than in this one, where json is imported.
        if reply in (b"garbage\n", b"[1,2") or (reply and b"cut" in reply):
            done = subprocess.run(
                [sys.executable, "-m", "ctx.porcelain", "hook", "session-start"],
                input=hook_input(store, "cli", source="startup"),
                capture_output=True,
                cwd=store.parent,
                timeout=60,
                check=True,
            )
            here = run_hook("session-start", hook_input(store, "here"))
            assert done.stdout.decode() == here + "\n"
            assert "The API listens on 8080" in here
    finally:
        fake.close()


STOPS_AFTER_TAKING = """
import os, signal, socket, sys
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])
server.listen()
print("listening", flush=True)
conn, _ = server.accept()
while conn.recv(65536):
    pass
conn.sendall(b'{"reply":"progress","store":"","pid":1,"done":0,"total":1}\\n')
os.kill(os.getpid(), signal.SIGSTOP)  # taken up, then stopped (Ctrl-Z)
"""


def test_a_hub_stopped_after_taking_the_call_up_is_not_waited_for(
    store: Path,
) -> None:
    # It would keep the hook a minute, past the host's own limit: the
    # process answers instead, within seconds.
    import signal
    import time

    path = socket_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    hub = subprocess.Popen(
        [sys.executable, "-c", STOPS_AFTER_TAKING, str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert hub.stdout is not None
        assert hub.stdout.readline() == "listening\n"
        started = time.monotonic()
        data = hook_input(store, "s-1", prompt=QUESTION)
        assert relayed("prompt-submit", data, store=None, agent=None) is None
        assert time.monotonic() - started < 10
    finally:
        hub.send_signal(signal.SIGCONT)
        hub.kill()
        hub.wait()
        assert hub.stdout is not None
        hub.stdout.close()
        path.unlink(missing_ok=True)


def test_the_request_is_what_the_hub_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CTX_DIR", "rel/store")
    monkeypatch.setenv("CTX_AGENT", 'an "agent" \u00e9\n')
    monkeypatch.setenv("CTX_HUB_AUTOSTART", "0")
    monkeypatch.delenv("TZ", raising=False)
    data = b'{"prompt": "caf\xc3\xa9"}\x00\xff'
    request = msgspec.json.decode(
        hook_request("prompt-submit", data, store="s", agent="me"), type=AnyAsk
    )
    assert isinstance(request, HookAsk)
    assert request.event == "prompt-submit"
    assert (request.data, request.store_option, request.agent) == (
        data,
        str(tmp_path / "s"),
        "me",
    )
    assert request.cwd == str(tmp_path) == os.getcwd()
    assert request.environ == {
        "CTX_DIR": str(tmp_path / "rel" / "store"),
        "CTX_AGENT": 'an "agent" \u00e9\n',
        "CTX_BRANCH": None,
        "CTX_SESSION": None,
        "GEMINI_PROJECT_DIR": None,
    }
    assert request.process["CTX_HUB_AUTOSTART"] == "0"
    assert request.process["TZ"] is None
    assert request.process["HOME"] == os.environ["HOME"]


@contextlib.contextmanager
def hub_in_process(store: Path, **hub: Any) -> Iterator[None]:
    """Runs the user's hub on ``store`` in a thread of this process."""
    import ctx.hub
    from ctx.hub.workspace import Workspace

    ready = threading.Event()
    thread = threading.Thread(
        target=ctx.hub.run_hub,
        args=(Workspace(store),),
        kwargs={"ready": lambda _: ready.set(), **hub},
        daemon=True,
    )
    thread.start()
    assert ready.wait(60)
    try:
        yield
    finally:
        assert ctx.hub.stop_hub(Workspace(store)).stopped
        thread.join(60)


def test_a_hub_answering_its_most_hooks_refuses_one_more(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctx.hub.server import listener
    from ctx.porcelain.hooks import relayed_answer

    data = hook_input(store, "s-1", source="startup")
    with hub_in_process(store, hooks=relayed_answer):
        assert relayed("session-start", data, store=None, agent=None) is not None
        monkeypatch.setattr(listener, "HOOKS", 0)  # as if 16 ran already
        assert relayed("session-start", data, store=None, agent=None) is None


def test_a_hub_run_without_the_hooks_refuses_them(store: Path) -> None:
    # The hub's rooms know no hooks: whoever runs a hub wires them in.
    data = hook_input(store, "s-1", source="startup")
    with hub_in_process(store):
        assert relayed("session-start", data, store=None, agent=None) is None


def test_a_relayed_hook_waits_for_a_busy_hub_no_longer_than_for_its_socket(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A third of the hook's deadline, then the lexical answer, as the hook's
    # own process would give it: the hub's workers are busy (a reindex).
    # Had it waited for the hub, its answer would say nothing of the wait.
    import time

    from ctx.hub.server.service import Answerer
    from ctx.hub.server.wire import RecallAsk
    from ctx.porcelain.hooks import relayed_answer

    with (store / "config.toml").open("a", encoding="utf-8") as f:
        f.write("timeout = 1.5\n")  # under [hooks]: the wait is 0.5 s
    answer_now = Answerer.answer

    def busy(self: Answerer, request: Any, progress: Any = None) -> Any:
        if isinstance(request, RecallAsk):
            time.sleep(2)
        return answer_now(self, request, progress)

    monkeypatch.setattr(Answerer, "answer", busy)
    data = hook_input(store, "s-1", prompt=QUESTION)
    with hub_in_process(store, hooks=relayed_answer):
        answer = relayed("prompt-submit", data, store=None, agent=None)
    assert answer is not None
    assert "lexical answer only; the hub did not answer within 0.5 s" in answer


def test_the_hooks_own_recall_is_handed_to_the_workers_not_the_socket(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hook, answered in a thread of the hub, asks the hub for its
    # recall: the request goes to the hub's workers as one read from the
    # socket would, without a connection to its own socket.
    from ctx.hub.server import client
    from ctx.porcelain.hooks import relayed_answer

    through_socket: list[str] = []
    asked = client._asked

    def counted(request: Any, *args: Any) -> Any:
        through_socket.append(type(request).__name__)
        return asked(request, *args)

    monkeypatch.setattr(client, "_asked", counted)
    data = hook_input(store, "s-1", prompt=QUESTION)
    with hub_in_process(store, hooks=relayed_answer):
        answer = relayed("prompt-submit", data, store=None, agent=None)
        assert "RecallAsk" not in through_socket
        # Asked from a thread of its own, the hook's process asks the socket.
        here = run_hook("prompt-submit", hook_input(store, "s-2", prompt=QUESTION))
        assert "RecallAsk" in through_socket
    assert answer is not None
    assert "We chose Postgres" in answer
    assert steady(answer) == steady(here)
