"""ctx init finds a project's instruction files; --import brings them in (issue 35)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from ctx.engine import Store, list_memories
from ctx.porcelain.main import cli


def ctx(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def _project(tmp_path: Path) -> dict[Path, bytes]:
    home = Path(os.environ["HOME"])
    project = tmp_path / "api"
    files = {
        project / "CLAUDE.md": "# Style\nUse black.\n\n# Tests\nRun pytest -x.\n",
        project / "AGENTS.md": "Answer in English.\n",
        project / ".github" / "copilot-instructions.md": "# Reviews\nBe kind.\n",
        project / ".cursor" / "rules" / "python.mdc": (
            "---\ndescription: Python\nglobs: '*.py'\nalwaysApply: false\n---\n"
            "# Python\nType everything.\n"
        ),
        project / ".cursor" / "rules" / "always.mdc": (
            "---\nalwaysApply: true\n---\nNo secrets in logs.\n"
        ),
        home / ".claude" / "CLAUDE.md": "# Me\nI like short answers.\n",
        home
        / ".claude"
        / "projects"
        / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        / "memory"
        / "MEMORY.md": "# Build\nmake build, never setup.py.\n",
        project / "GEMINI.md": "",  # empty: nothing to bring in
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return {path: path.read_bytes() for path in files}


def test_init_lists_what_it_found_and_import_brings_it_in_once(
    tmp_path, monkeypatch, clock
):
    files = _project(tmp_path)
    project = tmp_path / "api"
    auto = "~/.claude/projects/" + re.sub(r"[^A-Za-z0-9]", "-", str(project))
    auto += "/memory/MEMORY.md"
    monkeypatch.chdir(project)
    out = ctx("init")
    head, listing = out.split("\n", 1)[0], out.split("changed):\n", 1)[1]
    assert head == f"Created an empty store at {project / '.ctx'} (branch main)."
    found = [
        ("CLAUDE.md", "pinned, 2 sections"),
        ("AGENTS.md", "pinned, 1 section"),
        (".github/copilot-instructions.md", "pinned, 1 section"),
        (".cursor/rules/always.mdc", "pinned, 1 section"),
        (".cursor/rules/python.mdc", "primed, 1 section"),
        ("~/.claude/CLAUDE.md", "pinned, 1 section"),
        (auto, "primed, 1 section"),
    ]
    width = len(auto)
    assert listing == "".join(f"  {p:<{width}}  {what}\n" for p, what in found)
    assert "Found 7 instruction files; `ctx init --import` brings them in" in out
    assert memories_at(project, clock) == {}  # listing writes nothing

    imported = ctx("init", "--import").splitlines()
    assert imported[0] == f"Store already exists at {project / '.ctx'}."
    expected = [
        "CLAUDE.md into pinned/claude-md (2 sections)",
        "AGENTS.md into pinned/agents-md (1 section)",
        ".github/copilot-instructions.md into pinned/copilot-instructions (1 section)",
        ".cursor/rules/always.mdc into pinned/cursor-rule-always (1 section)",
        ".cursor/rules/python.mdc into primed/cursor-rule-python (1 section)",
        "~/.claude/CLAUDE.md into pinned/user-claude-md (1 section)",
        f"{auto} into primed/claude-auto-memory (1 section)",
    ]
    assert [re.sub(r" in [0-9a-f]{10}\.$", "", line) for line in imported[1:]] == [
        f"  Imported {line}" for line in expected
    ]
    paths = memories_at(project, clock)
    assert sorted(paths) == [
        "pinned/agents-md/agents-md.json",
        "pinned/claude-md/style.json",
        "pinned/claude-md/tests.json",
        "pinned/copilot-instructions/reviews.json",
        "pinned/cursor-rule-always/cursor-rules-always-mdc.json",
        "pinned/user-claude-md/me.json",
        "primed/claude-auto-memory/build.json",
        "primed/cursor-rule-python/python.json",
    ]

    again = ctx("init", "--import").splitlines()
    assert again[1:] == [
        f"  {line.split(' into ')[0]} is already in {line.split(' into ')[1].split()[0]}."
        for line in expected
    ]
    assert memories_at(project, clock) == paths
    assert {path: path.read_bytes() for path in files} == files  # never changed


def test_a_changed_file_gives_new_versions_of_the_same_memories(
    tmp_path, monkeypatch, clock
):
    _project(tmp_path)
    project = tmp_path / "api"
    monkeypatch.chdir(project)
    ctx("init", "--import")
    before = memories_at(project, clock)
    (project / "CLAUDE.md").write_text(
        "# Style\nUse ruff.\n\n# Tests\nRun pytest -x.\n"
    )
    report = json.loads(ctx("init", "--import", "--json"))
    assert (report["path"], report["created"]) == (str(project / ".ctx"), False)
    assert len(report["found"]) == 7
    changed = {i["found"]["path"]: i["commit"] for i in report["imported"]}
    assert len(changed) == 7
    assert re.fullmatch("[0-9a-f]{40}", changed.pop("CLAUDE.md"))
    assert set(changed.values()) == {None}  # the others were there unchanged
    assert memories_at(project, clock) == before
    assert "Use ruff." in ctx("show", before["pinned/claude-md/style.json"])


def test_a_project_with_no_instructions_says_nothing_of_them(
    tmp_path, monkeypatch, clock
):
    monkeypatch.chdir(tmp_path)
    out = ctx("init", "--import")
    assert "instruction" not in out
    assert memories_at(tmp_path, clock) == {}


def memories_at(project: Path, clock) -> dict[str, str]:
    store = Store.open(project / ".ctx", clock=clock)
    try:
        return {rec.path: rec.memory.id for rec in list_memories(store)}
    finally:
        store.close()


def test_at_a_terminal_init_asks_and_a_yes_imports(tmp_path, clock):
    # A real terminal (a pty): the question is asked only there.
    _project(tmp_path)
    project = tmp_path / "api"
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctx.porcelain", "init"],
        cwd=project,
        stdin=child,
        stdout=child,
        stderr=child,
        env={**os.environ, "CTX_HUB_AUTOSTART": "0"},
    )
    os.close(child)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the child is gone and the pty closed
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"Bring them in now? [y/N]: " in seen:
            os.write(main, b"y\n")
            answered = True
    os.close(main)
    assert proc.wait(timeout=60) == 0, seen.decode(errors="replace")
    text = seen.decode().replace("\r\n", "\n")
    assert answered, text
    assert "  Imported CLAUDE.md into pinned/claude-md (2 sections) in " in text
    assert len(memories_at(project, clock)) == 8
