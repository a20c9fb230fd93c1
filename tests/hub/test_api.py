"""The hub's public API: a workspace, and calls that answer the same in-process
as through a running hub (issue 11)."""

from __future__ import annotations

import shutil
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

import ctx.hub
from ctx import engine
from ctx.engine import (
    CommitNotFoundError,
    Draft,
    InvalidInputError,
    NotAStoreError,
    RefNotFoundError,
)
from ctx.hub import Workspace

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)


@pytest.fixture
def ws(tmp_path: Path, clock) -> Workspace:
    path = tmp_path / "project" / ".ctx"
    engine.Store.init(path, clock=clock).close()
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    workspace = Workspace(path, clock=clock)
    store = workspace.store(write=True)
    for text in ("We chose Postgres for the queue", "The API listens on 8080"):
        engine.remember(store, Draft(text=text), workspace.intent("observe"))
    yield workspace
    workspace.close()


def test_find_walks_up_to_the_nearest_store(ws: Workspace, tmp_path: Path) -> None:
    deep = ws.path.parent / "src" / "pkg"
    deep.mkdir(parents=True)
    found = Workspace.find(cwd=deep, environ={})
    assert (found.path, found.user_store) == (ws.path, False)


def test_find_prefers_the_given_store_then_ctx_dir(
    ws: Workspace, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "other"
    env = {"CTX_DIR": str(elsewhere)}
    assert Workspace.find(cwd=ws.path.parent, environ=env).path == elsewhere
    # A folder holding .ctx/ means that store.
    given = Workspace.find(ws.path.parent, cwd=tmp_path, environ=env)
    assert given.path == ws.path


def test_find_falls_back_to_the_user_store(tmp_path: Path) -> None:
    found = Workspace.find(cwd=tmp_path, environ={})
    assert found.user_store
    assert not found.on_disk
    assert found.store().path is None  # read while absent: empty, in memory
    found.store(write=True)
    assert (found.path / "git").is_dir()


def test_a_workspace_reads_the_user_store_once_another_process_made_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long `ctx mcp` started before the user store existed answered from
    # its empty stand-in for good, after a shell's `ctx remember` made it.
    from ctx.hub import Caller, calls

    monkeypatch.setenv("CTX_NO_HUB", "1")
    serving = Workspace.find(cwd=tmp_path, environ={})
    assert not ctx.hub.recall(serving, "postgres queue", now=NOW).hits
    assert calls.status(serving, Caller(), calls.StatusRequest()).head is None
    shell = Workspace.find(cwd=tmp_path, environ={})
    said = calls.RememberRequest(text="The job queue runs on Postgres.")
    calls.remember(shell, Caller(), said)
    shell.close()
    found = ctx.hub.recall(serving, "postgres queue", now=NOW)
    assert [h.body for h in found.hits] == ["The job queue runs on Postgres."]
    assert calls.status(serving, Caller(), calls.StatusRequest()).head is not None
    serving.close()


def test_find_reads_branch_agent_and_session_from_the_environment(
    tmp_path: Path,
) -> None:
    env = {"CTX_BRANCH": "agent/a", "CTX_AGENT": "alice", "CTX_SESSION": "s1"}
    found = Workspace.find(tmp_path, environ=env)
    assert (found.branch, found.agent, found.session) == ("agent/a", "alice", "s1")
    who = found.intent("decide", confidence=0.5)
    assert (who.agent, who.intent, who.session, who.confidence) == (
        "alice",
        "decide",
        "s1",
        0.5,
    )
    assert found.intent("observe", agent="bob").agent == "bob"


def test_a_missing_explicit_store_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(NotAStoreError, match="No store at"):
        Workspace.find(tmp_path / "nope", environ={}).store()


def test_recall_and_search_answer_in_process(ws: Workspace) -> None:
    result = ctx.hub.recall(ws, "postgres queue", now=NOW, explain=True)
    assert result.hits[0].body == "We chose Postgres for the queue"
    assert result.hits[0].explain is not None
    assert result.notices == ()
    found = ctx.hub.search(ws, "api", limit=1, now=NOW)
    assert [h.body for h in found.hits] == ["The API listens on 8080"]


def test_recall_takes_at_as_a_date_or_a_revision(ws: Workspace) -> None:
    with pytest.raises(CommitNotFoundError, match="no commit made by 2000-01-01"):
        ctx.hub.recall(ws, "api", at="2000-01-01", now=NOW)
    later = ctx.hub.recall(ws, "api", at="2100-01-01", now=NOW)
    assert later.live_memories == 2
    first = ctx.hub.recall(ws, "postgres", at="main~1", now=NOW)
    assert first.live_memories == 1
    assert [h.body for h in first.hits] == ["We chose Postgres for the queue"]
    with pytest.raises(InvalidInputError, match="--at '2000-13-01' is not a time"):
        ctx.hub.recall(ws, "api", at="2000-13-01", now=NOW)
    with pytest.raises(RefNotFoundError):
        ctx.hub.recall(ws, "api", branch="no-such-branch", now=NOW)


def test_the_workspace_branch_is_the_default(ws: Workspace) -> None:
    engine.create_branch(ws.store(), "agent/x")
    ws.branch = "agent/x"
    assert ctx.hub.recall(ws, "api", now=NOW).branch == "agent/x"
    assert ctx.hub.recall(ws, "api", branch="main", now=NOW).branch == "main"


def test_a_rebuilt_index_is_a_notice_in_the_result(ws: Workspace) -> None:
    ctx.hub.recall(ws, "api", now=NOW)
    state = ws.path / "index" / "state.json"
    state.write_text("not json")
    result = ctx.hub.recall(ws, "api", now=NOW)
    assert len(result.notices) == 1
    assert result.notices[0].startswith("The index was unreadable")
    assert result.hits[0].body == "The API listens on 8080"
    assert ctx.hub.recall(ws, "api", now=NOW).notices == ()


def test_reindex_reports_progress_and_status_sees_it(ws: Workspace) -> None:
    seen: list[tuple[int, int]] = []
    report = ctx.hub.reindex(
        ws, progress=lambda done, total: seen.append((done, total))
    )
    assert report.documents == 2
    assert seen[-1] == (2, 2)
    status = ctx.hub.index_status(ws)
    assert status.documents == 2
    assert [b.current for b in status.branches] == [True]
    shutil.rmtree(ws.path / "index")
    assert ctx.hub.index_status(ws).documents == 0


def test_the_hub_answers_the_same_as_the_process(ws: Workspace) -> None:
    alone = ctx.hub.recall(ws, "postgres", now=NOW, explain=True)
    assert ctx.hub.hub_status(ws).running is False
    started: list[ctx.hub.HubStarted] = []
    ready = threading.Event()

    def serve() -> None:
        ctx.hub.run_hub(
            Workspace(ws.path, clock=ws.clock),
            ready=lambda s: (started.append(s), ready.set()),
        )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        status = ctx.hub.hub_status(ws)
        assert status.running
        assert status.socket == started[0].socket
        served = ctx.hub.recall(ws, "postgres", now=NOW, explain=True)
        assert served.hits == alone.hits
        seen: list[tuple[int, int]] = []
        report = ctx.hub.reindex(ws, progress=lambda d, t: seen.append((d, t)))
        assert report.documents == 2
        assert seen == [(2, 2)]  # streamed from the hub
        assert ctx.hub.index_status(ws).documents == 2
        with pytest.raises(InvalidInputError, match="The query is empty"):
            ctx.hub.search(ws, "  ", now=NOW)
    finally:
        stopped = ctx.hub.stop_hub(ws)
        thread.join(30)
    assert stopped.stopped
    assert ctx.hub.hub_status(ws).running is False


def test_run_hub_refuses_a_user_store_not_made_yet(tmp_path: Path) -> None:
    found = Workspace.find(cwd=tmp_path, environ={})
    with pytest.raises(NotAStoreError, match="does not exist yet"):
        ctx.hub.run_hub(found)


def test_parse_moment_reads_iso_dates_as_local_when_bare() -> None:
    assert ctx.hub.parse_moment("2023-05-08T13:56+02:00").utcoffset() is not None
    assert ctx.hub.parse_moment("2023-05-08").tzinfo is not None
    with pytest.raises(InvalidInputError, match="--now 'soon' is not a time"):
        ctx.hub.parse_moment("soon", "--now")


def test_calls_without_a_hub_reuse_the_workspaces_indexes(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctx.hub.retrieval.index.projection import Projection

    made = []
    original = Projection.for_store.__func__  # type: ignore[attr-defined]

    def counting(cls, *args, **kwargs):
        made.append(args)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(Projection, "for_store", classmethod(counting))
    for _ in range(3):
        assert ctx.hub.recall(ws, "postgres", now=NOW).hits
    ctx.hub.search(ws, "api", now=NOW)
    assert len(made) == 1
    other = Workspace(ws.path, clock=ws.clock)
    ctx.hub.recall(other, "postgres", now=NOW)
    assert len(made) == 2
    other.close()
