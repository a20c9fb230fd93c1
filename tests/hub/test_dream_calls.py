"""Dream's agent calls in-process: the caller's scope and signature."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from ctx import engine
from ctx.engine import Draft, ReadOnlyStoreError, RefNotFoundError
from ctx.hub import Workspace
from ctx.hub.access import Caller
from ctx.hub.calls import CALLS, invoke

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)


@dataclass(frozen=True)
class Patterns:
    readable: frozenset[str]
    writable: frozenset[str]

    def can_read(self, branch: str) -> bool:
        return branch in self.readable

    def can_write(self, branch: str) -> bool:
        return branch in self.writable

    def agent_name(self) -> str:
        return "patterns"

    def may_sign(self, agent: str) -> bool:
        return agent == "patterns"


@pytest.fixture
def ws(disk_store):
    (disk_store.path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    engine.remember(
        disk_store,
        Draft(text="Standup is every Monday at nine"),
        engine.Intent(agent="tester", intent="observe"),
    )
    return Workspace(disk_store.path, clock=lambda: NOW)


def call(ws, caller, name, **arguments):
    return invoke(ws, caller, CALLS[name], arguments)


def test_a_key_that_may_only_read_can_look_but_not_run_or_review(ws):
    owner = Caller(agent="owner")
    call(ws, owner, "dream_run", budget=5)
    reader = Caller(
        agent="reader",
        scope=Patterns(frozenset({"main", "dream/main"}), frozenset()),
    )
    assert call(ws, reader, "dream_status").proposals == {"proposed": 1}
    [waiting] = call(ws, reader, "dream_review").proposals
    tip = ws.store().branch_tip("dream/main")
    for name, arguments in (
        ("dream_run", {}),
        ("dream_accept", {"all": True}),
        ("dream_reject", {"ids": [waiting.proposal.id]}),
        ("dream_merge", {}),
    ):
        with pytest.raises(ReadOnlyStoreError):
            call(ws, reader, name, **arguments)
    assert ws.store().branch_tip("dream/main") == tip
    # Main alone: Dream's proposals are as hidden as a missing branch.
    blind = Caller(scope=Patterns(frozenset({"main"}), frozenset({"main"})))
    with pytest.raises(RefNotFoundError):
        call(ws, blind, "dream_review")


def test_a_review_is_signed_by_the_caller(ws):
    caller = Caller(agent="claude-code", session="mcp-1")
    call(ws, caller, "dream_run")
    done = call(ws, caller, "dream_accept", all=True)
    [entry] = engine.log(ws.store(), rev="dream/main", limit=1)
    assert entry.commit.id == done.commit
    assert (entry.commit.intent.agent, entry.commit.intent.session) == (
        "claude-code",
        "mcp-1",
    )
    merged = call(ws, caller, "dream_merge")
    assert len(merged.merged) == 1
    [merge] = engine.log(ws.store(), rev="main", limit=1)
    assert (merge.commit.intent.agent, merge.commit.intent.session) == (
        "claude-code",
        "mcp-1",
    )
    assert merge.commit.intent.intent == "merge"
