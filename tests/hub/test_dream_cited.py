"""The reference tier from what the hooks showed and the agent then cited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dream_support import hashing_workspace, proposals, remember

from ctx.hub import dream
from ctx.hub.dream.cited import MAX_SESSIONS, cited_counts, cited_in, note_cited
from ctx.hub.session_state import editing
from ctx.porcelain.hooks import run_hook

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"
IDS = ("01JAAAAAAAAAAAAAAAAAAAAAAA", "01JBBBBBBBBBBBBBBBBBBBBBBB")


@pytest.fixture
def ws(disk_store, monkeypatch):
    monkeypatch.setenv("CTX_NO_HUB", "1")
    workspace = hashing_workspace(disk_store)
    yield workspace
    workspace.close()


def stop(ws, session: str, message: str) -> None:
    data = json.loads((FIXTURES / "stop.json").read_text())
    data.update(
        cwd=str(ws.path.parent), session_id=session, last_assistant_message=message
    )
    assert run_hook("stop", json.dumps(data).encode()) == ""


def test_only_what_was_shown_and_named_by_the_answer_counts(tmp_path):
    store = tmp_path / ".ctx"
    store.mkdir()
    answer = f"Per `{IDS[0]}` we use uv; 01JCCCCCCCCCCCCCCCCCCCCCCC was never shown."
    assert note_cited(store, "s1", IDS, answer) == 1
    # Cited again in one session: once; in others: once each, the latest kept.
    note_cited(store, "s1", IDS, answer)
    assert cited_counts(store) == {IDS[0]: 1}
    for n in range(MAX_SESSIONS + 3):
        note_cited(store, f"t{n}", IDS, answer)
    assert cited_counts(store) == {IDS[0]: MAX_SESSIONS}
    # Shown but not named: nothing; named in a command's tag: nothing.
    assert note_cited(store, "s2", IDS, "We use uv.") == 0
    command = f'<ctx:supersede old="{IDS[1]}" new="{IDS[0]}"/>'
    assert note_cited(store, "s2", IDS, command) == 0
    assert cited_in(IDS, f"<ctx:remember>as `{IDS[1]}` says</ctx:remember>") == [IDS[1]]


def test_the_stop_hook_records_shown_memories_the_answer_cites(ws):
    uv = remember(ws, "Use uv for Python environments", days_ago=2)
    plant = remember(ws, "The office plant needs water on Fridays", days_ago=2)
    with editing(ws.path, "s1") as state:
        state.note_shown([uv, plant])
    stop(ws, "s1", f"I set up the venv with uv, as memory `{uv}` says.")
    # A session that was shown nothing records nothing, whatever it names.
    stop(ws, "s2", f"I set up the venv with uv, as memory `{uv}` says.")
    assert cited_counts(ws.path) == {uv: 1}


def test_memories_cited_in_sessions_become_reference_not_those_only_shown(ws):
    uv = remember(ws, "Use uv for Python environments", days_ago=2)
    plant = remember(ws, "The office plant needs water on Fridays", days_ago=2)
    limits = dream.Thresholds()
    for n in range(limits.reference_uses + 2):
        session = f"s{n}"
        with editing(ws.path, session) as state:
            state.note_shown([uv, plant])
        cites = n < limits.reference_uses
        stop(ws, session, f"Done, see `{uv}`." if cites else "Done.")
    dream.run(ws, budget=50)
    [tier] = proposals(ws, "tier")
    assert [(t.memory, t.tag) for t in tier.tags] == [(uv, "tier:reference")]
