"""A scripted run: hooks and MCP on one store, each agent on its own branch,
then a review of each branch and a merge, with the sessions read back."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import Implementation

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.hub import Workspace
from ctx.hub.access import Caller
from ctx.porcelain.agents.mcp_server import build_server
from ctx.porcelain.hooks import run_hook

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).parents[2] / "fixtures" / "hooks"


def clock() -> datetime:
    return datetime.now().astimezone()


def stop(root: Path, session: str, message: str) -> None:
    data = json.loads((FIXTURES / "stop.json").read_text())
    data.update(cwd=str(root), session_id=session, last_assistant_message=message)
    run_hook("stop", json.dumps(data).encode(), agent="codex")


async def test_two_agents_on_their_branches_reviewed_and_merged(
    tmp_path: Path,
) -> None:
    root = tmp_path / "app"
    root.mkdir()
    Store.init(root / ".ctx", clock=clock).close()
    (root / ".ctx" / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[agents]\nbranch_per_agent = true\n'
    )
    store = Store.open(root / ".ctx", clock=clock)
    engine.remember(
        store,
        Draft(text="Deploys go through Argo CD."),
        Intent(agent="human", intent="observe"),
    )
    main = store.head_branch()
    store.close()

    # Agent one: an MCP client (its session as CTX_SESSION would give it).
    ws = Workspace.find(root / ".ctx")
    info = Implementation(name="claude-code", version="2.1")
    base = Caller(session="mcp-0123456789ab")
    async with Client(build_server(ws, base), client_info=info) as client:
        wrote = await client.call_tool(
            "remember", {"text": "The queue runs on Postgres.", "kind": "decision"}
        )
        assert not wrote.is_error, wrote.content
        summary = await client.call_tool(
            "summarize_session",
            {"summary": "Chose the queue.", "decisions": ["Postgres for the queue"]},
        )
        assert not summary.is_error, summary.content
    ws.close()

    # Agent two: Codex through its hooks.
    stop(root, "codex-s1", "<ctx:remember>Builds take four minutes.</ctx:remember>")

    store = Store.open(root / ".ctx", clock=clock)
    try:
        assert set(store.branches()) >= {main, "agent/claude-code", "agent/codex"}
        assert len(engine.log(store, rev=main)) == 2  # main holds the human's alone
        sessions = {s.id: s for s in engine.list_sessions(store, "agent/claude-code")}
        assert sessions["mcp-0123456789ab"].summarized
        [codex] = engine.list_sessions(store, "agent/codex")
        assert (codex.id, codex.agent) == ("codex-s1", "codex")

        for branch, learned in (
            ("agent/claude-code", "The queue runs on Postgres."),
            ("agent/codex", "Builds take four minutes."),
        ):
            review = engine.review(store, branch)
            assert learned in {m.body for m in review.diff.added}
            assert review.log
            merged = engine.merge(
                store, branch, Intent(agent="human", intent="merge"), into=main
            )
            assert not merged.conflicts
        bodies = {
            r.memory.body for r in store.snapshot(store.branch_tip(main)).memories()
        }
        assert {
            "Deploys go through Argo CD.",
            "The queue runs on Postgres.",
            "Builds take four minutes.",
            "Chose the queue.",
        } <= bodies
        assert {s.id for s in engine.list_sessions(store)} == {
            "mcp-0123456789ab",
            "codex-s1",
        }
    finally:
        store.close()
