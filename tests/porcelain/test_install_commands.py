"""ctx install, uninstall and doctor through the command line: wiring,
exact output and exit codes (the behaviour is tests/porcelain/install/test_install.py's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctx.porcelain.main import cli

BIN = str(Path(sys.executable).parent)


@pytest.fixture
def project(in_project: Path) -> Path:
    return in_project


def run(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


def test_install_and_uninstall_say_what_they_did(project):
    (project / ".mcp.json").write_text('{\n  "mcpServers": {}\n}\n')
    out = run("install", "claude").stdout
    assert out == (
        f"created   {project}/.claude/settings.json\n"
        f"changed   {project}/.mcp.json (backup: {project}/.mcp.json.ctx-backup)\n"
        f"created   {project}/.claude/skills/ctx/SKILL.md\n"
    )
    assert run("install", "claude").stdout == (
        f"unchanged {project}/.claude/settings.json\n"
        f"unchanged {project}/.mcp.json\n"
        f"unchanged {project}/.claude/skills/ctx/SKILL.md\n"
    )
    assert run("uninstall", "claude").stdout == (
        f"removed   {project}/.claude/settings.json\n"
        f"removed   {project}/.mcp.json\n"
        f"removed   {project}/.claude/skills/ctx/SKILL.md\n"
    )


def test_cursor_says_it_has_no_hooks(project):
    assert run("install", "cursor", "--user").stdout == (
        f"created   {Path.home()}/.cursor/mcp.json\n"
        "Note: Cursor's hooks speak another JSON than `ctx hook` reads: only the "
        "MCP server is installed.\n"
    )
    assert not (project / ".cursor").exists()


def test_dry_run_prints_a_diff_and_writes_nothing(project):
    out = run("install", "cursor", "--dry-run", "--command", "ctx").stdout
    assert out == (
        "--- /dev/null\n"
        f"+++ {project}/.cursor/mcp.json\n"
        "@@ -0,0 +1,10 @@\n"
        "+{\n"
        '+  "mcpServers": {\n'
        '+    "ctx": {\n'
        '+      "command": "ctx",\n'
        '+      "args": [\n'
        '+        "mcp"\n'
        "+      ]\n"
        "+    }\n"
        "+  }\n"
        "+}\n"
        "Note: Cursor's hooks speak another JSON than `ctx hook` reads: only the "
        "MCP server is installed.\n"
    )
    assert list(project.iterdir()) == []
    # What an install would want said is not said at an uninstall.
    assert run("uninstall", "cursor", "--dry-run").stdout == "Nothing to change.\n"


def test_notes_are_said_where_they_hold(project):
    trusted = "Note: Codex runs project hooks and servers only in a trusted project."
    assert trusted in run("install", "codex", "--dry-run").stdout
    assert trusted not in run("install", "codex", "--user", "--dry-run").stdout
    gone = "/no/such/checkout/.venv/bin/ctx"
    out = run("install", "gemini", "--command", gone, "--dry-run").stdout
    assert out.endswith(
        f"Note: {gone} names no file here: the host's hooks and server fail "
        "until it does.\n"
    )


def test_a_store_is_refused_as_the_hooks_find_their_own(project):
    for command in ("install", "uninstall"):
        result = run(command, "claude", "--store", str(project / "x"), code=4)
        assert result.stderr.startswith(
            "Error: ctx install and uninstall take no --store: "
        )
    assert list(project.iterdir()) == []


def test_a_file_that_is_not_json_exits_4_and_nothing_is_written(project):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{'hooks': {}}\n")
    result = run("install", "claude", code=4)
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: {settings} is not valid JSON (Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1)); nothing was written.\n"
        "Hint: Fix or move the file, then run the command again.\n"
    )
    assert sorted(p.name for p in project.rglob("*")) == [".claude", "settings.json"]


def test_a_file_that_is_not_toml_exits_4(project):
    config = Path.home() / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("model = \n")
    result = run("install", "codex", "--user", code=4)
    assert result.stderr.startswith(f"Error: {config} is not valid TOML (")
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.toml"]


def test_json_output(project):
    result = json.loads(run("install", "gemini", "--json").stdout)
    assert result["host"] == "gemini"
    assert result["action"] == "install"
    assert [(Path(f["path"]).name, f["action"]) for f in result["files"]] == [
        ("settings.json", "created"),
        ("SKILL.md", "created"),
    ]


@pytest.fixture
def healthy(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    run("init", str(project))
    with (project / ".ctx" / "config.toml").open("a") as f:
        f.write('\n[embedder]\nkind = "hashing"\n')
    run("remember", "Deploys go through CI", "--kind", "decision", "--pin")
    run("install", "claude")
    return project


def test_doctor_on_a_healthy_setup(healthy):
    # Claude Code's own file in the home: wired in the project, that is enough.
    (Path.home() / ".claude.json").write_text('{"numStartups": 3}\n')
    report = json.loads(run("doctor", "--json").stdout)
    assert report["ok"] is True
    checks = {c["name"]: c for c in report["checks"]}
    assert list(checks) == [
        "store",
        "ctx on PATH",
        "hub",
        "hook failures",
        "claude (project) hooks",
        "claude (project) mcp",
        "claude (project) skill",
        "hook session-start",
        "mcp",
    ]
    assert {c["status"] for c in checks.values()} == {"ok"}
    assert checks["store"]["detail"] == f"project store {healthy / '.ctx'}"
    assert checks["ctx on PATH"]["detail"] == f"{BIN}/ctx"
    assert checks["claude (project) hooks"]["detail"] == (
        f"7 of 7 hooks in {healthy}/.claude/settings.json"
    )
    assert checks["mcp"]["detail"].startswith("`ctx mcp` answers (")
    given = checks["hook session-start"]["detail"]
    assert given.startswith("exit 0, ")
    assert int(given.split()[2]) > 0  # the pinned memory
    assert not (healthy / ".ctx" / "private" / "hooks" / "ctx-doctor.json").exists()


def test_doctor_says_the_servers_error_not_only_its_hint(healthy):
    with (healthy / ".ctx" / "config.toml").open("a") as f:
        f.write("\n[recall\n")  # not TOML
    report = json.loads(run("doctor", "--json", code=1).stdout)
    checks = {c["name"]: c for c in report["checks"]}
    detail = checks["mcp"]["detail"]
    assert detail.startswith("`ctx mcp` did not answer: Error: ")
    assert "config.toml is not valid" in detail
    # The store's own check says so too, first.
    assert checks["store"]["status"] == "fail"
    assert "config.toml is not valid" in checks["store"]["detail"]


def test_doctor_on_a_broken_setup(healthy, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    (healthy / ".mcp.json").write_text("{")
    settings = healthy / ".claude" / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {"hooks": [{"type": "command", "command": "ctx hook stop"}]}
                    ]
                }
            }
        )
    )
    result = run("doctor", code=1)
    lines = result.stdout.splitlines()
    assert lines[0] == f"ok    store: project store {healthy / '.ctx'}"
    assert lines[1:3] == [
        "warn  ctx on PATH: `ctx` is not on the PATH: hosts run it only by the "
        "path `ctx install` writes",
        "      Hint: Install the package ctx-memory as a program (`uv tool install "
        "ctx-memory` or `pipx install ctx-memory`).",
    ]
    assert lines[4] == "ok    hook failures: none logged"
    # The tests run with no hub started by a recall: doctor says so, and how.
    assert lines[3] == (
        "ok    hub: not running (none is started here: CTX_NO_HUB, "
        "CTX_HUB_AUTOSTART=0 or [hub] autostart = false; `ctx hub start` starts one)"
    )
    assert lines[5:8] == [
        f"warn  claude (project) hooks: 1 of 7 hooks in {settings}",
        "      Hint: Run `ctx install claude`.",
        f"fail  claude (project): {healthy}/.mcp.json is not valid JSON (Expecting "
        "property name enclosed in double quotes: line 1 column 2 (char 1)).",
    ]
    # The hook and the server still run (through this Python): the store is fine.
    assert lines[-2].startswith("ok    hook session-start: exit 0")
    assert lines[-1].startswith("ok    mcp: `ctx mcp` answers (")


def test_doctor_fails_hooks_that_run_a_ctx_no_longer_there(healthy):
    settings = healthy / ".claude" / "settings.json"
    servers = healthy / ".mcp.json"
    gone = "/old/checkout/.venv/bin/ctx"
    for path in (settings, servers):
        path.write_text(path.read_text().replace(f"{BIN}/ctx", gone))
    report = json.loads(run("doctor", "--json", code=1).stdout)
    checks = {c["name"]: c for c in report["checks"]}
    hooks, server = checks["claude (project) hooks"], checks["claude (project) mcp"]
    assert (hooks["status"], hooks["detail"]) == (
        "fail",
        f"7 of 7 hooks in {settings}, run by {gone}, which is not there",
    )
    assert hooks["hint"] == "Run `ctx install claude`."
    assert (server["status"], server["detail"]) == (
        "fail",
        f"server 'ctx' in {servers} runs {gone}, which is not there",
    )
    # Points the hooks and the server at this ctx: replaced, not doubled.
    run("install", "claude")
    report = json.loads(run("doctor", "--json").stdout)
    assert report["ok"] is True
    assert json.loads(servers.read_text())["mcpServers"]["ctx"]["command"] == (
        f"{BIN}/ctx"
    )


def test_doctor_fails_a_server_with_nothing_to_run(healthy):
    servers = healthy / ".mcp.json"
    servers.write_text('{"mcpServers": {"ctx": {"env": {"CTX_AGENT": "me"}}}}\n')
    report = json.loads(run("doctor", "--json", code=1).stdout)
    server = next(c for c in report["checks"] if c["name"] == "claude (project) mcp")
    assert (server["status"], server["detail"]) == (
        "fail",
        f"server 'ctx' in {servers} has no command",
    )
    # One at an address (ctx serve's MCP endpoint) has nothing to start.
    url = "http://127.0.0.1:8377/mcp"
    servers.write_text(json.dumps({"mcpServers": {"ctx": {"url": url}}}) + "\n")
    report = json.loads(run("doctor", "--json").stdout)
    server = next(c for c in report["checks"] if c["name"] == "claude (project) mcp")
    assert (server["status"], server["detail"]) == (
        "ok",
        f"server 'ctx' in {servers} at {url}",
    )
    # Gemini CLI's streamable HTTP server is at an httpUrl.
    run("install", "gemini")
    gemini = healthy / ".gemini" / "settings.json"
    settings = json.loads(gemini.read_text())
    settings["mcpServers"]["ctx"] = {"httpUrl": url}
    gemini.write_text(json.dumps(settings) + "\n")
    report = json.loads(run("doctor", "--json").stdout)
    server = next(c for c in report["checks"] if c["name"] == "gemini (project) mcp")
    assert (server["status"], server["detail"]) == (
        "ok",
        f"server 'ctx' in {gemini} at {url}",
    )


def test_doctor_warns_of_hooks_that_run_twice(healthy):
    # Codex runs the hooks of both files side by side: each context twice.
    run("install", "claude", "--user")  # the same command: run once
    run("install", "codex")
    run("install", "codex", "--user")
    report = json.loads(run("doctor", "--json").stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert "claude hooks" not in checks
    twice = checks["codex hooks"]
    project_file = healthy / ".codex" / "hooks.json"
    user_file = Path.home() / ".codex" / "hooks.json"
    assert (twice["status"], twice["detail"]) == (
        "warn",
        f"in both {project_file} and {user_file}: each may run twice",
    )
    assert twice["hint"] == (
        "Keep one: `ctx uninstall codex` (this project's) "
        "or `ctx uninstall codex --user`."
    )
    # Two paths to a ctx are two commands, which Claude Code runs both of.
    settings = Path.home() / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace(f"{BIN}/ctx", "ctx"))
    report = json.loads(run("doctor", "--json").stdout)
    assert {c["name"] for c in report["checks"]} >= {"claude hooks", "codex hooks"}
    run("uninstall", "codex", "--user")
    report = json.loads(run("doctor", "--json").stdout)
    assert "codex hooks" not in {c["name"] for c in report["checks"]}


def test_a_project_in_the_home_folder_has_one_scope_of_hooks(healthy, monkeypatch):
    # The project's hooks file and the user's are then one file.
    monkeypatch.chdir(Path.home())
    run("install", "codex")
    report = json.loads(run("doctor", "--json").stdout)
    assert "codex hooks" not in {c["name"] for c in report["checks"]}


def test_install_writes_the_path_of_the_running_ctx(project):
    # Issue 32: after `make tour` ctx is only in .venv/bin, not on the PATH
    # the hosts run their hooks with.
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [f"{BIN}/ctx", "install", "claude"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    (group,) = settings["hooks"]["SessionStart"]
    assert group["hooks"][0]["command"] == f"{BIN}/ctx hook session-start"
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["ctx"]
    assert server == {"command": f"{BIN}/ctx", "args": ["mcp"]}
