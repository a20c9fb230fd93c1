"""ctx remote add/remove/ls, push, fetch, pull and clone: wiring and text.

The transfers themselves are tested in tests/engine/test_transfer.py and,
against real servers, in tests/integration/test_remotes.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from click.testing import CliRunner

from ctx.engine import Store, list_memories
from ctx.porcelain.main import cli


def _bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


def test_remote_add_ls_remove(ctx, tmp_path):
    assert (
        ctx("remote", "ls").stdout
        == "No remotes; `ctx remote add NAME URL` adds one.\n"
    )
    remote = _bare(tmp_path / "r.git")
    assert ctx("remote", "add", "origin", str(remote)).stdout == (
        f"Added remote origin at {remote}.\n"
    )
    assert ctx("remote", "ls").stdout == f"origin  {remote}  (nothing fetched yet)\n"
    ctx("push")
    assert ctx("remote", "ls").stdout == f"origin  {remote}  (main)\n"
    assert ctx("remote", "remove", "origin").stdout == (
        f"Removed remote origin ({remote}).\n"
    )
    gone = ctx("remote", "remove", "origin", code=3)
    assert gone.stderr == (
        "Error: No remote named 'origin' (known: none).\n"
        "Hint: `ctx remote add origin URL` adds it.\n"
    )
    # An address where a remote's name goes: name it, not a remote called so.
    assert ctx("fetch", str(remote), code=3).stderr == (
        f"Error: No remote named {str(remote)!r} (known: none).\n"
        f"Hint: Name a remote: `ctx remote add NAME {remote}` adds one.\n"
    )


def test_push_fetch_pull_say_what_moved(ctx, tmp_path):
    remote = _bare(tmp_path / "r.git")
    ctx("remote", "add", "origin", str(remote))
    out = ctx("push").stdout
    assert out.startswith("Pushed 1 branch to origin:\n  main  (new) -> ")
    assert ctx("push").stdout == "origin is up to date (main).\n"
    assert ctx("fetch").stdout == "origin has nothing new.\n"
    assert (
        ctx("pull").stdout
        == "Already up to date: main has everything in origin/main.\n"
    )
    usage = ctx("push", "origin", "main", "--all", code=2)
    assert "Give branches or --all, not both." in usage.stderr


def test_clone_into_a_folder_and_the_user_store(ctx, tmp_path, monkeypatch, clock):
    ctx("remember", "Cloned memory")
    remote = _bare(tmp_path / "r.git")
    ctx("remote", "add", "origin", str(remote))
    ctx("push")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    done = runner.invoke(cli, ["clone", str(remote), "here"], catch_exceptions=False)
    assert done.exit_code == 0, done.stderr
    store = tmp_path / "here" / ".ctx"
    assert done.stdout.startswith(
        f"Cloned {remote} into {store} (1 branch, on main).\n"
        "Leave .ctx/ out of the project's commits (add `.ctx/` to its .gitignore)"
    )
    # Issue 32: as `ctx init` makes them, so a project committing .ctx/
    # never commits its index or private state.
    init = tmp_path / ".ctx"
    for name in (".gitignore", "config.toml"):
        assert (store / name).read_text() == (init / name).read_text(), name
    user = runner.invoke(cli, ["clone", str(remote), "--user"], catch_exceptions=False)
    assert user.exit_code == 0, user.stderr
    from ctx.hub import Workspace

    opened = Store.open(Workspace.user_store_path(), clock=clock)
    assert [r.memory.body for r in list_memories(opened)] == ["Cloned memory"]
    opened.close()
