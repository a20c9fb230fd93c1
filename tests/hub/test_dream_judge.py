"""The optional judge against a fake chat server on loopback: yes, no, down,
slow, malformed. Dream goes on without a failing judge, and says so."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ctx import engine
from ctx.engine import Draft
from ctx.hub import Workspace, dream

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
WHO = engine.Intent(agent="tester", intent="observe")


class FakeChat:
    """An OpenAI-compatible or Ollama chat endpoint that answers as told."""

    def __init__(self) -> None:
        self.mode = "yes"
        self.requests: list[tuple[str, dict]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((self.path, body))
                if fake.mode == "slow":
                    time.sleep(1.0)
                answer = {"yes": "YES.", "no": "No", "waffle": "Perhaps"}.get(
                    fake.mode, "YES"
                )
                if self.path == "/api/chat":
                    data = {"message": {"role": "assistant", "content": answer}}
                else:
                    data = {"choices": [{"message": {"content": answer}}]}
                raw = {
                    "malformed": b"<html>oops",
                    "shapeless": b'{"answer": "YES"}',
                }.get(fake.mode, json.dumps(data).encode())
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the slow case: the client gave up

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat():
    fake = FakeChat()
    yield fake
    fake.close()


def workspace(store, url, kind="openai"):
    (store.path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n'
        f'[dream]\njudge_url = "{url}"\njudge_kind = "{kind}"\n'
        'judge_model = "tiny"\njudge_timeout = 0.5\n'
    )
    ws = Workspace(store.path, clock=lambda: NOW)
    for n, text in enumerate(
        ("The printer is on floor two", "the printer is on floor two.")
    ):
        draft = Draft(text=text, when=NOW - timedelta(days=2 - n))
        engine.remember(ws.store(), draft, WHO)
    return ws


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_judge_that_says_yes_keeps_the_candidate(disk_store, chat, kind):
    ws = workspace(disk_store, chat.url + ("/v1" if kind == "openai" else ""), kind)
    report = dream.run(ws, budget=10)
    assert report.proposed == {"duplicate": 1}
    assert (report.judge, report.judged, report.judged_out) == ("used", 1, 0)
    path, body = chat.requests[0]
    assert path == ("/v1/chat/completions" if kind == "openai" else "/api/chat")
    assert body["model"] == "tiny"
    assert "Proposal: duplicate (the same text)." in body["messages"][1]["content"]
    assert "The printer is on floor two" in body["messages"][1]["content"]


def test_a_judge_that_says_no_drops_the_candidate(disk_store, chat):
    chat.mode = "no"
    ws = workspace(disk_store, chat.url)
    report = dream.run(ws, budget=10)
    assert report.proposed == {}
    assert (report.judged, report.judged_out) == (1, 1)
    assert engine.list_proposals(ws.store(), "main") == []


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("slow", "did not answer within 0.5 s"),
        ("malformed", "did not answer JSON: <html>oops"),
        ("shapeless", "answered in an unknown shape"),
        ("waffle", "answered neither YES nor NO"),
        ("down", "could not be reached"),
    ],
)
def test_a_failing_judge_is_left_out_and_dream_goes_on(disk_store, chat, mode, said):
    chat.mode = mode
    url = chat.url
    if mode == "down":
        chat.close()
    ws = workspace(disk_store, url)
    report = dream.run(ws, budget=10)
    assert report.proposed == {"duplicate": 1}  # the rules' verdict stands
    assert report.judge.startswith("left out: the judge at ")
    assert said in report.judge
    status = dream.dream_status(ws)
    assert status.queue.last_cycle.judge == report.judge
    if mode != "down":
        assert len(chat.requests) == 1  # asked once, then left out
