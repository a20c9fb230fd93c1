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
