"""Keys against a running `ctx serve`: key x branch x endpoint.

main holds MAIN; agent/x holds AGENT as well. `reader` reads main only,
`agent` writes (and so reads) agent/*, `admin` may do all. A branch a key
may not read answers exactly like one that does not exist, and nothing of
it leaks through recall, search, the graph, diff or log.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from integration_support import run_ctx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from serve_support import Served, start_serve

pytestmark = pytest.mark.anyio

NO_SUCH_ID = "01JD2X9K7M3Q4R5S6T7V8W9XYZ"


class World:
    def __init__(self, store: Path, server: Served) -> None:
        self.store = store
        self.server = server
        self.keys: dict[str, str] = {}
        self.main = ""
        self.agent = ""

    def call(
        self, who: str | None, method: str, path: str, body: Any = None, **query: Any
    ):
        key = None if who is None else self.keys.get(who, who)
        return self.server.request(method, path, body, key=key, query=query or None)


def ctx(store: Path, *args: str) -> str:
    out = run_ctx(store, *args)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    from ctx.engine import Store

    store = tmp_path_factory.mktemp("keys") / ".ctx"
    Store.init(
        store, clock=lambda: __import__("datetime").datetime.now().astimezone()
    ).close()
    (store / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[mcp]\ntools = "all"\n'
    )
    main = ctx(store, "remember", "The staging password rotates monthly")
    ctx(store, "branch", "agent/x")
    agent = ctx(
        store, "remember", "Secret plan: migrate to Kafka", "--branch", "agent/x"
    )
    ctx(store, "link", agent, main, "--type", "RELATES_TO", "--branch", "agent/x")
    # The admin's merge case needs a second agent branch of its own: the cases
    # run on either worker, in any order, so none may rely on another's write.
    ctx(store, "branch", "agent/y", "--from", "agent/x")
    ctx(store, "remember", "Kafka topics get three partitions", "--branch", "agent/y")
    keys = {
        "reader": ctx(store, "keys", "create", "reader", "--read", "main"),
        "agent": ctx(store, "keys", "create", "agent", "--write", "agent/*"),
        "admin": ctx(store, "keys", "create", "admin", "--admin", "--write", "*"),
        "revoked": ctx(store, "keys", "create", "old", "--read", "*"),
    }
    ctx(store, "keys", "revoke", "old")
    server = start_serve(store)
    w = World(store, server)
    w.keys, w.main, w.agent = keys, main, agent
    yield w
    server.stop()


def same_as_missing(
    world: World, who: str, method: str, path: str, body: Any, hidden: str, **query: Any
) -> None:
    """The denied answer equals the answer for a name that does not exist."""

    def swap(value: Any) -> Any:
        return json.loads(json.dumps(value).replace(hidden, "ghost"))

    denied = world.call(who, method, path, swap_in(body, hidden, hidden), **query)
    missing = world.call(
        who,
        method,
        path,
        swap_in(body, hidden, "ghost"),
        **swap_in(query, hidden, "ghost"),
    )
    assert denied[0] == 404, denied
    assert swap(denied[1]) == missing[1]
    assert missing[0] == 404


def swap_in(value: Any, old: str, new: str) -> Any:
    return None if value is None else json.loads(json.dumps(value).replace(old, new))


@pytest.mark.parametrize(
    ("who", "method", "path", "body", "query", "status"),
    [
        (None, "GET", "/api/memories", None, {}, 401),  # a key even on loopback
        ("reader", "GET", "/api/memories", None, {"branch": "main"}, 200),
        ("reader", "GET", "/api/status", None, {"branch": "main"}, 200),
        (
            "reader",
            "POST",
            "/api/memories",
            {"text": "nope", "branch": "main"},
            {},
            403,
        ),
        (
            "reader",
            "POST",
            "/api/recall",
            {"query": "password", "branch": "main"},
            {},
            200,
        ),
        ("agent", "GET", "/api/memories", None, {"branch": "agent/x"}, 200),
        (
            "agent",
            "POST",
            "/api/memories",
            {"text": "mine", "branch": "agent/x"},
            {},
            200,
        ),
        (
            "agent",
            "POST",
            "/api/branches",
            {"name": "agent/w", "start": "agent/x"},
            {},
            200,
        ),
        (
            "agent",
            "POST",
            "/api/branches",
            {"name": "feature", "start": "agent/x"},
            {},
            403,
        ),
        (
            "agent",
            "POST",
            "/api/branches",
            {"name": "agent/z", "start": "main"},
            {},
            404,
        ),
        (
            "reader",
            "POST",
            "/api/recall",
            {"query": "x", "at": "main~1", "branch": "main"},
            {},
            200,
        ),
        (
            "agent",
            "POST",
            "/api/recall",
            {"query": "x", "at": "main", "branch": "agent/x"},
            {},
            404,
        ),
        (
            "reader",
            "POST",
            "/api/recall",
            {"query": "x", "at": "now", "branch": "main"},
            {},
            200,
        ),
        ("agent", "POST", "/api/merge", {"source": "agent/x", "into": "main"}, {}, 404),
        ("reader", "POST", "/api/merge", {"source": "main", "into": "main"}, {}, 403),
        (
            "admin",
            "POST",
            "/api/merge",
            {"source": "agent/y", "into": "agent/x"},
            {},
            200,
        ),
        ("reader", "GET", "/api/keys", None, {}, 403),
        ("admin", "GET", "/api/keys", None, {}, 200),
        (None, "GET", "/api/keys", None, {}, 401),
        ("revoked", "GET", "/api/memories", None, {}, 401),
        ("ctx_" + "A" * 43, "GET", "/api/memories", None, {}, 401),
        ("not-a-token", "GET", "/api/memories", None, {}, 401),
        ("", "GET", "/api/memories", None, {}, 401),
        ("revoked", "GET", "/health", None, {}, 200),
    ],
)
def test_key_branch_endpoint(
    world: World, who, method, path, body, query, status
) -> None:
    got, answer = world.call(who, method, path, body, **query)
    assert got == status, answer
    if status == 401:
        assert answer["error"]["type"] == "AuthError"


def test_other_schemes_and_bare_headers_are_refused(world: World) -> None:
    for header in ("Basic dXNlcjpwdw==", "Bearer", "bearer  x y"):
        status, _ = world.server.request(
            "GET", "/api/memories", headers={"Authorization": header}
        )
        assert status == 401, header


def test_a_key_given_twice_is_refused_whichever_comes_last(world: World) -> None:
    """A proxy that adds its own header must not choose who writes."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(world.server.url)
    before = world.call("admin", "GET", "/api/log", branch="agent/x")[1]
    for first, second in (("reader", "admin"), ("admin", "reader")):
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        conn.putrequest("POST", "/api/memories")
        for who in (first, second):
            conn.putheader("Authorization", f"Bearer {world.keys[who]}")
        data = json.dumps({"text": "Written by whom?", "branch": "agent/x"}).encode()
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        answer = conn.getresponse()
        body = json.loads(answer.read())
        conn.close()
        assert answer.status == 400, (first, second)
        assert body["error"]["message"] == "The Authorization header is given twice."
    assert world.call("admin", "GET", "/api/log", branch="agent/x")[1] == before


@pytest.mark.parametrize(
    ("method", "path", "body", "query"),
    [
        ("GET", "/api/memories", None, {"branch": "agent/x"}),
        ("GET", "/api/status", None, {"branch": "agent/x"}),
        ("GET", "/api/log", None, {"branch": "agent/x"}),
        ("POST", "/api/recall", {"query": "Kafka", "branch": "agent/x"}, {}),
        ("POST", "/api/search", {"query": "Kafka", "branch": "agent/x"}, {}),
        ("GET", "/api/diff", None, {"spec": "main..agent/x"}),
        ("GET", "/api/diff", None, {"spec": "agent/x~1"}),
        (
            "POST",
            "/api/memories/query",
            {"where": "kind:fact", "branch": "agent/x"},
            {},
        ),
        ("POST", "/api/memories", {"text": "x", "branch": "agent/x"}, {}),
    ],
)
def test_a_branch_the_key_cannot_read_answers_as_missing(
    world: World, method, path, body, query
) -> None:
    same_as_missing(world, "reader", method, path, body, "agent/x", **query)


def test_a_memory_on_a_hidden_branch_answers_as_missing(world: World) -> None:
    hidden = world.call("reader", "GET", f"/api/memories/{world.agent}")
    missing = world.call("reader", "GET", f"/api/memories/{NO_SUCH_ID}")
    assert hidden[0] == missing[0] == 404
    assert json.dumps(hidden[1]).replace(world.agent, NO_SUCH_ID) == json.dumps(
        missing[1]
    )
    via_rev = world.call(
        "reader", "GET", f"/api/memories/{world.agent}", revision="agent/x"
    )
    assert via_rev[0] == 404
    graph = world.call("reader", "GET", "/api/graph/ego", id=world.main, hops=3)
    assert graph[0] == 200
    assert [n["id"] for n in graph[1]["nodes"]] == [
        world.main
    ]  # the link is on agent/x
    same_as_missing(
        world,
        "reader",
        "GET",
        "/api/graph/ego",
        None,
        "agent/x",
        id=world.agent,
        branch="agent/x",
    )


def test_nothing_leaks_through_reads_of_visible_branches(world: World) -> None:
    texts = json.dumps(
        [
            world.call(
                "reader",
                "POST",
                "/api/recall",
                {"query": "Kafka migrate plan", "branch": "main"},
            ),
            world.call(
                "reader", "POST", "/api/search", {"query": "Kafka", "branch": "main"}
            ),
            world.call("reader", "GET", "/api/log", branch="main", limit=100),
            world.call("reader", "GET", "/api/branches"),
            world.call("reader", "GET", "/api/memories", branch="main"),
        ]
    )
    assert "Secret plan" not in texts
    assert "agent/x" not in texts
    assert world.agent not in texts
    names = [b["name"] for b in world.call("reader", "GET", "/api/branches")[1]]
    assert names == ["main"]


def test_feedback_on_a_recall_of_a_hidden_branch_answers_as_unknown(
    world: World,
) -> None:
    status, done = world.call(
        "admin", "POST", "/api/recall", {"query": "Kafka plan", "branch": "agent/x"}
    )
    assert status == 200
    rid, used = done["recall_id"], [done["hits"][0]["id"]]
    ghost = rid[:11] + "0" * 16  # as recent, never given
    hidden = world.call(
        "reader", "POST", "/api/feedback", {"recall_id": rid, "used": used}
    )
    missing = world.call(
        "reader", "POST", "/api/feedback", {"recall_id": ghost, "used": used}
    )
    assert hidden[0] == missing[0] == 404
    assert json.dumps(hidden[1]).replace(rid, ghost) == json.dumps(missing[1])
    mine = world.call(
        "admin", "POST", "/api/feedback", {"recall_id": rid, "used": used}
    )
    assert mine[0] == 200, mine


def test_keys_are_managed_by_admin_keys_only(world: World) -> None:
    status, made = world.call(
        "admin", "POST", "/api/keys", {"label": "bot", "read": ["main"]}
    )
    assert status == 200
    token = made["token"]
    assert world.server.request("GET", "/api/memories", key=token)[0] == 200
    assert world.call("agent", "DELETE", f"/api/keys/{made['key']['id']}")[0] == 403
    assert world.call("admin", "DELETE", f"/api/keys/{made['key']['id']}")[0] == 200
    assert world.server.request("GET", "/api/memories", key=token)[0] == 401
    listed = world.call("admin", "GET", "/api/keys")[1]
    assert all("token" not in k and "hash" not in json.dumps(k) for k in listed)


async def test_mcp_tools_are_held_to_the_key(world: World) -> None:
    headers = {"Authorization": f"Bearer {world.keys['reader']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(world.server.mcp, http_client=http)) as client,
    ):
        seen = await client.call_tool("ls", {"branch": "main"})
        assert not seen.is_error
        hidden = await client.call_tool("ls", {"branch": "agent/x"})
        missing = await client.call_tool("ls", {"branch": "ghost"})
        assert hidden.is_error
        assert (
            hidden.content[0].text.replace("agent/x", "ghost")
            == missing.content[0].text
        )
        write = await client.call_tool("remember", {"text": "no", "branch": "main"})
        assert write.is_error
        assert "may not write" in write.content[0].text
    bad = {"Authorization": "Bearer ctx_" + "B" * 43}
    async with httpx2.AsyncClient(headers=bad, timeout=60) as http:
        with pytest.raises(Exception):  # noqa: B017, PT011 - refused at connect
            async with Client(
                streamable_http_client(world.server.mcp, http_client=http)
            ) as client:
                await client.list_tools()
