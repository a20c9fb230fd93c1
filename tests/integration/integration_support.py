"""Helpers shared by the integration tests: worker processes, stock git, fsck."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ctx.engine import Store, fsck

WORKER = Path(__file__).with_name("_worker.py")
GIT = "/usr/bin/git"
VENV_BIN = Path(sys.executable).parent
CTX = VENV_BIN / "ctx"


def wall_clock() -> datetime:
    return datetime.now(UTC)


def git_env() -> dict[str, str]:
    """The environment for stock git: no user or system configuration."""
    env = dict(os.environ)
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        LC_ALL="C",
        GIT_AUTHOR_NAME="stock git",
        GIT_AUTHOR_EMAIL="git@example.com",
        GIT_COMMITTER_NAME="stock git",
        GIT_COMMITTER_EMAIL="git@example.com",
    )
    return env


def run_git(
    store: Path,
    *args: str,
    input: str | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Runs stock git on the store's bare repository (``env`` adds variables)."""
    result = subprocess.run(
        [GIT, "--git-dir", str(store / "git"), *args],
        capture_output=True,
        text=True,
        input=input,
        env=git_env() | (env or {}),
        timeout=60,
        check=False,
    )
    if check:
        assert result.returncode == 0, (
            f"git {' '.join(args)} exited {result.returncode}:\n"
            f"{result.stdout}\n{result.stderr}"
        )
    return result


def start_worker(*args: str) -> subprocess.Popen[str]:
    """Starts ``_worker.py`` with ``args``; its stdout is a text pipe."""
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(proc: subprocess.Popen[str]) -> None:
    """Reads the worker's ``ready`` line (it has opened the store)."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line != "ready\n":
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"worker did not start: {line!r}\n{err}")


@contextmanager
def opened(path: Path) -> Iterator[Store]:
    """Opens the store at ``path`` for the duration of the block."""
    store = Store.open(path, clock=wall_clock)
    try:
        yield store
    finally:
        store.close()


def assert_healthy(path: Path) -> None:
    """Checks the store with ctx's fsck and with ``git fsck --strict``."""
    with opened(path) as store:
        report = fsck(store)
    assert report.ok, report.problems
    result = run_git(path, "fsck", "--strict", "--no-progress", check=False)
    assert result.returncode == 0, f"git fsck --strict:\n{result.stdout}{result.stderr}"


def run_ctx(
    store: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs the ``ctx`` command line on a store (``env`` adds variables)."""
    return subprocess.run(
        [str(CTX), "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def fill_hub_store(store: Path) -> Path:
    """Gives a store two memories, embedded by the hashing embedder."""
    with (store / "config.toml").open("a", encoding="utf-8") as f:
        f.write('\n[embedder]\nkind = "hashing"\n')
    for text in ("We chose Postgres for the queue", "The API listens on 8080"):
        assert run_ctx(store, "remember", text).returncode == 0
    return store


def start_hub_process(store: Path, cwd: Path | None = None) -> subprocess.Popen[str]:
    """Starts `ctx hub start` on a store (in ``cwd``); returns once it listens."""
    proc = subprocess.Popen(
        [str(CTX), "--store", str(store), "hub", "start"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on" in line, (line, proc.stderr.read() if proc.stderr else "")
    return proc


def wait_for(predicate: Callable[[], bool], seconds: float = 60.0) -> None:
    """Waits until ``predicate()`` holds, failing after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
