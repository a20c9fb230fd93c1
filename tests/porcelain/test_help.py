"""--help says what each option does (issue 16, "Help and README")."""

from __future__ import annotations

import re

from ctx import hub


def _help(ctx, *command: str) -> str:
    return " ".join(ctx(*command, "--help").stdout.split())


def test_diffs_b_is_optional(ctx):
    assert "diff [OPTIONS] A [B]" in _help(ctx, "diff")
    mid = ctx("remember", "One").stdout.strip()
    assert mid in ctx("diff", "HEAD~1").stdout


def test_forget_requires_a_reason_and_says_so(ctx):
    assert "--reason TEXT Why, in one line. [required]" in _help(ctx, "forget")
    mid = ctx("remember", "One").stdout.strip()
    before = ctx.files()
    result = ctx("forget", mid, code=2)
    assert "Missing option '--reason'" in result.stderr
    assert ctx.files() == before


def test_recall_search_and_status_take_a_branch_name(ctx):
    ctx("remember", "One")
    for command in (("recall", "q"), ("search", "q"), ("status",)):
        text = _help(ctx, command[0])
        assert "-b, --branch NAME Branch to read (a name, not a revision)" in text
        assert "any revision" not in text
        result = ctx(*command, "--branch", "main~1", code=4)
        assert "not a valid branch name" in result.stderr
    # Commands that read any revision say so, and do.
    assert "Branch (or, to read, any revision)" in _help(ctx, "ls")
    assert ctx("ls", "--branch", "main~1").stdout == ""


def test_recall_budget_shows_the_default_the_hub_uses(ctx):
    text = _help(ctx, "recall")
    found = re.search(r"\[default: budget under \[recall\] .* else (\d+)\]", text)
    assert found, text
    assert int(found.group(1)) == hub.RecallConfig().budget


def test_pin_says_what_pinned_means(ctx):
    for command in ("remember", "prime"):
        text = _help(ctx, command)
        assert "every recall returns" in text
        assert "whatever the question, while" in text
        assert "fit in half the budget" in text


def test_search_says_what_n_does_and_has_no_fuzzy_flag(ctx):
    text = _help(ctx, "search")
    assert "-n N Show at most N memories. [default: 10]" in text
    assert "--fuzzy" not in text
    assert "typo-tolerant words included" in text
    result = ctx("search", "q", "--fuzzy", code=2)
    assert "No such option '--fuzzy'" in result.stderr


def test_dream_accept_usage_says_ids_are_optional(ctx):
    # Issue 32: `--all` works without ids, so the usage must not ask for one.
    assert "dream accept [OPTIONS] [ID]..." in _help(ctx, "dream", "accept")


def test_merge_help_examples_run(ctx):
    # Issue 32: the help's example `ctx merge dream --into main` exited 3.
    ctx("remember", "One")
    for branch in ("agent/claude", "agent/codex"):
        ctx("branch", branch)
        ctx("remember", f"From {branch}", "--branch", branch)
    text = ctx("merge", "--help").stdout
    examples = text.split("Example:", 1)[1].split("\n\n", 1)[0].split("\n")
    runs = [line.split()[2:] for line in examples if line.strip().startswith("ctx")]
    assert len(runs) == 2
    for args in runs:
        ctx("merge", *args)
