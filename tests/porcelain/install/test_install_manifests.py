"""The host manifests kept in the repository (issue 35): each file is what
porcelain/install/manifests.py builds, validates against its host's schema
(tests/porcelain/install/schemas/README.md names the sources), carries pyproject's version,
and, loaded the way its host loads it, gives the same hooks, MCP server and
skill as `ctx install HOST`."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from ctx.porcelain.install import HOSTS, apply_plan, plan_install, repository_manifests
from ctx.porcelain.install.manifests import (
    CLAUDE_PLUGIN,
    CODEX_PLUGIN,
    GEMINI_CONTEXT,
    PACKAGE_NAME,
    REGISTRY_NAME,
)
from ctx.porcelain.install.skill import SKILL_TEXT
from ctx.porcelain.version import VERSION

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = Path(__file__).parent / "schemas"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

# Claude Code's hook events, as its plugins reference lists them
# (code.claude.com/docs/en/plugins-reference, Hooks: Available events).
CLAUDE_EVENTS = {
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "TeammateIdle",
    "TaskCompleted",
    "PreCompact",
}


def _load(path: str) -> dict:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def _validate(document: object, schema_name: str) -> None:
    shared = Resource.from_contents(
        _schema("mcp-servers.schema.json"), default_specification=DRAFT7
    )
    registry = Registry().with_resource("mcp-servers.schema.json", shared)
    validator = jsonschema.Draft7Validator(
        _schema(schema_name),
        registry=registry,
        format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER,
    )
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(document)
    ]
    assert errors == []


@pytest.mark.parametrize(
    "manifest", repository_manifests(VERSION), ids=lambda m: m.path
)
def test_each_file_is_what_install_builds(manifest):
    path = ROOT / manifest.path
    assert path.is_file(), "Run `.venv/bin/python scripts/write_manifests.py`."
    assert path.read_text(encoding="utf-8") == manifest.text, (
        "Run `.venv/bin/python scripts/write_manifests.py`."
    )


def test_every_manifest_carries_pyprojects_version():
    version = PYPROJECT["project"]["version"]
    assert version == VERSION
    server = _load("server.json")
    assert [
        _load(f"{CLAUDE_PLUGIN}/.claude-plugin/plugin.json")["version"],
        _load(f"{CODEX_PLUGIN}/.codex-plugin/plugin.json")["version"],
        _load("gemini-extension.json")["version"],
        server["version"],
        *(package["version"] for package in server["packages"]),
    ] == [version] * 5


@pytest.mark.parametrize(
    ("path", "schema"),
    [
        ("server.json", "mcp-server-2025-12-11.schema.json"),
        (".claude-plugin/marketplace.json", "claude-code-marketplace.schema.json"),
        (
            f"{CLAUDE_PLUGIN}/.claude-plugin/plugin.json",
            "claude-code-plugin.schema.json",
        ),
        (f"{CLAUDE_PLUGIN}/hooks/hooks.json", "hooks.schema.json"),
        (".agents/plugins/marketplace.json", "codex-marketplace.schema.json"),
        (f"{CODEX_PLUGIN}/.codex-plugin/plugin.json", "codex-plugin.schema.json"),
        (f"{CODEX_PLUGIN}/hooks/hooks.json", "hooks.schema.json"),
        (f"{CODEX_PLUGIN}/.mcp.json", "mcp-servers.schema.json"),
        ("gemini-extension.json", "gemini-extension.schema.json"),
        ("hooks/hooks.json", "hooks.schema.json"),
    ],
)
def test_each_manifest_validates_against_its_hosts_schema(path, schema):
    _validate(_load(path), schema)


@pytest.mark.parametrize(
    ("path", "schema", "change"),
    [
        # A typo of a component key: Claude Code would strip it unseen.
        (
            f"{CLAUDE_PLUGIN}/.claude-plugin/plugin.json",
            "claude-code-plugin.schema.json",
            {"hook": "./h.json"},
        ),
        (
            ".claude-plugin/marketplace.json",
            "claude-code-marketplace.schema.json",
            {"name": "claude-plugins-official"},
        ),
        (
            ".agents/plugins/marketplace.json",
            "codex-marketplace.schema.json",
            {"plugins": [{"name": "ctx", "source": "../ctx"}]},
        ),
        (
            f"{CODEX_PLUGIN}/.codex-plugin/plugin.json",
            "codex-plugin.schema.json",
            {"mcpServers": ".mcp.json"},
        ),
        ("gemini-extension.json", "gemini-extension.schema.json", {"hooks": {}}),
        (
            "gemini-extension.json",
            "gemini-extension.schema.json",
            {"mcpServers": {"ctx": {"command": "ctx", "trust": True}}},
        ),
        (
            "hooks/hooks.json",
            "hooks.schema.json",
            {"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}},
        ),
    ],
)
def test_the_schemas_refuse_what_the_hosts_refuse(path, schema, change):
    with pytest.raises(AssertionError):
        _validate({**_load(path), **change}, schema)


def test_the_claude_mcp_file_holds_a_server_map():
    _validate(
        _load(f"{CLAUDE_PLUGIN}/.mcp.json")["mcpServers"], "mcp-servers.schema.json"
    )


def test_the_registry_schema_is_the_published_one():
    # What the copy must say of itself, and an example of the registry's own
    # docs (docs/modelcontextprotocol-io/package-types.mdx, PyPI) it accepts.
    schema = _schema("mcp-server-2025-12-11.schema.json")
    assert schema["$id"] == _load("server.json")["$schema"]
    example = {
        "$schema": schema["$id"],
        "name": "io.github.username/database-query-mcp",
        "title": "Database Query",
        "description": "Execute SQL queries and manage database connections",
        "version": "1.0.0",
        "packages": [
            {
                "registryType": "pypi",
                "identifier": "database-query-mcp",
                "version": "1.0.0",
                "transport": {"type": "stdio"},
            }
        ],
    }
    _validate(example, "mcp-server-2025-12-11.schema.json")
    with pytest.raises(AssertionError):
        _validate({**example, "name": "no-slash"}, "mcp-server-2025-12-11.schema.json")


def test_the_claude_hooks_are_documented_events():
    hooks = _load(f"{CLAUDE_PLUGIN}/hooks/hooks.json")["hooks"]
    assert set(hooks) <= CLAUDE_EVENTS


def test_the_registry_entry_runs_the_package_as_an_mcp_server():
    (package,) = _load("server.json")["packages"]
    assert package["registryType"] == "pypi"
    assert package["identifier"] == PACKAGE_NAME == PYPROJECT["project"]["name"]
    assert package["transport"] == {"type": "stdio"}
    assert package["packageArguments"] == [{"type": "positional", "value": "mcp"}]


def test_the_readme_names_the_registry_entry():
    # The registry takes the PyPI package as the publisher's when its
    # description (the README) says `mcp-name: NAME` (package-types.mdx).
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"mcp-name: {re.escape(REGISTRY_NAME)}(\s|-->)", readme)


def test_the_package_has_a_program_named_like_it():
    """`uvx ctx-memory mcp` (the registry's entry) runs a program of that name."""
    assert PACKAGE_NAME in PYPROJECT["project"]["scripts"]


# What a host loads, read the way it reads it, against what `ctx install` writes.


def _groups(hooks: dict, root: str = "", variable: str = "") -> dict:
    """Returns each event's groups as (matcher, commands), variables filled."""
    return {
        event: [
            (
                group.get("matcher"),
                [h["command"].replace(variable, root) for h in group["hooks"]],
            )
            for group in groups
        ]
        for event, groups in hooks.items()
    }


def _installed(host: str) -> None:
    apply_plan(plan_install(HOSTS[host], "project"))


def _plugin_root(marketplace: str, name: str) -> Path:
    """Returns the plugin folder a marketplace's entry points at."""
    (entry,) = [p for p in _load(marketplace)["plugins"] if p["name"] == name]
    source = entry["source"]
    relative = source if isinstance(source, str) else source["path"]
    root = (ROOT / relative).resolve()
    assert ROOT in root.parents
    return root


def test_the_claude_plugin_gives_what_install_writes(in_project):
    root = _plugin_root(".claude-plugin/marketplace.json", "ctx")
    manifest = json.loads((root / ".claude-plugin/plugin.json").read_text())
    assert manifest["name"] == "ctx"
    # hooks/hooks.json and .mcp.json are loaded by default; the manifest adds
    # none of its own, which would load them twice.
    assert "hooks" not in manifest
    assert "mcpServers" not in manifest
    hooks = json.loads((root / "hooks/hooks.json").read_text())["hooks"]
    servers = json.loads((root / ".mcp.json").read_text())["mcpServers"]
    skill = (root / "skills/ctx/SKILL.md").read_text()

    _installed("claude")
    settings = json.loads((in_project / ".claude/settings.json").read_text())
    mcp = json.loads((in_project / ".mcp.json").read_text())
    variable = "${CLAUDE_PLUGIN_ROOT}"
    assert _groups(hooks, str(root), variable) == _groups(settings["hooks"])
    assert servers == mcp["mcpServers"]
    assert skill == (in_project / ".claude/skills/ctx/SKILL.md").read_text()
    assert skill == SKILL_TEXT


def test_the_codex_plugin_gives_what_install_writes(in_project):
    root = _plugin_root(".agents/plugins/marketplace.json", "ctx")
    manifest = json.loads((root / ".codex-plugin/plugin.json").read_text())
    assert "hooks" not in manifest  # Codex reads hooks/hooks.json by default
    hooks = json.loads((root / "hooks/hooks.json").read_text())["hooks"]
    servers = json.loads((root / manifest["mcpServers"]).read_text())
    servers = servers.get("mcp_servers", servers)  # a wrapped map, or a direct one

    _installed("codex")
    installed = json.loads((in_project / ".codex/hooks.json").read_text())["hooks"]
    config = tomllib.loads((in_project / ".codex/config.toml").read_text())
    assert _groups(hooks, str(root), "${PLUGIN_ROOT}") == _groups(installed)
    assert servers == config["mcp_servers"]


def test_the_gemini_extension_gives_what_install_writes(in_project):
    extension = _load("gemini-extension.json")
    hooks = _load("hooks/hooks.json")["hooks"]
    context = ROOT / extension["contextFileName"]

    _installed("gemini")
    settings = json.loads((in_project / ".gemini/settings.json").read_text())
    assert _groups(hooks, str(ROOT), "${extensionPath}") == _groups(settings["hooks"])
    assert [
        h["name"] for groups in hooks.values() for g in groups for h in g["hooks"]
    ] == [
        h["name"]
        for groups in settings["hooks"].values()
        for g in groups
        for h in g["hooks"]
    ]
    assert extension["mcpServers"] == settings["mcpServers"]
    # The skill's guidance, without the front matter only skills read.
    assert context == ROOT / GEMINI_CONTEXT
    assert SKILL_TEXT.endswith(context.read_text())
    assert context.name != "GEMINI.md"
