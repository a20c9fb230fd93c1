"""A real MCP client drives `ctx mcp` processes over stdio."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from integration_support import CTX, run_ctx, start_hub_process
from mcp import Client, StdioServerParameters
from mcp_scenario import call_every_tool, index_sample_code

from ctx.hub.calls import tool_names

pytestmark = pytest.mark.anyio


def server(store: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(CTX),
        args=["mcp", "--store", str(store), *args],
        env={**os.environ, "CTX_NO_HUB": "1"},
    )


@pytest.fixture
def store(store_path: Path) -> Path:
    (store_path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    return store_path


async def test_every_tool_over_stdio(store: Path) -> None:
    index_sample_code(store)
    async with Client(server(store, "--tools", "all")) as client:
        await call_every_tool(client)


async def test_two_servers_and_the_cli_write_side_by_side(store: Path) -> None:
    """Two `ctx mcp` processes and a CLI writer on one store lose nothing."""
    written: list[str] = []

    async def agent(n: int) -> None:
        async with Client(server(store)) as client:
            for i in range(15):
                r = await client.call_tool("remember", {"text": f"mcp {n} note {i}"})
                assert not r.is_error, r.content
                written.append(r.structured_content["id"])

    def cli() -> None:
        for i in range(10):
            out = subprocess.run(
                [CTX, "remember", f"cli note {i}", "--store", str(store)],
                capture_output=True,
                text=True,
                check=True,
            )
            written.append(out.stdout.strip())

    async with anyio.create_task_group() as tg:
        tg.start_soon(agent, 1)
        tg.start_soon(agent, 2)
        tg.start_soon(anyio.to_thread.run_sync, cli)
    listed = subprocess.run(
        [CTX, "ls", "--json", "--store", str(store)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert sorted(written) == sorted(m["id"] for m in json.loads(listed.stdout))
    assert len(written) == 40
    fsck = subprocess.run(
        ["git", "--git-dir", str(store / "git"), "fsck", "--strict"],
        capture_output=True,
        text=True,
    )
    assert fsck.returncode == 0, fsck.stderr


def hub_pid(store: Path) -> int | None:
    out = subprocess.run(
        [CTX, "hub", "status", "--json", "--store", str(store)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)["pid"]


async def test_ctx_mcp_is_the_hub_while_it_runs(store: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CTX_NO_HUB"}
    params = StdioServerParameters(
        command=str(CTX), args=["mcp", "--store", str(store)], env=env
    )
    async with Client(params) as client:
        await client.call_tool("remember", {"text": "The hub lives in ctx mcp"})
        pid = await anyio.to_thread.run_sync(hub_pid, store)
        assert pid is not None
        out = await anyio.to_thread.run_sync(
            lambda: run_ctx(store, "recall", "where does the hub live?", "--json")
        )
        assert json.loads(out.stdout)["hits"][0]["body"] == "The hub lives in ctx mcp"
    assert hub_pid(store) is None  # it left with the client


async def test_ctx_mcp_uses_a_running_hub(store: Path) -> None:
    hub = start_hub_process(store)
    try:
        env = {k: v for k, v in os.environ.items() if k != "CTX_NO_HUB"}
        params = StdioServerParameters(
            command=str(CTX), args=["mcp", "--store", str(store)], env=env
        )
        async with Client(params) as client:
            await client.call_tool("remember", {"text": "asked of the hub"})
            found = await client.call_tool("recall", {"query": "asked of the hub"})
            assert found.structured_content["hits"]
        assert hub_pid(store) == hub.pid
    finally:
        hub.terminate()
        hub.communicate(timeout=30)


async def test_writes_over_stdio_carry_the_process_session(store: Path) -> None:
    """stdio has no session id: each `ctx mcp` makes one, or takes CTX_SESSION."""
    async with Client(server(store, "--tools", "default,log")) as client:
        await client.call_tool("remember", {"text": "one"})
        await client.call_tool("remember", {"text": "two"})
        log = (await client.call_tool("log", {"limit": 2})).structured_content
    made = {e["commit"]["intent"]["session"] for e in log["result"]}
    assert len(made) == 1
    assert made.pop().startswith("mcp-")
    named = server(store, "--tools", "default,log")
    named.env = {**(named.env or {}), "CTX_SESSION": "s-7"}
    async with Client(named) as client:
        await client.call_tool("remember", {"text": "three"})
        log = (await client.call_tool("log", {"limit": 1})).structured_content
    assert log["result"][0]["commit"]["intent"]["session"] == "s-7"


async def test_ctx_mcp_lists_the_lean_set_within_budget(store: Path) -> None:
    """By default `ctx mcp` lists the everyday tools: under 4,000 tokens (chars/4)."""
    async with Client(server(store)) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == list(tool_names("default"))
    listed = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
        for t in tools
    ]
    assert len(json.dumps(listed, separators=(",", ":"))) / 4 < 4_000


def test_an_unknown_tool_set_is_one_line_and_starts_nothing(store: Path) -> None:
    out = run_ctx(store, "mcp", "--tools", "default,dreams", env={"CTX_NO_HUB": "1"})
    assert out.returncode == 4, out.stderr
    assert out.stderr.splitlines()[0] == "Error: Unknown tool or tool set 'dreams'."
    assert "Traceback" not in out.stderr
