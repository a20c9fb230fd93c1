"""A redaction leaves no copy of the text anywhere in the store (issue 33).

Beside the history, the store's private state (the hooks' waiting blocks
and log, the recall log, Dream's state), the caches and the index can hold
a memory's text. After ``ctx.hub.redact`` (a memory, or a text), no file
under the store and no object holds it; a redaction killed on the way is
finished by the next open, as the engine's own part is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import secret_samples as s
from redaction_checks import killed_after, store_bytes

from ctx.engine import Draft, Intent, Store, remember
from ctx.hub import Workspace, format_prompt, recall, redact
from ctx.hub.hook_log import log_path
from ctx.hub.redaction import SCRUB_PENDING

WRITER = Intent(agent="scribe", intent="observe")
KEY = s.github_token()
BODY = f"Deploy notes for the quokka cluster\nthe CI token is {KEY}\nrotate monthly"


def holders(root: Path, needle: str) -> list[str]:
    """The files under the store whose bytes hold ``needle`` (raw or in JSON)."""
    forms = (needle.encode(), json.dumps(needle)[1:-1].encode())
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and any(f in p.read_bytes() for f in forms)
    )


@pytest.fixture
def leaky(tmp_path: Path) -> tuple[Path, str]:
    """A store whose memory holds a token, copied into its private state."""
    root = tmp_path / ".ctx"
    store = Store.init(root, clock=lambda: datetime.now(UTC))
    try:  # the engine alone: no secret screen (as if allowed)
        memory_id = str(remember(store, Draft(text=BODY), WRITER).ids[0])
    finally:
        store.close()
    (root / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    ws = Workspace.find(root)
    try:
        # A recall: the recall log, the text cache, the index.
        block = format_prompt(recall(ws, f"quokka cluster CI token {KEY}", budget=500))
    finally:
        ws.close()
    assert KEY in block
    private = root / "private"
    # What the hooks keep for the next turn: a block, as JSON writes it.
    (private / "hooks").mkdir(parents=True, exist_ok=True)
    (private / "hooks" / "s1.json").write_text(json.dumps({"blocks": [block]}))
    (private / "hooks.log").write_text(f"2026-11-29 prompt-submit s1: {block}\n")
    (private / "dream").mkdir(exist_ok=True)
    (private / "dream" / "state.json").write_text(json.dumps({"seen": BODY}))
    assert len(holders(root, KEY)) >= 4
    return root, memory_id


def test_redacting_a_memory_leaves_its_text_in_no_file(leaky):
    root, memory_id = leaky
    # A hook with no store logs in the user's cache folder.
    cached = log_path(None)
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(f"2026-11-29 prompt-submit s0: the CI token is {KEY}\n")
    ws = Workspace.find(root)
    try:
        redact(ws.store(write=True), memory_id[-8:], reason="pasted token")
    finally:
        ws.close()
    assert KEY not in cached.read_text()
    assert "[REDACTED]" in cached.read_text()
    assert holders(root, KEY) == []
    assert KEY.encode() not in store_bytes(root)
    assert not (root / SCRUB_PENDING).exists()
    # The private files are still what their readers expect.
    kept = json.loads((root / "private" / "hooks" / "s1.json").read_text())
    assert "[REDACTED]" in kept["blocks"][0]
    assert json.loads((root / "private" / "dream" / "state.json").read_text())


def test_redacting_a_text_leaves_it_in_no_file(leaky):
    root, _ = leaky
    ws = Workspace.find(root)
    try:
        redact(ws.store(write=True), KEY, text=True)
        assert KEY not in format_prompt(recall(ws, "quokka cluster", budget=500))
    finally:
        ws.close()
    assert holders(root, KEY) == []
    assert KEY.encode() not in store_bytes(root)


_KILL = killed_after(
    "ctx.hub.redaction",
    """
    from ctx.hub import Workspace
    ws = Workspace.find(root)
    patched.redact(ws.store(write=True), target)
    """,
)


@pytest.mark.parametrize("step", ["drop_index", "redact_memory", "scrub_store"])
def test_a_redaction_killed_on_the_way_is_finished_by_the_next_open(leaky, step):
    root, memory_id = leaky
    done = subprocess.run(
        [sys.executable, "-c", _KILL, str(root), step, memory_id],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 9, done.stderr
    assert (root / SCRUB_PENDING).exists()

    ws = Workspace.find(root)
    try:
        ws.store()
        assert not (root / SCRUB_PENDING).exists()
        assert holders(root / "private", KEY) == []
        block = format_prompt(recall(ws, "quokka CI token", budget=500))
        if step == "drop_index":  # killed before the rewrite: history as it was
            assert KEY in block
        else:  # the index rebuilt holds no copy either
            assert KEY not in block
            assert KEY.encode() not in store_bytes(root)
            assert holders(root, KEY) == []
    finally:
        ws.close()
