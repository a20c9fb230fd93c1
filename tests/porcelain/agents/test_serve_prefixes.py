"""Several stores in one `ctx serve`: names, prefixes and /health (issue 34).

The app is driven in process; tests/integration/test_serve_stores.py runs a
real server with real keys and MCP clients.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from ctx import engine
from ctx.engine import Draft, Intent, InvalidInputError, Store
from ctx.hub import Workspace
from ctx.hub.keys import AuthError
from ctx.porcelain.agents.http_app import StoreApp, build_stores_app
from ctx.porcelain.agents.replica import ReplicaHealth
from ctx.porcelain.agents.served import name_stores, split_spec


def _store(path: Path, text: str) -> Path:
    store = Store.init(path, clock=lambda: datetime.now().astimezone())
    engine.remember(store, Draft(text=text), Intent(agent="t", intent="observe"))
    store.close()
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    return path


@pytest.fixture
def workspaces(tmp_path: Path) -> Iterator[tuple[Workspace, Workspace]]:
    team = Workspace.find(_store(tmp_path / "team" / ".ctx", "Team deploys Fridays"))
    docs = Workspace.find(_store(tmp_path / "notes", "Docs live in the wiki"))
    yield team, docs
    team.close()
    docs.close()


def _only(token: str):
    def check(header: str | None):
        if header != f"Bearer {token}":
            raise AuthError("The API key is unknown or revoked.")
        return None

    return check


def _bodies(client: TestClient, path: str, token: str) -> list[str]:
    answer = client.get(path, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    return [m["headline"] for m in answer.json()]


def test_several_stores_answer_each_under_its_name(workspaces) -> None:
    team, docs = workspaces
    app = build_stores_app(
        [
            StoreApp(name="team", ws=team, check=_only("a")),
            StoreApp(name="docs", ws=docs, check=_only("b")),
        ]
    )
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert _bodies(client, "/s/team/api/memories", "a") == ["Team deploys Fridays"]
        assert _bodies(client, "/s/docs/api/memories", "b") == ["Docs live in the wiki"]
        # The API's description says where its paths are.
        spec = client.get(
            "/s/docs/api/openapi.json", headers={"Authorization": "Bearer b"}
        ).json()
        assert spec["servers"] == [{"url": "/s/docs"}]
        assert "/api/memories" in spec["paths"]
        refused = client.get(
            "/s/docs/api/memories", headers={"Authorization": "Bearer a"}
        )
        assert refused.status_code == 401
        assert refused.json()["error"]["type"] == "AuthError"
        for path in ("/api/memories", "/mcp", "/"):
            root = client.get(path, headers={"Authorization": "Bearer a"})
            assert root.status_code == 404
            assert root.json()["error"] == {
                "type": "NotFoundError",
                "message": "This server serves 2 stores, each under /s/NAME/ "
                "(/s/NAME/mcp, /s/NAME/api).",
                "hint": "GET /health lists the stores served.",
            }
        ghost = client.get("/s/ghost/api/memories").json()["error"]
        assert ghost["message"] == "No store named 'ghost' is served here."
        health = client.get("/health").json()
        assert health["store"] == str(team.path)
        assert health["stores"] == [
            {
                "name": "team",
                "path": str(team.path),
                "mcp": "/s/team/mcp",
                "api": "/s/team/api",
            },
            {
                "name": "docs",
                "path": str(docs.path),
                "mcp": "/s/docs/mcp",
                "api": "/s/docs/api",
            },
        ]
        own = client.get("/s/docs/health").json()
        assert (own["store"], own["stores"]) == (str(docs.path), [])
        # A page's request is refused before any store is looked for.
        page = client.get("/health", headers={"Origin": "http://evil.example"})
        assert page.status_code == 403


def test_one_store_answers_at_the_root_and_under_its_name(workspaces) -> None:
    team, _ = workspaces
    app = build_stores_app([StoreApp(name="team", ws=team, check=_only("a"))])
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert _bodies(client, "/api/memories", "a") == ["Team deploys Fridays"]
        assert _bodies(client, "/s/team/api/memories", "a") == ["Team deploys Fridays"]
        assert client.get("/api/memories").status_code == 401
        health = client.get("/health").json()
        assert (health["status"], health["store"]) == ("ok", str(team.path))
        assert [s["name"] for s in health["stores"]] == ["team"]


def test_the_first_store_is_the_replica_health_speaks_of(workspaces) -> None:
    team, docs = workspaces
    lag = ReplicaHealth(
        remote="origin", every=30.0, last_sync=None, unpushed=2, unmerged=0
    )
    app = build_stores_app(
        [
            StoreApp(name="team", ws=team, check=_only("a"), replica=lambda: lag),
            StoreApp(name="docs", ws=docs, check=_only("b")),
        ]
    )
    with TestClient(app, base_url="http://127.0.0.1") as client:
        replica = client.get("/health").json()["replica"]
        assert (replica["remote"], replica["unpushed"]) == ("origin", 2)
        assert client.get("/s/team/health").json()["replica"]["remote"] == "origin"
        assert client.get("/s/docs/health").json()["replica"] is None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("team", (None, "team")),
        ("docs=~/notes/.ctx", ("docs", "~/notes/.ctx")),
        ("./a=b", (None, "./a=b")),
        ("/x/a=b", (None, "/x/a=b")),
    ],
)
def test_a_store_option_is_a_path_or_a_name_and_a_path(spec, expected) -> None:
    assert split_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("a b=x", "'a b' cannot name a store in a URL."),
        ("-a=x", "'-a' cannot name a store in a URL."),
        ("docs=", "--store 'docs=' names no store folder."),
    ],
)
def test_a_bad_store_option_is_one_line(spec, message) -> None:
    with pytest.raises(InvalidInputError) as caught:
        split_spec(spec)
    assert caught.value.message == message


def test_a_folder_named_with_an_equals_sign_is_a_path(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a=b").mkdir()
    assert split_spec("a=b") == (None, "a=b")


def test_names_come_from_the_folders_made_unique(tmp_path: Path) -> None:
    paths = [
        tmp_path / "one" / "team" / ".ctx",
        tmp_path / "two" / "team" / ".ctx",
        tmp_path / "My Notes",
        tmp_path / "x" / "team",
    ]
    named = name_stores([Workspace(p) for p in paths], [None, None, None, "team"])
    assert [n.name for n in named] == ["team-2", "team-3", "My-Notes", "team"]


def test_the_same_store_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(InvalidInputError) as caught:
        name_stores([Workspace(tmp_path / "a"), Workspace(tmp_path / "b")], [None] * 2)
    assert caught.value.message == (
        f"The store {tmp_path / 'b'} is given twice (as {tmp_path / 'a'})."
    )


def test_two_names_alike_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as caught:
        name_stores(
            [Workspace(tmp_path / "a"), Workspace(tmp_path / "b")], ["Team", "team"]
        )
    assert caught.value.message == "Two stores are named 'Team' and 'team'."
