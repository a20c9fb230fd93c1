"""The commands that write keep secrets out; --allow-secret stores them (issue 33)."""

from __future__ import annotations

import secret_samples as s


def memories(ctx) -> list[str]:
    return [m["id"] for m in ctx.json("ls")]


def test_remember_refuses_a_secret_and_changes_nothing(ctx):
    before = ctx.files()
    result = ctx("remember", f"The key is {s.aws_key()}", code=4)
    assert result.stdout == ""
    error, hint = result.stderr.splitlines()
    assert error == (
        "Error: Refused: a secret (aws-access-key) in the new memory's body, "
        "line 1; nothing was written."
    )
    assert hint == (
        "Hint: Take it out; --allow-secret stores it anyway, and "
        '[secrets] mode = "redact" in the store\'s config.toml stores '
        "[REDACTED:aws-access-key] in its place."
    )
    assert ctx.files() == before


def test_allow_secret_stores_it_as_given(ctx):
    key = s.github_token()
    mid = ctx("remember", f"CI uses {key}", "--allow-secret").stdout.strip()
    assert ctx.json("show", mid)["memory"]["body"] == f"CI uses {key}"


def test_edit_and_session_end_take_allow_secret_too(ctx):
    mid = ctx("remember", "CI token").stdout.strip()
    key = s.gitlab_token()
    ctx("edit", mid, "--body", f"CI token {key}", code=4)
    ctx("edit", mid, "--body", f"CI token {key}", "--allow-secret")
    ctx("session", "end", "s1", "--summary", f"Set {s.stripe_key()}", code=4)
    ctx("session", "end", "s1", "--summary", f"Set {s.stripe_key()}", "--allow-secret")


def test_redact_mode_in_the_config(ctx):
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write('\n[secrets]\nmode = "redact"\n')
    mid = ctx("remember", f"Stripe: {s.stripe_key()} (live)").stdout.strip()
    assert ctx.json("show", mid)["memory"]["body"] == (
        "Stripe: [REDACTED:stripe-key] (live)"
    )


def test_merge_warns_of_the_secrets_it_brought(ctx):
    ctx("branch", "agent")
    mid = ctx(
        "remember", f"pw {s.sk_key()}", "--branch", "agent", "--allow-secret"
    ).stdout.strip()
    result = ctx("merge", "agent")
    assert result.stderr == (
        f"Warning: a secret (openai-key) came in, in memory {mid}'s body, "
        "line 1: rotate it, and redact it from the history.\n"
    )
    assert mid in memories(ctx)
