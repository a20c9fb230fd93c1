"""Shell completion: where each shell loads a completion script from, and writing it.

The script itself is click's (``click.shell_completion``), made by the
command line, which owns the command group; here it is put where the shell
finds it on its own, in the user's folders:

- bash: ``$XDG_DATA_HOME/bash-completion/completions/ctx`` (default
  ``~/.local/share/...``), which bash-completion 2 loads the first time
  ``ctx`` is completed;
- zsh: ``~/.zfunc/_ctx``, a function file for ``fpath`` (zsh has no user
  folder it reads by itself: the note says what to add to ``~/.zshrc``);
- fish: ``$XDG_CONFIG_HOME/fish/completions/ctx.fish`` (default
  ``~/.config/...``), which fish loads by itself.

As ``ctx install HOST`` does: an unchanged file is not written, a changed
one is backed up first (``FILE.ctx-backup``), and uninstall removes the file
only while it is exactly what install wrote.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from ctx.porcelain.install.plan import BACKUP_SUFFIX, FileChange, InstallResult

__all__ = ["SHELLS", "completion_file", "install_completion", "uninstall_completion"]

SHELLS = ("bash", "zsh", "fish")
"""The shells whose completion ctx installs (those click writes scripts for)."""

_ZSH_NOTE = (
    "zsh reads completion functions from the folders in fpath: add "
    "`fpath=(~/.zfunc $fpath)` to ~/.zshrc before its `compinit` (and "
    "`autoload -Uz compinit && compinit` if it has none)."
)


def completion_file(shell: str) -> Path:
    """Returns where ``shell`` loads ctx's completion from, in the user's folders."""
    home = Path.home()
    if shell == "bash":
        data = os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share")
        return Path(data) / "bash-completion" / "completions" / "ctx"
    if shell == "zsh":
        return home / ".zfunc" / "_ctx"
    config = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return Path(config) / "fish" / "completions" / "ctx.fish"


def install_completion(
    shell: str, script: str, *, dry_run: bool = False
) -> InstallResult:
    """Writes ``script`` where ``shell`` loads it (unless ``dry_run``)."""
    path = completion_file(shell)
    old = _read(path)
    backup = None
    if old == script:
        action = "unchanged"
    else:
        action = "created" if old is None else "changed"
        if not dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            if old is not None:
                backup = str(path.with_name(path.name + BACKUP_SUFFIX))
                Path(backup).write_text(old, encoding="utf-8")
            _replace(path, script)
    notes = [_ZSH_NOTE] if shell == "zsh" else []
    notes.append(f"Open a new {shell} to complete ctx's commands and options.")
    return _result(shell, "install", dry_run, path, action, backup, old, script, notes)


def uninstall_completion(
    shell: str, script: str, *, dry_run: bool = False
) -> InstallResult:
    """Removes the script install wrote, if it is still exactly that."""
    path = completion_file(shell)
    old = _read(path)
    notes = []
    if old is None:
        return _result(
            shell, "uninstall", dry_run, path, "unchanged", None, None, None, []
        )
    if old != script:
        notes.append(f"{path} is not the script ctx wrote; it was kept.")
        return _result(
            shell, "uninstall", dry_run, path, "unchanged", None, old, old, notes
        )
    if not dry_run:
        path.unlink()
    return _result(shell, "uninstall", dry_run, path, "removed", None, old, None, notes)


def _result(
    shell: str,
    action: str,
    dry_run: bool,
    path: Path,
    change: str,
    backup: str | None,
    old: str | None,
    new: str | None,
    notes: list[str],
) -> InstallResult:
    diff = ""
    if old != new:
        lines = difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            str(path) if old is not None else "/dev/null",
            str(path) if new is not None else "/dev/null",
        )
        diff = "".join(lines)
    return InstallResult(
        host=f"completion-{shell}",
        scope="user",
        action=action,
        dry_run=dry_run,
        files=(FileChange(path=str(path), action=change, backup=backup, diff=diff),),
        notes=tuple(notes),
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
