"""The record of what each session was shown: hooks and recalls (issue 33)."""

from __future__ import annotations

from datetime import UTC, datetime

from hook_support import (  # noqa: F401 (bare_project: the fixture project)
    OWNER,
    SESSION,
    add,
    bare_project,
    context,
    engine_clock,
)

from ctx.engine import Store
from ctx.hub import Workspace
from ctx.hub import shown as shown_module
from ctx.hub.access import Caller
from ctx.hub.calls import RecallRequest, recall
from ctx.hub.shown import (
    Shown,
    memory_shown,
    read_shown,
    record_shown,
    session_shown,
)


def test_hooks_and_recalls_record_what_each_session_was_shown(project):
    queue = add(project, "The job queue lives in Postgres, read with SKIP LOCKED.")
    add(project, "Deploys go out with Argo CD.")
    given = context(
        "prompt-submit",
        "user_prompt_submit",
        project,
        prompt="Where does the job queue live?",
    )
    assert given is not None
    assert queue in given

    ws = Workspace.find(project / ".ctx")
    try:
        result = recall(
            ws,
            Caller(agent="reader", session="mcp-1"),
            RecallRequest(query="job queue postgres"),
        )
        hooked = session_shown(ws, SESSION)
        recalled = session_shown(ws, "mcp-1")
        to_queue = memory_shown(ws, queue[-8:])
        tip = ws.store().branch_tip("main")
    finally:
        ws.close()

    (hook_entry,) = hooked
    assert hook_entry.via == "hook"
    assert hook_entry.agent == "claude-code"
    assert queue in hook_entry.memories
    assert (hook_entry.branch, hook_entry.commit) == ("main", tip)
    (recall_entry,) = recalled
    assert recall_entry.via == "recall"
    assert recall_entry.agent == "reader"
    assert recall_entry.memories == tuple(h.id for h in result.hits)
    assert recall_entry.commit == result.commit
    assert {e.session for e in to_queue} == {SESSION, "mcp-1"}

    # A memory given once is not given again, nor recorded again.
    context("prompt-submit", "user_prompt_submit", project, prompt="job queue again?")
    assert len([e for e in read_shown(project / ".ctx") if e.via == "hook"]) == 1


def test_the_record_is_private_and_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(shown_module, "MAX_BYTES", 2_000)
    store = tmp_path / ".ctx"
    store.mkdir()
    when = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(100):
        entry = Shown(when=when, via="recall", session=f"s{n}", memories=(f"M{n}",))
        record_shown(store, entry)
    path = store / "private" / "shown.jsonl"
    assert path.stat().st_size <= 2_000
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    kept = read_shown(store)
    assert kept[-1].session == "s99"
    assert len(kept) < 100
    # A torn last line (a writer killed mid-append) is skipped.
    with path.open("ab") as file:
        file.write(b'{"version":1,"when":"2026')
    assert read_shown(store) == kept
    record_shown(store, Shown(when=when, via="hook", memories=()))  # nothing shown
    assert read_shown(store) == kept


def test_a_hook_records_where_its_recall_read(project):
    # With [recall] reviewed_only the hook recalls the reviewed branch (main)
    # while HEAD is an agent's branch, ahead of it: the record names main
    # and main's tip, where the memories given were read, not HEAD's.
    from ctx import engine
    from ctx.engine import Draft

    queue = add(project, "The job queue lives in Postgres, read with SKIP LOCKED.")
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        main_tip = store.branch_tip("main")
        engine.create_branch(store, "agent/bot")
        note = Draft(text="The bot's own note on the queue.")
        engine.remember(store, note, OWNER, branch="agent/bot")
        engine.switch_branch(store, "agent/bot")
    finally:
        store.close()
    with (project / ".ctx" / "config.toml").open("a") as f:
        f.write("[recall]\nreviewed_only = true\n")
    given = context(
        "prompt-submit", "user_prompt_submit", project, prompt="job queue postgres?"
    )
    assert given is not None
    assert queue in given

    (entry,) = read_shown(project / ".ctx")
    assert (entry.branch, entry.commit) == ("main", main_tip)
    assert queue in entry.memories
