"""The import contracts say what docs/architecture.md says, with no room left out."""

from __future__ import annotations

import ast
import pkgutil
import tomllib
from pathlib import Path

import ctx.engine
import ctx.hub

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
LIBRARY_STANDS_ON = {"config", "state", "http_json"}
"""The hub's modules the search library may import (the architecture's words)."""


def _contract(name: str) -> dict[str, object]:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    [found] = [c for c in contracts["contracts"] if c["name"] == name]
    return found


def test_the_search_library_may_import_no_other_room_of_the_hub():
    # A module added to the hub's top was allowed to the library until
    # someone listed it (lazy_branches and code_remotes were not).
    contract = _contract("the search library knows nothing of what is built on it")
    rooms = {info.name for info in pkgutil.iter_modules(ctx.hub.__path__)}
    forbidden = {m.removeprefix("ctx.hub.") for m in contract["forbidden_modules"]}
    assert forbidden == rooms - LIBRARY_STANDS_ON - {"retrieval"}


DISTINCT = {
    "environ",
    "environb",
    "getenv",
    "getenvb",
    "expanduser",
    "expandvars",
    "get_config_stack",
}
"""Names that read the process's environment wherever they are met."""
CLOCKS = {
    "now",
    "utcnow",
    "today",
    "time",
    "time_ns",
    "localtime",
    "gmtime",
    "strftime",
    "ctime",
    "home",
}
"""Names that read the wall clock or the user's folder as attributes of
``time``, ``datetime``, ``date`` or ``Path`` (a record's ``.time`` is data)."""
OWNERS = {"os", "time", "datetime", "date", "Path"}

ALLOWED = {
    ("_receive_rules.py", "expanduser"),
    ("_receive_rules.py", "get_config_stack"),
}
"""A push to a repository on this machine honours its git rules as git does,
the user's and the system's git configuration included (docs/architecture.md)."""


def _reads(tree: ast.AST) -> set[str]:
    # What each name stands for: "import datetime as dt", "from datetime
    # import datetime as DT".
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                aliases[alias.asname or alias.name] = alias.name.rsplit(".", 1)[-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = node.value
            name = None
            if isinstance(owner, ast.Name):
                name = aliases.get(owner.id, owner.id)
            elif isinstance(owner, ast.Attribute):
                name = owner.attr
            if node.attr in DISTINCT or (name in OWNERS and node.attr in CLOCKS):
                found.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "time"):
            names = DISTINCT | CLOCKS
            found |= {alias.name for alias in node.names if alias.name in names}
    return found


def test_the_engine_reads_neither_the_environment_nor_the_wall_clock():
    # docs/architecture.md: the clock is given to a Store, identity to each
    # write as an Intent, and how to reach a remote as an Access.
    found = sorted(
        (path.name, name)
        for folder in ctx.engine.__path__
        for path in Path(folder).rglob("*.py")
        for name in _reads(ast.parse(path.read_text()))
        if (path.name, name) not in ALLOWED
    )
    assert found == []


def test_the_check_of_the_engine_finds_each_way_of_reading_them():
    said = """
import os, time
import datetime as dt
import pathlib
from os import environ
from datetime import date, datetime
from datetime import datetime as DT
from pathlib import Path
os.environ["A"]; os.getenv("B"); os.path.expanduser("~"); Path.home()
datetime.now(); datetime.today(); date.today(); time.time(); time.localtime()
dt.datetime.now(); DT.utcnow(); pathlib.Path.home(); os.path.expandvars("$A")
time.strftime("%Y"); record.time; store.clock()
"""
    assert _reads(ast.parse(said)) == {
        "environ",
        "getenv",
        "expanduser",
        "expandvars",
        "home",
        "now",
        "utcnow",
        "today",
        "time",
        "localtime",
        "strftime",
    }
