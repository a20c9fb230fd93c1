"""Installing into a host and uninstalling: every file's new text, then writes.

:func:`plan_install` and :func:`plan_uninstall` read every file the host
keeps and work out its new text before anything is written, so a file that
is not valid JSON or TOML stops the command with nothing changed.
:func:`apply_plan` writes the plan: for each file that changes, a backup of
its old text first (``FILE.ctx-backup``, replaced at each change), then the
new text, replaced whole. A file left with nothing (ctx's entries were all
it held) is removed, and so are the folders that leaves empty; when an
uninstall brings a file back to exactly what its backup holds, the backup
is removed too, as there is nothing left to restore.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from ctx.porcelain.install.hosts import (
    PROGRAM,
    SERVER_NAME,
    Host,
    HostFiles,
    program_missing,
    server_entry,
)
from ctx.porcelain.install.jsontext import JsonText, invalid_file
from ctx.porcelain.install.settings import (
    add_hooks,
    add_server,
    add_toml_server,
    remove_hooks,
    remove_server,
    remove_toml_server,
)
from ctx.porcelain.install.skill import SKILL_TEXT

__all__ = [
    "BACKUP_SUFFIX",
    "FileChange",
    "InstallResult",
    "Plan",
    "apply_plan",
    "plan_install",
    "plan_uninstall",
]

BACKUP_SUFFIX = ".ctx-backup"
"""What a file's backup adds to its name."""


class FileChange(msgspec.Struct, frozen=True, kw_only=True):
    """What an install or uninstall does to one file.

    Attributes:
        path: The file.
        action: ``created``, ``changed``, ``removed`` or ``unchanged``.
        backup: The backup of its old text, when one was written.
        diff: The change as a unified diff (empty when unchanged).
    """

    path: str
    action: str
    backup: str | None = None
    diff: str = ""


class InstallResult(msgspec.Struct, frozen=True, kw_only=True):
    """What ``ctx install`` or ``ctx uninstall`` did (or, dry, would do).

    Attributes:
        host: The host (``claude``, ``codex``, ``gemini``, ``cursor``).
        scope: ``project`` or ``user``.
        action: ``install`` or ``uninstall``.
        dry_run: Whether nothing was written.
        files: Each file the host keeps, and what happened to it.
        notes: What a person should know (a host without hooks, ...).
    """

    host: str
    scope: str
    action: str
    dry_run: bool
    files: tuple[FileChange, ...]
    notes: tuple[str, ...] = ()


@dataclass
class Plan:
    """The new text of each file (None: removed), and the old text.

    Attributes:
        host: The host.
        scope: ``project`` or ``user``.
        action: ``install`` or ``uninstall``.
        program: The ``ctx`` the host runs (a path, or ``ctx`` by name).
        old: Each file's text now (None: no such file), in order.
        new: Each file's text after (None: no file).
        notes: Lines for the person.
    """

    host: Host
    scope: str
    action: str
    program: str = PROGRAM
    old: dict[Path, str | None] = field(default_factory=dict)
    new: dict[Path, str | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def scope_root(self) -> Path:
        """Returns the folder the scope's files are under (home or project)."""
        return Path.home() if self.scope == "user" else Path.cwd()

    def read(self, path: Path) -> str | None:
        """Returns the text the plan holds for ``path`` so far."""
        if path not in self.old:
            self.old[path] = _read(path)
            self.new[path] = self.old[path]
        return self.new[path]

    def changes(self) -> list[FileChange]:
        """Returns each file's change, with its diff."""
        result = []
        for path, old in self.old.items():
            new = self.new[path]
            if old is None and new is None:
                continue  # no such file, and none is made
            if old == new:
                action = "unchanged"
            elif old is None:
                action = "created"
            elif new is None:
                action = "removed"
            else:
                action = "changed"
            result.append(
                FileChange(path=str(path), action=action, diff=_diff(path, old, new))
            )
        return result


def _read(path: Path) -> str | None:
    # As the bytes say, line ends included: read as text, a file's CRLF came
    # back LF, and uninstall no longer gave back the bytes it had.
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise invalid_file(path, f"cannot be read ({exc})") from None


def _diff(path: Path, old: str | None, new: str | None) -> str:
    if old == new:
        return ""
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        (new or "").splitlines(keepends=True),
        fromfile=str(path) if old is not None else "/dev/null",
        tofile=str(path) if new is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _edit_json(plan: Plan, path: Path, install: bool) -> None:
    host = plan.host
    doc = JsonText(path, plan.read(path))
    changed = False
    files = _files(plan)
    if path == files.hooks and host.events:
        commands = host.hook_commands(plan.program)
        if install:
            changed |= add_hooks(doc, commands, named=host.hook_name)
        else:
            changed |= remove_hooks(doc, commands)
    if path == files.mcp:
        if install:
            changed |= add_server(doc, SERVER_NAME, server_entry(plan.program))
        else:
            changed |= remove_server(doc, SERVER_NAME, plan.program)
    if changed:
        plan.new[path] = doc.encode()


def _files(plan: Plan) -> HostFiles:
    return plan.host.files(plan.scope, Path.cwd(), Path.home())


def _plan(host: Host, scope: str, action: str, program: str) -> Plan:
    plan = Plan(host=host, scope=scope, action=action, program=program)
    files = _files(plan)
    install = action == "install"
    if files.hooks is not None:
        _edit_json(plan, files.hooks, install)
    if host.mcp_format == "toml":
        text = plan.read(files.mcp)
        if install:
            plan.new[files.mcp] = add_toml_server(files.mcp, text, program)
        else:
            plan.new[files.mcp] = remove_toml_server(files.mcp, text, program)
    elif files.mcp != files.hooks:
        _edit_json(plan, files.mcp, install)
    if files.skill is not None:
        text = plan.read(files.skill)
        if install:
            plan.new[files.skill] = SKILL_TEXT
        elif text == SKILL_TEXT:
            plan.new[files.skill] = None
        elif text is not None:
            plan.notes.append(
                f"{files.skill} was changed since ctx wrote it: it was kept."
            )
    if install and program_missing(program):
        plan.notes.append(
            f"{program} names no file here: the host's hooks and server fail "
            "until it does."
        )
    if install and host.note:
        plan.notes.append(host.note)
    if install and scope == "project" and host.project_note:
        plan.notes.append(host.project_note)
    return plan


def plan_install(host: Host, scope: str, program: str = PROGRAM) -> Plan:
    """Returns what installing ctx into ``host`` changes, writing nothing.

    The hooks run ``PROGRAM hook EVENT``; the MCP server ``ctx`` runs
    ``PROGRAM mcp`` (a server already named ``ctx`` is kept as it is, unless
    install wrote it for another ``ctx``); Claude Code also gets the skill.
    Project files are under the working folder, user files under the home
    folder (``HOME``).

    Args:
        host: The host.
        scope: ``project`` or ``user``.
        program: The ``ctx`` hosts run: a path (``ctx install`` gives its
            own), or ``ctx`` by name, found on the host's ``PATH``.

    Raises:
        InvalidInputError: A file is not valid JSON or TOML, or its entries
            have another shape than the host's.
    """
    return _plan(host, scope, "install", program)


def plan_uninstall(host: Host, scope: str, program: str = PROGRAM) -> Plan:
    """Returns what removing exactly what install adds changes, writing nothing.

    What install added for ``program`` (a path) or for ``ctx`` by name is
    removed.

    Raises:
        InvalidInputError: A file is not valid JSON or TOML.
    """
    return _plan(host, scope, "uninstall", program)


def apply_plan(plan: Plan, *, dry_run: bool = False) -> InstallResult:
    """Writes the plan (unless ``dry_run``) and returns what it did."""
    changes = plan.changes()
    done = []
    for change in changes:
        path = Path(change.path)
        backup = None
        if change.action != "unchanged" and not dry_run:
            backup = _write(path, plan.old[path], plan.new[path], plan.scope_root())
        done.append(msgspec.structs.replace(change, backup=backup))
    return InstallResult(
        host=plan.host.name,
        scope=plan.scope,
        action=plan.action,
        dry_run=dry_run,
        files=tuple(done),
        notes=tuple(plan.notes),
    )


def _write(path: Path, old: str | None, new: str | None, root: Path) -> str | None:
    """Writes one file's new text (None: removes it); returns its backup.

    A symbolic link (settings kept with dotfiles) is written through, and
    never removed: a file left with nothing becomes an empty document.
    """
    backup = None
    if path.is_symlink():
        if new is None:
            new = "{}\n" if path.suffix == ".json" else ""
        path = path.resolve()
    if old is not None and new is not None:
        kept = path.with_name(path.name + BACKUP_SUFFIX)
        if _read(kept) == new:
            kept.unlink()  # the file is back to what the backup held
        else:
            _replace(kept, old, path)
            backup = str(kept)
    if new is None:
        path.unlink()
        folder = path.parent
        while folder != root and root in folder.parents and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace(path, new, path if old is not None else None)
    return backup


def _replace(path: Path, text: str, like: Path | None) -> None:
    """Replaces ``path`` whole, with the permissions of ``like`` if given."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(text.encode("utf-8"))
    if like is not None:
        os.chmod(tmp, like.stat().st_mode & 0o7777)
    os.replace(tmp, path)
