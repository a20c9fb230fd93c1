"""ctx hook never breaks the agent, and never forgets silently: exit 0, one
line logged, and for an event whose answer the agent reads, that line in the
block."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctx.engine import Store
from ctx.hub import local_now
from ctx.porcelain.hooks import EVENTS, run_hook
from ctx.porcelain.hooks.events import Event

HEAVY = ("numpy", "tantivy", "onnxruntime", "mcp", "hnswlib")


def store_in(folder: Path, config: str = "") -> Path:
    Store.init(folder / ".ctx", clock=local_now).close()
    (folder / ".ctx" / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n' + config
    )
    return folder / ".ctx"


def hook_input(cwd: Path, **fields: object) -> bytes:
    return json.dumps({"session_id": "s-1", "cwd": str(cwd), **fields}).encode()


def log_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def said(answer: str) -> str:
    """The one line a failed hook gives, without its marker."""
    text = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    (line,) = text.splitlines()[1:-1]
    assert line.startswith("ctx: memory unavailable for this prompt (")
    assert line.endswith("); `ctx doctor` shows the failure.")
    return line


def test_no_store_gives_nothing_and_logs_in_the_user_cache(tmp_path):
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "ctx" / "hooks.log"
    for event in ("session-start", "prompt-submit", "subagent-start", "pre-compact"):
        data = hook_input(
            tmp_path, prompt="How do we deploy the API?", source="startup"
        )
        assert run_hook(event, data) == ""
    lines = log_lines(cache)
    assert len(lines) == 4
    assert "event='session-start' session='s-1' no store: no store at " in lines[0]
    # Nothing was made on the way: no user store, no project store.
    assert not (Path(os.environ["XDG_DATA_HOME"]) / "ctx" / "git").exists()
    assert not (tmp_path / ".ctx").exists()


def test_an_explicit_store_that_does_not_exist_is_said(tmp_path):
    data = hook_input(tmp_path, prompt="How do we deploy the API?")
    answer = run_hook("prompt-submit", data, store=str(tmp_path / "nowhere"))
    assert "NotAStoreError: No store at " in said(answer)


@pytest.mark.parametrize(
    "data",
    [b"garbage", b"{", b"[1, 2]", b"\xff\xfe\x00", b'"text"', b"null"],
)
def test_input_that_is_not_a_json_object_is_said(tmp_path, monkeypatch, data):
    private = store_in(tmp_path) / "private"
    private.mkdir()
    monkeypatch.chdir(tmp_path)
    assert said(run_hook("prompt-submit", data))
    assert run_hook("stop", data) == ""  # a stop cannot speak
    first, second = log_lines(private / "hooks.log")
    assert "event='prompt-submit' session=''" in first
    assert "event='stop' session=''" in second


@pytest.mark.parametrize(
    ("event", "named"),
    [
        ("BeforeAgent", "BeforeAgent"),
        ("beforeagent", "BeforeAgent"),
        ("prompt-submit", "UserPromptSubmit"),
        ("UserPromptSubmit", "UserPromptSubmit"),
        ("SessionStart", "SessionStart"),
    ],
)
def test_unreadable_input_is_answered_in_the_hosts_name_for_the_event(
    tmp_path, monkeypatch, event, named
):
    # Gemini CLI reads the answer to its BeforeAgent as one for BeforeAgent.
    store_in(tmp_path)
    monkeypatch.chdir(tmp_path)
    answer = json.loads(run_hook(event, b"garbage"))
    assert answer["hookSpecificOutput"]["hookEventName"] == named


def test_fields_of_the_wrong_type_are_ignored(tmp_path):
    store_in(tmp_path)
    data = json.dumps(
        {"session_id": 7, "cwd": str(tmp_path), "prompt": ["x"], "source": None}
    ).encode()
    assert run_hook("prompt-submit", data) == ""
    assert run_hook("session-start", data) == ""


@pytest.mark.parametrize("event", ["", "PostToolUse", "bogus", "stop --now"])
def test_an_unknown_event_gives_nothing(tmp_path, event):
    private = store_in(tmp_path) / "private"
    private.mkdir()
    assert run_hook(event, hook_input(tmp_path)) == ""
    (line,) = log_lines(private / "hooks.log")
    assert f"ValueError: unknown event {event!r}" in line


def test_any_error_is_one_line_in_the_block_and_the_log(tmp_path, monkeypatch):
    private = store_in(tmp_path) / "private"
    private.mkdir()

    def broken(hook):
        raise RuntimeError("the disk\nis on fire")

    monkeypatch.setitem(
        EVENTS, "session-start", Event("session-start", "SessionStart", broken)
    )
    answer = run_hook("session-start", hook_input(tmp_path))
    assert "(RuntimeError: the disk is on fire)" in said(answer)
    (line,) = log_lines(private / "hooks.log")
    assert line.endswith("RuntimeError: the disk is on fire")


def test_a_missing_git_object_is_named_as_damage(tmp_path, monkeypatch):
    # As the command line names it: damage `ctx fsck` explains, not a
    # KeyError of 20 raw bytes.
    from ctx import engine

    monkeypatch.setenv("CTX_NO_HUB", "1")
    path = store_in(tmp_path)
    store = Store.open(path, clock=local_now)
    try:
        intent = engine.Intent(agent="a", intent="observe")
        mid = engine.remember(
            store, engine.Draft(text="Vault rotates on Fridays."), intent
        )
        blob = engine.show(store, str(mid.ids[0])).blob
    finally:
        store.close()
    (path / "git" / "objects" / blob[:2] / blob[2:]).unlink()
    answer = run_hook(
        "prompt-submit", hook_input(tmp_path, prompt="When does Vault rotate?")
    )
    line = said(answer)
    assert "CorruptStoreError: The store's git data is damaged" in line, line


def test_a_bad_config_is_said(tmp_path):
    store_in(tmp_path, "[hooks]\nfloor = 7\n")
    data = hook_input(tmp_path, prompt="How do we deploy the API?")
    assert "floor" in said(run_hook("prompt-submit", data))
    assert "floor" in log_lines(tmp_path / ".ctx" / "private" / "hooks.log")[0]


def test_the_log_is_cut_over_past_a_megabyte(tmp_path):
    private = store_in(tmp_path) / "private"
    private.mkdir()
    (private / "hooks.log").write_bytes(b"x" * (1 << 20) + b"\n")
    run_hook("bogus", hook_input(tmp_path))
    assert (private / "hooks.log.1").stat().st_size > 1 << 20
    assert len(log_lines(private / "hooks.log")) == 1


HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


@contextlib.contextmanager
def locked_by_another(path: Path) -> Iterator[None]:
    """Holds the store's lock in another process for the block."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path / "lock")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def test_a_store_locked_by_a_writer_is_reported_at_the_next_prompt(tmp_path):
    path = store_in(tmp_path, "[hooks]\nlock_timeout = 0.3\n")
    with locked_by_another(path):
        message = "<ctx:remember>Written while locked.</ctx:remember>"
        started = time.monotonic()
        out = run_hook("stop", hook_input(tmp_path, last_assistant_message=message))
        assert out == ""
        assert time.monotonic() - started < 5
    answer = run_hook("prompt-submit", hook_input(tmp_path, prompt="ok"))
    text = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    assert (
        "ctx: <ctx:remember>Written while locked.</ctx:remember> was not carried out: Another writer held the store"
        in text
    )
    store = Store.open(path, clock=local_now)
    try:
        from ctx import engine

        assert engine.list_memories(store, None, "") == []
    finally:
        store.close()


def test_a_stop_past_its_deadline_says_which_commands_it_left(tmp_path):
    # Each write waits for a lock another process holds, past the hook's own
    # deadline: what was not carried out is said at the next prompt.
    path = store_in(tmp_path, "[hooks]\ntimeout = 0.5\nlock_timeout = 5\n")
    with locked_by_another(path):
        message = (
            "<ctx:remember>Widget 1 listens on 8001.</ctx:remember>\n"
            "<ctx:remember>Widget 2 listens on 8002.</ctx:remember>"
        )
        out = run_hook("stop", hook_input(tmp_path, last_assistant_message=message))
        assert out == ""
    answer = run_hook("prompt-submit", hook_input(tmp_path, prompt="ok"))
    text = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    assert (
        "ctx: 2 commands of your last answer may not have been carried out "
        "(<ctx:remember>, <ctx:remember>): the hook ran past its deadline "
        "(no answer within 0.5 s)."
    ) in text


def run_cli(
    args: list[str], data: bytes, cwd: Path
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env["CTX_HUB_AUTOSTART"] = "0"
    return subprocess.run(
        [sys.executable, "-m", "ctx.porcelain", *args],
        input=data,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "data"),
    [
        (["hook", "stop"], b"garbage"),
        (["hook"], b"{}"),
        (["hook", "stop", "--bogus", "x"], b"{}"),
        (["hook", "session-end"], b""),
        (["hook", "prompt-submit", "--store", "/no/such/store"], b"{}"),
    ],
)
def test_the_command_always_exits_0_and_prints_nothing(tmp_path, args, data):
    store_in(tmp_path)
    done = run_cli(args, data, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


IMPORTS = f"""
import json, sys
from ctx.porcelain.launch import main
sys.argv = ["ctx", "hook", sys.argv[1]]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)
assert "ctx.porcelain.main" not in sys.modules  # run alone, not by the group
assert "click" not in sys.modules  # its arguments are read without click
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("event", "fields"),
    [
        ("prompt-submit", {"prompt": "ok, thanks"}),
        ("stop", {"last_assistant_message": "Done: the tests pass."}),
        ("session-end", {"reason": "other"}),
        ("pre-compact", {"trigger": "auto"}),
    ],
)
def test_a_hook_with_nothing_to_inject_imports_nothing_heavy(tmp_path, event, fields):
    store_in(tmp_path)
    from ctx import engine
    from ctx.engine import Draft, Intent

    store = Store.open(tmp_path / ".ctx", clock=local_now)
    engine.remember(
        store,
        Draft(text="The API deploys with Argo CD."),
        Intent(agent="t", intent="observe"),
    )
    store.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env["CTX_HUB_AUTOSTART"] = "0"
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS, event],
        input=hook_input(tmp_path, **fields),
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.stdout == b""
    assert json.loads(done.stderr.decode().splitlines()[-1]) == {"code": 0, "heavy": []}


def context(answer: str) -> str:
    return json.loads(answer)["hookSpecificOutput"]["additionalContext"]


def _argo_store(tmp_path: Path) -> None:
    from ctx import engine
    from ctx.engine import Draft, Intent

    path = store_in(tmp_path, "[hooks]\ntimeout = 3\nfloor = -1.0\n")
    store = Store.open(path, clock=local_now)
    engine.remember(
        store,
        Draft(text="The API deploys with Argo CD."),
        Intent(agent="t", intent="observe"),
    )
    store.close()


def test_a_hub_that_hangs_leaves_the_answer_to_the_lexical_channel(tmp_path):
    import socket

    from ctx.hub.server.private import socket_path

    _argo_store(tmp_path)
    hung = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    hung.bind(str(socket_path()))
    hung.listen()  # accepts, never answers
    try:
        data = hook_input(tmp_path, prompt="How does the API deploy?")
        answer = run_hook("prompt-submit", data)
    finally:
        hung.close()
        socket_path().unlink()
    text = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    assert "Argo CD" in text
    assert (
        "ctx: memory warming up: lexical answer only; "
        "the hub did not answer within 1 s." in text
    )


def test_a_hub_gone_or_stopped_is_said_as_it_is(tmp_path):
    import signal
    import socket

    from ctx.hub import Workspace, hub_status
    from ctx.hub.server.client import ask_hub
    from ctx.hub.server.private import socket_path
    from ctx.hub.server.wire import PingAsk, PingReply

    _argo_store(tmp_path)
    data = hook_input(tmp_path, prompt="How does the API deploy?")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(socket_path()))  # a hub killed: its socket stays, unheard
    dead.close()
    try:
        text = context(run_hook("prompt-submit", data))
        assert "Argo CD" in text
        assert (
            "ctx: memory warming up: lexical answer only; the hub is not running "
            "(its socket was left behind)." in text
        )
        status = hub_status(Workspace(tmp_path / ".ctx"))
        assert (status.running, status.silent) == (
            False,
            "the hub is not running (its socket was left behind)",
        )
    finally:
        socket_path().unlink()
    # A hub stopped (Ctrl-Z): the kernel takes its connections, it answers
    # none. Asked nothing and waited for by nobody, it is said so.
    listening = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import socket, sys, time; s = socket.socket(socket.AF_UNIX); "
            "s.bind(sys.argv[1]); s.listen(); print('up', flush=True); time.sleep(60)",
            str(socket_path()),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert listening.stdout is not None
        assert listening.stdout.readline() == b"up\n"
        listening.send_signal(signal.SIGSTOP)
        assert ask_hub(PingAsk(), PingReply) is None  # not after a ping's wait
        stopped = hub_status(Workspace(tmp_path / ".ctx")).silent
        assert stopped == f"the hub (pid {listening.pid}) is stopped"
        from click.testing import CliRunner

        from ctx.porcelain.main import cli

        stop = CliRunner().invoke(
            cli, ["--store", str(tmp_path / ".ctx"), "hub", "stop"]
        )
        assert stop.output == f"No hub answers: {stopped}; nothing was stopped.\n"
        from ctx.porcelain.hook_relay import relayed

        assert relayed("prompt-submit", data, store=None, agent=None) is None
        again = hook_input(tmp_path, prompt="How does the API deploy?", session_id="2")
        text = context(run_hook("prompt-submit", again))
        assert "Argo CD" in text
        assert f"the hub (pid {listening.pid}) is stopped." in text
    finally:
        listening.kill()
        listening.communicate()
        socket_path().unlink()


def test_a_hook_past_its_deadline_says_so(tmp_path, monkeypatch):
    path = store_in(tmp_path, "[hooks]\ntimeout = 0.5\n")

    def slow(hook):
        time.sleep(5)

    monkeypatch.setitem(
        EVENTS, "prompt-submit", Event("prompt-submit", "UserPromptSubmit", slow)
    )
    started = time.monotonic()
    answer = run_hook("prompt-submit", hook_input(tmp_path, prompt="deploys?"))
    assert time.monotonic() - started < 3
    assert "(HookTimeoutError: no answer within 0.5 s)" in said(answer)
    (line,) = log_lines(path / "private" / "hooks.log")
    assert line.endswith("HookTimeoutError: no answer within 0.5 s")


def test_session_end_has_a_second_at_most(tmp_path, monkeypatch):
    path = store_in(tmp_path, "[hooks]\ntimeout = 30\n")

    def slow(hook):
        time.sleep(5)

    monkeypatch.setitem(EVENTS, "session-end", Event("session-end", "SessionEnd", slow))
    started = time.monotonic()
    assert run_hook("session-end", hook_input(tmp_path)) == ""
    assert time.monotonic() - started < 1.5
    (line,) = log_lines(path / "private" / "hooks.log")
    assert "HookTimeoutError: no answer within 1 s" in line


def test_a_hook_off_the_main_thread_keeps_its_deadline_without_a_signal(
    tmp_path, monkeypatch
):
    # As the hub answers a relayed hook: no SIGALRM there. The answer past its
    # deadline is left to finish, and it closes its workspace, not the caller.
    import threading

    from ctx.hub.workspace import Workspace

    path = store_in(tmp_path, "[hooks]\ntimeout = 0.5\n")
    release = threading.Event()
    finished = threading.Event()

    def slow(hook):
        hook.ws.store()  # in use while it runs
        release.wait(60)
        finished.set()

    closed: list[str] = []
    close = Workspace.close

    def noted_close(ws):
        closed.append(threading.current_thread().name)
        close(ws)

    monkeypatch.setattr(Workspace, "close", noted_close)
    monkeypatch.setitem(
        EVENTS, "prompt-submit", Event("prompt-submit", "UserPromptSubmit", slow)
    )
    answers: list[str] = []
    caller = threading.Thread(
        target=lambda: answers.append(
            run_hook("prompt-submit", hook_input(tmp_path, prompt="deploys?"))
        )
    )
    caller.start()
    caller.join(60)
    assert not finished.is_set()  # answered while the handler still ran
    assert "(HookTimeoutError: no answer within 0.5 s)" in said(answers[0])
    (line,) = log_lines(path / "private" / "hooks.log")
    assert line.endswith("HookTimeoutError: no answer within 0.5 s")
    assert "hook-answer" not in closed
    release.set()
    deadline = time.monotonic() + 30
    while "hook-answer" not in closed:
        assert time.monotonic() < deadline, closed
        time.sleep(0.05)
    assert finished.is_set()
