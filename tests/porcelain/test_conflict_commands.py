"""A memory in conflict is marked wherever agents read it (issue 16)."""

import json

import pytest

HASHING = '\n[embedder]\nkind = "hashing"\n'


@pytest.fixture
def hctx(ctx):
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write(HASHING)
    return ctx


def _conflict(ctx):
    mid = ctx("remember", "Logs use local time").stdout.strip()
    ctx("branch", "agent")
    ctx("edit", mid, "--body", "Logs use UTC", "--branch", "agent")
    ctx("edit", mid, "--body", "Logs use server time")
    return mid


def test_merge_that_leaves_conflicts_exits_5(ctx):
    mid = _conflict(ctx)
    result = ctx("merge", "agent", "--json", code=5)
    merged = json.loads(result.stdout)
    assert [c["id"] for c in merged["conflicts"]] == [mid]
    assert result.stderr == ""


def test_merge_text_says_conflicts_and_exits_5(ctx):
    _conflict(ctx)
    out = ctx("merge", "agent", code=5).stdout
    assert "Settle them with `ctx resolve ID --take ours|theirs|both`." in out


def test_show_prints_both_sides_of_a_conflict(ctx):
    mid = _conflict(ctx)
    ctx("merge", "agent", code=5)
    out = ctx("show", mid).stdout
    assert out.endswith(
        "Logs use server time\n"
        "\n"
        "In conflict (body) with agent; `ctx resolve` settles it.\n"
        "  ours (main):\n"
        "    Logs use server time\n"
        "  theirs (agent):\n"
        "    Logs use UTC\n"
    )
    shown = ctx.json("show", mid)
    assert shown["memory"]["body"] == "Logs use server time"
    assert shown["conflict"]["ours"]["body"] == "Logs use server time"
    assert shown["conflict"]["theirs"]["body"] == "Logs use UTC"
    ctx("resolve", mid, "--take", "theirs")
    assert ctx.json("show", mid)["conflict"] is None
    assert "In conflict" not in ctx("show", mid).stdout


def test_show_says_ours_was_edited_since_the_merge(ctx):
    mid = _conflict(ctx)
    ctx("merge", "agent", code=5)
    ctx("edit", mid, "--body", "Logs use UTC, fixed by hand")
    out = ctx("show", mid).stdout
    assert "  ours (main), at the merge:\n    Logs use server time\n" in out


def test_ls_marks_a_memory_in_conflict(ctx):
    mid = _conflict(ctx)
    other = ctx("remember", "Deploys on Fridays").stdout.strip()
    ctx("merge", "agent", code=5)
    lines = ctx("ls").stdout.splitlines()
    assert any(line.startswith(mid) and "[conflict]" in line for line in lines)
    assert any(line.startswith(other) and "[conflict]" not in line for line in lines)
    listed = {m["id"]: m["conflict"] for m in ctx.json("ls")}
    assert listed == {mid: True, other: False}


def test_resolve_both_labels_each_side(ctx):
    mid = _conflict(ctx)
    ctx("merge", "agent", code=5)
    ctx("resolve", mid, "--take", "both")
    assert ctx.json("show", mid)["memory"]["body"] == (
        "ours (main):\nLogs use server time\n\n-----\n\ntheirs (agent):\nLogs use UTC"
    )


def test_recall_and_search_mark_a_hit_in_conflict(hctx):
    ctx = hctx
    mid = _conflict(ctx)
    ctx("merge", "agent", code=5)
    for command in ("recall", "search"):
        [hit] = [h for h in ctx.json(command, "logs")["hits"] if h["id"] == mid]
        assert hit["conflict"] == {
            "fields": ["body"],
            "theirs_ref": "agent",
            "theirs": "Logs use UTC",
        }
        text = ctx(command, "logs").stdout
        assert (
            f'in conflict with agent (body): theirs says "Logs use UTC"; '
            f"`ctx show {mid}` shows both sides" in text
        )
    prompt = ctx("recall", "logs", "--format", "markdown").stdout
    assert (
        f"  > In conflict with agent (body); their version:\n  > Logs use UTC\n"
        f"  > (`ctx show {mid}` shows both sides.)" in prompt
    )


def test_compose_marks_a_memory_in_conflict(ctx):
    mid = _conflict(ctx)
    ctx("merge", "agent", code=5)
    composed = ctx.json("compose", "--budget", "500")
    [item] = [m for m in composed["included"] if m["id"] == mid]
    assert item["conflict"] == {
        "fields": ["body"],
        "theirs_ref": "agent",
        "theirs": "Logs use UTC",
    }
    assert "in conflict with agent" in composed["text"]
