"""The import contracts say what docs/architecture.md says, with no room left out."""

from __future__ import annotations

import pkgutil
import re
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


def test_the_engine_reads_neither_the_environment_nor_the_wall_clock():
    # docs/architecture.md: the clock is given to a Store, identity to each
    # write as an Intent, and how to reach a remote as an Access.
    reads = re.compile(
        r"os\.environ|os\.getenv|getenv\(|datetime\.now\(|datetime\.utcnow\("
        r"|date\.today\(|time\.time\(|time\.time_ns\(|localtime\(|gmtime\("
    )
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for folder in ctx.engine.__path__
        for path in sorted(Path(folder).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if reads.search(line.split("#", 1)[0])
    ]
    assert found == []
