"""Fixtures for whole-process tests: fresh stores on disk, worker processes."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from integration_support import (
    fill_hub_store,
    start_hub_process,
    start_worker,
    wall_clock,
)

from ctx.engine import Store


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A fresh store on disk (closed: the tests open their own handles)."""
    path = tmp_path / ".ctx"
    Store.init(path, clock=wall_clock).close()
    return path


@pytest.fixture
def worker() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Starts worker processes and makes sure none outlives the test."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        proc = start_worker(*args)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


@pytest.fixture
def hub_store(store_path: Path) -> Path:
    """A store on disk with two memories, embedded by the hashing embedder."""
    return fill_hub_store(store_path)


@pytest.fixture
def hub(hub_store: Path) -> Iterator[subprocess.Popen[str]]:
    """`ctx hub start` serving ``hub_store``, killed after the test."""
    proc = start_hub_process(hub_store)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=30)
