"""The agent hosts ctx installs into, and where each keeps what ctx adds.

Checked against each host's documentation (docs/install.md lists the
sources):

- Claude Code: hooks in ``.claude/settings.json`` (user:
  ``~/.claude/settings.json``), each event a list of matcher groups whose
  ``hooks`` are ``{"type": "command", "command": ...}``; MCP servers in
  ``.mcp.json`` (user: ``~/.claude.json``) under ``mcpServers``; skills in
  ``.claude/skills/NAME/SKILL.md``.
- Codex: hooks in ``.codex/hooks.json`` (user: ``~/.codex/hooks.json``),
  the same shape and event names as Claude Code's; MCP servers in
  ``.codex/config.toml`` (user: ``~/.codex/config.toml``) as
  ``[mcp_servers.NAME]`` tables; skills (the open Agent Skills format, as
  Claude Code's) in ``.agents/skills/NAME/SKILL.md`` (user:
  ``~/.agents/skills``).
- Gemini CLI: hooks and ``mcpServers`` in ``.gemini/settings.json`` (user:
  ``~/.gemini/settings.json``); its events have names of their own
  (``BeforeAgent`` is ctx's ``prompt-submit``), which ``ctx hook`` accepts,
  and by which it knows the writer is ``gemini-cli``; skills in
  ``.gemini/skills/NAME/SKILL.md`` (user: ``~/.gemini/skills``).
- Cursor: MCP servers in ``.cursor/mcp.json`` (user: ``~/.cursor/mcp.json``).
  Its hooks send and expect JSON of another shape than ``ctx hook`` reads,
  so only the MCP server is installed.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "HOSTS",
    "PROGRAM",
    "SCOPES",
    "Host",
    "HostFiles",
    "program_missing",
    "running_program",
    "server_entry",
]

SCOPES = ("project", "user")
"""Where a host's files live: the project folder, or the user's home."""

PROGRAM = "ctx"
"""The program by name, as a host finds it on its ``PATH``: what the
repository's plugin manifests run, and ``ctx install --command ctx``."""

SERVER_NAME = "ctx"
"""The MCP server's name in every host's configuration."""

SERVER_ARGS = ("mcp",)
"""The arguments that make ``ctx`` an MCP server over stdio."""


def server_entry(program: str = PROGRAM) -> dict[str, object]:
    """Returns the MCP server ctx installs: ``PROGRAM mcp`` over stdio."""
    return {"command": program, "args": list(SERVER_ARGS)}


SERVER_ENTRY = server_entry()
"""The MCP server of the plugin manifests: ``ctx mcp``, ``ctx`` by name."""


def running_program(argv0: str) -> str:
    """Returns the absolute path of the ``ctx`` running now, else ``ctx``.

    Args:
        argv0: How this process was started (``sys.argv[0]``): the ``ctx``
            (or ``ctx-memory``) script in a virtual environment's ``bin``,
            which holds a ``ctx`` beside it.
    """
    started = Path(argv0)
    if started.name in (PROGRAM, "ctx-memory"):
        beside = started.with_name(PROGRAM)
        if beside.is_file() and os.access(beside, os.X_OK):
            return os.path.abspath(beside)
    found = shutil.which(PROGRAM)
    return os.path.abspath(found) if found else PROGRAM


def program_missing(program: str) -> bool:
    """Whether ``program``, a path, names no file (a bare name is the PATH's)."""
    return os.path.isabs(program) and not os.path.isfile(program)


_CLAUDE_EVENTS = (
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "prompt-submit"),
    ("Stop", "stop"),
    ("SubagentStart", "subagent-start"),
    ("SubagentStop", "subagent-stop"),
    ("PreCompact", "pre-compact"),
    ("SessionEnd", "session-end"),
)
_CODEX_EVENTS = (
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "prompt-submit"),
    ("Stop", "stop"),
    ("PreCompact", "pre-compact"),
)
_GEMINI_EVENTS = tuple(
    (name, name)
    for name in (
        "SessionStart",
        "BeforeAgent",
        "AfterAgent",
        "PreCompress",
        "SessionEnd",
    )
)


@dataclass(frozen=True)
class HostFiles:
    """The files of one host in one scope (None: the host has no such file).

    Attributes:
        hooks: The JSON file holding its hooks.
        mcp: The file holding its MCP servers (JSON, or TOML for Codex).
        skill: The skill file (not for Cursor): how and when an agent
            uses ctx, the ``<ctx:*>`` commands the stop hook carries out
            among them, which an agent is told of nowhere else.
    """

    hooks: Path | None
    mcp: Path
    skill: Path | None


@dataclass(frozen=True)
class Host:
    """One agent host.

    Attributes:
        name: Its name on the command line (``claude``, ``codex``, ...).
        title: Its name for people.
        events: Each hook ctx installs: the host's event name and the
            argument of ``ctx hook``.
        hook_name: Whether each hook carries a ``name`` (Gemini CLI shows it).
        mcp_format: ``json`` (``mcpServers``) or ``toml`` (``mcp_servers``).
        note: What a person should know about this host's install.
        project_note: What a person should know about an install in a
            project (a host that reads project files only in a trusted one).
    """

    name: str
    title: str
    events: tuple[tuple[str, str], ...]
    hook_name: bool = False
    mcp_format: str = "json"
    note: str | None = None
    project_note: str | None = None

    def files(self, scope: str, project: Path, home: Path) -> HostFiles:
        """Returns where this host keeps its hooks, servers and skill."""
        user = scope == "user"
        root = home if user else project
        if self.name == "claude":
            return HostFiles(
                hooks=root / ".claude" / "settings.json",
                mcp=home / ".claude.json" if user else project / ".mcp.json",
                skill=root / ".claude" / "skills" / "ctx" / "SKILL.md",
            )
        if self.name == "codex":
            return HostFiles(
                hooks=root / ".codex" / "hooks.json",
                mcp=root / ".codex" / "config.toml",
                skill=root / ".agents" / "skills" / "ctx" / "SKILL.md",
            )
        if self.name == "gemini":
            settings = root / ".gemini" / "settings.json"
            skill = root / ".gemini" / "skills" / "ctx" / "SKILL.md"
            return HostFiles(hooks=settings, mcp=settings, skill=skill)
        return HostFiles(hooks=None, mcp=root / ".cursor" / "mcp.json", skill=None)

    def hook_commands(self, program: str = PROGRAM) -> list[tuple[str, str]]:
        """Returns each hook's host event and the command that answers it.

        Args:
            program: The ``ctx`` the host runs: by name, or a path (quoted
                for the shell that hosts run hooks in).
        """
        ctx = shlex.quote(program)
        return [(event, f"{ctx} hook {arg}") for event, arg in self.events]


HOSTS: dict[str, Host] = {
    h.name: h
    for h in (
        Host("claude", "Claude Code", _CLAUDE_EVENTS),
        Host(
            "codex",
            "Codex",
            _CODEX_EVENTS,
            mcp_format="toml",
            project_note="Codex runs project hooks and servers only in a trusted "
            "project.",
        ),
        Host("gemini", "Gemini CLI", _GEMINI_EVENTS, hook_name=True),
        Host(
            "cursor",
            "Cursor",
            (),
            note="Cursor's hooks speak another JSON than `ctx hook` reads: "
            "only the MCP server is installed.",
        ),
    )
}
"""The hosts, by their names on the command line."""
