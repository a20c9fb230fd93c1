"""How to reach remotes from this environment: credentials and ssh.

:func:`remote_access` is what the command line hands the engine's transfers
(which read no environment themselves): the ssh program from
``GIT_SSH_COMMAND`` or ``GIT_SSH``, as git does, and :func:`git_credentials`.

Credentials for a remote that asks for them: the environment, then git's.

The engine asks only when an http(s) remote answers 401, and only once:

1. ``CTX_GIT_PASSWORD`` (a password or token), with ``CTX_GIT_USERNAME``
   (default: the user name in the URL, else ``git``);
2. git's credential helpers, through ``git credential fill`` (a store file,
   the macOS keychain, a manager...), with prompts turned off: an agent has
   nobody at the terminal to answer.

Credentials in the URL itself (``https://user:token@host/...``) never get
here: dulwich sends them from the start.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from urllib.parse import SplitResult, urlsplit

from ctx.engine import Access

__all__ = ["git_credentials", "remote_access"]

_HELPER_TIMEOUT = 20.0
"""Seconds a credential helper may take (a keychain may ask the user)."""


def remote_access(environ: Mapping[str, str] | None = None) -> Access:
    """Returns how this environment reaches remotes (credentials, ssh)."""
    env = os.environ if environ is None else environ
    ssh = env.get("GIT_SSH_COMMAND") or env.get("GIT_SSH") or None

    def credentials(url: str) -> tuple[str, str] | None:
        return git_credentials(url, environ=env)

    return Access(credentials=credentials, ssh_command=ssh)


def git_credentials(
    url: str, *, environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """Returns a user name and password for ``url``, or ``None`` if none is known."""
    env = os.environ if environ is None else environ
    parts = urlsplit(url)
    password = env.get("CTX_GIT_PASSWORD")
    if password:
        return env.get("CTX_GIT_USERNAME") or parts.username or "git", password
    return _from_git(parts, env)


def _from_git(parts: SplitResult, env: Mapping[str, str]) -> tuple[str, str] | None:
    username = parts.username
    host = parts.netloc.rsplit("@", 1)[-1]
    path = parts.path.lstrip("/")
    query = f"protocol={parts.scheme}\nhost={host}\npath={path}\n"
    if username:
        query += f"username={username}\n"
    try:
        done = subprocess.run(
            ["git", "credential", "fill"],
            input=query + "\n",
            capture_output=True,
            text=True,
            timeout=_HELPER_TIMEOUT,
            env={**env, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": ""},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    fields = dict(
        line.split("=", 1) for line in done.stdout.splitlines() if "=" in line
    )
    if "password" not in fields:
        return None
    return fields.get("username") or username or "git", fields["password"]
