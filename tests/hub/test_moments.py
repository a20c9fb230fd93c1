"""parse_moment: every time option's forms, phrases included (issue 16)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import ctx.hub
from ctx import engine
from ctx.engine import CommitNotFoundError, Draft, InvalidInputError
from ctx.hub import Workspace
from ctx.hub.retrieval.temporal.parse import moment_of

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)  # a Friday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        ("yesterday", datetime(2026, 3, 19, tzinfo=UTC)),
        ("Last Tuesday", datetime(2026, 3, 17, tzinfo=UTC)),
        ("2 weeks ago", datetime(2026, 3, 2, tzinfo=UTC)),  # that week's Monday
        ("3 days ago", datetime(2026, 3, 17, tzinfo=UTC)),
        ("2026-03-01T08:00+00:00", datetime(2026, 3, 1, 8, tzinfo=UTC)),
    ],
)
def test_parse_moment_reads_phrases_against_now(text, expected):
    assert ctx.hub.parse_moment(text, "--when", now=NOW) == expected


@pytest.mark.parametrize(
    "text", ["every Tuesday", "yesterday and today", "deploys yesterday", "soon", ""]
)
def test_what_names_no_single_moment_is_refused(text):
    assert moment_of(text, NOW) is None
    with pytest.raises(InvalidInputError) as caught:
        ctx.hub.parse_moment(text, "--now", now=NOW)
    assert caught.value.message == f"--now {text!r} is not a time."
    assert caught.value.hint is not None
    assert caught.value.hint.endswith(
        "or a phrase such as now, yesterday, last Tuesday or 2 weeks ago."
    )


def test_a_bare_time_is_local() -> None:
    moment = ctx.hub.parse_moment("2023-05-08T13:56")
    assert moment == datetime(2023, 5, 8, 13, 56).astimezone()


@pytest.fixture
def ws(tmp_path: Path, clock) -> Workspace:
    path = tmp_path / ".ctx"
    engine.Store.init(path, clock=clock).close()
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    workspace = Workspace(path, clock=clock)
    store = workspace.store(write=True)
    engine.remember(store, Draft(text="The API listens on 8080"), workspace.intent("x"))
    yield workspace
    workspace.close()


def test_recall_at_takes_a_phrase_as_a_moment(ws: Workspace) -> None:
    # The memories were written in January 2026.
    assert ctx.hub.recall(ws, "api", at="yesterday", now=NOW).live_memories == 1
    with pytest.raises(CommitNotFoundError, match="no commit made by"):
        ctx.hub.recall(ws, "api", at="2 years ago", now=NOW)


def test_recall_at_reads_a_branch_named_like_a_phrase(ws: Workspace) -> None:
    store = ws.store()
    engine.create_branch(store, "yesterday")
    engine.remember(store, Draft(text="The API is on 9090"), ws.intent("x"))
    assert ctx.hub.recall(ws, "api", at="yesterday", now=NOW).live_memories == 1
    assert ctx.hub.recall(ws, "api", at="today", now=NOW).live_memories == 2
