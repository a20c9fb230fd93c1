"""Agents' writes wait on their branch for review; recall can read reviewed memory only (issue 33)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctx import engine
from ctx.engine import Intent, Store
from ctx.hub import Workspace
from ctx.hub.access import Caller
from ctx.hub.calls import RecallRequest, RememberRequest, recall, remember

BOT = Caller(agent="bot", session="mcp-bot")
FACT = "The cache is flushed every night at two by the janitor job."


def workspace(path: Path, config: str) -> Workspace:
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n' + config)
    return Workspace.find(path)


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    path = tmp_path / ".ctx"
    Store.init(path, clock=lambda: __import__("datetime").datetime.now().astimezone())
    return path


def recalled(ws: Workspace, caller: Caller = BOT) -> tuple[str, list[str]]:
    result = recall(ws, caller, RecallRequest(query="when is the cache flushed"))
    return result.branch, [h.body for h in result.hits]


def test_an_agents_write_waits_on_its_branch_until_reviewed(store_dir):
    ws = workspace(store_dir, "[agents]\nreview_writes = true\n")
    try:
        remember(ws, BOT, RememberRequest(text=FACT))
        store = ws.store()
        assert "agent/bot" in store.branches()
        assert FACT not in [
            r.memory.body for r in engine.list_memories(store, "main", "")
        ]
        # The agent itself reads its own branch over main, unreviewed.
        assert recalled(ws) == ("agent/bot", [FACT])
    finally:
        ws.close()

    ws = workspace(
        store_dir, "[agents]\nreview_writes = true\n[recall]\nreviewed_only = true\n"
    )
    try:
        assert recalled(ws) == ("main", [])
        engine.merge(ws.store(), "agent/bot", Intent(agent="lead", intent="merge"))
        assert recalled(ws) == ("main", [FACT])
    finally:
        ws.close()


def test_reviewed_only_for_one_recall(store_dir):
    ws = workspace(store_dir, "[agents]\nreview_writes = true\n")
    try:
        remember(ws, BOT, RememberRequest(text=FACT))
        from ctx.hub import recall as hub_recall

        both = hub_recall(ws, "cache flushed", branch="agent/bot")
        reviewed = hub_recall(ws, "cache flushed", reviewed_only=True)
    finally:
        ws.close()
    assert [h.body for h in both.hits] == [FACT]
    assert (reviewed.branch, reviewed.hits) == ("main", ())


def test_a_write_through_the_http_api_waits_for_review_too(store_dir, monkeypatch):
    """The plain API's caller has no name: the write's agent names the branch."""
    from starlette.testclient import TestClient

    from ctx.porcelain.agents.http_app import build_app

    monkeypatch.setenv("USER", "ops")
    monkeypatch.setenv("LOGNAME", "ops")
    ws = workspace(store_dir, "[agents]\nreview_writes = true\n")
    try:
        app = build_app(ws, lambda header: None)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            for body in ({"text": FACT, "agent": "bot1"}, {"text": "No agent named."}):
                assert client.post("/api/memories", json=body).status_code == 200
        # Over MCP, a write naming another agent goes where its commit says.
        remember(ws, BOT, RememberRequest(text="Named bot7.", agent="bot7"))
        store = ws.store()
        assert store.branches() == ["agent/bot1", "agent/bot7", "agent/ops", "main"]
        assert engine.list_memories(store, "main", "") == []
        # The plain API's caller reads where its writes went.
        app = build_app(ws, lambda header: None)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            found = client.post("/api/recall", json={"query": "No agent named"}).json()
        assert found["branch"] == "agent/ops"
        assert [h["body"] for h in found["hits"]][:1] == ["No agent named."]
    finally:
        ws.close()
