"""ctx code index, find, symbols, deps and chunk through the command line."""

from __future__ import annotations

import re

import pytest


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "src"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(
        "import time\n\n\n"
        "def fetch_with_retries(url, attempts=3):\n"
        '    """Retries a request with exponential backoff."""\n'
        "    for attempt in range(attempts):\n"
        "        time.sleep(2**attempt)\n"
    )
    (root / "app.py").write_text(
        "from pkg.net import fetch_with_retries\n\n\n"
        "class App:\n"
        "    def start(self):\n"
        "        return fetch_with_retries('x')\n"
    )
    (root / "blob.bin.py").write_bytes(b"\0\1\2")
    return root


def test_index_then_find_prints_spans_summaries_and_a_footer(hashing_ctx, tree):
    out = hashing_ctx("code", "index", str(tree), "--wait").stdout
    assert out.splitlines()[0].startswith(f"Indexed {tree}: 3 files, 4 chunks (4 read")
    assert out.splitlines()[1] == "1 file left out: 1 binary."
    found = hashing_ctx("find", "retry with backoff", "-n", "2").stdout.splitlines()
    assert found[0] == (
        "pkg/net.py  L4-L7  Retries a request with exponential backoff."
    )
    assert re.fullmatch(
        r"2 of \d+ matching chunks; 4 chunks in 2 files; \d+ ms", found[-1]
    ), found[-1]
    full = hashing_ctx("find", "start the app", "-n", "1", "--full").stdout
    assert "app.py  L4-L6  class App\n    class App:\n        def start(self):" in full


def test_without_a_hub_the_backlog_is_shown_until_embedded(hashing_ctx, tree):
    out = hashing_ctx("code", "index", str(tree)).stdout.splitlines()
    assert out[0].endswith("0 embedded) in " + out[0].rsplit(" in ", 1)[1])
    assert out[2] == (
        "4 chunks without vectors yet (find answers by words, names and paths "
        "meanwhile): no hub runs to embed them: `ctx hub start`, or "
        "`ctx code index --wait`."
    )
    found = hashing_ctx("find", "retry with backoff").stdout.splitlines()
    assert found[0].startswith("pkg/net.py  L4-L7")
    assert found[-1] == (
        "4 chunks not embedded yet (found by words, names and paths only)."
    )
    status = hashing_ctx("code", "status").stdout.splitlines()
    assert status[0] == f"Code index of {tree}: 3 files, 4 chunks."
    assert status[1] == "Vectors: 0 of 4 chunks (none yet)."
    again = hashing_ctx("code", "index", "--wait").stdout
    assert "(0 read, 0 parsed, 0 removed, 4 embedded)" in again
    assert hashing_ctx("code", "status").stdout.splitlines()[1] == (
        "Vectors: 4 of 4 chunks (hashing-384@1)."
    )
    assert "not embedded" not in hashing_ctx("find", "retry").stdout


def test_symbols_deps_and_chunk(hashing_ctx, tree, monkeypatch):
    hashing_ctx("code", "index", str(tree), "--no-vectors")
    assert hashing_ctx("symbols").stdout == (
        "app.py:4  class  App\npkg/net.py:4  function  fetch_with_retries\n2 symbols\n"
    )
    assert hashing_ctx("symbols", "--kind", "class").stdout.endswith("1 symbol\n")
    monkeypatch.chdir(tree)
    assert hashing_ctx("deps", "pkg/net.py").stdout == (
        "pkg/net.py\nimports (1):\n  time\nfiles it imports (0):\n"
        "imported by (1):\n  app.py\n"
    )
    assert hashing_ctx("deps", "app.py").stdout.splitlines()[1:6] == [
        "imports (2):",
        "  pkg.net",
        "  pkg.net.fetch_with_retries",
        "files it imports (1):",
        "  pkg/net.py",
    ]
    chunk = hashing_ctx("chunk", "pkg/net.py:6").stdout
    assert chunk.startswith(
        "pkg/net.py  L4-L7  python function fetch_with_retries\nuses: time\n"
        "def fetch_with_retries"
    )


def test_a_chunk_of_statements_in_a_class_names_its_class(hashing_ctx, tmp_path):
    root = tmp_path / "big"
    root.mkdir()
    fields = "".join(f"    x{i} = {i}\n" for i in range(45))
    (root / "big.py").write_text(
        f"class Big:\n    def first(self):\n        pass\n{fields}"
    )
    hashing_ctx("code", "index", str(root), "--no-vectors")
    head = hashing_ctx("chunk", f"{root / 'big.py'}:20").stdout.splitlines()[0]
    assert head.endswith("python code (in Big)")  # was "python code Big."


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["find", "x"],
            "Error: No code is indexed in this store.\nHint: Run `ctx code index PATH` first.\n",
        ),
        (
            ["symbols"],
            "Error: No code is indexed in this store.\nHint: Run `ctx code index PATH` first.\n",
        ),
        (["chunk", "app.py"], None),
    ],
)
def test_without_an_index_each_command_says_so(hashing_ctx, args, error):
    result = hashing_ctx(*args, code=3 if error else 4)
    if error is not None:
        assert result.stderr == error
    else:
        assert result.stderr.startswith("Error: 'app.py' is not FILE:LINE.")


def test_bad_input_is_one_line_and_changes_nothing(hashing_ctx, tree, tmp_path):
    hashing_ctx("code", "index", str(tree), "--no-vectors")
    before = hashing_ctx.files()
    assert hashing_ctx("find", " ", code=4).stderr.startswith(
        "Error: The query is empty."
    )
    assert hashing_ctx("find", "x", "--language", "cobol", code=4).stderr.startswith(
        "Error: 'cobol' is not a language the code index knows.\nHint: Choose one of: c, cpp,"
    )
    assert hashing_ctx("chunk", "nope.py:3", code=3).stderr.startswith(
        "Error: nope.py is not in the code index of "
    )
    assert hashing_ctx("chunk", "app.py:999", code=3).stderr == (
        "Error: Line 999 of app.py has no chunk.\n"
    )
    missing = tmp_path / "missing"
    assert hashing_ctx("code", "index", str(missing), code=4).stderr == (
        f"Error: {missing} is not a folder.\nHint: Give the folder of a source tree.\n"
    )
    assert hashing_ctx.files() == before
