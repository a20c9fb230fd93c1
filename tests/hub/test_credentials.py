"""Credentials for a remote: the environment first, then git's helpers."""

from __future__ import annotations

import os
from pathlib import Path

from ctx.hub import git_credentials

URL = "https://git.example.com/team/memory.git"


def test_the_environment_gives_them_first():
    env = {"CTX_GIT_USERNAME": "alice", "CTX_GIT_PASSWORD": "tok"}
    assert git_credentials(URL, environ=env) == ("alice", "tok")
    user_in_url = "https://bob@git.example.com/x.git"
    assert git_credentials(user_in_url, environ={"CTX_GIT_PASSWORD": "t"}) == (
        "bob",
        "t",
    )


def test_a_git_credential_helper_gives_them(tmp_path: Path):
    store = tmp_path / "credentials"
    store.write_text("https://carol:s3cret@git.example.com\n")
    config = tmp_path / "gitconfig"
    config.write_text(f"[credential]\n\thelper = store --file {store}\n")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GIT_CONFIG_GLOBAL": str(config),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    assert git_credentials(URL, environ=env) == ("carol", "s3cret")


def test_none_known_is_none(tmp_path: Path):
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    assert git_credentials(URL, environ=env) is None


def test_remote_access_takes_ssh_from_git_s_variables():
    from ctx.hub import remote_access

    assert remote_access({"GIT_SSH_COMMAND": "ssh -i k"}).ssh_command == "ssh -i k"
    assert remote_access({"GIT_SSH": "/usr/bin/ssh"}).ssh_command == "/usr/bin/ssh"
    assert remote_access({}).ssh_command is None
    access = remote_access({"CTX_GIT_PASSWORD": "t"})
    assert access.credentials is not None
    assert access.credentials(URL) == ("git", "t")
