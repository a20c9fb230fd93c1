"""`ctx find`: an exact identifier in the query finds its definition first (issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctx.hub.code.identifiers import query_identifiers
from ctx.hub.code.index import CodeIndex
from ctx.hub.code.search import WEIGHTS, find
from ctx.hub.retrieval.embedders import make_embedder

TABLE = """\
def resolve_command(name):
    return TABLE.get(name)
"""

# Each caller says "resolve" and "command" more often than the definition.
CALLER = '''\
from table import resolve_command


def resolve_command_alias_{n}(alias):
    """Resolve the command an alias names, then resolve that command."""
    command = resolve_command(alias)
    return resolve_command(command.target)
'''

# A long class is cut into its methods; a short one is one chunk.
OTHER_METHODS = "".join(
    f"\n    def step_{n}(self, request):\n        return self.transport.step({n})\n"
    for n in range(30)
)
CLIENTS = f"""\
class HTTPClient:
    def send(self, request):
        return self.transport.write(request)
{OTHER_METHODS}

class MailClient:
    def send(self, message):
        return self.smtp.send(message, send=True)


def send_all(client, requests):
    for request in requests:
        client.send(request)
        client.send(request)
"""


# A long class whose head says the method's name more than the method does.
CONNECTION = (
    "class HTTPConnection:\n"
    '    """A connection: request after request, each request a request line,\n'
    '    request headers and a request body (the request method sends one)."""\n'
    + "".join(
        f"\n    def step_{n}(self):\n        return self.sock.step({n})\n"
        for n in range(30)
    )
    + "\n    def request(self, method, url):\n        return self.send(method, url)\n"
)


@pytest.fixture
def index(tmp_path: Path) -> CodeIndex:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "table.py").write_text(TABLE)
    for n in range(5):
        (root / f"cli_{n}.py").write_text(CALLER.format(n=n))
    (root / "clients.py").write_text(CLIENTS)
    (root / "connection.py").write_text(CONNECTION)
    code = CodeIndex(tmp_path / "index", lambda: make_embedder({"kind": "hashing"}))
    code.update(root)
    return code


def first(index: CodeIndex, query: str, **weights: float) -> str:
    hit = find(index, query, limit=3, weights={**WEIGHTS, **weights}).hits[0]
    return f"{hit.chunk.path}:{hit.chunk.qualified}"


@pytest.mark.parametrize(
    ("query", "definition"),
    [
        ("resolve_command", "table.py:resolve_command"),
        ("where is `resolve_command` defined?", "table.py:resolve_command"),
        ("HTTPClient.send", "clients.py:HTTPClient.send"),
        ("HTTPConnection.request", "connection.py:HTTPConnection.request"),
        # A short class holds its methods: its chunk defines them.
        ("how does MailClient.send work", "clients.py:MailClient"),
    ],
)
def test_the_chunk_that_defines_a_named_identifier_comes_first(
    index, query, definition
):
    assert first(index, query) == definition


def test_without_the_identifier_channel_callers_come_first(index):
    # What the channel fixes: BM25 saw "resolve" and "command" in every caller.
    assert first(index, "resolve_command", ident=0) != "table.py:resolve_command"


def test_the_channel_keeps_to_the_filters(index):
    result = find(index, "resolve_command", path="cli_*.py", limit=10)
    assert all(hit.chunk.path.startswith("cli_") for hit in result.hits)
    assert not any("ident" in hit.channels for hit in result.hits)


def test_which_words_of_a_query_are_identifiers():
    assert query_identifiers(
        "How does resolve_command call HTTPClient.send and parseConfig?"
    ) == ["resolve_command", "HTTPClient.send", "parseConfig"]
    # Plain words, a sentence's full stop and "e.g." are not code.
    assert query_identifiers("Parse the config file, e.g. the TOML one.") == []
    # Anything between backquotes is.
    assert query_identifiers("what does `parse` return?") == ["parse"]
    # A word called (``echo()``), and a name asked alone: looked up as a
    # symbol is. Words of a sentence are not, nor two words alone.
    assert query_identifiers("where is echo() defined") == ["echo"]
    assert query_identifiers("urlopen") == ["urlopen"]
    assert query_identifiers(" urlopen? ") == ["urlopen"]
    assert query_identifiers("echo()") == ["echo"]
    assert query_identifiers("url open") == []


def test_a_definition_named_in_the_query_s_case_comes_first(tmp_path):
    """Case finds both `Snapshot` and ``snapshot``; it tells them apart."""
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a_store.py").write_text(
        "def snapshot(commit):\n    return Snapshot(commit)\n"
    )
    (root / "z_snapshot.py").write_text(
        "class Snapshot:\n    def __init__(self, commit):\n        self.commit = commit\n"
    )
    code = CodeIndex(tmp_path / "index", lambda: make_embedder({"kind": "hashing"}))
    code.update(root)
    assert first(code, "`Snapshot`") == "z_snapshot.py:Snapshot"
    assert first(code, "`snapshot`") == "a_store.py:snapshot"


def test_a_b_names_b_in_a_nested_class_and_a_short_a_that_holds_it(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    steps = "".join(
        f"\n        def step_{n}(self):\n            return {n}\n" for n in range(30)
    )
    # A long class inside another: its methods' owner is the inner class.
    (root / "net.py").write_text(
        "class Net:\n    class HTTPConnection:\n"
        '        """request after request, each request a request line."""\n'
        f"{steps}\n"
        "        def request(self, method):\n            return method\n"
    )
    # Config.save: a long Config cut into members, a short one holding save,
    # and other classes' save methods.
    members = "".join(
        f"\n    def step_{n}(self):\n        return {n}\n" for n in range(30)
    )
    (root / "a_config.py").write_text(
        f"class Config:\n{members}\n    def save(self):\n        return 1\n"
    )
    (root / "b_config.py").write_text(
        "class Config:\n    def save(self):\n        return 2\n"
    )
    for i in range(3):
        (root / f"z_store_{i}.py").write_text(
            f"class Store{i}:\n    def save(self):\n        return {i}\n{members}"
        )
    code = CodeIndex(tmp_path / "index", lambda: make_embedder({"kind": "hashing"}))
    code.update(root)
    assert first(code, "HTTPConnection.request") == "net.py:Net.HTTPConnection.request"
    hits = find(code, "Config.save", limit=3).hits
    assert [f"{h.chunk.path}:{h.chunk.qualified}" for h in hits[:2]] == [
        "a_config.py:Config.save",
        "b_config.py:Config",
    ]
