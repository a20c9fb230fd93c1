"""Code repositories for the tests of memory that follows the code's branches."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(cwd: Path, *args: str, when: int | None = None) -> str:
    """Runs ``git`` in ``cwd`` as a test author; returns what it printed.

    ``when``: the author and committer time (seconds since the epoch).
    """
    env = dict(os.environ)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when} +0000"
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return done.stdout


def commit(repo: Path, name: str, when: int | None = None) -> None:
    """Commits a file called ``name`` that says ``name``."""
    (repo / name).write_text(name, encoding="utf-8")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", name, when=when)


def code_repo(folder: Path, first: str = "a.txt", when: int | None = None) -> Path:
    """Makes a repository in ``folder`` on branch main, with one commit."""
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    commit(folder, first, when)
    return folder
