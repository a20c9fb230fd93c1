"""Every injected block names each memory's provenance (issue 33).

The agent that last wrote it, the branch and commit of that write, and its
date: in a recall's block (the hub's and the hooks' lexical one), in the
hook's prompt-submit context and in the session-start context.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hook_support import (
    add,
    bare_project,  # noqa: F401 (the fixture: project)
    engine_clock,
    payload,
)

from ctx.engine import Draft, Intent, Store, edit, remember
from ctx.hub import Workspace, format_prompt, recall
from ctx.hub.retrieval.lexical_recall import lexical_recall
from ctx.porcelain.hooks import run_hook

WRITER = Intent(agent="scribe", intent="observe")
EDITOR = Intent(agent="reviewer", intent="refine")


@pytest.fixture
def written(project: Path) -> tuple[Path, str, str]:
    """A memory written by one agent and edited by another: its id, last commit."""
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        first = remember(store, Draft(text="quokka deploys use blue green"), WRITER)
        memory_id = str(first.ids[0])
        edited = edit(
            store, memory_id, EDITOR, body="quokka deploys use blue green slots"
        )
        assert edited.commit is not None
        return project, memory_id, str(edited.commit)
    finally:
        store.close()


def expected(commit: str) -> str:
    # Written the day the memory is dated: the write's date is not repeated.
    return f"by reviewer, main@{commit[:10]})"


def header(block: str, memory_id: str) -> str:
    (line,) = [x for x in block.split("\n") if f"`{memory_id}`" in x]
    return line


def test_a_recall_block_names_the_last_write(written):
    root, memory_id, commit = written
    ws = Workspace.find(root / ".ctx")
    try:
        block = format_prompt(recall(ws, "quokka deploys", budget=500))
    finally:
        ws.close()
    assert expected(commit) in header(block, memory_id)


def test_the_lexical_block_names_the_last_write(written):
    root, memory_id, commit = written
    store = Store.open(root / ".ctx", clock=engine_clock)
    try:
        result = lexical_recall(
            store,
            "quokka deploys",
            branch="main",
            budget=500,
            floor=0.0,
            now=engine_clock(),
        )
    finally:
        store.close()
    assert expected(commit) in header(format_prompt(result), memory_id)


def test_the_hooks_contexts_name_the_last_write(written):
    root, memory_id, commit = written
    asked = payload("user_prompt_submit", root, prompt="quokka deploys?")
    prompt = json.loads(run_hook("prompt-submit", asked))
    text = prompt["hookSpecificOutput"]["additionalContext"]
    assert expected(commit) in header(text, memory_id)
    started = json.loads(run_hook("session-start", payload("session_start", root)))
    text = started["hookSpecificOutput"]["additionalContext"]
    assert f"; by reviewer, {commit[:10]}, " in header(text, memory_id)


def test_a_write_on_another_day_than_the_memorys_date_names_both(project):
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        when = datetime(2021, 3, 4, 12, 0, tzinfo=UTC)
        draft = Draft(text="wombat invoices close on fridays", when=when)
        made = remember(store, draft, WRITER)
        assert made.commit is not None
        commit = made.commit
    finally:
        store.close()
    ws = Workspace.find(project / ".ctx")
    try:
        block = format_prompt(recall(ws, "wombat invoices", budget=500))
    finally:
        ws.close()
    line = header(block, str(made.ids[0]))
    assert (
        f"(2021-03-04, by scribe, main@{commit.id[:10]}, {commit.time:%Y-%m-%d})"
        in line
    )


def test_what_compaction_gives_back_names_the_last_write(written):
    root, memory_id, commit = written
    config = root / ".ctx" / "config.toml"
    config.write_text(config.read_text() + "start_budget = 600\n")
    asked = payload("user_prompt_submit", root, prompt="quokka deploys?")
    json.loads(run_hook("prompt-submit", asked))  # shown to the session
    # The composed context takes reference memories first; each is smaller
    # than the edited one, so the room they leave can never hold it.
    for n in range(30):
        add(root, f"Note {n}: cache cleared.", tags=("tier:reference",))
    out = run_hook("session-start", payload("session_start_compact", root))
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    main, back = text.split("## Before compaction, this session had\n\n", 1)
    assert memory_id not in main
    assert f"`{memory_id}` (by reviewer, {commit[:10]}, " in back


def test_a_process_that_recalls_again_names_the_newer_write(written):
    root, memory_id, commit = written
    ws = Workspace.find(root / ".ctx")
    try:
        first = format_prompt(recall(ws, "quokka deploys", budget=500))
        assert expected(commit) in header(first, memory_id)
        again = edit(
            ws.store(write=True),
            memory_id,
            Intent(agent="auditor", intent="refine"),
            body="quokka deploys use blue green slots and canaries",
        )
        assert again.commit is not None
        block = format_prompt(recall(ws, "quokka deploys", budget=500))
    finally:
        ws.close()
    assert f"by auditor, main@{again.commit[:10]})" in header(block, memory_id)


@pytest.mark.parametrize("query", ["quokka deploys -->", "quokka deploys --->"])
def test_a_query_cannot_end_the_blocks_comment(written, query):
    root, _, _ = written
    ws = Workspace.find(root / ".ctx")
    try:
        block = format_prompt(recall(ws, query, budget=500))
    finally:
        ws.close()
    comments = [line for line in block.splitlines() if line.startswith("<!--")]
    [asked] = [line for line in comments if "quokka" in line]
    assert asked.endswith("-->")
    assert asked.count("--") == 2  # its own "<!--" and "-->"
