"""Merging ctx's entries into a host's settings text, and taking them out.

Every function takes a file's text (None: no such file) and returns its new
text (None: the file is left with nothing, and is removed). What is not
ctx's is kept:

- JSON: the text is edited in place (:class:`JsonText`): what ctx adds
  goes after the last member of its object, indented as its siblings, and
  an uninstall removes exactly that text, so every other byte is kept.
- TOML: the ``[mcp_servers.ctx]`` table is appended as text (after a blank
  line), and an uninstall removes exactly that text, so the rest of the
  file is never re-encoded; a file that did not end with a newline gets one.

A file that is not valid JSON or TOML, or whose entries have another shape
than the host's (``hooks`` not an object, ...), raises
:class:`~ctx.engine.InvalidInputError` naming it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

from ctx.engine import InvalidInputError
from ctx.porcelain.install.hosts import PROGRAM, server_entry
from ctx.porcelain.install.jsontext import JsonText, invalid_file

__all__ = [
    "add_hooks",
    "add_server",
    "add_toml_server",
    "has_toml_server",
    "hook_group",
    "hooks_present",
    "remove_hooks",
    "remove_server",
    "remove_toml_server",
    "toml_block",
    "toml_server",
]


def _invalid(path: Path, what: str) -> InvalidInputError:
    return invalid_file(path, what)


def _object(doc: JsonText, key: str) -> dict[str, Any] | None:
    # A key present as null is refused as any other non-object: taken for
    # missing, a second key of the name was added after it, which broke the
    # text (a null "hooks") or was what uninstall removed (a null
    # "mcpServers": the user's own key went, ctx's stayed).
    if key in doc.data and not isinstance(doc.data[key], dict):
        raise _invalid(doc.path, f"has a {key!r} that is not an object")
    return doc.data.get(key)


def _commands(group: object) -> list[str | None]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return []
    return [h.get("command") if isinstance(h, dict) else None for h in group["hooks"]]


def _groups(doc: JsonText, event: str) -> list[Any] | None:
    hooks = _object(doc, "hooks")
    groups = None if hooks is None else hooks.get(event)
    if groups is not None and not isinstance(groups, list):
        raise _invalid(doc.path, f"has hooks for {event!r} that are not a list")
    return groups


def hooks_present(doc: JsonText, commands: list[tuple[str, str]]) -> int:
    """Returns how many of the (event, command) hooks the document holds.

    A hook counts whether it runs ``ctx`` by name or by the command's path.
    """
    return sum(
        _find(doc, event, command, exact=False) is not None
        for event, command in commands
    )


def hook_programs(doc: JsonText, commands: list[tuple[str, str]]) -> set[str]:
    """Returns the programs the document's ctx hooks among ``commands`` run."""
    found: set[str] = set()
    for event, command in commands:
        at = _find(doc, event, command, exact=False)
        if at is not None:
            g, h = at
            ran = _commands((_groups(doc, event) or [])[g])[h]
            with contextlib.suppress(ValueError):
                found.update(shlex.split(ran or "")[:1])
    return found


def hook_group(command: str, *, named: bool = False) -> dict[str, object]:
    """Returns the matcher group ctx adds for one hook: no matcher, one command.

    Args:
        command: The command the hook runs.
        named: Whether the hook carries a ``name`` (Gemini CLI shows it).
    """
    hook: dict[str, str] = {"type": "command", "command": command}
    if named:
        hook = {"name": "ctx", **hook}
    return {"hooks": [hook]}


def add_hooks(
    doc: JsonText, commands: list[tuple[str, str]], *, named: bool = False
) -> bool:
    """Adds a group running each command to its event, unless one runs it.

    The same hook run by ``ctx`` by name (an older install's) is replaced,
    so that a second install moves the hooks to this ``ctx``.

    Args:
        doc: The settings.
        commands: Each hook's event and command.
        named: Whether each hook carries a ``name`` (Gemini CLI).

    Returns:
        Whether anything was added.
    """
    changed = False
    for event, command in commands:
        groups = _groups(doc, event)
        ran = [c for g in groups or [] for c in _commands(g)]
        if command in ran and sum(_same_hook(c, command) for c in ran) == 1:
            continue  # this hook, once: nothing to do
        # Another ctx's copy (one the first install from a second ctx left
        # beside this one's) goes, and this one is added once.
        if remove_hooks(doc, [(event, command)]):
            groups = _groups(doc, event)
        group = hook_group(command, named=named)
        if _object(doc, "hooks") is None:
            doc.append((), "hooks", {event: [group]})
        elif groups is None:
            doc.append(("hooks",), event, [group])
        else:
            doc.append(("hooks", event), None, group)
        changed = True
    return changed


def _find(
    doc: JsonText, event: str, command: str, *, exact: bool = True
) -> tuple[int, int] | None:
    """Returns where a hook runs ``command`` (or, not exact, any ``ctx``'s).

    Not exact, the same hook run by ``ctx`` by name or by another path to a
    ``ctx`` counts: an install from a second ``ctx`` (a tool install beside
    a checkout's, a checkout moved) replaces the first's hooks rather than
    adding its own beside them, so every hook ran twice.
    """
    for g, group in enumerate(_groups(doc, event) or []):
        for h, found in enumerate(_commands(group)):
            if found == command or (not exact and _same_hook(found, command)):
                return g, h
    return None


def _same_hook(found: str | None, command: str) -> bool:
    """Whether ``found`` runs the hook ``command`` runs, through some ``ctx``."""
    if found is None:
        return False
    try:
        words, ours = shlex.split(found), shlex.split(command)
    except ValueError:
        return False  # not a command line a shell would run
    return (
        bool(words) and os.path.basename(words[0]) == PROGRAM and words[1:] == ours[1:]
    )


def remove_hooks(doc: JsonText, commands: list[tuple[str, str]]) -> bool:
    """Removes the hooks that run these commands, and what that leaves empty.

    A hook is removed whether it runs ``ctx`` by name or by the command's
    path. A group, an event's list, and ``hooks`` itself are removed only when this
    removal empties them.

    Returns:
        Whether anything was removed.
    """
    changed = False
    for event, command in commands:
        while (at := _find(doc, event, command, exact=False)) is not None:
            g, h = at
            hooks = doc.data["hooks"]
            groups = hooks[event]
            if len(groups[g]["hooks"]) > 1:
                doc.remove(("hooks", event, g, "hooks"), h)
            # The group goes whole, with a matcher the user may have given it:
            # a matcher with nothing to run is nothing.
            elif len(groups) > 1:
                doc.remove(("hooks", event), g)
            elif len(hooks) > 1:
                doc.remove(("hooks",), event)
            else:
                doc.remove((), "hooks")
            changed = True
    return changed


def _installed(entry: object, program: str) -> bool:
    """Returns whether an entry is install's, for ``program`` or any ``ctx``.

    Any ``ctx``, by name or by a path, as for hooks (:func:`_same_hook`): a
    second install with another choice of program (``--command ctx`` after
    a checkout's path, a checkout moved) moves the server with the hooks,
    rather than leaving it on a path that is not the one chosen, or gone.
    """
    if entry == server_entry(program):
        return True
    if not isinstance(entry, dict) or set(entry) != {"command", "args"}:
        return False
    command = entry["command"]
    return (
        isinstance(command, str) and _is_ctx(command) and entry == server_entry(command)
    )


def _is_ctx(command: str) -> bool:
    """Whether ``command`` runs a program named ``ctx`` (by name or path)."""
    return os.path.basename(command) == PROGRAM


def add_server(doc: JsonText, name: str, entry: dict[str, object]) -> bool:
    """Adds the MCP server under ``mcpServers`` unless one has that name.

    A server already named so is kept as it is (it may carry the user's
    ``env``, a branch of its own...), unless it is one install wrote for a
    ``ctx`` (by name or path: an older install's, another choice of
    program): that one is replaced by ``entry``.

    Returns:
        Whether it was added.
    """
    servers = _object(doc, "mcpServers")
    if servers is None:
        doc.append((), "mcpServers", {name: entry})
        return True
    program = str(entry["command"])
    if servers.get(name) == entry or (
        name in servers and not _installed(servers[name], program)
    ):
        return False
    if name in servers:
        remove_server(doc, name, program)
        return add_server(doc, name, entry)
    doc.append(("mcpServers",), name, entry)
    return True


def remove_server(doc: JsonText, name: str, program: str = PROGRAM) -> bool:
    """Removes the MCP server ``name`` if it is exactly what install adds.

    That is ``program``, or ``ctx`` by name, with the server's arguments and
    nothing else.

    Returns:
        Whether it was removed (``mcpServers`` goes too when left empty).
    """
    servers = _object(doc, "mcpServers")
    if servers is None or not _installed(servers.get(name), program):
        return False
    if len(servers) > 1:
        doc.remove(("mcpServers",), name)
    else:
        doc.remove((), "mcpServers")
    return True


def toml_block(program: str = PROGRAM) -> str:
    """Returns the table ctx adds to Codex's ``config.toml``."""
    # A JSON string is a TOML basic string for every path a file system holds.
    return f'[mcp_servers.ctx]\ncommand = {json.dumps(program)}\nargs = ["mcp"]\n'


_TOML_BLOCK = re.compile(
    r'^\[mcp_servers\.ctx\]\ncommand = ("(?:[^"\\\n]|\\.)*")\nargs = \["mcp"\]\n', re.M
)


def _toml(path: Path, text: str | None) -> dict[str, Any]:
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        raise _invalid(path, f"is not valid TOML ({exc})") from None


def toml_server(path: Path, text: str | None) -> object | None:
    """Returns what the TOML text defines as ``mcp_servers.ctx`` (None: nothing)."""
    servers = _toml(path, text).get("mcp_servers")
    return servers.get("ctx") if isinstance(servers, dict) else None


def has_toml_server(path: Path, text: str | None) -> bool:
    """Returns whether the TOML text defines ``mcp_servers.ctx``."""
    return toml_server(path, text) is not None


def add_toml_server(path: Path, text: str | None, program: str = PROGRAM) -> str | None:
    """Returns the TOML text with ``[mcp_servers.ctx]`` appended.

    A file that defines ``mcp_servers.ctx`` in any form is kept as it is,
    but for a table install wrote for a ``ctx`` (by name or path), which is
    replaced.
    """
    block = toml_block(program)
    if block in (text or "") and toml_server(path, text) == server_entry(program):
        return text  # already there (not only quoted in a string)
    text = remove_toml_server(path, text, program)
    if has_toml_server(path, text):
        return text
    old = text or ""
    gap = "" if not old else "\n" if old.endswith("\n") else "\n\n"
    new = old + gap + block
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        raise _invalid(
            path, "defines mcp_servers in a form a table cannot be added to"
        ) from None
    return new


def _ours(block: str, command: str, program: str) -> bool:
    """Whether a table as install writes it runs ``program`` or any ``ctx``."""
    try:
        ran = json.loads(command)
    except ValueError:
        return False
    return block == toml_block(program) or (
        isinstance(ran, str) and _is_ctx(ran) and block == toml_block(ran)
    )


def remove_toml_server(
    path: Path, text: str | None, program: str = PROGRAM
) -> str | None:
    """Returns the TOML text without the table install appended.

    Only that exact text is removed (with the blank line install put before
    it), for ``program`` or for any ``ctx`` (by name or path), and only when
    the table, as TOML reads it, holds nothing else: keys the user added
    after it (past a blank line or a comment, or in a sub-table) make the
    whole server the user's, and it stays.
    """
    _toml(path, text)
    old = text or ""
    if not _installed(toml_server(path, old), program):
        return text
    for match in _TOML_BLOCK.finditer(old):
        if not _ours(match[0], match[1], program):
            continue
        new = _without(old, *match.span())
        try:
            if has_toml_server(path, new):
                continue  # the block matched inside a string: not the table
        except InvalidInputError:
            continue
        return new if new.strip() else None
    return text


def _without(text: str, at: int, end: int) -> str:
    """Returns ``text`` without ``text[at:end]`` and the blank line before it."""
    before, rest = text[:at], text[end:]
    if not rest and before.endswith("\n\n"):
        before = before[:-1]
    elif rest.startswith("\n"):
        rest = rest[1:]
    return before + rest
