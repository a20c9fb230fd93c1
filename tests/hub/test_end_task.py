"""end_task, the typed call a task's end makes (``<ctx:task action="end">``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ctx import engine
from ctx.engine import Store
from ctx.hub import Workspace, calls
from ctx.hub.access import Caller

BOT = Caller(agent="bot", session="mcp-bot")


@pytest.fixture
def ws(tmp_path: Path):
    path = tmp_path / ".ctx"
    Store.init(path, clock=lambda: datetime(2026, 1, 5, tzinfo=UTC)).close()
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    opened = Workspace.find(path)
    yield opened
    opened.close()


def _remember(ws: Workspace, text: str, **fields: object) -> str:
    request = calls.RememberRequest(text=text, **fields)  # type: ignore[arg-type]
    return calls.remember(ws, BOT, request).id


def test_a_task_end_files_its_memories_signed_as_asked(ws):
    decided = _remember(ws, "Tokens are JWTs.", kind="decision", tags=("task:auth",))
    tried = _remember(ws, "Cookies were too slow.", tags=("task:auth",))
    pinned = _remember(ws, "Never log a token.", tags=("task:auth",), pin=True)
    _remember(ws, "Unrelated note.", tags=("task:billing",))
    asked = calls.EndTaskRequest(name="auth", summarize=True, reason="auth is done")
    ended = calls.end_task(ws, BOT, asked)
    assert (ended.promoted, ended.archived) == (1, 1)
    assert set(ended.ids) == {decided, tried, pinned}
    store = ws.store()
    tiers = {
        s.record.memory.id: s.tier
        for s in engine.select(store, "tag:task:auth", now=ws.clock())
    }
    assert tiers == {
        decided: "reference",
        tried: "off-context",
        pinned: "pinned",  # left as it is
        ended.summary: "working",
    }
    for entry in engine.log(store, limit=3):
        assert entry.commit.intent is not None
        assert (entry.commit.intent.agent, entry.commit.intent.reason) == (
            "bot",
            "auth is done",
        )
    # Ended again: nothing left to move, and no second summary unless asked.
    again = calls.end_task(ws, BOT, calls.EndTaskRequest(name="auth"))
    assert (again.promoted, again.archived, again.summary) == (0, 0, None)


def test_a_task_name_is_one_word():
    with pytest.raises(Exception, match="name"):
        calls.checked(calls.EndTaskRequest(name="two words"))
