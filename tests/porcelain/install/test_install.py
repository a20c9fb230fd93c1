"""ctx install and uninstall on real settings files (issue 14): what is not
ctx's is kept byte for byte, twice changes nothing, a bad file stops all."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from ctx.engine import InvalidInputError
from ctx.porcelain.install import HOSTS, apply_plan, plan_install, plan_uninstall
from ctx.porcelain.install.jsontext import JsonText
from ctx.porcelain.install.skill import SKILL_TEXT

# As Claude Code writes its settings: two spaces, arrays spread out.
CLAUDE_SETTINGS = """{
  "permissions": {
    "allow": [
      "Bash(npm test)"
    ]
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "say done"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "./check.sh"
          }
        ]
      }
    ]
  },
  "model": "opus"
}
"""
# Written by hand: arrays on one line, odd spacing, no newline at the end.
CLAUDE_JSON = '{\n    "numStartups": 12,\n    "mcpServers": {\n        "github": {"command": "gh-mcp", "args": ["--ro"]}\n    },\n    "tips": [1, 2,  3]\n}'
MCP_JSON = (
    '{\n  "mcpServers": {\n    "db": {\n      "command": "db-mcp"\n    }\n  }\n}\n'
)
CODEX_TOML = """model = "o3"  # the default

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "9"]

[profiles.fast]
model = "o4-mini"
"""
CODEX_HOOKS = '{\n  "hooks": {\n    "SessionStart": [\n      {\n        "matcher": "startup",\n        "hooks": [\n          {\n            "type": "command",\n            "command": "echo hi"\n          }\n        ]\n      }\n    ]\n  }\n}\n'
GEMINI_SETTINGS = '{\n  "theme": "GitHub",\n  "hooks": {\n    "BeforeTool": [\n      {\n        "matcher": "run_shell_command",\n        "hooks": [\n          {\n            "name": "audit",\n            "type": "command",\n            "command": "audit.sh"\n          }\n        ]\n      }\n    ]\n  },\n  "mcpServers": {\n    "fs": {\n      "command": "fs-mcp"\n    }\n  }\n}\n'
CURSOR_MCP = '{"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}'


@pytest.fixture
def project(in_project: Path) -> Path:
    return in_project


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def files(*roots: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def seed(host: str, scope: str, project: Path) -> Path:
    """Writes the host's settings as a user would have them; returns the root."""
    root = Path.home() if scope == "user" else project
    if host == "claude":
        write(root / ".claude" / "settings.json", CLAUDE_SETTINGS)
        if scope == "user":
            write(root / ".claude.json", CLAUDE_JSON)
        else:
            write(root / ".mcp.json", MCP_JSON)
    elif host == "codex":
        write(root / ".codex" / "config.toml", CODEX_TOML)
        write(root / ".codex" / "hooks.json", CODEX_HOOKS)
    elif host == "gemini":
        write(root / ".gemini" / "settings.json", GEMINI_SETTINGS)
    else:
        write(root / ".cursor" / "mcp.json", CURSOR_MCP)
    return root


def install(host: str, scope: str = "project", *, dry_run: bool = False):
    return apply_plan(plan_install(HOSTS[host], scope), dry_run=dry_run)


def uninstall(host: str, scope: str = "project"):
    return apply_plan(plan_uninstall(HOSTS[host], scope))


@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize("host", ["claude", "codex", "gemini", "cursor"])
def test_install_then_uninstall_gives_back_every_byte(host, scope, project):
    root = seed(host, scope, project)
    before = files(root)
    result = install(host, scope)
    assert {c.action for c in result.files} <= {"created", "changed"}
    changed = [c for c in result.files if c.action == "changed"]
    assert all(
        c.backup and Path(c.backup).read_text() == before[c.path].decode()
        for c in changed
    )
    assert files(root) != before
    uninstall(host, scope)
    assert files(root) == before  # backups too: each is removed when its file is back


@pytest.mark.parametrize("host", ["claude", "codex", "gemini", "cursor"])
def test_install_keeps_what_is_there_and_adds_ctx(host, project):
    root = seed(host, "project", project)
    install(host)
    if host == "claude":
        settings = json.loads((root / ".claude" / "settings.json").read_text())
        old = json.loads(CLAUDE_SETTINGS)
        assert settings["permissions"] == old["permissions"]
        assert settings["hooks"]["PreToolUse"] == old["hooks"]["PreToolUse"]
        assert settings["hooks"]["Stop"] == [
            *old["hooks"]["Stop"],
            {"hooks": [{"type": "command", "command": "ctx hook stop"}]},
        ]
        assert list(settings["hooks"]) == [
            "Stop",
            "PreToolUse",
            "SessionStart",
            "UserPromptSubmit",
            "SubagentStart",
            "SubagentStop",
            "PreCompact",
            "SessionEnd",
        ]
        assert list(settings) == ["permissions", "hooks", "model"]
        servers = json.loads((root / ".mcp.json").read_text())["mcpServers"]
        assert servers == {
            "db": {"command": "db-mcp"},
            "ctx": {"command": "ctx", "args": ["mcp"]},
        }
        assert (
            root / ".claude" / "skills" / "ctx" / "SKILL.md"
        ).read_text() == SKILL_TEXT
    elif host == "codex":
        text = (root / ".codex" / "config.toml").read_text()
        assert (
            text
            == CODEX_TOML + '\n[mcp_servers.ctx]\ncommand = "ctx"\nargs = ["mcp"]\n'
        )
        assert tomllib.loads(text)["mcp_servers"]["ctx"] == {
            "command": "ctx",
            "args": ["mcp"],
        }
        hooks = json.loads((root / ".codex" / "hooks.json").read_text())["hooks"]
        assert list(hooks) == ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact"]
        assert hooks["SessionStart"][0]["matcher"] == "startup"
        assert (
            hooks["SessionStart"][1]["hooks"][0]["command"] == "ctx hook session-start"
        )
    elif host == "gemini":
        settings = json.loads((root / ".gemini" / "settings.json").read_text())
        assert list(settings["hooks"]) == [
            "BeforeTool",
            "SessionStart",
            "BeforeAgent",
            "AfterAgent",
            "PreCompress",
            "SessionEnd",
        ]
        assert settings["hooks"]["BeforeAgent"] == [
            {
                "hooks": [
                    {
                        "name": "ctx",
                        "type": "command",
                        "command": "ctx hook BeforeAgent",
                    }
                ]
            }
        ]
        assert settings["mcpServers"] == {
            "fs": {"command": "fs-mcp"},
            "ctx": {"command": "ctx", "args": ["mcp"]},
        }
        assert settings["theme"] == "GitHub"
    else:
        text = (root / ".cursor" / "mcp.json").read_text()
        # A file on one line gets its addition on that line.
        assert (
            text
            == '{"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}, "ctx": {"command": "ctx", "args": ["mcp"]}}}'
        )


def test_new_files_are_made_and_removed_with_their_folders(project):
    result = install("claude")
    assert [
        (Path(c.path).relative_to(project).as_posix(), c.action) for c in result.files
    ] == [
        (".claude/settings.json", "created"),
        (".mcp.json", "created"),
        (".claude/skills/ctx/SKILL.md", "created"),
    ]
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"ctx": {"command": "ctx", "args": ["mcp"]}}
    }
    uninstall("claude")
    assert list(project.iterdir()) == []


@pytest.mark.parametrize("host", ["claude", "codex", "gemini", "cursor"])
def test_twice_changes_nothing(host, project):
    root = seed(host, "project", project)
    original = files(root)
    install(host)
    after_one = files(root)
    again = install(host)
    assert {c.action for c in again.files} == {"unchanged"}
    assert all(c.backup is None and c.diff == "" for c in again.files)
    assert files(root) == after_one  # the backups still hold the originals
    backups = {k: v for k, v in after_one.items() if k.endswith(".ctx-backup")}
    assert backups == {
        k + ".ctx-backup": original[k] for k in original if k + ".ctx-backup" in backups
    }
    assert backups
    uninstall(host)
    uninstall(host)
    assert files(root) == original


def test_dry_run_writes_nothing_and_shows_the_diff(project):
    root = seed("claude", "project", project)
    before = files(root)
    result = install("claude", dry_run=True)
    assert files(root) == before
    assert result.dry_run
    settings = result.files[0]
    assert settings.action == "changed"
    assert settings.backup is None
    assert settings.diff.startswith(
        f"--- {root}/.claude/settings.json\n+++ {root}/.claude/settings.json\n@@"
    )
    assert '+            "command": "ctx hook stop"\n' in settings.diff
    assert result.files[2].diff.startswith(
        f"--- /dev/null\n+++ {root}/.claude/skills/ctx/SKILL.md\n"
    )


@pytest.mark.parametrize(
    ("host", "bad", "message"),
    [
        (
            "claude",
            ".mcp.json",
            "is not valid JSON (Expecting value: line 2 column 1 (char 6))",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "is not valid JSON (Expecting value: line 2 column 1 (char 6))",
        ),
        (
            "codex",
            ".codex/config.toml",
            "is not valid TOML (Expected '=' after a key in a key/value pair (at line 2, column 3))",
        ),
    ],
)
def test_a_file_that_cannot_be_read_stops_everything(host, bad, message, project):
    root = seed(host, "project", project)
    write(root / bad, "[a]\nb c\n" if bad.endswith("toml") else '{"a":\n')
    before = files(root)
    with pytest.raises(InvalidInputError) as caught:
        plan_install(HOSTS[host], "project")
    assert caught.value.message == f"{root / bad} {message}; nothing was written."
    with pytest.raises(InvalidInputError):
        plan_uninstall(HOSTS[host], "project")
    assert files(root) == before


def test_hooks_of_another_shape_are_refused(project):
    write(project / ".claude" / "settings.json", '{"hooks": {"Stop": "ctx"}}\n')
    with pytest.raises(
        InvalidInputError, match="has hooks for 'Stop' that are not a list"
    ):
        plan_install(HOSTS["claude"], "project")
    write(project / ".claude" / "settings.json", '{"hooks": []}\n')
    with pytest.raises(InvalidInputError, match="has a 'hooks' that is not an object"):
        plan_install(HOSTS["claude"], "project")
    # Present as null: refused too, as any other thing that is not an object
    # (it was taken for missing, and a second key of that name was added).
    write(project / ".claude" / "settings.json", '{"hooks": null, "model": "x"}\n')
    with pytest.raises(InvalidInputError, match="has a 'hooks' that is not an object"):
        plan_install(HOSTS["claude"], "project")
    mine = '{\n  "mcpServers": null,\n  "theme": "x"\n}\n'
    write(project / ".cursor" / "mcp.json", mine)
    for plan in (plan_install, plan_uninstall):
        with pytest.raises(InvalidInputError, match="'mcpServers' that is not an"):
            plan(HOSTS["cursor"], "project")
    assert (project / ".cursor" / "mcp.json").read_text() == mine


def test_a_ctx_server_the_user_wrote_is_kept(project):
    mine = '{\n  "mcpServers": {\n    "ctx": {\n      "command": "ctx",\n      "args": ["mcp"],\n      "env": {"CTX_BRANCH": "agent/claude"}\n    }\n  }\n}\n'
    write(project / ".mcp.json", mine)
    # As install writes it but for what the user added (as install wrote
    # it, for some ctx, it is install's: the next install moves it).
    toml = '[mcp_servers.ctx]\ncommand = "/opt/ctx"\nargs = ["mcp"]\nenv = { CTX_AGENT = "me" }\n'
    write(project / ".codex" / "config.toml", toml)
    install("claude")
    install("codex")
    assert (project / ".mcp.json").read_text() == mine
    assert (project / ".codex" / "config.toml").read_text() == toml
    uninstall("claude")
    uninstall("codex")
    assert (project / ".mcp.json").read_text() == mine
    assert (project / ".codex" / "config.toml").read_text() == toml


@pytest.mark.parametrize("between", ["\n", "# ours\n", "\n# ours\n"])
def test_keys_the_user_added_after_a_gap_keep_the_codex_server(project, between):
    # The table install wrote, then the user's keys for it past a blank line
    # or a comment: TOML reads them as the same table, so it is the user's.
    toml = f'[mcp_servers.ctx]\ncommand = "ctx"\nargs = ["mcp"]\n{between}startup_timeout_sec = 30\n'
    write(project / ".codex" / "config.toml", toml)
    install("codex")
    assert (project / ".codex" / "config.toml").read_text() == toml
    uninstall("codex")
    assert (project / ".codex" / "config.toml").read_text() == toml


def test_uninstall_takes_only_ctx_hooks_from_a_shared_group(project):
    shared = '{\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [\n          {\n            "type": "command",\n            "command": "say done"\n          },\n          {\n            "type": "command",\n            "command": "ctx hook stop"\n          }\n        ]\n      }\n    ]\n  }\n}\n'
    write(project / ".claude" / "settings.json", shared)
    uninstall("claude")
    assert json.loads((project / ".claude" / "settings.json").read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}
    }


def test_an_edited_skill_is_kept_on_uninstall(project):
    install("claude")
    skill = project / ".claude" / "skills" / "ctx" / "SKILL.md"
    skill.write_text(SKILL_TEXT + "\nOur own rule.\n")
    result = uninstall("claude")
    assert skill.read_text().endswith("Our own rule.\n")
    assert result.notes == (f"{skill} was changed since ctx wrote it: it was kept.",)


def test_the_skill_has_front_matter_and_the_commands():
    head, body = SKILL_TEXT.split("---\n")[1:3]
    lines = head.splitlines()
    assert lines[0] == "name: ctx"
    assert lines[1].startswith("description: Versioned project memory (ctx).")
    assert len(lines) == 2
    for word in (
        "decision",
        "open-question",
        "tier:pinned",
        "DEPENDS_ON",
        "<ctx:remember",
        "<ctx:recall",
        "<ctx:link",
        "<ctx:supersede",
    ):
        assert word in body


def test_an_empty_object_ctx_filled_goes_with_it(project):
    """The documented exception: install cannot tell an empty "mcpServers"
    the user wrote from none, so uninstall removes the object it emptied."""
    write(project / ".cursor" / "mcp.json", '{\n  "mcpServers": {},\n  "x": 1\n}\n')
    install("cursor")
    assert json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"] == {
        "ctx": {"command": "ctx", "args": ["mcp"]}
    }
    uninstall("cursor")
    assert (project / ".cursor" / "mcp.json").read_text() == '{\n  "x": 1\n}\n'


def test_a_linked_settings_file_is_written_through_the_link(project, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    write(dotfiles / "settings.json", CLAUDE_SETTINGS)
    write(dotfiles / "mcp.json", "{}\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(dotfiles / "settings.json")
    (project / ".mcp.json").symlink_to(dotfiles / "mcp.json")
    install("claude")
    assert (project / ".claude" / "settings.json").is_symlink()
    assert "ctx hook stop" in (dotfiles / "settings.json").read_text()
    assert json.loads((dotfiles / "mcp.json").read_text())["mcpServers"]["ctx"]
    uninstall("claude")
    assert (project / ".mcp.json").is_symlink()
    assert (dotfiles / "settings.json").read_text() == CLAUDE_SETTINGS
    assert (dotfiles / "mcp.json").read_text() == "{}\n"


def claude_hooks(project: Path) -> list[str]:
    """The commands of every hook in the project's Claude Code settings."""
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    return [
        hook["command"]
        for groups in settings["hooks"].values()
        for group in groups
        for hook in group["hooks"]
    ]


def test_hosts_run_the_ctx_given_and_a_second_install_moves_them_to_it(project):
    # Issue 32: a bare `ctx` fails every hook when ctx lives in a .venv/bin.
    ctx = "/opt/my tools/bin/ctx"
    install("claude")  # an older install: ctx by name
    install("codex")
    for host in ("claude", "codex"):
        apply_plan(plan_install(HOSTS[host], "project", ctx))
    commands = claude_hooks(project)
    assert commands == [
        f"'/opt/my tools/bin/ctx' hook {arg}" for _, arg in HOSTS["claude"].events
    ]
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"] == {
        "ctx": {"command": ctx, "args": ["mcp"]}
    }
    codex = (project / ".codex" / "config.toml").read_text()
    assert tomllib.loads(codex) == {
        "mcp_servers": {"ctx": {"command": ctx, "args": ["mcp"]}}
    }
    assert install("claude").files[0].action == "changed"  # back to ctx by name
    # Moved, not doubled: each hook runs once, by name, as the first install
    # wrote it (the file is that text again, so its backup went).
    commands = claude_hooks(project)
    assert commands == [f"ctx hook {arg}" for _, arg in HOSTS["claude"].events]
    for host in ("claude", "codex"):
        apply_plan(plan_uninstall(HOSTS[host], "project", ctx))
    assert sorted(p.name for p in project.rglob("*") if p.is_file()) == [
        "config.toml.ctx-backup",
        "hooks.json.ctx-backup",
    ]


def test_an_install_from_a_second_ctx_replaces_the_first_ones_hooks(project):
    first, second = "/old/checkout/.venv/bin/ctx", "/home/me/.local/bin/ctx"
    apply_plan(plan_install(HOSTS["claude"], "project", first))
    apply_plan(plan_install(HOSTS["claude"], "project", second))
    commands = claude_hooks(project)
    assert commands == [f"{second} hook {arg}" for _, arg in HOSTS["claude"].events]
    # Doubled already (as that bug left it): the next install mends it.
    settings = project / ".claude" / "settings.json"
    doubled = json.loads(settings.read_text())
    for groups in doubled["hooks"].values():
        groups.append({"hooks": [{"type": "command", "command": "x"}]})
        groups[-1]["hooks"][0]["command"] = groups[0]["hooks"][0]["command"].replace(
            second, first
        )
    settings.write_text(json.dumps(doubled, indent=2) + "\n")
    apply_plan(plan_install(HOSTS["claude"], "project", second))
    assert claude_hooks(project) == commands
    again = apply_plan(plan_install(HOSTS["claude"], "project", second))
    assert {c.action for c in again.files} == {"unchanged"}
    apply_plan(plan_uninstall(HOSTS["claude"], "project", second))
    assert not (project / ".claude" / "settings.json").exists()
    # Another program's hook that happens to say "hook" stays.
    write(
        project / ".claude" / "settings.json",
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", '
        '"command": "/usr/bin/notctx hook stop"}]}]}}\n',
    )
    mine = (project / ".claude" / "settings.json").read_bytes()
    apply_plan(plan_install(HOSTS["claude"], "project", second))
    apply_plan(plan_uninstall(HOSTS["claude"], "project", second))
    assert (project / ".claude" / "settings.json").read_bytes() == mine


def servers(host: str, project: Path) -> dict[str, object]:
    """The MCP servers of the host's project settings."""
    if host == "codex":
        return tomllib.loads((project / ".codex" / "config.toml").read_text())[
            "mcp_servers"
        ]
    path = servers_file(host, project)
    return JsonText(path, path.read_text()).data["mcpServers"]


def servers_file(host: str, project: Path) -> Path:
    """The JSON file of the host's project MCP servers."""
    return {
        "claude": project / ".mcp.json",
        "gemini": project / ".gemini" / "settings.json",
        "cursor": project / ".cursor" / "mcp.json",
    }[host]


@pytest.mark.parametrize("host", ["claude", "codex", "gemini", "cursor"])
def test_a_second_install_moves_the_server_with_the_hooks(project, host):
    # `--command ctx` after a checkout's path (a project file to commit for
    # the team), or a checkout moved: the server follows, as the hooks do.
    seed(host, "project", project)
    mine = files(project)
    first, second = "/old/checkout/.venv/bin/ctx", "/home/me/.local/bin/ctx"
    for program in (first, "ctx", second, first):
        apply_plan(plan_install(HOSTS[host], "project", program))
        ours = servers(host, project)["ctx"]
        assert ours == {"command": program, "args": ["mcp"]}
    # An uninstall by another ctx (the first one's checkout is gone) takes it.
    apply_plan(plan_uninstall(HOSTS[host], "project", second))
    assert "ctx" not in servers(host, project)
    assert {p: b for p, b in files(project).items() if "ctx-backup" not in p} == mine


def test_a_matcher_given_to_ctxs_group_goes_with_it(project):
    seed("gemini", "project", project)
    mine = files(project)
    install("gemini")
    path = project / ".gemini" / "settings.json"
    data = json.loads(path.read_text())
    data["hooks"]["SessionStart"][0]["matcher"] = "startup|resume"
    path.write_text(json.dumps(data, indent=2) + "\n")
    uninstall("gemini")
    left = json.loads(path.read_text())
    assert left == json.loads(mine[str(path)])  # no "SessionStart": [] left


@pytest.mark.parametrize("host", ["gemini", "cursor"])
def test_settings_with_comments_are_installed_into_and_given_back(project, host):
    # Gemini CLI reads settings.json through strip-json-comments: comments
    # are common there, and were refused as "not valid JSON".
    path = servers_file(host, project)
    text = '{\n  // my theme\n  "theme": "GitHub", /* dark */\n  "mcpServers": {"fs": {"command": "fs-mcp"}}\n}\n'
    write(path, text)
    install(host)
    assert servers(host, project)["ctx"] == {"command": "ctx", "args": ["mcp"]}
    assert "// my theme" in path.read_text()
    uninstall(host)
    assert path.read_text() == text


@pytest.mark.parametrize("host", ["claude", "codex", "gemini", "cursor"])
def test_files_with_crlf_line_ends_come_back_byte_for_byte(project, host):
    root = seed(host, "project", project)
    for path in [p for p in root.rglob("*") if p.is_file()]:
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    before = files(root)
    install(host)
    backups = {p: p.read_bytes() for p in root.rglob("*.ctx-backup")}
    for backup, saved in backups.items():  # the old bytes, as they were
        assert before[str(backup)[: -len(".ctx-backup")]] == saved
    assert not [c for c in install(host).files if c.action != "unchanged"]
    uninstall(host)
    assert files(root) == before


def test_the_codex_table_is_told_from_a_string_that_quotes_it(project):
    # The text install writes, quoted in a multi-line string above the table:
    # the string's copy was found first, and the table stayed on uninstall.
    quoted = 'note = """\n[mcp_servers.ctx]\ncommand = "ctx"\nargs = ["mcp"]\n"""\n'
    write(project / ".codex" / "config.toml", quoted)
    install("codex")
    assert (project / ".codex" / "config.toml").read_text() != quoted
    uninstall("codex")
    assert (project / ".codex" / "config.toml").read_text() == quoted
