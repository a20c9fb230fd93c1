"""What the redaction tests share: a store's every byte, and a killed run.

A redaction must leave its text in no object and no file of the store, and
must finish (or be absent) when killed at any step: :func:`store_bytes`
reads everything there is, :func:`killed_after` writes a script that runs a
redaction in a child process and kills it right after one step.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path


def store_bytes(root: Path) -> bytes:
    """Every file of the store at ``root``, and every object as stock git reads it."""
    git = ["git", "--git-dir", str(root / "git")]
    listing = subprocess.run(
        [*git, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"],
        capture_output=True,
        check=True,
    ).stdout
    objects = subprocess.run(
        [*git, "cat-file", "--batch"], input=listing, capture_output=True, check=True
    ).stdout
    files = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
    return objects + files


def killed_after(module: str, run: str) -> str:
    """Returns a script that runs ``run`` with ``module``'s step killed after.

    The script takes the store's path, the step (a name in ``module``, or
    ``OTHER:NAME`` for a name in the module ``OTHER``) and a target as
    ``sys.argv[1:4]``; ``run`` is Python that uses ``patched`` (``module``),
    ``root`` (the path) and ``target``. The process ends with status 9
    right after the step returns.
    """
    return textwrap.dedent(
        f"""
        import importlib, os, sys
        from datetime import UTC, datetime
        from pathlib import Path
        import {module} as patched

        root, step, target = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
        where, _, step = step.rpartition(":")
        stepping = importlib.import_module(where) if where else patched
        original = getattr(stepping, step)

        def killed(*args, **kwargs):
            original(*args, **kwargs)
            os._exit(9)

        setattr(stepping, step, killed)
        """
    ) + textwrap.dedent(run)
