"""Memory that travels through the servers teams host git on (issue 34).

The distribution's own servers on loopback, started here and stopped after:
OpenSSH (``ssh://``, one key let in, reached through the OpenSSH client that
``GIT_SSH_COMMAND`` names) and lighttpd running git's own
``git-http-backend`` behind basic auth (``http://``). Through each, the ctx
command line pushes, clones, fetches and pulls as a user would; stock git
checks the remote after (``git fsck --strict``) and reads what ctx wrote.
Without the packages the tests skip, saying which (``make check`` installs
them as root with apt-get).
"""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration_support import GIT, git_env, run_ctx
from remote_servers import SSH_KEYGEN, missing_servers, openssh_server, web_server
from test_remotes import NO_HELPER, all_refs, assert_passwords_refused, bare, bodies, ok

pytestmark = pytest.mark.skipif(
    missing_servers() is not None, reason=str(missing_servers())
)


def fsck(repo: Path) -> None:
    subprocess.run(
        [GIT, "--git-dir", str(repo), "fsck", "--strict", "--no-progress"],
        check=True,
        env=git_env(),
    )


def refs(repo: Path) -> dict[str, str]:
    """Every ref of ``repo`` and the object it names."""
    lines = (line.split() for line in all_refs(repo).splitlines())
    return {name: sha for sha, _, name in lines}


def _round_trip(store: Path, elsewhere: Path, url: str, env: dict[str, str]) -> Path:
    """Pushes ``store`` to ``url``, clones it, pulls a later write back and
    fetches a second branch; returns the clone."""
    ok(run_ctx(store, "remember", "The queue is Postgres", "--agent", "alice"))
    ok(run_ctx(store, "remote", "add", "origin", url, env=env))
    out = ok(run_ctx(store, "push", env=env))
    assert out.startswith("Pushed 1 branch to origin:\n  main  (new) -> ")
    clone = elsewhere / ".ctx"
    ok(run_ctx(clone, "clone", url, env=env))
    assert bodies(clone) == bodies(store)

    ok(run_ctx(store, "remember", "The API listens on 8080"))
    ok(run_ctx(store, "branch", "agent/alice"))
    ok(run_ctx(store, "push", "origin", "main", "agent/alice", env=env))
    assert ok(run_ctx(clone, "pull", env=env)).startswith("Fast-forwarded main to ")
    assert "The API listens on 8080" in bodies(clone)
    assert bodies(clone) == bodies(store)
    ok(run_ctx(clone, "fetch", env=env))
    pushed = refs(store / "git")["refs/heads/agent/alice"]
    assert refs(clone / "git")["refs/remotes/origin/agent/alice"] == pushed
    return clone


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    with openssh_server(tmp_path_factory.mktemp("sshd") / "server") as server:
        yield server


def test_push_clone_pull_over_openssh(sshd, store_path: Path, tmp_path: Path):
    port, ssh_command = sshd
    remote = bare(tmp_path / "srv" / "memory.git")
    user = pwd.getpwuid(os.geteuid()).pw_name  # the account sshd lets the key into
    url = f"ssh://{user}@127.0.0.1:{port}{remote}"
    env = {"GIT_SSH_COMMAND": ssh_command}
    _round_trip(store_path, tmp_path / "b", url, env)
    fsck(remote)
    assert sorted(refs(remote)) == ["refs/heads/agent/alice", "refs/heads/main"]

    # Stock git reads what ctx pushed, through the same server.
    work = tmp_path / "wc"
    subprocess.run(
        [GIT, "clone", "-q", url, str(work)],
        check=True,
        env={**git_env(), **env},
    )
    assert len(list((work / "memory").rglob("*.json"))) == 2

    # A key the server does not know: one line, nothing written.
    stranger = tmp_path / "stranger"
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
        check=True,
    )
    refused = {
        "GIT_SSH_COMMAND": ssh_command.replace(
            f"-i {ssh_command.split('-i ', 1)[1].split()[0]}", f"-i {stranger}"
        )
    }
    done = run_ctx(tmp_path / "c" / ".ctx", "clone", url, env=refused)
    assert done.returncode != 0
    assert done.stderr.startswith("Error: ")
    assert not (tmp_path / "c" / ".ctx").exists()


def test_push_clone_pull_through_git_http_backend(store_path: Path, tmp_path: Path):
    root = tmp_path / "srv"
    remote = bare(root / "memory.git")
    with web_server(root, tmp_path / "web", "alice", "s3cret") as port:
        plain = f"http://127.0.0.1:{port}/git/memory.git"
        url = f"http://alice:s3cret@127.0.0.1:{port}/git/memory.git"
        ok(run_ctx(store_path, "remember", "Secret plans"))
        assert_passwords_refused(store_path, remote, plain)
        assert all_refs(remote) == ""

        clone = _round_trip(store_path, tmp_path / "b", url, NO_HELPER)
        assert "Secret plans" in bodies(clone)
        fsck(remote)
        assert sorted(refs(remote)) == ["refs/heads/agent/alice", "refs/heads/main"]
        shown = f"http://alice@127.0.0.1:{port}/git/memory.git"  # never the password
        listed = ok(run_ctx(clone, "remote", "ls"))
        assert listed == f"origin  {shown}  (agent/alice, main)\n"
