"""The prompt-submit hook keeps the floor alone (issue 29).

An explicit recall whose best hit is under the relevance floor gives its
weak hits; the hook, which nobody asked, gives nothing then.
"""

from __future__ import annotations

from hook_support import context
from test_hooks import project  # noqa: F401  (a fixture)

from ctx.hub import Workspace, recall

PROMPT = "Which rollouts did we choose for the cluster?"


def configure(root, floor):
    (root / ".ctx" / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[hooks]\nfloor = -1.0\n'
        f"[recall]\nfloor = {floor}\n"
    )


def asked(root):
    ws = Workspace(root / ".ctx")
    try:
        return recall(ws, PROMPT)
    finally:
        ws.close()


def test_a_recall_of_weak_hits_gives_the_hook_nothing(project):  # noqa: F811
    configure(project, 0.0)
    best = max(h.relevance or 0.0 for h in asked(project).hits if not h.pinned)
    assert 0.1 < best < 0.9
    configure(project, round(best + 0.01, 4))
    weak = asked(project)
    assert weak.weak
    assert [h for h in weak.hits if not h.pinned]
    assert (
        context("prompt-submit", "user_prompt_submit", project, prompt=PROMPT) is None
    )
    configure(project, round(best - 0.01, 4))
    text = context(
        "prompt-submit", "user_prompt_submit", project, prompt=PROMPT, session_id="s2"
    )
    assert text is not None
    assert "Argo CD" in text


def test_the_hooks_block_names_no_pinned_memory_left_out():
    # The hooks give no pinned memory with a prompt: the session's start gave
    # them. A footer naming the pinned ones over half the budget was wrong.
    from datetime import UTC, datetime

    from ctx.hub import RecallResult, format_prompt
    from ctx.porcelain.hooks.blocks import with_hits

    result = RecallResult(
        query="queue",
        branch="main",
        commit="0" * 40,
        now=datetime(2026, 1, 5, tzinfo=UTC),
        budget=100,
        hits=(),
        tokens=0,
        live_memories=9,
        live_tokens=900,
        left_out=3,
        seconds=0.01,
        temporal=(),
        warnings=(),
        pinned_left_out=("pinned/general/a.json", "pinned/general/b.json"),
    )
    shown = with_hits(result, ())
    assert (shown.left_out, shown.pinned_left_out) == (1, ())
    assert "pinned" not in format_prompt(shown)
