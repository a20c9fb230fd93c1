"""Writes the host manifests kept in the repository.

They are the Claude Code and Codex plugins with their marketplaces, the
Gemini CLI extension and the MCP registry's server.json:
porcelain/install/manifests.py builds them from what ``ctx install`` writes, and
tests/porcelain/install/test_install_manifests.py checks them.

Run it after changing a hook, the MCP server, the skill or the version:
``.venv/bin/python scripts/write_manifests.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ctx.porcelain.install import repository_manifests
from ctx.porcelain.version import VERSION

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    """Writes each manifest whose text differs, and names it."""
    for manifest in repository_manifests(VERSION):
        path = ROOT / manifest.path
        if path.is_file() and path.read_text(encoding="utf-8") == manifest.text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(manifest.text, encoding="utf-8")
        sys.stdout.write(f"wrote {manifest.path}\n")


if __name__ == "__main__":
    main()
