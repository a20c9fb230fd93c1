"""Recall learns from use: recall ids, the feedback log, learning steps."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ctx import engine
from ctx.engine import Draft, InvalidInputError, NotFoundError, new_memory_id
from ctx.hub import Workspace, feedback, learn, recall, recall_weights
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.feedback import LOG_FILE, read_log


@pytest.fixture
def ws(disk_store, clock):
    (disk_store.path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    workspace = Workspace(disk_store.path, agent="tester", clock=clock)
    yield workspace
    workspace.close()


def write(store, *texts):
    who = engine.Intent(agent="tester", intent="observe")
    done = engine.remember_many(store, [Draft(text=t) for t in texts], who)
    return list(done.ids)


def test_a_recall_has_an_id_and_its_hits_are_logged(disk_store, ws):
    [a, _] = write(disk_store, "the queue runs on postgres", "deploys on fridays")
    result = recall(ws, "postgres queue")
    assert result.recall_id is not None
    assert result.recall_id.startswith("r")
    logged = read_log(disk_store.path).recalls[result.recall_id]
    assert (logged.agent, logged.query) == ("tester", "postgres queue")
    assert [h.id for h in logged.hits] == [h.id for h in result.hits]
    assert a in {h.id for h in logged.hits}


def test_feedback_survives_a_restart_and_names_the_recall(disk_store, ws, clock):
    [a, _] = write(disk_store, "the queue runs on postgres", "deploys on fridays")
    rid = recall(ws, "postgres queue").recall_id
    again = Workspace(disk_store.path, agent="tester", clock=clock)  # a new process
    done = feedback(again, rid, [a.lower()])
    again.close()
    assert (done.recall, done.used) == (rid, (a,))
    [fed] = read_log(disk_store.path).feedback
    assert (fed.recall, fed.used) == (rid, (a,))


def test_bad_feedback_is_refused_and_changes_nothing(disk_store, ws, clock):
    [a, _] = write(disk_store, "the queue runs on postgres", "deploys on fridays")
    rid = recall(ws, "postgres queue").recall_id
    log = disk_store.path / "private" / LOG_FILE
    before = log.read_bytes()
    other = "r" + new_memory_id(clock())
    old = "r" + new_memory_id(clock() - timedelta(days=8))
    cases = [
        ("r-nonsense", [a], InvalidInputError, "is not a recall id"),
        (other, [a], NotFoundError, f"This store gave no recall {other}."),
        (old, [a], InvalidInputError, "is older than 7 days"),
        (rid, [], InvalidInputError, "No memory was named as used."),
        (rid, [a, "01ARZ3NDEKTSV4RRFFQ69G5FAV"], InvalidInputError, "did not return"),
    ]
    for recall_id, used, error, words in cases:
        with pytest.raises(error, match=words.replace("(", r"\(")):
            feedback(ws, recall_id, used)
    assert log.read_bytes() == before


def ranked_ids(ws, query):
    return [h.id for h in recall(ws, query).hits]


def test_learning_moves_weights_towards_the_used_hit_within_bounds(disk_store, ws):
    ids = write(
        disk_store,
        "alpha beta gamma delta",
        "alpha beta notes",
        "alpha",
        "unrelated words entirely",
    )
    config = RecallConfig()
    for _ in range(3):
        result = recall(ws, "alpha beta")
        last = result.hits[-1].id  # a hit ranked below the others
        feedback(ws, result.recall_id, [last])
    step = learn(ws)
    assert step.before.reason == "config"
    assert step.after.feedback == 3
    assert step.after.mistakes > 0
    moved = [
        abs(getattr(step.after, n) / getattr(step.before, n) - 1)
        for n in ("bm25", "vector", "fuzzy")
    ]
    assert 0 < max(moved) <= 0.1 + 1e-9  # a small step
    assert step.after.budget < config.budget  # what was used cost far less
    with pytest.raises(NotFoundError, match="No new feedback from tester"):
        learn(ws)  # each feedback is learned from once
    shown = recall_weights(ws)
    assert shown.current == step.after
    assert [t.reason for t in shown.history] == ["learned"]
    assert shown.bounds["bm25"] == (0.25, 4.0)
    assert ids  # the memories exist; the ranking used them


def test_learned_weights_are_used_and_can_be_undone_and_reset(disk_store, ws):
    write(disk_store, "alpha beta gamma", "alpha beta", "alpha")
    result = recall(ws, "alpha beta")
    feedback(ws, result.recall_id, [result.hits[-1].id])
    step = learn(ws)
    assert recall(ws, "alpha beta").budget == step.after.budget
    assert recall(ws, "alpha beta", agent="someone-else").budget == 1500
    reset = recall_weights(ws, reset=True)
    assert reset.current.reason == "reset"
    assert (reset.current.bm25, reset.current.budget) == (1.0, 1500)
    with pytest.raises(NotFoundError):
        learn(ws)  # a reset does not relearn the same feedback
    undone = recall_weights(ws, undo=True)
    assert undone.current == step.after
    assert recall_weights(ws, undo=True).current.reason == "config"
    with pytest.raises(InvalidInputError, match="no learned weights to undo"):
        recall_weights(ws, undo=True)


def test_many_steps_stay_within_the_bounds(disk_store, ws):
    write(disk_store, "alpha beta gamma", "alpha beta", "alpha")
    for _ in range(30):
        result = recall(ws, "alpha beta")
        feedback(ws, result.recall_id, [result.hits[-1].id])
        learn(ws)
    current = recall_weights(ws).current
    config = RecallConfig()
    for name in ("bm25", "vector", "fuzzy"):
        value = getattr(current, name)
        assert getattr(config, name) / 4 <= value <= getattr(config, name) * 4
    assert 375 <= current.budget <= 6000


def test_a_recall_of_a_branch_the_caller_may_not_read_is_refused_as_unknown(
    disk_store, ws
):
    [a, _] = write(disk_store, "the queue runs on postgres", "deploys on fridays")
    rid = recall(ws, "postgres queue").recall_id
    log = disk_store.path / "private" / LOG_FILE
    before = log.read_bytes()
    with pytest.raises(NotFoundError, match=f"This store gave no recall {rid}."):
        feedback(ws, rid, [a], readable=lambda branch: branch != "main")
    assert log.read_bytes() == before
    assert feedback(ws, rid, [a], readable=lambda branch: branch == "main").used == (a,)
