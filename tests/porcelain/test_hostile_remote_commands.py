"""ctx clone, pull, ls, status, export and fsck against hostile remotes (issue #28).

Wiring and text only: which remotes are refused, and why, is tested in
tests/engine/test_hostile_remotes.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hostile_repos import git, hostile_world, undecodable_id

from ctx.porcelain.main import cli

world = pytest.fixture(scope="module", name="world")(hostile_world)


def run(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


def refs(git_dir: Path) -> bytes:
    return git(git_dir, "for-each-ref")


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("gitlink-in-memory", "branch 'main' has a submodule link at 'memory/"),
        ("name-dotdot", "branch 'main' has an entry named '..' in 'memory'."),
        ("tip-is-a-blob", "branch 'main' holds a blob as its tip, not a commit."),
        ("packed-ref-dotdot", "its refs cannot be read"),
    ],
)
def test_clone_and_pull_say_why_in_one_line(world, tmp_path, name, says):
    url = str(world.remotes[name])
    done = run("clone", url, str(tmp_path / "c"), code=8)
    error, hint = done.stderr.splitlines()
    assert error.startswith(f"Error: {url} cannot be fetched: ")
    assert says in error
    assert hint == (
        "Hint: Nothing was changed; `git fsck` in that repository says more."
    )
    assert done.stdout == ""
    assert not (tmp_path / "c").exists()
    store = tmp_path / "store"
    shutil.copytree(world.base, store)
    run("--store", str(store), "remote", "add", "evil", url)
    before = refs(store / "git")
    done = run("--store", str(store), "pull", "evil", "main", code=8)
    assert done.stderr.splitlines() == [error, hint]
    assert refs(store / "git") == before


def test_reads_leave_out_a_memory_that_does_not_decode_and_say_so(world, tmp_path):
    store = tmp_path / "c"
    run("clone", str(world.remotes["undecodable"]), str(store))
    bad = undecodable_id(world.good)
    leaf = "/".join(part.decode() for part in world.good.leaf)
    path = f"{leaf}/{bad}.json"
    warning = (
        f"Warning: {path} is not a valid memory: Input data was truncated; "
        "it is left out.\n"
    )
    for command in ("ls", "status", "export"):
        done = run("--store", str(store), command)
        assert done.stderr == warning, command
    assert len(run("--store", str(store), "ls").stdout.splitlines()) == 2
    assert run("--store", str(store), "export").stdout.count('"type":"memory"') == 2
    done = run("--store", str(store), "fsck", code=6)
    assert done.stdout.splitlines()[0] == (
        f"branch main: {path} is not a valid memory: Input data was truncated"
    )
