"""The instructions a project already has, found and brought in by ``ctx init``.

Agents' hosts read instruction files that a project (and its user) already
wrote. ``ctx init`` lists the ones it finds; ``ctx init --import`` primes
each one (:func:`ctx.engine.prime`, one memory per section, idempotent: a
second run writes nothing unless a file changed). The files themselves are
only read, never changed.

Found in the project folder:

- ``CLAUDE.md``, ``CLAUDE.local.md`` (Claude Code), ``AGENTS.md`` (Codex and
  others), ``GEMINI.md`` (Gemini CLI), ``.cursorrules`` and
  ``.cursor/rules/**/*.mdc`` / ``*.md`` (Cursor),
  ``.github/copilot-instructions.md`` (GitHub Copilot);

and under the home folder, the hosts' own:

- ``~/.claude/CLAUDE.md``, ``~/.codex/AGENTS.md``, ``~/.gemini/GEMINI.md``
  (the user's instructions for every project), and Claude Code's auto
  memory of this project, ``~/.claude/projects/<project>/memory/MEMORY.md``.

A file is pinned (``pinned/<source>/``: part of every recall, ahead of the
rest) when it says it holds rules for every session: every instruction
file above does, and a Cursor rule does when its front matter says
``alwaysApply: true``. The others (a Cursor rule applied by file pattern or
by description, Claude Code's auto memory: notes, not rules) are primed
(``primed/<source>/``: found by recall when they match).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ctx.engine import Intent, InvalidInputError, prime, slugify, split_sections

if TYPE_CHECKING:
    from ctx.hub.workspace import Workspace

__all__ = [
    "FoundInstructions",
    "ImportedInstructions",
    "InitReport",
    "find_instructions",
    "import_instructions",
]

_PROJECT_FILES = (
    ("CLAUDE.md", "claude-md"),
    ("CLAUDE.local.md", "claude-local-md"),
    ("AGENTS.md", "agents-md"),
    ("GEMINI.md", "gemini-md"),
    (".cursorrules", "cursorrules"),
    (".github/copilot-instructions.md", "copilot-instructions"),
)
_HOME_FILES = (
    (".claude/CLAUDE.md", "user-claude-md"),
    (".codex/AGENTS.md", "user-agents-md"),
    (".gemini/GEMINI.md", "user-gemini-md"),
)
_CURSOR_RULES = ".cursor/rules"
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*(?:\n|\Z)", re.S)
_ALWAYS_RE = re.compile(r"^alwaysApply:[ \t]*true[ \t]*$", re.M | re.I)
_MAX_BYTES = 1024 * 1024


class FoundInstructions(msgspec.Struct, frozen=True, kw_only=True):
    """An instruction file found for a project.

    Attributes:
        path: The file, as shown: relative to the project, or ``~/...``.
        file: Its absolute path.
        source: The folder its sections go to (``pinned/<source>/``).
        pin: Whether its sections are pinned (rules) or primed (notes).
        sections: How many memories it makes.
    """

    path: str
    file: str
    source: str
    pin: bool
    sections: int


class ImportedInstructions(msgspec.Struct, frozen=True, kw_only=True):
    """What importing one file did.

    Attributes:
        found: The file.
        area: ``pinned`` or ``primed``.
        commit: The commit, or ``None`` when it was already there unchanged.
    """

    found: FoundInstructions
    area: str
    commit: str | None


class InitReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``ctx init`` did, as its ``--json`` prints it.

    Attributes:
        path: The store's folder.
        created: Whether it was made now (``False``: it was there).
        remote: The URL of the code's remote added as ``origin``
            (``--with-code``), or ``None``.
        found: The instruction files found for the project.
        imported: What importing each did (``--import``; empty otherwise).
    """

    path: str
    created: bool
    remote: str | None = None
    found: list[FoundInstructions] = []
    imported: list[ImportedInstructions] = []


def find_instructions(project: Path, home: Path) -> list[FoundInstructions]:
    """Returns the instruction files of ``project`` and of the user at ``home``.

    A file that is empty, not UTF-8 text, or over 1 MiB is left out.
    """
    project = project.absolute()
    out: list[FoundInstructions] = []
    for name, source in _PROJECT_FILES:
        out += _found(project / name, name, source, pin=True)
    rules = project / _CURSOR_RULES
    if rules.is_dir():
        for file in sorted(rules.rglob("*")):
            if file.suffix in (".mdc", ".md") and file.is_file():
                shown = file.relative_to(project).as_posix()
                stem = file.relative_to(rules).with_suffix("").as_posix()
                out += _found(file, shown, f"cursor-rule-{slugify(stem, 40)}", None)
    for name, source in _HOME_FILES:
        out += _found(home / name, f"~/{name}", source, pin=True)
    auto = (
        home
        / ".claude"
        / "projects"
        / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        / "memory"
        / "MEMORY.md"
    )
    shown = "~/" + auto.relative_to(home).as_posix()
    out += _found(auto, shown, "claude-auto-memory", pin=False)
    return out


def _found(
    file: Path, shown: str, source: str, pin: bool | None
) -> list[FoundInstructions]:
    """Returns ``file`` as found (a list of one), or nothing if it is no use."""
    text = _read(file)
    if text is None:
        return []
    body, always = _front_matter(text)
    sections = split_sections(body, default_title=file.name)
    if not sections:
        return []
    return [
        FoundInstructions(
            path=shown,
            file=str(file),
            source=source,
            pin=always if pin is None else pin,
            sections=len(sections),
        )
    ]


def _read(file: Path) -> str | None:
    try:
        if not file.is_file() or file.stat().st_size > _MAX_BYTES:
            return None
        return file.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _front_matter(text: str) -> tuple[str, bool]:
    """Returns the text without its front matter, and whether it says alwaysApply."""
    match = _FRONT_MATTER_RE.match(text)
    if match is None:
        return text, False
    return text[match.end() :], bool(_ALWAYS_RE.search(match.group(1)))


def import_instructions(
    ws: Workspace,
    found: Sequence[FoundInstructions],
    intent: Intent,
    *,
    branch: str | None = None,
) -> list[ImportedInstructions]:
    """Primes each found file (pinned or primed), one commit per file that changed.

    Running it again writes nothing for a file that did not change; a file
    that changed gives new versions of the same memories (same ids).

    Raises:
        InvalidInputError: a file changed since it was found and can no
            longer be read.
    """
    store = ws.store(write=True)
    out = []
    for item in found:
        text = _read(Path(item.file))
        if text is None:
            raise InvalidInputError(f"{item.path} can no longer be read.")
        body, _ = _front_matter(text)
        result = prime(
            store,
            body,
            item.source,
            intent,
            file_name=item.path,
            pin=item.pin,
            branch=branch,
        )
        out.append(
            ImportedInstructions(found=item, area=result.area, commit=result.commit)
        )
    return out
