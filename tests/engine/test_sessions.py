import pytest

from ctx.engine import (
    Draft,
    Intent,
    InvalidInputError,
    NotFoundError,
    edit,
    list_sessions,
    remember,
    session_detail,
    show,
    summarize_session,
)


def _in(session: str, agent: str = "claude") -> Intent:
    return Intent(agent=agent, intent="observe", session=session)


def test_sessions_are_derived_from_the_trailers(store, intent):
    a = remember(
        store, Draft(text="Postgres for the queue", kind="decision"), _in("s1")
    )
    remember(store, Draft(text="The queue is slow"), _in("s2", "codex"))
    edit(store, a.ids[0], _in("s1"), body="Postgres for the job queue")
    remember(store, Draft(text="no session here"), intent)
    sessions = list_sessions(store)
    assert {s.id for s in sessions} == {"s1", "s2"}
    one = next(s for s in sessions if s.id == "s1")
    assert (one.agent, one.commits, one.writes) == ("claude", 2, 2)
    assert not one.summarized
    two = next(s for s in sessions if s.id == "s2")
    assert (two.agent, two.commits, two.writes) == ("codex", 1, 1)


def test_session_detail_lists_what_it_wrote_and_decided(store):
    a = remember(
        store, Draft(text="Postgres for the queue", kind="decision"), _in("s1")
    )
    b = remember(store, Draft(text="Queue depth peaks at noon"), _in("s1"))
    edit(store, a.ids[0], _in("s1"), body="Postgres for the job queue")
    detail = session_detail(store, "s1")
    assert len(detail.commits) == 3
    assert [m.id for m in detail.memories] == [a.ids[0], b.ids[0]]
    assert [m.status for m in detail.memories] == ["added", "added"]
    assert [m.id for m in detail.decisions] == [a.ids[0]]
    assert detail.summary is None


def test_unknown_session_is_not_found(store):
    with pytest.raises(NotFoundError):
        session_detail(store, "nope")


def test_summarize_session_writes_three_memories_in_one_commit(store):
    remember(store, Draft(text="Queue depth peaks at noon"), _in("s1"))
    result = summarize_session(
        store,
        "s1",
        _in("s1"),
        summary="Looked into the queue.",
        decisions=["Use Postgres", "Alert at depth 1000"],
        details="Measured for a week.",
    )
    assert result.commit is not None
    assert result.paths == (
        "sessions/s1/summary.json",
        "sessions/s1/decisions.json",
        "sessions/s1/details.json",
    )
    kinds = [show(store, i).memory.kind for i in result.ids]
    assert kinds == ["summary", "decision", "session"]
    assert show(store, result.ids[1]).memory.body == (
        "- Use Postgres\n- Alert at depth 1000"
    )
    detail = session_detail(store, "s1")
    assert detail.summary == "Looked into the queue."
    assert detail.session.summarized
    again = summarize_session(store, "s1", _in("s1"), summary="Done with the queue.")
    assert again.ids == result.ids[:1]  # the same memory, a new version
    assert session_detail(store, "s1").summary == "Done with the queue."


def test_summarize_session_refuses_bad_input(store):
    with pytest.raises(InvalidInputError):
        summarize_session(store, "../x", _in("s1"), summary="x")
    with pytest.raises(InvalidInputError):
        summarize_session(store, "s1", _in("s1"), summary="  ")


def test_review_shows_what_a_branch_added_since_it_split(store, intent):
    from ctx.engine import create_branch, review

    remember(store, Draft(text="On main"), intent)
    create_branch(store, "agent/a")
    learned = remember(store, Draft(text="Learned"), _in("s1"), branch="agent/a")
    remember(store, Draft(text="Main moved on"), intent)
    result = review(store, "agent/a")
    assert [e.commit.id for e in result.log] == [learned.commit.id]
    assert [m.id for m in result.diff.added] == [learned.ids[0]]
    assert (result.behind, result.fast_forward) == (1, False)


def test_brief_holds_memories_and_sessions_within_its_budget(store, intent, clock):
    from ctx.engine import brief

    remember(store, Draft(text="Postgres for the queue", kind="decision"), intent)
    remember(store, Draft(text="Depth peaks at noon"), _in("s1"))
    summarize_session(store, "s1", _in("s1"), summary="Measured the queue.")
    result = brief(store, budget=300, now=clock())
    assert result.tokens <= 300
    assert "Postgres for the queue" in result.text
    assert [(s.session.id, s.summary) for s in result.sessions] == [
        ("s1", "Measured the queue.")
    ]
    with pytest.raises(InvalidInputError):
        brief(store, budget=10, now=clock())


def test_sessions_come_from_the_history_cache_and_old_lines_too(disk_store, clock):
    import json

    from ctx.engine import Store, list_sessions

    remember(disk_store, Draft(text="one"), _in("s1"))
    remember(disk_store, Draft(text="two"), _in("s2"))
    cache = disk_store.path / "cache" / "history.jsonl"
    lines = [json.loads(line) for line in cache.read_text().splitlines()]
    assert {line[5] for line in lines if len(line) > 5} >= {"s1", "s2"}
    path = disk_store.path
    disk_store.close()
    # Lines written before sessions were recorded: the commits tell instead.
    cache.write_text("".join(json.dumps(line[:5]) + "\n" for line in lines))
    store = Store.open(path, clock=clock)
    try:
        assert {s.id for s in list_sessions(store)} == {"s1", "s2"}
    finally:
        store.close()
