"""One `ctx serve` of three stores, each under /s/<name>/ with its own keys (issue 34).

`team` (a project's .ctx) has a writer and a reader key of its own, made
before the start; `docs` (named on the command line) has none, so the server
makes its owner key; `open` says `[serve] require_keys = false` and has an embedder of its own
(256 dimensions, the others 384). One server
serves the module; each case writes only text of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from integration_support import CTX, run_ctx, wall_clock
from serve_support import ServedStores, start_serve_stores

from ctx.engine import Store

pytestmark = pytest.mark.anyio

UNKNOWN = "ctx_" + "A" * 43


@dataclass
class World:
    server: ServedStores
    paths: dict[str, Path]
    keys: dict[str, str]
    env: dict[str, str]

    def call(
        self, who: str | None, store: str | None, method: str, path: str, body=None
    ):
        key = None if who is None else self.keys.get(who, who)
        return self.server.request(
            store, method, path, body, key=key, anonymous=who is None
        )


def make_store(path: Path, config: str = "", dimensions: int = 384) -> Path:
    Store.init(path, clock=wall_clock).close()
    (path / "config.toml").write_text(
        f'[embedder]\nkind = "hashing"\ndimensions = {dimensions}\n'
        '[mcp]\ntools = "all"\n' + config
    )
    return path


def ctx(store: Path, *args: str) -> str:
    out = run_ctx(store, *args)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def listed(store: Path) -> list[str]:
    return [m["headline"] for m in json.loads(ctx(store, "ls", "--json"))]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("stores")
    paths = {
        "team": make_store(root / "team" / ".ctx"),
        "docs": make_store(root / "notes"),
        "open": make_store(
            root / "open" / ".ctx", "[serve]\nrequire_keys = false\n", 256
        ),
    }
    keys = {
        "writer": ctx(paths["team"], "keys", "create", "writer", "--write", "*"),
        "reader": ctx(paths["team"], "keys", "create", "reader", "--read", "main"),
    }
    server = start_serve_stores(
        str(root / "team"), f"docs={paths['docs']}", str(paths["open"])
    )
    keys.update(server.keys)
    yield World(server, paths, keys, dict(os.environ))
    server.stop()


def test_the_start_lists_each_store_and_makes_owner_keys_where_due(world) -> None:
    server = world.server
    assert server.lines[0].startswith(f"Serving 3 stores at {server.url} (pid ")
    assert server.stores == {name: str(path) for name, path in world.paths.items()}
    # team had keys and open needs none: only docs gets an owner key.
    assert set(server.keys) == {"docs"}
    assert server.lines[-1] == (
        "Every request needs a key of its store (Authorization: Bearer ...). "
        "Except: open.\n"
    )
    assert [
        k["label"] for k in json.loads(ctx(world.paths["docs"], "keys", "ls", "--json"))
    ] == ["owner"]


def test_health_lists_each_store(world) -> None:
    status, health = world.call(None, None, "GET", "/health")
    assert status == 200
    assert health["store"] == str(world.paths["team"])
    assert health["replica"] is None
    assert [(s["name"], s["path"], s["mcp"]) for s in health["stores"]] == [
        (name, str(path), f"/s/{name}/mcp") for name, path in world.paths.items()
    ]


@pytest.mark.parametrize(
    ("who", "store", "status"),
    [
        ("writer", "team", 200),
        ("reader", "team", 200),
        ("docs", "docs", 200),
        (None, "open", 200),
        ("writer", "docs", 401),
        ("reader", "docs", 401),
        ("docs", "team", 401),
        (None, "team", 401),
        (None, "docs", 401),
        ("writer", "open", 401),  # a key presented is held to: open has none
    ],
)
def test_a_key_opens_its_own_store_only(world, who, store, status) -> None:
    got, answer = world.call(who, store, "GET", "/api/memories")
    assert got == status, answer
    if status == 401 and who is not None:
        # Another store's key is refused exactly as a key nobody made.
        assert (got, answer) == world.call(UNKNOWN, store, "GET", "/api/memories")
        assert answer["error"]["type"] == "AuthError"


def test_writes_land_in_their_own_store(world) -> None:
    texts = {
        "team": ("writer", "Team deploys on Fridays"),
        "docs": ("docs", "Docs live in the wiki"),
        "open": (None, "Open notes are for everyone"),
    }
    for store, (who, text) in texts.items():
        got, answer = world.call(who, store, "POST", "/api/memories", {"text": text})
        assert got == 200, answer
    # Each store keeps its own rules: team's reader may not write.
    got, answer = world.call("reader", "team", "POST", "/api/memories", {"text": "x"})
    assert got == 403, answer
    for store, (_, text) in texts.items():
        on_disk = listed(world.paths[store])
        assert text in on_disk
        others = [t for s, (_, t) in texts.items() if s != store]
        assert not set(others) & set(on_disk), (store, on_disk)
    got, answer = world.call(
        "writer", "team", "POST", "/api/recall", {"query": "deploys Fridays"}
    )
    assert got == 200, answer
    assert [h["body"] for h in answer["hits"]] == ["Team deploys on Fridays"]


def test_one_process_is_the_hub_with_one_embedder_per_configuration(world) -> None:
    # Asked in the environment the server started in (its user's hub).
    asked = run_ctx(world.paths["docs"], "hub", "status", "--json", env=world.env)
    status = json.loads(asked.stdout)
    assert status["pid"] == world.server.proc.pid
    # team and docs share one embedder; open's configuration makes a second.
    assert status["embedders"] == 2
    # Every store served is held by the hub, loaded once: a shell's recall
    # of any of them is answered by the answerer the server's calls use.
    held = sorted(entry["store"] for entry in status["stores"])
    assert held == sorted(str(p.resolve()) for p in world.paths.values())
    assert all(entry["pinned"] for entry in status["stores"])


def test_the_root_urls_say_where_the_stores_are(world) -> None:
    for method, path in (("GET", "/api/memories"), ("POST", "/mcp")):
        got, answer = world.call("writer", None, method, path)
        assert got == 404, answer
        assert answer["error"]["hint"] == "GET /health lists the stores served."


async def test_mcp_is_per_store(world) -> None:
    team = world.server.at("team", world.keys["writer"])
    async with team.mcp_client() as client:
        wrote = await client.call_tool("remember", {"text": "Team MCP note"})
        assert not wrote.is_error, wrote
    async with world.server.at("docs").mcp_client() as client:
        seen = await client.call_tool("ls", {})
        assert not seen.is_error
        assert "Team MCP note" not in json.dumps(seen.structured_content)
        wrote = await client.call_tool("remember", {"text": "Docs MCP note"})
        assert not wrote.is_error, wrote
    assert "Team MCP note" in listed(world.paths["team"])
    assert "Docs MCP note" in listed(world.paths["docs"])
    assert "Docs MCP note" not in listed(world.paths["team"])
    for store, key in (("docs", world.keys["writer"]), ("team", world.keys["docs"])):
        with pytest.raises(Exception):  # noqa: B017, PT011 - refused at connect
            async with world.server.at(store, key).mcp_client() as client:
                await client.list_tools()


@pytest.mark.parametrize(
    ("given", "code", "error"),
    [
        (("{a}", "{a}/.ctx"), 4, "Error: The store {a}/.ctx is given twice.\n"),
        (
            ("x={a}", "X={b}"),
            4,
            "Error: Two stores are named 'x' and 'X'.\n"
            "Hint: Give each store a name of its own: --store NAME=PATH.\n",
        ),
        (
            ("{a}", "{a}/nothing"),
            6,
            "Error: No store at {a}/nothing.\n"
            "Hint: Run `ctx init` there, or fix --store.\n",
        ),
    ],
)
def test_bad_stores_are_one_line_before_anything_starts(
    tmp_path: Path, given, code, error
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_store(a / ".ctx")
    make_store(b / ".ctx")
    stores = [s.format(a=a, b=b) for s in given]
    done = subprocess.run(
        [str(CTX), "serve", "--port", "0"]
        + [part for store in stores for part in ("--store", store)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (code, "")
    assert done.stderr == error.format(a=a)
    # Nothing started: no owner key was made for either store.
    for store in (a, b):
        assert json.loads(ctx(store / ".ctx", "keys", "ls", "--json")) == []
