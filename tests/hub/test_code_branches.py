"""Memory follows the code's branches through every door: the workspace's store
reports the code's branch as its default (issue 34). Real git repositories made
with the git binary in tmp dirs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from code_repos import code_repo, git
from mcp import Client

from ctx import engine
from ctx.engine import Store
from ctx.hub import FollowingStore, Workspace
from ctx.hub.agents.mcp_server import build_server
from ctx.hub.hooks import run_hook

T0 = datetime(2026, 1, 5, tzinfo=UTC)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    return code_repo(tmp_path / "code")


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    path = tmp_path / ".ctx"
    Store.init(path, clock=lambda: T0).close()
    (path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n\n[branches]\nfollow_code = true\n'
    )
    return path


def test_a_workspace_that_names_no_code_follows_nothing(store_dir, code):
    ws = Workspace(store_dir)
    try:
        assert type(ws.store()) is Store
    finally:
        ws.close()


def test_off_the_store_is_a_plain_store(store_dir, code):
    (store_dir / "config.toml").write_text("[branches]\nfollow_code = false\n")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        assert type(ws.store()) is Store
        assert ws.store().head_branch() == "main"
    finally:
        ws.close()


def test_reads_see_the_ancestor_until_a_write_creates_the_branch(store_dir, code):
    git(code, "checkout", "-q", "-b", "feature/x")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        store = ws.store()
        assert isinstance(store, FollowingStore)
        assert store.head_branch() == "main"
        assert store.branches() == ["main"]
        store = ws.store(write=True)
        assert store.head_branch() == "feature/x"
        assert store.branches() == ["feature/x", "main"]
        assert store.branch_tip("feature/x") == store.branch_tip("main")
        [entry] = store.reflog("feature/x")
        assert entry.message == "ctx: created for code branch feature/x from main"
    finally:
        ws.close()


def test_the_nearest_code_ancestor_with_memory_is_chosen(store_dir, code):
    """feature/y split from feature/x after main: x's memory, not main's."""
    git(code, "checkout", "-q", "-b", "feature/x")
    (code / "b.txt").write_text("b")
    git(code, "add", "b.txt")
    git(code, "commit", "-q", "-m", "b")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        ws.store(write=True)
        engine.remember(ws.store(), engine.Draft(text="x knows"), ws.intent("observe"))
    finally:
        ws.close()
    git(code, "checkout", "-q", "-b", "feature/y")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        assert ws.store().head_branch() == "feature/x"
        assert ws.store(write=True).head_branch() == "feature/y"
        store = ws.store()
        assert store.branch_tip("feature/y") == store.branch_tip("feature/x")
    finally:
        ws.close()


@pytest.mark.anyio
async def test_the_mcp_door_writes_on_the_code_branch(store_dir, code):
    git(code, "checkout", "-q", "-b", "feature/mcp")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        async with Client(build_server(ws)) as client:
            await client.call_tool("remember", {"text": "learned over MCP"})
        store = ws.store()
        assert store.branches() == ["feature/mcp", "main"]
        listed = engine.list_sorted(store, "feature/mcp").memories
        assert [r.memory.body for r in listed] == ["learned over MCP"]
        assert engine.list_sorted(store, "main").memories == ()
    finally:
        ws.close()


def test_the_hooks_follow_the_code_branch_of_the_agents_folder(
    store_dir, code, monkeypatch
):
    """The hook's workspace runs in the payload's cwd: its code branch."""
    monkeypatch.setenv("CTX_DIR", str(store_dir))
    fixture = Path(__file__).parent / "fixtures" / "hooks" / "session_start.json"
    store = Store.open(store_dir, clock=lambda: T0)
    who = engine.Intent(agent="tester", intent="observe")
    try:
        engine.remember(store, engine.Draft(text="Main knows the queue"), who)
        engine.create_branch(store, "feature/x", "main")
        draft = engine.Draft(text="Only feature x retries", pinned=True)
        engine.remember(store, draft, who, branch="feature/x")
    finally:
        store.close()

    def started() -> str:
        data = json.loads(fixture.read_text())
        data["cwd"] = str(code)
        out = json.loads(run_hook("session-start", json.dumps(data).encode()))
        return str(out["hookSpecificOutput"]["additionalContext"])

    assert "Only feature x retries" not in started()
    git(code, "checkout", "-q", "-b", "feature/x")
    assert "Only feature x retries" in started()
