"""A read-only store: writes fail cleanly and change nothing; reads work.

DESIGN.md, "Interfaces": errors are one ``Error: ...`` line (and a
``Hint: ...``) on stderr with a documented exit code, nothing half-written.

Root ignores file permissions, so as root the ``ctx`` processes run without
that privilege: as uid 0, the store's owner, stripped of the capabilities
that bypass permission checks. (Not as ``nobody``: a store's git folder is
private to its owner, so another user could not even read it.)
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from integration_support import CTX

_PR_CAPBSET_DROP = 24
# CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID
_BYPASS_CAPS = (1, 2, 3, 4)

Snapshot = dict[str, tuple[int, bytes | None]]


def _drop_bypass_capabilities() -> None:
    # Runs in the child between fork and exec: dropped from the bounding
    # set, the capabilities are not regained by the exec'd program.
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in _BYPASS_CAPS:
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _unprivileged() -> dict[str, Any]:
    """Returns the subprocess arguments that make a child obey permissions."""
    if os.geteuid() != 0:
        return {}
    return {"preexec_fn": _drop_bypass_capabilities}


@pytest.fixture(scope="module")
def unprivileged() -> dict[str, Any]:
    return _unprivileged()


def _set_writable(root: Path, writable: bool) -> None:
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):
                change = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
                os.chmod(path, (mode | stat.S_IWUSR) if writable else mode & ~change)
    mode = os.stat(root).st_mode
    os.chmod(root, (mode | stat.S_IWUSR) if writable else mode & ~0o222)


def _snapshot(root: Path) -> Snapshot:
    """Every path under ``root`` with its mode and (for files) its bytes."""
    out: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root)] = (os.lstat(path).st_mode, None)
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = (os.lstat(path).st_mode, f.read())
    return out


@pytest.fixture
def readonly_store() -> Iterator[tuple[Path, str]]:
    """A store holding one memory, with every file and folder read-only.

    It lives in a fresh folder under the system temporary folder, readable
    by everyone, so that an unprivileged child can reach it.
    """
    base = Path(tempfile.mkdtemp(prefix="ctx-readonly-"))
    try:
        os.chmod(base, 0o755)
        store = base / ".ctx"
        made = subprocess.run(
            [str(CTX), "init", str(base)], capture_output=True, timeout=60, check=False
        )
        assert made.returncode == 0, made.stderr
        written = _runner(store, {})("remember", "The only memory")
        assert written.returncode == 0, written.stderr
        _set_writable(store, False)
        yield store, written.stdout.strip()
    finally:
        _set_writable(base, True)
        shutil.rmtree(base)


def _runner(
    store: Path, privileges: dict[str, Any]
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Returns a function that runs ``ctx --store STORE ARGS...``."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(CTX), "--store", str(store), *args],
            capture_output=True,
            text=True,
            cwd=store.parent,
            env=env,
            timeout=60,
            check=False,
            **privileges,
        )

    return run


def test_remember_fails_with_one_error_line_and_changes_nothing(
    readonly_store: tuple[Path, str], unprivileged: dict[str, Any]
) -> None:
    store, _ = readonly_store
    before = _snapshot(store)
    run = _runner(store, unprivileged)

    result = run("remember", "x")

    assert result.returncode == 6, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines, "no error message"
    assert lines[0].startswith("Error: ")
    assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("Hint: ")), (
        result.stderr
    )
    assert _snapshot(store) == before


def test_the_child_really_cannot_write(
    readonly_store: tuple[Path, str], unprivileged: dict[str, Any]
) -> None:
    # Guards the test above: the unprivileged child is refused by the kernel.
    store, _ = readonly_store
    probe = subprocess.run(
        [sys.executable, "-c", f"open({str(store / 'probe')!r}, 'w')"],
        capture_output=True,
        text=True,
        cwd=store.parent,
        timeout=60,
        check=False,
        **unprivileged,
    )
    assert probe.returncode == 1
    assert "PermissionError" in probe.stderr
    assert not (store / "probe").exists()


@pytest.mark.parametrize("command", [["ls"], ["log"], ["status"], ["ls", "--json"]])
def test_reading_commands_still_work(
    readonly_store: tuple[Path, str],
    unprivileged: dict[str, Any],
    command: list[str],
) -> None:
    store, memory_id = readonly_store
    before = _snapshot(store)
    run = _runner(store, unprivileged)

    result = run(*command)

    assert (result.returncode, result.stderr) == (0, "")
    if command[0] != "status":
        assert memory_id in result.stdout
    assert _snapshot(store) == before


def test_recall_answers(
    readonly_store: tuple[Path, str], unprivileged: dict[str, Any]
) -> None:
    # Its indexes are built in memory; nothing is written.
    store, _ = readonly_store
    before = _snapshot(store)
    run = _runner(store, unprivileged)

    result = run("recall", "the only memory", "--json")

    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "The only memory" in result.stdout
    assert "Traceback" not in result.stderr
    assert _snapshot(store) == before
