"""`ctx serve`: MCP over Streamable HTTP, the JSON API, and being the hub."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from integration_support import CTX, run_ctx, start_hub_process, wall_clock
from mcp_scenario import call_every_tool, index_sample_code
from serve_support import Served, start_serve

from ctx.engine import Store

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(store_path: Path) -> Path:
    (store_path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[mcp]\ntools = "all"\n'
    )
    return store_path


@pytest.fixture
def served(store: Path) -> Iterator[Served]:
    server = start_serve(store)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def quiet_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store for cases that must write nothing: it stays empty."""
    path = tmp_path_factory.mktemp("quiet") / ".ctx"
    Store.init(path, clock=wall_clock).close()
    (path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[mcp]\ntools = "all"\n'
    )
    return path


@pytest.fixture(scope="module")
def quiet(quiet_store: Path) -> Iterator[Served]:
    """One server for the module's cases that only send what must change nothing.

    Each such case compares the store's branch tips and memories before and
    after itself, so a case that wrote would fail there, whatever ran before.
    """
    server = start_serve(quiet_store)
    yield server
    server.stop()


def branch_tips(store: Path) -> str:
    out = subprocess.run(
        ["git", "--git-dir", str(store / "git"), "for-each-ref"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def fsck(store: Path) -> None:
    out = subprocess.run(
        ["git", "--git-dir", str(store / "git"), "fsck", "--strict"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr


async def test_every_tool_over_streamable_http(store: Path, served: Served) -> None:
    index_sample_code(store)
    async with served.mcp_client() as client:
        await call_every_tool(client)


async def test_writes_over_http_carry_the_ctx_session_header(served: Served) -> None:
    """The 2026-07-28 protocol is stateless: a client names its session."""
    async with served.mcp_client({"Ctx-Session": "http-1"}) as client:
        await client.call_tool("remember", {"text": "over http"})
        log = (await client.call_tool("log", {"limit": 1})).structured_content
    assert log["result"][0]["commit"]["intent"]["session"] == "http-1"


def test_the_api_signs_writes_with_the_ctx_session_header(served: Served) -> None:
    session = {"Ctx-Session": "api-1"}
    status, _ = served.request(
        "POST", "/api/memories", {"text": "Builds take four minutes"}, headers=session
    )
    assert status == 200
    status, summary = served.request(
        "POST",
        "/api/sessions/summary",
        {"summary": "Timed the build."},
        headers=session,
    )
    assert status == 200, summary
    assert summary["paths"] == ["sessions/api-1/summary.json"]
    log = served.request("GET", "/api/log", query={"limit": 2})[1]
    assert [e["commit"]["intent"]["session"] for e in log] == ["api-1", "api-1"]


def test_the_api_round_trip(served: Served) -> None:
    status, made = served.request(
        "POST", "/api/memories", {"text": "Deploys run on Fridays", "kind": "decision"}
    )
    assert status == 200
    mid = made["id"]
    assert (
        served.request("GET", f"/api/memories/{mid}")[1]["memory"]["kind"] == "decision"
    )
    status, _ = served.request(
        "PATCH", f"/api/memories/{mid}", {"body": "Deploys run on Thursdays"}
    )
    assert status == 200
    status, hits = served.request(
        "POST", "/api/recall", {"query": "when do deploys run?"}
    )
    assert status == 200
    assert hits["hits"][0]["body"] == "Deploys run on Thursdays"
    assert served.request("GET", "/api/memories")[1][0]["id"] == mid
    assert (
        served.request("POST", "/api/memories/query", {"where": "kind:decision"})[1][0][
            "id"
        ]
        == mid
    )
    assert len(served.request("GET", "/api/log", query={"limit": 2})[1]) == 2
    assert served.request("GET", f"/api/memories/{mid}/blame")[0] == 200
    assert served.request("GET", "/api/diff", query={"spec": "HEAD~1..HEAD"})[1][
        "changed"
    ]
    assert served.request("GET", "/api/status")[1]["memories"] == 1
    status, other = served.request(
        "POST", "/api/memories", {"text": "Fridays are frozen"}
    )
    served.request(
        "POST",
        "/api/links",
        {"source": mid, "target": other["id"], "type": "RELATES_TO"},
    )
    status, graph = served.request(
        "GET", "/api/graph/ego", query={"id": mid, "hops": 2, "limit": 10}
    )
    assert status == 200
    assert {n["id"] for n in graph["nodes"]} == {mid, other["id"]}
    assert all("body" not in n for n in graph["nodes"])
    assert graph["edges"] == [
        {"source": mid, "type": "RELATES_TO", "target": other["id"]}
    ]
    status, _ = served.request("DELETE", f"/api/memories/{mid}", {"reason": "wrong"})
    assert status == 200
    assert served.request("GET", f"/api/memories/{mid}")[0] == 404
    assert served.request("GET", "/health")[1]["status"] == "ok"
    spec = served.request("GET", "/api/openapi.json")[1]
    assert spec["openapi"].startswith("3.1")
    assert "/api/graph/ego" in spec["paths"]


@pytest.mark.parametrize(
    ("method", "path", "body", "query", "status", "says"),
    [
        (
            "GET",
            "/api/graph/ego",
            None,
            {"id": "01JD2X9K7M3Q4R5S6T7V8W9XYZ", "hops": 4},
            400,
            "<= 3",
        ),
        (
            "GET",
            "/api/graph/ego",
            None,
            {"id": "01JD2X9K7M3Q4R5S6T7V8W9XYZ", "limit": 0},
            400,
            ">= 1",
        ),
        (
            "GET",
            "/api/graph/ego",
            None,
            {"id": "01JD2X9K7M3Q4R5S6T7V8W9XYZ", "hops": "x"},
            400,
            "hops",
        ),
        ("POST", "/api/memories", {"text": "x", "colour": "red"}, None, 400, "colour"),
        ("POST", "/api/memories", {"text": 5}, None, 400, "$.text"),
        ("POST", "/api/memories", {}, None, 400, "text"),
        (
            "GET",
            "/api/memories/01JD2X9K7M3Q4R5S6T7V8W9XYZ",
            None,
            None,
            404,
            "No memory",
        ),
        ("GET", "/api/memories", None, {"branch": "nope"}, 404, "nope"),
        ("POST", "/api/merge", {"source": "nope"}, None, 404, "nope"),
        ("GET", "/api/log", None, {"limit": ["1", "2"]}, 400, "'limit' is given twice"),
        ("GET", "/api/nosuch", None, None, 404, "No route /api/nosuch here."),
        ("GET", "/nosuch", None, None, 404, "No route /nosuch here."),
        ("PUT", "/api/memories", {"text": "x"}, None, 405, "does not take PUT"),
        (
            "POST",
            "/api/recall",
            {"query": "queue"},
            {"query": "kafka"},
            400,
            "'query' is given in the body and before it",
        ),
        (
            "PATCH",
            "/api/memories/01JD2X9K7M3Q4R5S6T7V8W9XYZ",
            {"id": "01JD2X9K7M3Q4R5S6T7V8W9XYA", "body": "x"},
            None,
            400,
            "'id' is given in the path and before it",
        ),
    ],
)
def test_bad_requests_get_a_clear_error_and_write_nothing(
    quiet: Served, quiet_store: Path, method, path, body, query, status, says
) -> None:
    tips = branch_tips(quiet_store)
    before = quiet.request("GET", "/api/log", query={"limit": 100})[1]
    got, answer = quiet.request(method, path, body, query=query)
    assert got == status, answer
    assert says in answer["error"]["message"]
    assert quiet.request("GET", "/api/log", query={"limit": 100})[1] == before
    assert branch_tips(quiet_store) == tips


def test_bodies_that_are_not_json_or_too_large(
    quiet: Served, quiet_store: Path
) -> None:
    tips = branch_tips(quiet_store)
    status, answer = quiet.request("POST", "/api/memories", raw=b"{not json")
    assert status == 400
    assert "not JSON" in answer["error"]["message"]
    assert quiet.request("POST", "/api/memories", raw=b"[1, 2]")[0] == 400
    twice = b'{"text": "kept?", "text": "or this?"}'
    status, answer = quiet.request("POST", "/api/memories", raw=twice)
    assert (status, answer["error"]["message"]) == (
        400,
        "The field 'text' is given twice.",
    )
    big = json.dumps({"text": "x" * 1_100_000}).encode()
    status, answer = quiet.request("POST", "/api/memories", raw=big)
    assert status == 413
    assert answer["error"]["type"] == "BodyTooLargeError"  # no private name
    assert quiet.request("GET", "/api/memories")[1] == []
    assert branch_tips(quiet_store) == tips


def test_malformed_json_rpc_and_a_client_that_hangs_up(served: Served) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    status, _ = served.request(
        "POST", "/mcp", raw=b'{"jsonrpc": "2.0", "method": ', headers=headers
    )
    assert 400 <= status < 500
    status, _ = served.request(
        "POST", "/mcp", raw=b'{"jsonrpc": "1.0"}', headers=headers
    )
    assert 400 <= status < 500
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    for partial in (
        b'POST /api/recall HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{"query":',
        b"GET /api/memo",
    ):
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(partial)
    assert served.request("GET", "/health")[0] == 200
    assert served.request("POST", "/api/memories", {"text": "still here"})[0] == 200


def test_it_is_the_hub_that_a_shell_recall_asks(served: Served, store: Path) -> None:
    served.request("POST", "/api/memories", {"text": "The cache is Redis"})
    status = json.loads(run_ctx(store, "hub", "status", "--json").stdout)
    assert status["pid"] == served.proc.pid
    recalled = json.loads(
        run_ctx(store, "recall", "what is the cache?", "--json").stdout
    )
    assert recalled["hits"][0]["body"] == "The cache is Redis"
    assert run_ctx(store, "hub", "stop").returncode == 0
    served.proc.communicate(timeout=30)
    assert served.proc.returncode == 0


def test_a_hub_already_running_is_taken_over(store: Path) -> None:
    hub = start_hub_process(store)
    server = start_serve(store)
    try:
        hub.communicate(timeout=30)
        assert hub.returncode == 0
        status = json.loads(run_ctx(store, "hub", "status", "--json").stdout)
        assert status["pid"] == server.proc.pid
    finally:
        server.stop()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_ctrl_c_right_after_the_ready_line_stop_it(
    store: Path, signum: int
) -> None:
    # Sent as soon as it says it serves: before uvicorn's own handlers, a
    # signal raised inside the making of the event loop (a traceback).
    server = start_serve(store)
    server.proc.send_signal(signum)
    out, err = server.proc.communicate(timeout=60)
    assert server.proc.returncode == 0, err
    assert out.endswith("Stopped.\n"), out
    assert "Traceback" not in err, err


def test_a_signal_once_it_serves_stops_the_server_without_raising() -> None:
    # The window between the ready line and uvicorn's own handlers, held open.
    # While it starts, Ctrl-C interrupts as it always did. Once it serves
    # (and while it stops), SIGTERM and a first Ctrl-C ask the server to
    # stop, a second Ctrl-C to stop at once, and none raises where it lands;
    # the handlers before are put back after.
    import uvicorn

    from ctx.porcelain.agents.serve import _signals_stop

    server = uvicorn.Server(uvicorn.Config(app=lambda *_: None))
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    terminated = signal.getsignal(signal.SIGTERM)
    try:
        with _signals_stop(server) as serving:
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
            assert not server.should_exit
            serving()
            os.kill(os.getpid(), signal.SIGTERM)
            assert server.should_exit
            assert not server.force_exit
            os.kill(os.getpid(), signal.SIGINT)
            assert server.force_exit
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.getsignal(signal.SIGTERM) is terminated
    finally:
        signal.signal(signal.SIGINT, before)


def test_any_address_but_loopback_needs_keys(store: Path) -> None:
    out = subprocess.run(
        [str(CTX), "--store", str(store), "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 4
    assert out.stderr.startswith("Error: ctx serve on 0.0.0.0 needs keys")


async def test_four_clients_and_the_cli_at_once(served: Served, store: Path) -> None:
    written: list[str] = []

    async def agent(n: int) -> None:
        async with served.mcp_client() as client:
            for i in range(10):
                r = await client.call_tool("remember", {"text": f"client {n} fact {i}"})
                assert not r.is_error, r.content
                mine = r.structured_content["id"]
                written.append(mine)
                found = await client.call_tool(
                    "recall", {"query": f"client {n} fact {i}"}
                )
                assert not found.is_error, found.content
                assert mine in [h["id"] for h in found.structured_content["hits"]]

    def cli() -> None:
        for i in range(8):
            out = run_ctx(store, "remember", f"shell fact {i}")
            assert out.returncode == 0, out.stderr
            written.append(out.stdout.strip())

    async with anyio.create_task_group() as tg:
        for n in range(4):
            tg.start_soon(agent, n)
        tg.start_soon(anyio.to_thread.run_sync, cli)
    listed = {m["id"] for m in served.request("GET", "/api/memories")[1]}
    assert listed == set(written)
    assert len(listed) == 48
    fsck(store)


def test_kill_9_leaves_the_store_and_index_usable(store: Path) -> None:
    server = start_serve(store)
    for i in range(20):
        assert (
            server.request("POST", "/api/memories", {"text": f"fact number {i}"})[0]
            == 200
        )
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.communicate(timeout=30)
    fsck(store)
    recalled = json.loads(run_ctx(store, "recall", "fact number 7", "--json").stdout)
    assert "fact number 7" in [h["body"] for h in recalled["hits"]]
    again = start_serve(store)
    again.key = server.key  # the key the first start made
    try:
        assert len(again.request("GET", "/api/memories")[1]) == 20
    finally:
        again.stop()


async def test_a_client_that_leaves_mid_call(served: Served) -> None:
    """MCP clients that vanish during calls leave the server serving."""
    for wait in (0.0, 0.005, 0.05):
        with anyio.move_on_after(wait):
            async with served.mcp_client() as client:
                await client.call_tool("remember", {"text": f"left after {wait}"})
                await client.call_tool("recall", {"query": "left"})
    async with served.mcp_client() as client:
        found = await client.call_tool("search", {"query": "left after"})
        assert not found.is_error
    assert served.request("GET", "/health")[0] == 200


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Host": "evil.example:8765"}, 421),
        ({"Host": "rebound.example"}, 421),
    ],
)
def test_web_pages_cannot_reach_a_loopback_server(
    quiet: Served, quiet_store: Path, headers: dict[str, str], status: int
) -> None:
    """A page in the browser could POST to loopback, or rebind its own name."""
    tips = branch_tips(quiet_store)
    got, answer = quiet.request(
        "POST", "/api/memories", {"text": "planted by a web page"}, headers=headers
    )
    assert got == status, answer
    planted = [m for m in quiet.request("GET", "/api/memories")[1]]
    assert len(planted) == 0
    assert branch_tips(quiet_store) == tips


@pytest.mark.parametrize(
    "headers", [{"Origin": "http://localhost:3000"}, {"Host": "localhost:1234"}]
)
def test_pages_and_names_of_this_machine_reach_it(
    served: Served, headers: dict[str, str]
) -> None:
    """The same request from a loopback origin or name is served (and writes)."""
    got, answer = served.request(
        "POST", "/api/memories", {"text": "planted by a web page"}, headers=headers
    )
    assert got == 200, answer
    planted = [m for m in served.request("GET", "/api/memories")[1]]
    assert len(planted) == 1


def test_the_api_finds_code_and_lists_symbols(store: Path, served: Served) -> None:
    status, answer = served.request("POST", "/api/code/find", {"query": "retry"})
    assert status == 404
    assert answer["error"]["message"] == "No code is indexed in this store."
    index_sample_code(store)
    status, answer = served.request(
        "POST",
        "/api/code/find",
        {"query": "retry a request with backoff", "full": True},
    )
    assert status == 200
    top = answer["hits"][0]
    assert (top["chunk"]["path"], top["chunk"]["name"]) == (
        "net.py",
        "fetch_with_retries",
    )
    assert top["code"].startswith("def fetch_with_retries(url, attempts=3):")
    status, listed = served.request("GET", "/api/code/symbols", query={"kind": "class"})
    assert status == 200
    assert [s["name"] for s in listed["symbols"]] == ["Cache"]


def tip(store: Path, branch: str) -> str:
    out = subprocess.run(
        ["git", "--git-dir", str(store / "git"), "rev-parse", branch],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_dream_is_reviewed_and_merged_over_http(served: Served, store: Path) -> None:
    standup = served.request(
        "POST", "/api/memories", {"text": "Standup is every Monday at nine"}
    )[1]["id"]
    served.request("POST", "/api/memories", {"text": "Backups run every night"})
    main = tip(store, "main")
    status, ran = served.request("POST", "/api/dream/run", {"budget": 10})
    assert status == 200, ran
    assert (ran["examined"], ran["proposed"]) == (2, {"recurrence": 2})
    assert tip(store, "main") == main  # Dream writes only dream/main
    status, where = served.request("GET", "/api/dream/status")
    assert status == 200
    assert where["proposals"] == {"proposed": 2}
    review = served.request("GET", "/api/dream/proposals")[1]
    assert (review["hides"], review["merge_asks_yes"]) == ([], False)
    waiting = review["proposals"]
    by_memory = {v["memories"][0]["id"]: v["proposal"]["id"] for v in waiting}
    weekly = by_memory.pop(standup)
    [nightly] = by_memory.values()
    assert waiting[0]["changes"][0].startswith("~ ")

    # Bad requests: a clear error, nothing written.
    for path, body, code, says in (
        ("/api/dream/accept", {}, 400, "Name the proposals"),
        ("/api/dream/accept", {"ids": [weekly], "all": True}, 400, "not both"),
        ("/api/dream/reject", {"ids": []}, 400, "ids"),
        ("/api/dream/run", {"budget": 0}, 400, ">= 1"),
        ("/api/dream/merge", {"branch": "dream/main"}, 400, "Dream's own"),
        ("/api/dream/merge", {"branch": "nope"}, 404, "nope"),
    ):
        before = tip(store, "dream/main")
        got, answer = served.request("POST", path, body)
        said = f"{answer['error']['message']} {answer['error']['hint']}"
        assert (got, says in said) == (code, True), answer
        assert tip(store, "dream/main") == before

    accepted = served.request("POST", "/api/dream/accept", {"ids": [weekly[:8]]})[1]
    assert accepted["ids"] == [weekly]
    rejected = served.request(
        "POST", "/api/dream/reject", {"ids": [nightly], "reason": "keep it loose"}
    )[1]
    assert (rejected["status"], rejected["ids"]) == ("rejected", [nightly])
    status, merged = served.request("POST", "/api/dream/merge", {})
    assert status == 200, merged
    assert merged["merged"] == [weekly]
    tags = served.request("GET", f"/api/memories/{standup}")[1]["memory"]["tags"]
    assert "recurs:weekly" in tags
    done = served.request("GET", "/api/dream/proposals", query={"status": "all"})[1]
    assert {
        (v["proposal"]["id"], v["proposal"]["status"]) for v in done["proposals"]
    } == {
        (weekly, "merged"),
        (nightly, "rejected"),
    }
    paths = served.request("GET", "/api/openapi.json")[1]["paths"]
    assert {"/api/dream/run", "/api/dream/proposals", "/api/dream/merge"} <= set(paths)
