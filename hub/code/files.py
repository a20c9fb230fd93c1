r"""Which files of a tree the code index reads, and their content ids.

Files are chosen as git would: every ``.gitignore`` and ``.ctxignore`` on the
way down applies to what lies below it (rules read by ``pathspec``, git's own
pattern semantics, a deeper file's rule winning), ``.git`` and ``.ctx``
are never entered, and symbolic links are not followed (git stores a link,
not what it points to), so a link loop cannot trap the walk. What is walked
but left out is counted by reason: a symlink, a file too large
(:data:`MAX_FILE_BYTES`; :data:`MAX_IGNORE_BYTES` for an ignore file, whose
rules then do not apply), of no known language, binary (a NUL byte in its
first 8 kB), not UTF-8, generated (by name, or a ``@generated`` /
``DO NOT EDIT`` mark in its first lines), minified (long lines, over
:data:`MAX_LINE_CHARS`, hold most of it or 20,000 characters), a lock file,
or unreadable.

Every file of the tree is read through :func:`read_file`, which opens only
a regular file inside the root, through no symbolic link, and reads a
bounded number of bytes: a tree that holds a FIFO, a link to ``/dev/zero``
or to a file outside it, or a huge sparse file (put there, or swapped in
while the index runs) can neither hang the index nor exhaust its memory,
nor show another file's text (issue 28).

A file's content id is its git blob id when the tree is a git work tree
(computed as git does: SHA-1 of ``blob <size>\\0`` and the bytes), so the ids
agree with ``git ls-files -s``; its blake3 hash otherwise.
"""

from __future__ import annotations

import errno
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
    "MAX_IGNORE_BYTES",
    "MAX_LINE_CHARS",
    "Candidate",
    "content_id",
    "in_git_work_tree",
    "read_file",
    "read_source",
    "unread_reason",
    "walk_tree",
]

IGNORE_FILES = (".gitignore", ".ctxignore")
MAX_FILE_BYTES = 1_000_000
"""A larger file is left out: minified bundles, data dumps and vendored
amalgamations, whose chunks would crowd out the code people wrote."""
MAX_LINE_CHARS = 5_000
"""A file whose lines longer than this hold most of its text, or more than
four times this in all, is left out as minified: a bundle not named
``*.min.js`` (``dist/app.js``) puts thousands of functions on one line, and a
chunk is whole lines, so each would carry all of them (an index of hours for
a file of 700 kB). A file people write may hold such a line (a table of
names) among the rest: it is indexed."""
MAX_IGNORE_BYTES = 100_000
"""A larger ignore file is left out, its rules not applied (git leaves out
one over 100 MB): ``pathspec`` compiles about 10,000 patterns a second and
tries each one on every file below, so a megabyte of rules would cost
seconds per folder and milliseconds per file."""

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
# No flag follows a link or waits: a FIFO opened for reading without
# O_NONBLOCK blocks until a writer comes, which may be never.
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


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


def read_file(root: Path, path: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """Returns the bytes of the regular file at ``path`` (from ``root``).

    Each folder on the way down from ``root``, then the file, is opened
    relative to the one above it without following a symbolic link, so
    what is read lies inside ``root`` however the tree changes meanwhile
    (a file or a folder swapped for a link to elsewhere). The file is
    opened without waiting and checked to be a regular file before a byte
    is read (a FIFO, device or socket is refused), and no more than
    ``limit`` bytes and one are read, whatever its size says.

    Args:
        root: The tree's root (itself may be reached through a link).
        path: The file's path from ``root``, ``/``-separated, with no
            ``.``, ``..`` or empty part.
        limit: The most bytes the file may hold.

    Raises:
        OSError: The file cannot be read, or is refused: ``ELOOP`` for a
            link, ``ENOTDIR`` for a folder on the way that is a link or
            not a folder, ``EFBIG`` for a file over ``limit``, ``EINVAL``
            for a path that leaves ``root`` or a file that is not regular.
    """
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise OSError(errno.EINVAL, "Not a path inside the tree", path)
    folder = os.open(root, _FOLDER_FLAGS)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _FOLDER_FLAGS | os.O_NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=folder)
    finally:
        os.close(folder)
    try:
        return _read_regular(fd, path, limit)
    finally:
        os.close(fd)


def _read_regular(fd: int, path: str, limit: int) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "Not a regular file", path)
    if info.st_size > limit:
        raise OSError(errno.EFBIG, "File too large", path)
    # Its size may change while it is read: ask for what it says and one
    # byte more (the end then comes at once), and never past the limit.
    parts: list[bytes] = []
    size = 0
    wanted = min(info.st_size, limit) + 1
    while size <= limit:
        part = os.read(fd, wanted)
        if not part:
            return b"".join(parts)
        parts.append(part)
        size += len(part)
        wanted = limit + 1 - size
    raise OSError(errno.EFBIG, "File too large", path)


def unread_reason(exc: OSError) -> str:
    """Returns why :func:`read_file` left a file out, as the walk counts it."""
    if exc.errno == errno.ELOOP:
        return "symlink"
    if exc.errno == errno.EFBIG:
        return "too large"
    return "unreadable"


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

    def below(self, root: Path, prefix: str) -> _Rules:
        """Returns these rules with the ignore files of ``prefix`` added.

        An ignore file that :func:`read_file` refuses (a link, not a
        regular file, over :data:`MAX_IGNORE_BYTES`) adds no rules; the
        walk counts it as it counts any file it lists.
        """
        lines: list[str] = []
        for name in IGNORE_FILES:
            try:
                data = read_file(root, prefix + name, limit=MAX_IGNORE_BYTES)
            except OSError:
                continue
            lines.extend(data.decode("utf-8", errors="replace").splitlines())
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
                    below = rules.below(root, path + "/")
                    stack.append((Path(entry.path), path + "/", below))
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
    if size > (MAX_IGNORE_BYTES if name in IGNORE_FILES else MAX_FILE_BYTES):
        return "too large"
    return None


def _minified(text: str) -> bool:
    """Returns whether ``text`` reads as minified (:data:`MAX_LINE_CHARS`).

    Its long lines hold most of it, or more than four times that limit in
    all: a bundle pasted above written code, every definition on it a chunk
    carrying all of it.
    """
    long = sum(n for n in map(len, text.split("\n")) if n > MAX_LINE_CHARS)
    return long * 2 > len(text) or long > 4 * MAX_LINE_CHARS


def read_source(data: bytes) -> tuple[str | None, str | None]:
    """Returns a file's text, or None and why it is left out.

    The reasons are ``binary``, ``not UTF-8``, ``generated`` and
    ``minified`` (:func:`_minified`); a UTF-8 byte order mark is dropped.
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
    if len(text) > MAX_LINE_CHARS and _minified(text):
        return None, "minified"
    return text.removeprefix("\ufeff"), None
