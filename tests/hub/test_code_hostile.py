"""The code index over a hostile tree (issue 28, findings 8 and 9).

A tree may hold a FIFO, a link to a device or to a file outside it, or a
huge sparse file, put there before the index or swapped in while it runs.
Nothing of it may hang ``ctx code index`` or ``ctx find``, exhaust memory,
or show text from outside the tree. Runs that could hang or eat memory
before the fix run ``ctx`` in a subprocess with a timeout and an address
space limit, so that a regression fails instead of hanging.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from test_code_index import CACHE, RETRY, make_index

from ctx.engine import Store
from ctx.hub import Workspace
from ctx.hub.access import Caller
from ctx.hub.calls import CALLS, invoke
from ctx.hub.code.files import read_file
from ctx.porcelain.agents.mcp_server import build_server
from ctx.porcelain.main import cli

SECRET = "\n\n\ndef fetch_with_retries():\n    return 'SECRET-TOKEN-outside-the-tree'\n"
GIB = 1 << 30
TIMEOUT = 30  # seconds: a run takes about one; a hang would take forever

# `ctx` in a subprocess with 4 GiB of address space at most (reading
# /dev/zero or a 1 GiB file whole fails there instead of swapping the
# machine); argv[1] is Python run first (a hook that swaps a file).
RUN = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
exec(sys.argv[1])
from ctx.porcelain.main import cli
cli.main(args=sys.argv[2:], prog_name="ctx")
"""

# Swaps pkg/net.py for something hostile once the walk has chosen it.
SWAP = """
import ctx.hub.code.reading as reading
walk = reading.walk_tree
def swapped(root):
    found = walk(root)
    target = root / "pkg" / "net.py"
    target.unlink()
    {swap}
    return found
reading.walk_tree = swapped
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "net.py").write_text(RETRY)
    (root / "pkg" / "cache.py").write_text(CACHE)
    return root


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    path = tmp_path / ".ctx"
    Store.init(path, clock=lambda: datetime.now().astimezone()).close()
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    return path


def run_ctx(store_dir: Path, *args: str, before: str = "") -> str:
    """Runs ``ctx`` in a subprocess; fails (not hangs) past the timeout."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", RUN, before, "--store", str(store_dir), *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`ctx {' '.join(args)}` ran past {TIMEOUT} s")
    assert done.returncode == 0, done.stderr
    return done.stdout


def index_lines(store_dir: Path, tree: Path, before: str = "") -> list[str]:
    out = run_ctx(store_dir, "code", "index", str(tree), "--no-vectors", before=before)
    return out.splitlines()


def sparse(path: Path, size: int) -> None:
    path.touch()
    os.truncate(path, size)


@pytest.mark.parametrize(
    ("make", "left_out"),
    [
        pytest.param(lambda t: os.mkfifo(t / ".gitignore"), None, id="fifo-gitignore"),
        pytest.param(
            lambda t: (t / ".gitignore").symlink_to("/dev/zero"),
            "1 file left out: 1 symlink.",
            id="gitignore-to-dev-zero",
        ),
        pytest.param(
            lambda t: sparse(t / "pkg" / ".ctxignore", GIB),
            "1 file left out: 1 too large.",
            id="1-gib-ctxignore",
        ),
        pytest.param(
            lambda t: (t / ".ctxignore").write_text("x\n" * 60_000),
            "1 file left out: 1 too large.",
            id="ctxignore-over-the-rules-limit",
        ),
    ],
)
def test_a_hostile_ignore_file_neither_hangs_nor_exhausts_the_index(
    store_dir: Path,
    tree: Path,
    make: Callable[[Path], None],
    left_out: str | None,
) -> None:
    make(tree)
    lines = index_lines(store_dir, tree)
    assert lines[0].startswith(f"Indexed {tree}: 2 files, "), lines
    assert [line for line in lines if "left out" in line] == (
        [left_out] if left_out else []
    )


@pytest.mark.parametrize(
    ("swap", "reason"),
    [
        pytest.param("import os; os.mkfifo(target)", "unreadable", id="fifo"),
        pytest.param("target.symlink_to('/dev/zero')", "symlink", id="dev-zero"),
        pytest.param(
            "target.touch(); import os; os.truncate(target, 1 << 30)",
            "too large",
            id="1-gib",
        ),
    ],
)
def test_a_file_swapped_mid_index_is_left_out(
    store_dir: Path, tree: Path, swap: str, reason: str
) -> None:
    lines = index_lines(store_dir, tree, before=SWAP.format(swap=swap))
    assert lines[0].startswith(f"Indexed {tree}: 1 file, "), lines
    assert lines[1] == f"1 file left out: 1 {reason}."


def outside_secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "net.py").write_text(SECRET)
    return outside


def link_file(tree: Path, outside: Path) -> None:
    (tree / "pkg" / "net.py").unlink()
    (tree / "pkg" / "net.py").symlink_to(outside / "net.py")


def link_folder(tree: Path, outside: Path) -> None:
    (tree / "pkg" / "net.py").rename(tree / "net.py.bak")
    (tree / "pkg" / "cache.py").rename(outside / "cache.py")
    (tree / "pkg").rmdir()
    (tree / "pkg").symlink_to(outside)


def shown_without_code(out: str) -> bool:
    """Whether ``ctx find --full -n 1`` printed its hit without code."""
    lines = out.splitlines()
    return lines[0].startswith("pkg/net.py  L4-L7  ") and lines[1].startswith("1 of ")


def ctx(store_dir: Path, *args: str) -> str:
    result = CliRunner().invoke(
        cli, ["--store", str(store_dir), *args], catch_exceptions=False
    )
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


@pytest.fixture(params=[link_file, link_folder], ids=["file-link", "folder-link"])
def linked_out(
    request: pytest.FixtureRequest, store_dir: Path, tree: Path, tmp_path: Path
) -> Path:
    """The store, its tree indexed, then pkg/net.py linked to a file outside."""
    ctx(store_dir, "code", "index", str(tree), "--no-vectors")
    request.param(tree, outside_secret(tmp_path))
    return store_dir


def test_find_full_never_shows_a_file_outside_the_tree(linked_out: Path) -> None:
    store_dir = linked_out
    full = ctx(store_dir, "find", "fetch with retries", "-n", "1", "--full")
    assert "SECRET" not in full
    assert shown_without_code(full)
    chunk = ctx(store_dir, "chunk", "pkg/net.py:4")
    assert "SECRET" not in chunk
    assert chunk.splitlines()[-1] == "(the file cannot be read now)"


def test_find_full_over_the_api_and_mcp_never_shows_a_file_outside_the_tree(
    linked_out: Path,
) -> None:
    arguments = {"query": "fetch with retries", "limit": 1, "full": True}
    ws = Workspace.find(linked_out)
    try:
        found = invoke(ws, Caller(), CALLS["find"], arguments)
        assert found.hits[0].chunk.path == "pkg/net.py"
        assert found.hits[0].code is None

        async def over_mcp() -> list[dict[str, Any]]:
            async with Client(build_server(ws, tools="code")) as client:
                answer = await client.call_tool("find", arguments)
            assert not answer.is_error
            assert answer.structured_content is not None
            hits: list[dict[str, Any]] = answer.structured_content["hits"]
            return hits

        hits = anyio.run(over_mcp)
    finally:
        ws.close()
    assert "SECRET" not in str(hits)
    [hit] = hits
    assert hit.get("code") is None


def test_find_full_does_not_hang_on_a_file_swapped_for_a_fifo(
    store_dir: Path, tree: Path
) -> None:
    ctx(store_dir, "code", "index", str(tree), "--no-vectors")
    (tree / "pkg" / "net.py").unlink()
    os.mkfifo(tree / "pkg" / "net.py")
    out = run_ctx(store_dir, "find", "fetch with retries", "-n", "1", "--full")
    assert shown_without_code(out)


def test_the_backlog_does_not_hang_on_a_file_swapped_for_a_fifo(
    tmp_path: Path, tree: Path
) -> None:
    index = make_index(tmp_path / "code")
    index.update(tree, embed=False)
    fifo = tree / "pkg" / "net.py"
    fifo.unlink()
    os.mkfifo(fifo)
    answers: list[tuple[list[str], list[str]] | None] = []
    worker = threading.Thread(
        target=lambda: answers.append(index.next_backlog(64)), daemon=True
    )
    worker.start()
    worker.join(TIMEOUT)
    if worker.is_alive():  # before the fix: blocked opening the FIFO; free it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(TIMEOUT)
        pytest.fail("the backlog hung on a FIFO")
    [backlog] = answers
    assert backlog is not None
    _, texts = backlog
    assert all("fetch_with_retries" not in text for text in texts)
    assert any("class Cache" in text for text in texts)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("fifo.py", errno.EINVAL),  # opened without waiting, then refused
        ("pkg", errno.EINVAL),
        ("zero.py", errno.ELOOP),
        ("up/tree/pkg/cache.py", errno.ENOTDIR),  # a folder link on the way
        ("big.py", errno.EFBIG),
        ("../tree/pkg/cache.py", errno.EINVAL),
        ("pkg/../pkg/cache.py", errno.EINVAL),
        ("/etc/passwd", errno.EINVAL),
        ("", errno.EINVAL),
    ],
)
def test_read_file_refuses_what_is_not_a_regular_file_inside_the_root(
    tree: Path, tmp_path: Path, path: str, code: int
) -> None:
    os.mkfifo(tree / "fifo.py")
    (tree / "zero.py").symlink_to("/dev/zero")
    sparse(tree / "big.py", GIB)
    (tree / "up").symlink_to(tmp_path)
    with pytest.raises(OSError) as refused:  # noqa: PT011 (the errno says which)
        read_file(tree, path)
    assert refused.value.errno == code


def test_read_file_reads_at_most_its_limit(tree: Path) -> None:
    assert read_file(tree, "pkg/cache.py") == CACHE.encode()
    assert read_file(tree, "pkg/cache.py", limit=len(CACHE)) == CACHE.encode()
    with pytest.raises(OSError) as refused:  # noqa: PT011 (the errno says which)
        read_file(tree, "pkg/cache.py", limit=len(CACHE) - 1)
    assert refused.value.errno == errno.EFBIG
