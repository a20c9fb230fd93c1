"""ctx redact: the text leaves history and the index at once (issue 33)."""

from __future__ import annotations

import subprocess

import secret_samples as s
from redaction_checks import store_bytes as every_byte


def store_bytes(ctx) -> bytes:
    """Every file of the store, and every object as stock git reads it."""
    return every_byte(ctx.root / ".ctx")


def test_redact_a_memory_removes_it_from_history_and_the_index(hashing_ctx):
    ctx = hashing_ctx
    key = s.github_token()
    mid = ctx("remember", f"CI pushes with {key}", "--allow-secret").stdout.strip()
    ctx("remember", "The deploy runs on fridays")
    assert key in ctx("recall", "CI pushes with").stdout
    assert key.encode() in store_bytes(ctx)

    result = ctx("redact", mid[-8:], "--reason", "pasted token")

    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Redacted memory {mid} (pasted token): redaction ")
    assert lines[1].startswith("  2 commits and 1 version rewritten (branches: main);")
    assert key.encode() not in store_bytes(ctx)
    recalled = ctx("recall", "CI pushes with").stdout
    assert key not in recalled
    assert ctx.json("show", mid)["memory"]["body"] == "[REDACTED]"


def test_redact_text_and_bad_input(ctx):
    ctx("remember", "The staging password is swordfish-42")
    before = ctx.files()
    result = ctx("redact", "--text", "not in any memory", code=4)
    assert result.stderr == (
        "Error: No version in the history holds what was to be redacted.\n"
        "Hint: Nothing was changed.\n"
    )
    assert ctx.files() == before
    waiting = ctx.root / ".ctx" / "private" / "hooks" / "s1.json"
    waiting.parent.mkdir(parents=True)
    waiting.write_text('{"blocks": [{"text": "password is swordfish-42"}]}')
    out = ctx.json("redact", "--text", "swordfish-42")
    assert out["what"] == "a text of 12 characters"
    assert b"swordfish-42" not in store_bytes(ctx)
    assert "[REDACTED]" in waiting.read_text()


def test_push_names_the_old_history_and_replaces_it_with_a_lease(ctx, tmp_path):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    ctx("remember", "The staging password is swordfish-42")
    ctx("remote", "add", "origin", str(remote))
    ctx("push")
    out = ctx("redact", "--text", "swordfish-42", "--reason", "leaked").stdout
    assert out.splitlines()[-1] == (
        "  origin still holds the old history of main: "
        "`ctx push origin --force-with-lease main` replaces it."
    )
    refused = ctx("push", code=5)
    assert refused.stderr == (
        "Error: origin still holds the history a redaction removed, on main; "
        "nothing was pushed.\n"
        "Hint: `ctx push origin --force-with-lease main` replaces it there.\n"
    )
    fetched = ctx("fetch", code=8)
    assert "which redaction " in fetched.stderr
    assert "(a text of 12 characters, leaked) removed" in fetched.stderr
    ctx("push", "--force-with-lease")
    log = subprocess.run(
        ["git", "--git-dir", str(remote), "log", "-p", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "swordfish-42" not in log
    assert "Ctx-Redacted: a text of 12 characters (leaked)" in log


def test_a_pull_says_each_redaction_it_applied(hashing_ctx, tmp_path):
    a = hashing_ctx
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    a("remember", "key zz-key-111-zz, pin zz-pin-222-zz", "--allow-secret")
    a("remote", "add", "origin", str(bare))
    a("push")
    b = type(a)(tmp_path / "b")  # the fixture's runner, on the clone
    b("clone", str(bare), str(tmp_path / "b"))
    a("redact", "--text", "zz-key-111-zz", "--reason", "leaked")
    a("push", "--force-with-lease")
    a("redact", "--text", "zz-pin-222-zz")
    a("push", "--force-with-lease")
    lines = b("pull").stdout.splitlines()
    assert lines[0].startswith("Applied redaction ")
    assert lines[0].endswith(": a text of 13 characters (leaked).")
    assert lines[1] == "  1 commit and 1 version rewritten."  # the write alone
    assert lines[2].startswith("Applied redaction ")
    assert lines[3].startswith("  1 commit and 1 version rewritten (branches: main);")
    assert b"zz-" not in store_bytes(b)
