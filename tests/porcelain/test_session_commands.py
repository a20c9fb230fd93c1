"""ctx session ls/show/end, ctx review and ctx brief: wiring and rendering."""

from __future__ import annotations

import pytest

from ctx import engine
from ctx.engine import Store


@pytest.fixture
def worked(ctx, monkeypatch):
    """A store where session s1 (agent claude) wrote a decision and a fact."""
    monkeypatch.setenv("CTX_SESSION", "s1")
    monkeypatch.setenv("CTX_AGENT", "claude")
    decision = ctx("remember", "Postgres for the queue", "--kind", "decision")
    fact = ctx("remember", "Queue depth peaks at noon")
    monkeypatch.delenv("CTX_SESSION")
    monkeypatch.delenv("CTX_AGENT")
    ctx("remember", "Written outside any session")
    return ctx, decision.stdout.strip(), fact.stdout.strip()


def test_session_ls_lists_the_sessions_of_history(worked):
    ctx, _, _ = worked
    out = ctx("session", "ls").stdout
    assert out.startswith("s1  claude  ")
    assert out.endswith("  2 commits, 2 writes\n")
    [listed] = ctx.json("session", "ls")
    assert (listed["id"], listed["commits"], listed["summarized"]) == ("s1", 2, False)


def test_session_ls_with_no_session(ctx):
    assert ctx("session", "ls").stdout == (
        "No sessions: no commit here carries a Ctx-Session trailer.\n"
    )


def test_session_show_gives_its_commits_memories_and_decisions(worked):
    ctx, decision, fact = worked
    out = ctx("session", "show", "s1").stdout
    assert out.startswith("Session s1 (claude), ")
    assert "Commits (2):" in out
    assert f"  added    decision      {decision}  Postgres for the queue\n" in out
    assert f"  added    fact          {fact}  Queue depth peaks at noon\n" in out
    assert f"Decisions (1):\n  {decision}  Postgres for the queue\n" in out
    shown = ctx.json("session", "show", "s1")
    assert [m["id"] for m in shown["decisions"]] == [decision]


def test_session_show_of_an_unknown_session_fails_in_one_line(ctx):
    result = ctx("session", "show", "nope", code=3)
    assert result.stderr == (
        "Error: No session 'nope' in this history.\n"
        "Hint: `ctx session ls` lists them.\n"
    )


def test_session_end_writes_the_summary(worked, clock):
    ctx, _, _ = worked
    out = ctx("session", "end", "s1", "--summary", "Chose Postgres").stdout
    assert out.startswith("Ended session s1: sessions/s1/summary.json in ")
    assert ctx("session", "show", "s1").stdout.count("Chose Postgres") == 1
    store = Store.open(ctx.root / ".ctx", clock=clock)
    try:
        [s1] = engine.list_sessions(store)
        assert s1.summarized
        assert engine.session_detail(store, "s1").summary == "Chose Postgres"
    finally:
        store.close()


def test_session_end_without_a_summary_derives_one(worked):
    ctx, decision, _ = worked
    ctx("session", "end", "s1")
    shown = ctx.json("session", "show", "s1")
    assert shown["summary"].startswith("Session s1 (claude) made 2 commits")
    assert f"- decision {decision}: Postgres for the queue" in shown["summary"]


def test_review_shows_what_a_branch_learned(ctx):
    ctx("remember", "On main")
    ctx("branch", "agent/claude")
    learned = ctx("remember", "Workers scale at noon", "--branch", "agent/claude")
    out = ctx("review", "agent/claude").stdout
    assert out.startswith("agent/claude since it split from main: 1 commit\n")
    assert f"+ {learned.stdout.strip()}" in out
    assert out.endswith("Merge it with `ctx merge agent/claude`.\n")
    review = ctx.json("review", "agent/claude")
    assert review["fast_forward"] is True
    assert [a["id"] for a in review["diff"]["added"]] == [learned.stdout.strip()]


def test_review_of_a_missing_branch_fails_in_one_line(ctx):
    assert ctx("review", "agent/nobody", code=3).stderr.startswith(
        "Error: Unknown revision 'agent/nobody'.\n"
    )


def test_brief_gives_memories_and_recent_sessions(worked):
    ctx, _, _ = worked
    ctx("session", "end", "s1", "--summary", "Chose Postgres for the queue.")
    out = ctx("brief", "--budget", "600").stdout
    assert "Postgres for the queue" in out
    assert "## Recent sessions\n\n- `s1` (claude, " in out
    assert out.endswith("): Chose Postgres for the queue.\n")
    briefing = ctx.json("brief", "--budget", "600")
    assert briefing["tokens"] <= 600
    assert [s["session"]["id"] for s in briefing["sessions"]] == ["s1"]


def test_brief_of_an_empty_store(ctx):
    assert ctx("brief").stdout == (
        "Nothing to brief on yet: the store holds no memories or sessions.\n"
    )


def test_session_show_and_blame_shown_list_what_sessions_were_shown(worked):
    from datetime import UTC, datetime

    from ctx.hub.shown import Shown, record_shown

    ctx, decision, fact = worked
    store = ctx.root / ".ctx"
    when = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
    tip = "0123456789abcdef0123456789abcdef01234567"
    record_shown(
        store,
        Shown(
            when=when,
            via="recall",
            session="reader-1",
            agent="codex",
            branch="main",
            commit=tip,
            memories=(decision, fact),
        ),
    )
    out = ctx("session", "show", "reader-1").stdout
    assert out.startswith("Session reader-1 (codex), 2026-01-05 09:30 ..")
    assert out.endswith(
        "\nShown (1), when, how, at, agent, memories:\n"
        f"  2026-01-05 09:30:00  recall   main@0123456789  codex  {decision}, {fact}\n"
    )
    report = ctx.json("session", "show", "reader-1")
    assert report["recalls"] == [decision, fact]
    # --json holds the injections the text lists.
    assert report["shown"] == [
        {
            "when": "2026-01-05T09:30:00Z",
            "via": "recall",
            "session": "reader-1",
            "agent": "codex",
            "branch": "main",
            "commit": tip,
            "memories": [decision, fact],
        }
    ]
    assert ctx("blame", decision[-6:], "--shown").stdout == (
        "Shown 1 time; when, how, at, agent, session:\n"
        "  2026-01-05 09:30:00  recall   main@0123456789  codex  reader-1\n"
    )
    refused = ctx("blame", decision, "--shown", "--lines", code=2)
    assert refused.stderr.endswith("Error: Give --lines or --shown, not both.\n")
