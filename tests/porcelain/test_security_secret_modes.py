"""Secrets through the commands: a pull names what came in; each mode holds (issue 33).

``ctx pull`` is never refused for another writer's secret: it merges, and
says on stderr which memory brought which kind of secret. ``[secrets]
mode = "allow"`` stores and pulls as given and says nothing; ``redact``
stores the kind's name in place of each secret, on every memory of an
import.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import secret_samples as s
from conftest import Ctx

from ctx.porcelain.main import cli


def set_mode(ctx: Ctx, mode: str) -> None:
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write(f'\n[secrets]\nmode = "{mode}"\n')


@pytest.fixture
def team(tmp_path: Path) -> tuple[Ctx, Ctx]:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    a = Ctx(tmp_path / "a")
    a("init", str(a.root))
    a("remember", "The queue is Postgres")
    a("remote", "add", "origin", str(remote))
    a("push")
    b = Ctx(tmp_path / "b")
    result = b.runner.invoke(cli, ["clone", str(remote), str(b.root)])
    assert result.exit_code == 0, result.stderr
    return a, b


def test_pull_merges_and_names_each_secret_that_came_in(team):
    a, b = team
    key = s.sk_key()
    mid = a("remember", f"CI\nuses {key}", "--allow-secret").stdout.strip()
    a("push")
    pulled = b("pull")
    assert pulled.stderr == (
        f"Warning: a secret (openai-key) came in, in memory {mid}'s body, "
        "line 2: rotate it, and redact it from the history.\n"
    )
    assert key not in pulled.stdout + pulled.stderr
    assert b.json("show", mid)["memory"]["body"] == f"CI\nuses {key}"


def test_allow_mode_stores_and_pulls_as_given_and_says_nothing(team):
    a, b = team
    set_mode(a, "allow")
    set_mode(b, "allow")
    key = s.github_token()
    mid = a("remember", f"CI uses {key}").stdout.strip()
    a("push")
    pulled = b("pull")
    assert pulled.stderr == ""
    assert b.json("show", mid)["memory"]["body"] == f"CI uses {key}"


def test_redact_mode_redacts_every_memory_of_an_import(ctx, tmp_path):
    set_mode(ctx, "redact")
    aws, slack = s.aws_key(), s.slack_token()
    lines = [
        {"text": f"Deploy user key {aws}", "title": f"Key {aws}"},
        {"text": "The queue is Postgres"},
        {"text": f"Bot token:\n{slack}", "tags": ["team:ops"]},
    ]
    notes = tmp_path / "notes.jsonl"
    notes.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ctx("import", str(notes))
    stored = {
        (m["title"], m["body"])
        for m in (ctx.json("show", r["id"])["memory"] for r in ctx.json("ls"))
    }
    assert stored == {
        ("Key [REDACTED:aws-access-key]", "Deploy user key [REDACTED:aws-access-key]"),
        (None, "The queue is Postgres"),
        (None, "Bot token:\n[REDACTED:slack-token]"),
    }
    log = subprocess.run(
        ["git", "--git-dir", str(ctx.root / ".ctx" / "git"), "log", "-p", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert aws not in log
    assert slack not in log
