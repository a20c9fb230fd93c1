"""The suite never reads or writes the user's own folders (issue 32).

A fixture wider than one test (a module's `ctx serve`, a session's template
store) is made before any test's own fixtures: it must see the same hermetic
environment as a test does, or the processes it starts write into the user's
cache, data and runtime folders.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FOLDERS = (
    "HOME",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
)


def _seen() -> dict[str, str | None]:
    return {key: os.environ.get(key) for key in (*FOLDERS, "CLAUDE_CONFIG_DIR")} | {
        key: value for key, value in os.environ.items() if key.startswith("CTX_")
    }


@pytest.fixture(scope="module")
def module_env() -> dict[str, str | None]:
    return _seen()


def _assert_hermetic(seen: dict[str, str | None], base: Path) -> None:
    for key in FOLDERS:
        value = seen[key]
        assert value is not None, key
        assert Path(value).is_relative_to(base), (key, value)
    assert seen["CLAUDE_CONFIG_DIR"] is None
    ctx = {key: value for key, value in seen.items() if key.startswith("CTX_")}
    assert ctx == {"CTX_HUB_AUTOSTART": "0"}


def test_a_module_fixture_sees_no_user_folder(module_env, tmp_path_factory):
    _assert_hermetic(module_env, tmp_path_factory.getbasetemp())


def test_a_test_sees_no_user_folder(tmp_path_factory):
    _assert_hermetic(_seen(), tmp_path_factory.getbasetemp())
