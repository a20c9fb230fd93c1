"""ctx keys create, ls, revoke: wiring, output and errors."""

from __future__ import annotations

import re

from ctx.hub import Workspace, authenticate, list_keys

WARNING = (
    "Warning: This is the only time the token is shown; ctx keeps only its hash.\n"
)


def _ws(ctx) -> Workspace:
    return Workspace(ctx.root / ".ctx")


def test_create_prints_the_token_alone_on_stdout(ctx):
    result = ctx("keys", "create", "ci", "--read", "main", "--write", "agent/*")
    token = result.stdout.strip()
    assert re.fullmatch(r"ctx_[A-Za-z0-9_-]{43}", token)
    (key,) = list_keys(_ws(ctx))
    assert result.stderr == (
        f"Created key {key.id} 'ci' (reads main; writes agent/*).\n{WARNING}"
    )
    assert authenticate(_ws(ctx), f"Bearer {token}") == key


def test_create_with_repeated_patterns_and_admin(ctx):
    made = ctx.json(
        "keys", "create", "ops", "--read", "main", "--read", "dream/*", "--admin"
    )
    assert made["key"]["read"] == ["main", "dream/*"]
    assert made["key"]["write"] == []
    assert made["key"]["admin"] is True
    assert authenticate(_ws(ctx), f"Bearer {made['token']}").label == "ops"


def test_ls_lists_every_key_and_never_a_token(ctx):
    assert ctx("keys", "ls").stdout == (
        "No keys; `ctx keys create LABEL --read PATTERN` makes one.\n"
    )
    a = ctx.json("keys", "create", "a", "--read", "*")
    b = ctx.json("keys", "create", "b", "--admin")
    ctx("keys", "revoke", "a")
    out = ctx("keys", "ls").stdout
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{a['key']['id']} 'a' (reads *)  revoked 20")
    assert lines[1].startswith(f"{b['key']['id']} 'b' (admin)  created 20")
    assert a["token"] not in out
    listed = ctx.json("keys", "ls")
    assert [k["label"] for k in listed] == ["a", "b"]
    assert listed[0]["revoked_at"] is not None
    assert all("token" not in k and "sha256" not in k for k in listed)


def test_revoke_by_label_then_again(ctx):
    made = ctx.json("keys", "create", "ci", "--write", "agent/ci")
    key_id = made["key"]["id"]
    out = ctx("keys", "revoke", "ci").stdout
    assert out == f"Revoked key {key_id} 'ci' (writes agent/ci).\n"
    again = ctx("keys", "revoke", key_id).stdout
    assert again.startswith(f"Key {key_id} 'ci' (writes agent/ci) was already revoked")
    assert ctx.json("keys", "revoke", key_id)["changed"] is False


def test_bad_input_is_one_line_and_changes_nothing(ctx):
    ctx("keys", "create", "ci", "--read", "main")
    before = ctx.files()
    cases = [
        (("create", "ci", "--read", "*"), 4, "A key labelled 'ci' already exists."),
        (("create", "x"), 4, "Key 'x' would open nothing."),
        (("create", "x", "--write", "a:b"), 4, "Branch pattern 'a:b' holds a"),
        (("create", " ", "--read", "*"), 4, "A key's label cannot be empty."),
        (("revoke", "nope"), 3, "No key has the id or label 'nope'."),
    ]
    for args, code, message in cases:
        result = ctx("keys", *args, code=code)
        assert result.stdout == ""
        error, hint = result.stderr.splitlines()
        assert error.startswith(f"Error: {message}")
        assert hint.startswith("Hint: ")
    assert ctx.files() == before


def test_keys_on_a_missing_store(tmp_path):
    from click.testing import CliRunner

    from ctx.porcelain.main import cli

    result = CliRunner().invoke(
        cli, ["--store", str(tmp_path / "nowhere"), "keys", "ls"]
    )
    assert result.exit_code == 6
    assert result.stderr.startswith("Error: No store at ")
