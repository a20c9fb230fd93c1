r"""Which files of a tree the code index reads, and their content ids.

Files are chosen as git would: every ``.gitignore`` and ``.ctxignore`` on the
way down applies to what lies below it (rules read by ``pathspec``, git's own
pattern semantics, a deeper file's rule winning), ``.git`` and ``.ctx``
are never entered, and symbolic links are not followed (git stores a link,
not what it points to), so a link loop cannot trap the walk. What is walked
but left out is counted by reason: a symlink, a file too large
(:data:`MAX_FILE_BYTES`), of no known language, binary (a NUL byte in its
first 8 kB), not UTF-8, generated (by name, or a ``@generated`` /
``DO NOT EDIT`` mark in its first lines), a lock file, or unreadable.

A file's content id is its git blob id when the tree is a git work tree
(computed as git does: SHA-1 of ``blob <size>\\0`` and the bytes), so the ids
agree with ``git ls-files -s``; its blake3 hash otherwise.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import blake3
import pathspec

from ctx.hub.code.languages import language_of

__all__ = [
    "IGNORE_FILES",
    "MAX_FILE_BYTES",
    "Candidate",
    "content_id",
    "in_git_work_tree",
    "read_source",
    "walk_tree",
]

IGNORE_FILES = (".gitignore", ".ctxignore")
MAX_FILE_BYTES = 1_000_000
"""A larger file is left out: minified bundles, data dumps and vendored
amalgamations, whose chunks would crowd out the code people wrote."""

_GIT_FILES = frozenset({*IGNORE_FILES, ".gitattributes", ".gitmodules"})
_NEVER_ENTERED = frozenset({".git", ".ctx", ".hg", ".svn"})
_LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "pipfile.lock",
        "cargo.lock",
        "gemfile.lock",
        "composer.lock",
        "go.sum",
        "flake.lock",
        "bun.lock",
    }
)
_GENERATED_NAME = re.compile(
    r"(\.min\.(js|css)|_pb2(_grpc)?\.pyi?|\.pb\.go|\.pb\.(cc|h)|\.generated\.\w+|\.g\.dart)$",
    re.IGNORECASE,
)
_GENERATED_MARK = re.compile(rb"@generated|DO NOT EDIT|Code generated .* DO NOT EDIT")
_SNIFF_BYTES = 8192
_MARK_LINES = 5


@dataclass(frozen=True)
class Candidate:
    """A file the walk chose: its path from the root, language and stat."""

    path: str
    language: str
    size: int
    mtime_ns: int


def in_git_work_tree(root: Path) -> bool:
    """Returns whether ``root`` lies in a git work tree (a ``.git`` above)."""
    return any((folder / ".git").exists() for folder in (root, *root.parents))


def content_id(data: bytes, *, git: bool) -> str:
    """Returns the git blob id of ``data`` (``git``), else its blake3 hash."""
    if git:
        return hashlib.sha1(
            b"blob %d\0" % len(data) + data, usedforsecurity=False
        ).hexdigest()
    return blake3.blake3(data).hexdigest()


class _Rules:
    """The ignore rules of the folders from the root down to one folder."""

    def __init__(self, chain: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()):
        self.chain = chain

    def below(self, folder: Path, prefix: str) -> _Rules:
        """Returns these rules with the folder's own ignore files added."""
        lines: list[str] = []
        for name in IGNORE_FILES:
            try:
                text = (folder / name).read_text("utf-8", errors="replace")
            except OSError:
                continue
            lines.extend(text.splitlines())
        if not lines:
            return self
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return _Rules((*self.chain, (prefix, spec)))

    def ignored(self, path: str, *, folder: bool) -> bool:
        """Returns whether ``path`` (from the root) is ignored; deeper rules win."""
        for prefix, spec in reversed(self.chain):
            relative = path[len(prefix) :] + ("/" if folder else "")
            result = spec.check_file(relative)
            if result.include is not None:
                return bool(result.include)
        return False


def walk_tree(root: Path) -> tuple[list[Candidate], Counter[str]]:
    """Returns the files of ``root`` to index, sorted, and what was left out.

    The count of what was left out here is by reason: ``symlink``, ``too
    large``, ``unknown language``, ``lock file``, ``generated`` (by name),
    ``unreadable``. :func:`read_source` finds the rest when it reads a file.
    """
    found: list[Candidate] = []
    skipped: Counter[str] = Counter()
    stack: list[tuple[Path, str, _Rules]] = [(root, "", _Rules().below(root, ""))]
    while stack:
        folder, prefix, rules = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            skipped["unreadable"] += 1
            continue
        for entry in entries:
            path = prefix + entry.name
            try:
                if entry.is_symlink():
                    if not rules.ignored(path, folder=False):
                        skipped["symlink"] += 1
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in _NEVER_ENTERED or rules.ignored(path, folder=True):
                        continue
                    sub = Path(entry.path)
                    stack.append((sub, path + "/", rules.below(sub, path + "/")))
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                skipped["unreadable"] += 1
                continue
            if not stat.S_ISREG(info.st_mode) or rules.ignored(path, folder=False):
                continue
            reason = _reason_by_name(entry.name, info.st_size)
            if reason is not None:
                skipped[reason] += 1
                continue
            language = language_of(entry.name)
            if language is None:
                if entry.name not in _GIT_FILES:
                    skipped["unknown language"] += 1
                continue
            found.append(Candidate(path, language, info.st_size, info.st_mtime_ns))
    found.sort(key=lambda c: c.path)
    return found, skipped


def _reason_by_name(name: str, size: int) -> str | None:
    if name.lower() in _LOCK_FILES:
        return "lock file"
    if _GENERATED_NAME.search(name):
        return "generated"
    if size > MAX_FILE_BYTES:
        return "too large"
    return None


def read_source(data: bytes) -> tuple[str | None, str | None]:
    """Returns a file's text, or None and why it is left out.

    The reasons are ``binary``, ``not UTF-8`` and ``generated``; a UTF-8
    byte order mark is dropped.
    """
    if b"\0" in data[:_SNIFF_BYTES]:
        return None, "binary"
    head = b"\n".join(data[:_SNIFF_BYTES].split(b"\n")[:_MARK_LINES])
    if _GENERATED_MARK.search(head):
        return None, "generated"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    return text.removeprefix("\ufeff"), None
