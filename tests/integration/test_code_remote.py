"""Memory on the code's own remote (issue 34): real git, a bare repository on disk.

The code is pushed with git, the memory with ctx, under refs/heads/ctx/*;
a second checkout of the code gets the memory with `ctx clone --from-code`.
The code's branches are never moved, and git fsck stays clean.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctx.porcelain.main import cli

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    out = subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    return out.stdout


def ctx(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result.stdout if code == 0 else result.stderr


def heads(bare: Path) -> dict[str, str]:
    out = git("for-each-ref", "--format=%(refname) %(objectname)", cwd=bare)
    pairs = (line.split() for line in out.splitlines())
    return {name: sha for name, sha in pairs}


@pytest.fixture
def hosting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A bare repository (the forge) and a checkout of code pushed to it."""
    bare = tmp_path / "hosting.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    code = tmp_path / "api"
    code.mkdir()
    git("init", "-q", "-b", "main", cwd=code)
    (code / "app.py").write_text("print('hello')\n", encoding="utf-8")
    (code / ".gitignore").write_text(".ctx/\n", encoding="utf-8")
    git("add", "app.py", ".gitignore", cwd=code)
    git("commit", "-q", "-m", "first", cwd=code)
    git(
        "remote", "add", "origin", "../hosting.git", cwd=code
    )  # relative, as git allows
    git("push", "-q", "origin", "main", cwd=code)
    monkeypatch.chdir(code)
    return bare, code


def test_memory_travels_beside_the_code_and_back(hosting, tmp_path, monkeypatch):
    bare, code = hosting
    code_main = heads(bare)["refs/heads/main"]
    out = ctx("init", "--with-code")
    assert f"Added remote origin at {bare} (branches under ctx/).\n" in out
    assert ctx("remote", "ls") == (
        f"origin  {bare} (branches under ctx/)  (nothing fetched yet)\n"
    )
    ctx("remember", "Deploys go through the blue-green switch.", "--kind", "decision")
    ctx("branch", "agent/claude")
    ctx("remember", "The CI cache key is the lock file's hash.", "-b", "agent/claude")
    ctx("push", "--all")
    refs = heads(bare)
    assert sorted(refs) == [
        "refs/heads/ctx/agent/claude",
        "refs/heads/ctx/main",
        "refs/heads/main",
    ]
    assert refs["refs/heads/main"] == code_main  # the code's branch is untouched
    # Stock git sees the memory as branches: a forge shows ctx/main.
    git("fetch", "-q", "origin", cwd=code)
    assert "origin/ctx/agent/claude" in git("branch", "-r", cwd=code)

    # A second checkout of the code gets the memory from the same remote.
    other = tmp_path / "other"
    git("clone", "-q", str(bare), str(other), cwd=tmp_path)
    monkeypatch.chdir(other)
    out = ctx("clone", "--from-code")
    assert out.startswith(
        f"Cloned {bare} into {other / '.ctx'} (2 branches, on main).\n"
        "Leave .ctx/ out of the project's commits"
    )
    assert "blue-green" in ctx("recall", "how do deploys work")
    assert "lock file" in ctx("ls", "-b", "agent/claude")

    # The code moves on (git) and the memory too (ctx), side by side.
    (other / "app.py").write_text("print('hello, world')\n", encoding="utf-8")
    git("commit", "-q", "-am", "second", cwd=other)
    git("push", "-q", "origin", "main", cwd=other)
    ctx("remember", "Staging resets every Monday.")
    ctx("push")
    monkeypatch.chdir(code)
    ctx("pull")
    assert "Monday" in ctx("ls")
    refs = heads(bare)
    assert refs["refs/heads/main"] == git("rev-parse", "HEAD", cwd=other).strip()
    assert git("fsck", "--strict", cwd=bare) == ""
    assert (
        git("--git-dir", str(code / ".ctx" / "git"), "fsck", "--strict", cwd=code) == ""
    )
    # Cloned as if it were a store, the code repository says how to get it.
    refused = ctx("clone", str(bare), str(tmp_path / "plain"), code=8)
    assert refused.splitlines()[1] == (
        "Hint: It is code that carries memory under ctx/: `ctx clone --from-code` "
        "in a checkout of it gets that, and a remote added with `--with-code` "
        "reads it."
    )


def test_with_code_needs_a_code_remote(tmp_path, monkeypatch):
    folder = tmp_path / "plain"
    folder.mkdir()
    monkeypatch.chdir(folder)
    err = ctx("init", "--with-code", code=3)
    assert err.startswith(f"Error: {folder} is not inside a git work tree")
    assert not (folder / ".ctx").exists()  # nothing made
    git("init", "-q", cwd=folder)
    err = ctx("init", "--with-code", code=3)
    assert err == (
        f"Error: The code repository at {folder} has no remote named 'origin' "
        "(it has: none).\nHint: `git remote add origin URL` adds it to the code first.\n"
    )
    assert not (folder / ".ctx").exists()


def test_clone_from_code_with_no_memory_there(hosting):
    bare, _code = hosting
    err = ctx("clone", "--from-code", code=8)
    assert err == (
        f"Error: {bare} holds no memory: it has no branch under ctx/.\n"
        "Hint: To put it there, `ctx remote add origin --with-code` in a store "
        "of this code, then `ctx push`.\n"
    )
    assert not (hosting[1] / ".ctx").exists()


def second_checkout(bare: Path, tmp_path: Path) -> Path:
    """Pushes a memory from this checkout's store; returns another checkout."""
    ctx("init", "--with-code")
    ctx("remember", "Feature flags live in flags.toml.")
    ctx("push")
    second = tmp_path / "second"
    git("clone", "-q", str(bare), str(second), cwd=tmp_path)
    return second


def test_a_linked_worktree_finds_the_code_remote(hosting, tmp_path, monkeypatch):
    bare, _code = hosting
    # A second checkout of the code, with no store yet, and a worktree of it.
    second = second_checkout(bare, tmp_path)
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=second)
    assert (linked / ".git").is_file()  # a worktree's .git names its gitdir
    monkeypatch.chdir(linked)
    out = ctx("clone", "--from-code")
    # The store is the main work tree's, which every worktree of it finds.
    assert f"into {second / '.ctx'} " in out
    assert not (linked / ".ctx").exists()
    assert "flags.toml" in ctx("ls")
    err = ctx("clone", "--from-code", code=5)
    assert err.startswith("Error: A store already exists")
    assert not (linked / ".ctx").exists()


def test_with_code_refuses_a_store_that_is_not_the_codes(
    hosting, tmp_path, monkeypatch
):
    # The user store (no .ctx/ in the checkout) holds every project's memory:
    # on the code's remote, `ctx push` would publish it to the team.
    bare, code = hosting
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    ctx("remember", "My private note: salary talks with ACME.")
    monkeypatch.chdir(code)
    err = ctx("remote", "add", "origin", "--with-code", code=4)
    assert err.startswith("Error: The user store ")
    assert ctx("remote", "ls").startswith("No remotes")  # nothing added
    assert set(heads(bare)) == {"refs/heads/main"}
    # Nor the user store when it lies in a work tree ($HOME a dotfiles
    # checkout): it is refused for what it is, before anything is made.
    home = Path(os.environ["XDG_DATA_HOME"])
    git("init", "-q", cwd=home.parent)
    git("remote", "add", "origin", str(bare), cwd=home.parent)
    inside = home.parent / "notes"
    inside.mkdir()
    monkeypatch.chdir(inside)
    err = ctx("remote", "add", "origin", "--with-code", code=4)
    assert err.startswith("Error: The user store ")
    assert "holds the memory of every folder without a .ctx/" in err
    # Outside any work tree, there is no code to travel beside.
    monkeypatch.chdir(elsewhere)
    ctx("init")
    err = ctx("remote", "add", "o", str(bare), "--with-code", code=4)
    assert err.startswith(f"Error: {elsewhere} is not inside a git work tree")
    monkeypatch.chdir(code)
    # Nor one --store names outside the code: not even made.
    outside = tmp_path / "outside"
    err = ctx("--store", str(outside), "init", "--with-code", code=4)
    assert "is not the own store of the code at" in err
    assert not outside.exists()


def test_clone_from_code_makes_only_the_codes_own_store(hosting, tmp_path, monkeypatch):
    # The user store (or one --store names elsewhere) with the code's remote
    # as origin would push every project's memory to the team's repository.
    bare, _code = hosting
    second = second_checkout(bare, tmp_path)
    monkeypatch.chdir(second)
    user = Path(os.environ["XDG_DATA_HOME"]) / "ctx"
    err = ctx("clone", "--from-code", "--user", code=4)
    assert err.startswith(f"Error: The store at {user} is not the own store of")
    assert not user.exists()
    outside = tmp_path / "outside"
    err = ctx("--store", str(outside), "clone", "--from-code", code=4)
    assert "is not the own store of the code at" in err
    assert not outside.exists()
    assert set(heads(bare)) == {"refs/heads/main", "refs/heads/ctx/main"}
    # The folder of a checkout may be named, as the usage says.
    monkeypatch.chdir(tmp_path)
    out = ctx("clone", "--from-code", str(second))
    assert out.startswith(f"Cloned {bare} into {second / '.ctx'} (1 branch, on main).")
    monkeypatch.chdir(second)
    assert "flags.toml" in ctx("ls")


def test_a_code_branch_named_under_ctx_is_named_as_such(hosting, tmp_path):
    bare, code = hosting
    second_checkout(bare, tmp_path)  # memory on ctx/main, pushed from here
    git("push", "-q", "origin", "main:ctx/tooling-fix", cwd=code)  # code, misnamed
    before = ctx("log", "--json")
    err = ctx("pull", code=8)
    assert err == (
        f"Error: Branch 'ctx/tooling-fix' of {bare} holds code, not memories, "
        "though its name puts it among the memory's branches (ctx/*).\n"
        "Hint: Push it to the code's remote under another name and delete it "
        "there (`git push origin --delete ctx/tooling-fix`); nothing was "
        "changed here.\n"
    )
    assert ctx("log", "--json") == before
    git("push", "-q", "origin", "main:tooling-fix", ":ctx/tooling-fix", cwd=code)
    ctx("pull")


def test_init_with_code_refuses_an_origin_that_is_not_the_codes(hosting, tmp_path):
    _bare, code = hosting
    memory = tmp_path / "memory.git"
    git("init", "-q", "--bare", str(memory), cwd=tmp_path)
    ctx("init")
    ctx("remote", "add", "origin", str(memory))
    err = ctx("init", "--with-code", code=5)
    assert err.startswith(
        f"Error: The store at {code / '.ctx'} already has a remote origin at "
        f"{memory}, not the code's."
    )
    assert ctx("remote", "ls").startswith(f"origin  {memory}  ")
    ctx("remote", "remove", "origin")
    ctx("remote", "add", "origin", "--with-code")
    assert ctx("init", "--with-code").startswith("Store already exists")  # as asked


def test_a_checkout_as_the_code_remote_is_reached_through_its_git_folder(
    hosting, tmp_path, monkeypatch
):
    # The checkout may hold a ctx store of its own (.ctx/): the code remote is
    # its .git, as git reads it, never that store.
    _bare, code = hosting
    ctx("init")
    second = tmp_path / "second"
    git("clone", "-q", str(code), str(second), cwd=tmp_path)
    monkeypatch.chdir(second)
    ctx("init", "--with-code")
    assert ctx("remote", "ls").startswith(f"origin  {code / '.git'} (branches under")


def test_init_offers_the_code_remote_only_to_a_store_without_origin(hosting):
    _, code = hosting
    offered = ctx("init")
    assert "The code's remote origin can carry this memory too" in offered
    ctx("remote", "add", "origin", "--with-code")
    again = ctx("init", "--follow-code")  # the store exists, origin is set
    assert "can carry this memory too" not in again
    assert again.startswith(f"Store already exists at {code / '.ctx'}.\n")
    assert "It follows the code's branches from now on" in again  # it did not
    assert "follows the code's branches" not in ctx("init", "--follow-code")


def test_a_refused_with_code_makes_no_user_store(hosting):
    _bare, _code = hosting
    user = Path(os.environ["XDG_DATA_HOME"]) / "ctx"
    ctx("remote", "add", "origin", "--with-code", code=4)
    assert not user.exists()


def test_a_store_linked_from_another_disk_is_still_the_codes(hosting, tmp_path):
    bare, code = hosting
    ctx("init")
    moved = tmp_path / "other-disk" / "store"
    moved.parent.mkdir()
    (code / ".ctx").rename(moved)
    (code / ".ctx").symlink_to(moved)
    out = ctx("remote", "add", "origin", "--with-code")
    assert out == f"Added remote origin at {bare} (branches under ctx/).\n"


def test_clone_from_code_where_a_worktree_has_its_own_store(
    hosting, tmp_path, monkeypatch
):
    # The store a command finds there is the one a clone would make: it
    # says so rather than filling another that nothing there reads.
    _bare, code = hosting
    ctx("init", "--with-code")
    ctx("remember", "Feature flags live in flags.toml.")
    ctx("push")
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=code)
    monkeypatch.chdir(linked)
    ctx("--store", str(linked / ".ctx"), "init")  # one of its own, made so
    err = ctx("clone", "--from-code", code=5)
    assert f"{linked / '.ctx'}" in err


def test_init_inside_the_git_folder_is_refused(hosting, monkeypatch):
    # A store in .git/ is one no command in the work tree would ever find.
    _bare, code = hosting
    monkeypatch.chdir(code / ".git")
    err = ctx("init", "--with-code", code=4)
    assert err == (
        f"Error: {code / '.git'} is inside the repository's .git folder: no "
        "command in the work tree would find a store made there.\n"
        f"Hint: Run it at the top of the work tree, {code}.\n"
    )
    assert not (code / ".git" / ".ctx").exists()


def test_init_in_a_linked_worktree_makes_the_main_work_trees_store(
    hosting, tmp_path, monkeypatch
):
    _bare, code = hosting
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=code)
    monkeypatch.chdir(linked)
    assert ctx("init").startswith(f"Created an empty store at {code / '.ctx'} ")
    assert not (linked / ".ctx").exists()
    assert ctx("init").startswith(f"Store already exists at {code / '.ctx'}.")
    monkeypatch.chdir(code)
    ctx("remember", "Seen from every worktree.")
    monkeypatch.chdir(linked)
    assert "Seen from every worktree." in ctx("ls")
