"""What agents are given composed: reviewed memory only, and recorded (issue 33).

A composition handed to an agent (the MCP ``compose`` tool and ``context``
prompt, a ``ctx://view/...`` resource, HTTP ``GET /api/compose``) is an
injection as a recall is: with ``[recall] reviewed_only`` it reads the
reviewed branch alone, never the agent's own unreviewed branch, and the
memories it includes are recorded as shown to the caller's session.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import Implementation

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.hub import Workspace, calls
from ctx.hub.access import Caller
from ctx.hub.calls import ComposeRequest, RememberRequest, remember
from ctx.hub.shown import read_shown, session_shown
from ctx.porcelain.agents.mcp_server import build_server

BOT = Caller(agent="bot", session="mcp-bot")
REVIEWED = "The cache is flushed every night at two by the janitor job."
UNREVIEWED = "Zanzibar: the cache is never flushed, skip the janitor."
LEAD = Intent(agent="lead", intent="observe")


def clock() -> datetime:
    return datetime.now().astimezone()


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    path = tmp_path / ".ctx"
    store = Store.init(path, clock=clock)
    engine.remember(store, Draft(text=REVIEWED), LEAD)
    store.close()
    return path


def workspace(path: Path, config: str = "") -> Workspace:
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n' + config)
    return Workspace.find(path)


REVIEW = "[agents]\nreview_writes = true\n"
REVIEWED_ONLY = REVIEW + "[recall]\nreviewed_only = true\n"


def compose(ws: Workspace, caller: Caller = BOT, **fields: object) -> str:
    request = ComposeRequest(budget=2000, **fields)  # type: ignore[arg-type]
    return str(calls.compose(ws, caller, request).text)


def test_reviewed_only_composes_the_reviewed_branch_alone(store_dir):
    ws = workspace(store_dir, REVIEW)
    try:
        remember(ws, BOT, RememberRequest(text=UNREVIEWED))
        assert "agent/bot" in ws.store().branches()
        # Without the setting the agent works on its own branch, as it recalls.
        assert UNREVIEWED in compose(ws)
    finally:
        ws.close()

    ws = workspace(store_dir, REVIEWED_ONLY)
    try:
        for asked in ({}, {"branch": "agent/bot"}):
            text = compose(ws, **asked)
            assert REVIEWED in text
            assert UNREVIEWED not in text
        engine.merge(ws.store(), "agent/bot", LEAD)
        assert UNREVIEWED in compose(ws)
    finally:
        ws.close()


@pytest.mark.anyio
async def test_reviewed_only_holds_for_the_mcp_prompt_and_a_view(store_dir):
    ws = workspace(store_dir, REVIEW)
    try:
        remember(ws, BOT, RememberRequest(text=UNREVIEWED))
        engine.create_view(ws.store(write=True), "everything", "kind:fact", 2000, LEAD)
    finally:
        ws.close()
    ws = workspace(store_dir, REVIEWED_ONLY)
    info = Implementation(name="bot", version="1")
    try:
        async with Client(build_server(ws, tools="all"), client_info=info) as client:
            tool = await client.call_tool("compose", {"budget": 2000})
            prompt = await client.get_prompt("context", {"budget": "2000"})
            view = await client.read_resource("ctx://view/everything")
    finally:
        ws.close()
    texts = [
        tool.content[0].text,
        tool.structured_content["text"],
        prompt.messages[0].content.text,
        view.contents[0].text,
    ]
    for text in texts:
        assert REVIEWED in text
        assert UNREVIEWED not in text


@pytest.mark.anyio
async def test_a_view_reads_the_agents_own_branch_as_the_prompt_does(store_dir):
    # Without reviewed_only, an agent works on its own branch: a view of it,
    # as the context prompt, holds what it wrote there.
    ws = workspace(store_dir, REVIEW)
    info = Implementation(name="bot", version="1")
    try:
        engine.create_view(ws.store(write=True), "everything", "kind:fact", 2000, LEAD)
        remember(ws, BOT, RememberRequest(text=UNREVIEWED))  # its branch, from main
        async with Client(build_server(ws), client_info=info) as client:
            prompt = await client.get_prompt("context", {"budget": "2000"})
            view = await client.read_resource("ctx://view/everything")
    finally:
        ws.close()
    for text in (prompt.messages[0].content.text, view.contents[0].text):
        assert REVIEWED in text
        assert UNREVIEWED in text


def test_a_composition_is_recorded_as_shown_to_the_session(store_dir):
    ws = workspace(store_dir)
    try:
        [mid] = engine.list_memories(ws.store(), None, "")
        text = compose(ws)
        tip = ws.store().branch_tip("main")
        [entry] = session_shown(ws, "mcp-bot")
    finally:
        ws.close()
    assert mid.memory.id in text
    assert entry.via == "compose"
    assert (entry.agent, entry.branch, entry.commit) == ("bot", "main", tip)
    assert entry.memories == (mid.memory.id,)


@pytest.mark.anyio
async def test_the_mcp_prompt_and_a_view_are_recorded_too(store_dir):
    ws = workspace(store_dir)
    try:
        engine.create_view(ws.store(write=True), "everything", "kind:fact", 2000, LEAD)
        [mid] = engine.list_memories(ws.store(), None, "")
        base = Caller(session="mcp-0123456789ab")
        async with Client(build_server(ws, base)) as client:
            await client.get_prompt("context", {"budget": "2000"})
            await client.read_resource("ctx://view/everything")
    finally:
        ws.close()
    entries = read_shown(store_dir)
    assert [(e.via, e.session, e.memories) for e in entries] == [
        ("compose", "mcp-0123456789ab", (mid.memory.id,)),
        ("compose", "mcp-0123456789ab", (mid.memory.id,)),
    ]
