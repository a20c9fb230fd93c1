"""One session that calls every MCP tool, for each transport's tests.

:func:`call_every_tool` drives a connected client (in-process, stdio or
Streamable HTTP) through all the tools on a fresh store, checks each
structured result against the tool's own output schema, and returns the
results by tool name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
from mcp import Client

TOOLS = {
    "remember",
    "forget",
    "edit",
    "get",
    "ls",
    "query",
    "prime",
    "recall",
    "feedback",
    "search",
    "link",
    "unlink",
    "supersede",
    "summarize",
    "summarize_session",
    "trace",
    "related",
    "expand",
    "compose",
    "log",
    "blame",
    "diff",
    "branches",
    "branch",
    "merge",
    "resolve",
    "status",
    "find",
    "symbols",
    "dream_run",
    "dream_status",
    "dream_review",
    "dream_accept",
    "dream_reject",
    "dream_merge",
}


def index_sample_code(store: Path) -> None:
    """Indexes a two-file source tree beside the store, for ``find`` and ``symbols``."""
    from ctx.hub import Workspace, code_index

    tree = store.parent / "sample"
    tree.mkdir()
    (tree / "net.py").write_text(
        "import time\n\n\n"
        "def fetch_with_retries(url, attempts=3):\n"
        '    """Retries a request with exponential backoff."""\n'
        "    for attempt in range(attempts):\n"
        "        time.sleep(2**attempt)\n"
    )
    (tree / "store.py").write_text(
        "class Cache:\n"
        '    """Keeps answers in memory."""\n\n'
        "    def get(self, key):\n"
        "        return None\n"
    )
    ws = Workspace.find(store)
    try:
        code_index(ws, tree)
    finally:
        ws.close()


class Session:
    """A client and the output schemas of its server's tools."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.schemas: dict[str, dict[str, Any]] = {}
        self.results: dict[str, Any] = {}

    async def start(self) -> None:
        tools = (await self.client.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        for tool in tools:
            assert len(tool.description or "") > 40, tool.name
            assert tool.input_schema["type"] == "object", tool.name
            assert tool.output_schema is not None, tool.name
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            self.schemas[tool.name] = tool.output_schema

    async def call(self, tool: str, /, **arguments: Any) -> Any:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, (tool, result.content)
        jsonschema.validate(result.structured_content, self.schemas[tool])
        self.results[tool] = result.structured_content
        return result.structured_content


async def call_every_tool(client: Client) -> dict[str, Any]:
    """Calls every tool once or more; returns the last result of each."""
    s = Session(client)
    await s.start()
    a = (
        await s.call(
            "remember",
            text="The queue runs on Postgres",
            kind="decision",
            title="Queue backend",
            tags=["project:x"],
            reason="chosen in the design review",
            confidence=0.9,
        )
    )["id"]
    b = (await s.call("remember", text="Deploys happen on Fridays"))["id"]
    c = (await s.call("remember", text="Deploys happen on Thursdays now"))["id"]
    await s.call("edit", id=a, body="The queue runs on Postgres 16")
    await s.call("get", id=a)
    assert (await s.call("get", id=a, revision="HEAD~1"))["memory"]["body"] == (
        "The queue runs on Postgres"
    )
    assert len((await s.call("ls"))["result"]) == 3
    assert [
        m["id"] for m in (await s.call("query", where="kind:decision"))["result"]
    ] == [a]
    await s.call(
        "prime", text="# Guide\n\n## Tests\n\nRun make check.\n", source="guide"
    )
    recalled = await s.call("recall", query="what runs the queue?", budget=400)
    assert a in [h["id"] for h in recalled["hits"]]
    fed = await s.call("feedback", recall_id=recalled["recall_id"], used=[a])
    assert fed["used"] == [a]
    assert (await s.call("search", query="queue Postgres", limit=3))["hits"]
    await s.call("link", source=a, target=b, type="RELATES_TO")
    assert [h["id"] for h in (await s.call("related", id=a))["result"]] == [b]
    await s.call("unlink", source=a, target=b, type="RELATES_TO")
    await s.call("supersede", old=b, new=c)
    summary = (
        await s.call("summarize", ids=[a, c], body="Postgres queue; Thursday deploys")
    )["id"]
    assert (await s.call("trace", id=summary))["id"] == summary
    assert {
        m["memory"]["id"] for m in (await s.call("expand", id=summary))["result"]
    } == {a, c}
    assert "Postgres" in (await s.call("compose", budget=800))["text"]
    assert len((await s.call("log", limit=3))["result"]) == 3
    await s.call("blame", id=a)
    await s.call("blame", id=a, lines=True)
    assert await s.call("diff", spec="HEAD~3..HEAD")
    await s.call("branch", name="agent/x")
    await s.call("edit", id=a, body="The queue runs on Redis", branch="agent/x")
    await s.call("edit", id=a, body="The queue runs on SQS")
    merged = await s.call("merge", source="agent/x")
    assert merged["conflicts"], merged
    assert (await s.call("status"))["conflicts"]
    await s.call("resolve", id=a, take="ours")
    assert not (await s.call("status"))["conflicts"]
    names = [br["name"] for br in (await s.call("branches"))["result"]]
    assert "agent/x" in names
    await s.call("forget", id=b, reason="superseded by the Thursday rule")
    assert b not in [m["id"] for m in (await s.call("ls", all=True))["result"]]
    written = await s.call(
        "summarize_session",
        session="scenario",
        summary="Chose the Postgres queue; deploys moved to Thursdays.",
        decisions=["The queue runs on Postgres"],
    )
    assert written["paths"] == [
        "sessions/scenario/summary.json",
        "sessions/scenario/decisions.json",
    ]
    found = await s.call("find", query="retry a request with backoff", limit=2)
    assert found["hits"][0]["chunk"]["name"] == "fetch_with_retries"
    listed = await s.call("symbols", kind="class")
    assert [x["name"] for x in listed["symbols"]] == ["Cache"]
    await dream_scenario(s)
    assert set(s.results) == TOOLS
    return s.results


async def dream_scenario(s: Session) -> None:
    """One Dream cycle, reviewed: one proposal accepted and merged, the rest rejected."""
    standup = (await s.call("remember", text="Standup is every Monday at nine"))["id"]
    await s.call("remember", text="The backup job runs every night")
    ran = await s.call("dream_run", budget=50)
    assert ran["dream_branch"] == "dream/main"
    assert ran["proposed"]["recurrence"] >= 2, ran
    status = await s.call("dream_status")
    assert status["proposals"]["proposed"] == sum(ran["proposed"].values())
    waiting = (await s.call("dream_review"))["proposals"]
    [weekly] = [
        v["proposal"]["id"]
        for v in waiting
        if v["proposal"]["kind"] == "recurrence"
        and [m["id"] for m in v["memories"]] == [standup]
    ]
    others = [v["proposal"]["id"] for v in waiting if v["proposal"]["id"] != weekly]
    assert (await s.call("dream_accept", ids=[weekly]))["ids"] == [weekly]
    rejected = await s.call("dream_reject", ids=others, reason="not wanted here")
    assert rejected["ids"] == others
    merged = await s.call("dream_merge")
    assert merged["merged"] == [weekly], merged
    assert "recurs:weekly" in (await s.call("get", id=standup))["memory"]["tags"]
    assert (await s.call("dream_review", status="merged"))["proposals"]
