"""The optional reranker, against a fake /v1/rerank server on loopback."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from ctx import engine
from ctx.engine import Draft
from ctx.hub import Workspace, recall

TEXTS = [
    "the deploy pipeline runs on fridays",
    "deploy notes: the pipeline uses buildkite",
    "a deploy checklist lives in the wiki, ask the zebra team",
]


class FakeReranker(BaseHTTPRequestHandler):
    """Scores a document 1 if it names the word the test chose, else 0."""

    mode = "llama"  # or "tei", "error", "slow", "garbage", "short"
    word = "zebra"
    seen: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeReranker.seen.append(body)
        docs = body["documents"]
        scores = [float(self.word in d) * 5 - 2 for d in docs]
        if self.mode == "error":
            self.send_error(503)
            return
        if self.mode == "slow":
            time.sleep(1.5)
        if self.mode == "tei":
            answer: object = [{"index": i, "score": s} for i, s in enumerate(scores)]
        elif self.mode == "short":
            answer = {"results": [{"index": 0, "relevance_score": 1.0}]}
        else:
            answer = {
                "results": [
                    {"index": i, "relevance_score": s} for i, s in enumerate(scores)
                ]
            }
        data = b"not json" if self.mode == "garbage" else json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeReranker)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    FakeReranker.seen = []
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/rerank"
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def make_ws(disk_store, clock, reranker: str):
    config = '[embedder]\nkind = "hashing"\n' + reranker
    (disk_store.path / "config.toml").write_text(config)
    who = engine.Intent(agent="tester", intent="observe")
    ids = engine.remember_many(disk_store, [Draft(text=t) for t in TEXTS], who).ids
    return Workspace(disk_store.path, clock=clock), list(ids)


def test_without_a_reranker_the_fused_order_stands(disk_store, clock):
    ws, ids = make_ws(disk_store, clock, "")
    result = recall(ws, "deploy pipeline")
    assert result.hits[0].id != ids[2]
    assert not result.warnings
    ws.close()


@pytest.mark.parametrize("mode", ["llama", "tei"])
def test_the_reranker_lifts_what_it_scores_highest(disk_store, clock, server, mode):
    FakeReranker.mode = mode
    ws, ids = make_ws(
        disk_store,
        clock,
        f'[recall.reranker]\nurl = "{server}"\nmodel = "bge"\nweight = 0.9\n',
    )
    result = recall(ws, "deploy pipeline")
    assert result.hits[0].id == ids[2]
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert not result.warnings
    [asked] = FakeReranker.seen
    assert asked["query"] == "deploy pipeline"
    assert asked["model"] == "bge"
    assert sorted(asked["documents"]) == sorted(TEXTS)
    ws.close()


def test_a_small_weight_keeps_the_fused_order(disk_store, clock, server):
    FakeReranker.mode = "llama"
    ws, _ = make_ws(disk_store, clock, "")
    fused = [h.id for h in recall(ws, "deploy pipeline").hits]
    (disk_store.path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n'
        f'[recall.reranker]\nurl = "{server}"\nweight = 0.0\n'
    )
    assert [h.id for h in recall(ws, "deploy pipeline").hits] == fused
    ws.close()


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("error", "answered HTTP 503"),
        ("slow", "did not answer within 0.5 s"),
        ("garbage", "did not answer JSON"),
        ("short", "it scored 1 of 3 documents"),
    ],
)
def test_a_failing_reranker_fails_open(disk_store, clock, server, mode, why):
    ws, _ = make_ws(disk_store, clock, "")
    fused = [h.id for h in recall(ws, "deploy pipeline").hits]
    FakeReranker.mode = mode
    (disk_store.path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n'
        f'[recall.reranker]\nurl = "{server}"\nweight = 0.9\ntimeout = 0.5\n'
    )
    result = recall(ws, "deploy pipeline")
    assert [h.id for h in result.hits] == fused
    [warning] = result.warnings
    assert warning.startswith(f"The reranker at {server} failed (")
    assert why in warning
    assert warning.endswith("; ranked without it.")
    ws.close()


def test_a_reranker_that_is_not_there_fails_open(disk_store, clock):
    ws, _ = make_ws(
        disk_store, clock, '[recall.reranker]\nurl = "http://127.0.0.1:9/v1/rerank"\n'
    )
    result = recall(ws, "deploy pipeline")
    assert result.hits
    assert "ranked without it" in result.warnings[0]
    ws.close()
