"""The host manifests kept in the repository, built from what ``ctx install`` writes.

A host can also install ctx by itself, from files in this repository:

- Claude Code: the plugin ``plugins/claude/ctx`` (its manifest, hooks, MCP
  server and skill) and the marketplace ``.claude-plugin/marketplace.json``
  that lists it.
- Codex: the plugin ``plugins/codex/ctx`` (manifest, hooks, MCP server and
  skill) and the marketplace ``.agents/plugins/marketplace.json``.
- Gemini CLI: the repository is the extension (``gemini-extension.json``,
  ``hooks/hooks.json`` and a context file).
- The MCP registry: ``server.json``, the package ``ctx-memory`` on PyPI run
  as ``ctx mcp`` over stdio.

:func:`repository_manifests` returns the text of each of those files, made
of the pieces ``ctx install`` writes (each host's hook events and commands,
the MCP server, the skill), so the two cannot drift: a test compares the
files with it, and ``scripts/write_manifests.py`` writes them. Every command
is the bare ``ctx``, as ``ctx install`` writes it: hosts run it from
``PATH``, where ``pipx install`` or ``uv tool install`` puts it.

Each field was checked against the host's documentation; docs/install.md
names the sources.
"""

from __future__ import annotations

import json

import msgspec

from ctx.porcelain.install.hosts import (
    HOSTS,
    SERVER_ARGS,
    SERVER_ENTRY,
    SERVER_NAME,
    Host,
)
from ctx.porcelain.install.settings import hook_group
from ctx.porcelain.install.skill import SKILL_TEXT

__all__ = [
    "CLAUDE_PLUGIN",
    "CODEX_PLUGIN",
    "GEMINI_CONTEXT",
    "MARKETPLACE_NAME",
    "PACKAGE_NAME",
    "PLUGIN_NAME",
    "REGISTRY_NAME",
    "ManifestFile",
    "repository_manifests",
]

PLUGIN_NAME = "ctx"
"""The plugin's and the extension's name in every host."""

MARKETPLACE_NAME = "ctx-memory"
"""The marketplace's name: ``/plugin install ctx@ctx-memory``."""

PACKAGE_NAME = "ctx-memory"
"""The package on PyPI."""

REGISTRY_NAME = "io.github.ctx-memory/ctx"
"""The server's name in the MCP registry. Its namespace must be the GitHub
account (or a domain) that publishes it, and the README names it on a line
``mcp-name: ...``, which is how the registry checks that the PyPI package is
the publisher's."""

CLAUDE_PLUGIN = "plugins/claude/ctx"
"""The Claude Code plugin's folder (the marketplace's entry points at it)."""

CODEX_PLUGIN = "plugins/codex/ctx"
"""The Codex plugin's folder."""

GEMINI_CONTEXT = "plugins/gemini/ctx.md"
"""The Gemini CLI extension's context file. Not named ``GEMINI.md``: Gemini
CLI reads every ``GEMINI.md`` under the folder it runs in, and this one is
for the projects that install ctx, not for this repository."""

_REGISTRY_SCHEMA = (
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
)
_DESCRIPTION = "Versioned, branching memory for agents: recall and remember over MCP."
_LONG_DESCRIPTION = (
    "Every memory is a git commit that says who wrote it and why. Hooks bring "
    "the memories that matter into each session and prompt; the MCP server "
    "recalls, remembers, links and summarizes."
)
_AUTHOR = {"name": "The ctx authors"}
_LICENSE = "Apache-2.0"
_KEYWORDS = ["memory", "mcp", "git", "agents", "hooks"]


class ManifestFile(msgspec.Struct, frozen=True, kw_only=True):
    """One file a host reads to install ctx.

    Attributes:
        path: Its path in the repository, with ``/``.
        text: Its whole text.
    """

    path: str
    text: str


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _hooks(host: Host) -> dict[str, object]:
    """Returns a hooks file: each event ``ctx install`` adds, with its group."""
    return {
        "hooks": {
            event: [hook_group(command, named=host.hook_name)]
            for event, command in host.hook_commands()
        }
    }


def _context() -> str:
    """Returns the skill's text without its front matter (the context file)."""
    _, _, body = SKILL_TEXT.partition("\n---\n")
    return body.lstrip("\n")


def _identity(version: str) -> dict[str, object]:
    """Returns the fields Claude Code's and Codex's ``plugin.json`` share."""
    return {
        "name": PLUGIN_NAME,
        "version": version,
        "description": _DESCRIPTION,
        "author": _AUTHOR,
        "license": _LICENSE,
        "keywords": _KEYWORDS,
    }


def _claude_marketplace() -> dict[str, object]:
    return {
        "name": MARKETPLACE_NAME,
        "owner": _AUTHOR,
        "description": "ctx, versioned memory for agents, as a Claude Code plugin.",
        "plugins": [
            {
                "name": PLUGIN_NAME,
                "source": f"./{CLAUDE_PLUGIN}",
                "description": _DESCRIPTION,
                "category": "productivity",
            }
        ],
    }


def _codex(version: str) -> dict[str, object]:
    """Returns the Codex ``plugin.json``; hooks are in the default file."""
    return {
        **_identity(version),
        "skills": "./skills/",
        "mcpServers": "./.mcp.json",
        "interface": {
            "displayName": "ctx",
            "shortDescription": "Versioned, branching memory for agents",
            "longDescription": _LONG_DESCRIPTION,
            "category": "Productivity",
            "capabilities": ["Read", "Write"],
        },
    }


def _codex_marketplace() -> dict[str, object]:
    return {
        "name": MARKETPLACE_NAME,
        "interface": {"displayName": "ctx"},
        "plugins": [
            {
                "name": PLUGIN_NAME,
                "source": {"source": "local", "path": f"./{CODEX_PLUGIN}"},
                "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                "category": "Productivity",
            }
        ],
    }


def _gemini(version: str) -> dict[str, object]:
    """Returns ``gemini-extension.json``; hooks go in ``hooks/hooks.json``."""
    return {
        "name": PLUGIN_NAME,
        "version": version,
        "description": _DESCRIPTION,
        "mcpServers": {SERVER_NAME: SERVER_ENTRY},
        "contextFileName": GEMINI_CONTEXT,
    }


def _registry(version: str) -> dict[str, object]:
    """Returns ``server.json``: the PyPI package, run with the server's args."""
    return {
        "$schema": _REGISTRY_SCHEMA,
        "name": REGISTRY_NAME,
        "title": "ctx",
        "description": _DESCRIPTION,
        "version": version,
        "packages": [
            {
                "registryType": "pypi",
                "identifier": PACKAGE_NAME,
                "version": version,
                "runtimeHint": "uvx",
                "transport": {"type": "stdio"},
                "packageArguments": [
                    {"type": "positional", "value": arg} for arg in SERVER_ARGS
                ],
            }
        ],
    }


def repository_manifests(version: str) -> tuple[ManifestFile, ...]:
    """Returns every host manifest kept in the repository, for ``version``.

    Args:
        version: ctx's version, as pyproject.toml says it.
    """
    server = {SERVER_NAME: SERVER_ENTRY}
    files = {
        ".claude-plugin/marketplace.json": _json(_claude_marketplace()),
        # Claude Code reads the hooks and the server from their default files.
        f"{CLAUDE_PLUGIN}/.claude-plugin/plugin.json": _json(_identity(version)),
        f"{CLAUDE_PLUGIN}/hooks/hooks.json": _json(_hooks(HOSTS["claude"])),
        f"{CLAUDE_PLUGIN}/.mcp.json": _json({"mcpServers": server}),
        f"{CLAUDE_PLUGIN}/skills/ctx/SKILL.md": SKILL_TEXT,
        ".agents/plugins/marketplace.json": _json(_codex_marketplace()),
        f"{CODEX_PLUGIN}/.codex-plugin/plugin.json": _json(_codex(version)),
        f"{CODEX_PLUGIN}/hooks/hooks.json": _json(_hooks(HOSTS["codex"])),
        f"{CODEX_PLUGIN}/.mcp.json": _json(server),
        f"{CODEX_PLUGIN}/skills/ctx/SKILL.md": SKILL_TEXT,
        "gemini-extension.json": _json(_gemini(version)),
        "hooks/hooks.json": _json(_hooks(HOSTS["gemini"])),
        GEMINI_CONTEXT: _context(),
        "server.json": _json(_registry(version)),
    }
    return tuple(ManifestFile(path=path, text=text) for path, text in files.items())
