"""Hermetic test environment: no CTX_* variables (but CTX_HUB_AUTOSTART=0),
HOME and every XDG folder in a temporary folder, a private runtime folder for hub sockets (so that
no test meets another's hubs or the user's), a fixed clock for engine stores. The same
isolation holds for the whole session, so that fixtures wider than one test see it too."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ctx.engine import Intent, Store

# A helper the hook tests import checks with assert: pytest explains its failures too.
pytest.register_assert_rewrite("hook_support")

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def _isolate(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in list(os.environ):
        if key.startswith("CTX_"):
            monkeypatch.delenv(key)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    # A host's own folder (Claude Code's) would point ctx install at the user's.
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("USER", "tester")
    runtime = tmp_path_factory.mktemp("run")  # short: socket paths have ~100 bytes
    runtime.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    # Recall would start a background hub per store; tests that want one ask.
    monkeypatch.setenv("CTX_HUB_AUTOSTART", "0")


@pytest.fixture(autouse=True, scope="session")
def hermetic_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Fixtures wider than one test (a module's `ctx serve`, a session's
    # template store) are made before any test's own: they get the same
    # isolation, or the processes they start write into the user's folders.
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(tmp_path_factory, monkeypatch)
        yield


@pytest.fixture(autouse=True)
def hermetic(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _isolate(tmp_path_factory, monkeypatch)


@pytest.fixture
def clock() -> Callable[[], datetime]:
    """A clock that advances one second per call, from T0."""
    ticks = itertools.count()
    return lambda: T0 + timedelta(seconds=next(ticks))


@pytest.fixture
def store(clock: Callable[[], datetime]) -> Store:
    """An in-memory store."""
    return Store.memory(clock=clock)


@pytest.fixture
def disk_store(tmp_path: Path, clock: Callable[[], datetime]) -> Iterator[Store]:
    """A store on disk under a temporary folder."""
    s = Store.init(tmp_path / ".ctx", clock=clock)
    yield s
    s.close()


@pytest.fixture
def in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder, made the working folder."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def intent() -> Intent:
    return Intent(agent="tester", intent="observe", confidence=0.9, reason="testing")


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (the MCP client's) run on asyncio."""
    return "asyncio"
