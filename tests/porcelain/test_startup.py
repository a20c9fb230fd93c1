"""What starting `ctx` costs: the modules a command imports (issue 30).

A command imports only its own module of ``ctx.porcelain.commands`` (the
group is lazy), and ``--version`` reads no package metadata. The import
sets are checked in a fresh interpreter, as a shell starts the program.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from ctx.porcelain.main import COMMAND_MODULES
from ctx.porcelain.version import VERSION

_AFTER = """
import gc, json, sys
from ctx.porcelain.launch import main
sys.argv = ["ctx", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
"""
"""Runs ``ctx ARGS`` in the process; what follows it reports on stderr."""

_HEAVY = ("numpy", "tantivy", "hnswlib", "onnxruntime", "mcp", "textual", "uvicorn")


_MODULES = "sys.stderr.write(json.dumps(sorted(sys.modules)))"


def after(
    args: Sequence[str], report: str, stdin: str = "", cwd: Path | None = None
) -> Any:
    """What ``report`` writes as JSON on stderr once ``ctx ARGS`` has run."""
    out = subprocess.run(
        [sys.executable, "-c", _AFTER + report, json.dumps(list(args))],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=cwd,
    )
    return json.loads(out.stderr[out.stderr.rindex("[") :])


def imported(*args: str) -> set[str]:
    """The modules ``ctx ARGS`` has loaded when it ends."""
    return set(after(args, _MODULES))


def command_modules(modules: set[str]) -> set[str]:
    prefix = "ctx.porcelain.commands."
    return {m.removeprefix(prefix) for m in modules if m.startswith(prefix)}


def test_the_table_names_every_command_of_every_module() -> None:
    found: dict[str, str] = {}
    for module in set(COMMAND_MODULES.values()):
        loaded = importlib.import_module(f"ctx.porcelain.commands.{module}")
        found |= {command.name: module for command in loaded.COMMANDS}
    folder = Path(importlib.import_module("ctx.porcelain.commands").__path__[0])
    every = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    assert found == COMMAND_MODULES
    assert set(COMMAND_MODULES.values()) == every


def test_the_version_is_the_packages() -> None:
    assert version("ctx-memory") == VERSION


def test_version_loads_no_command_and_no_package_metadata() -> None:
    modules = imported("--version")
    assert command_modules(modules) == set()
    assert "importlib.metadata" not in modules
    assert "click" not in modules
    assert not {m.split(".")[0] for m in modules} & set(_HEAVY)


def test_version_says_what_the_groups_option_says(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ctx.porcelain.main import cli

    fast = subprocess.run(
        [sys.executable, "-c", _AFTER, json.dumps(["--version"])],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert fast == CliRunner().invoke(cli, ["--version"]).stdout


@pytest.mark.parametrize(
    ("args", "own"),
    [
        (("remember", "Deploys run on Fridays"), "memory"),
        (("ls",), "memory"),
        (("log", "-n", "1"), "log"),
    ],
)
def test_a_command_loads_only_its_own_module(
    tmp_path: Path, args: tuple[str, ...], own: str
) -> None:
    store = tmp_path / ".ctx"
    imported("--store", str(store), "init")
    modules = imported("--store", str(store), *args)
    assert command_modules(modules) <= {own}
    assert not {m.split(".")[0] for m in modules} & set(_HEAVY)


_NOT_FOR_A_WRITE = {
    "dulwich.objectspec",  # short commit ids: a revision, not a write
    "dulwich.graph",  # deleting a branch
    "secrets",  # and hmac: a temporary file's name is os.urandom's
    "hmac",
}
_NOT_FOR_A_LISTING = _NOT_FOR_A_WRITE | {
    "sqlite3",  # the text index: short ids and duplicates, not a listing
    "ctx.engine.texts",
    "ctx.hub.secrets",  # the secret scan: writes only
}


@pytest.mark.parametrize(
    ("args", "unused"),
    [
        (("remember", "Deploys run on Fridays"), _NOT_FOR_A_WRITE),
        (("ls",), _NOT_FOR_A_LISTING),
        # dulwich's tree diff: merges only (ls's adjacency still loads it)
        (("log", "-n", "1"), _NOT_FOR_A_LISTING | {"dulwich.diff_tree"}),
    ],
)
def test_a_command_loads_none_of_what_it_does_not_use(
    tmp_path: Path, args: tuple[str, ...], unused: set[str]
) -> None:
    store = tmp_path / ".ctx"
    imported("--store", str(store), "init")
    imported("--store", str(store), "remember", "The queue runs on Postgres")
    modules = imported("--store", str(store), *args)
    assert "ctx.engine.store" in modules  # the command did open its store
    assert modules & unused == set()


@pytest.mark.parametrize(
    ("args", "read"),
    [
        (["prompt-submit"], ("prompt-submit", None, None)),
        (["stop", "--store", "/s", "--agent=me"], ("stop", "/s", "me")),
        (["--store=/s", "session-end"], ("session-end", "/s", None)),
        (["stop", "--now"], ("stop --now", None, None)),  # an unknown event
        ([], ("", None, None)),
        (["stop", "--help"], None),  # the group's
        (["stop", "--store"], None),  # the group says what is missing
    ],
)
def test_the_hook_reads_its_own_arguments(args, read):
    from ctx.porcelain.launch import hook_arguments

    assert hook_arguments(args) == read


def test_the_hook_loads_neither_click_nor_a_command(tmp_path: Path) -> None:
    modules = set(after(["hook", "session-end"], _MODULES, stdin="{}", cwd=tmp_path))
    assert command_modules(modules) == set()
    assert "click" not in modules
    assert not {m.split(".")[0] for m in modules} & set(_HEAVY)


def test_a_plain_write_loads_no_detector_redaction_or_time_parser(
    tmp_path: Path,
) -> None:
    # The commit's summary names the new memory's id, 26 characters that
    # would pass the secret scan's gate; loading the detectors costs about
    # 0.2 s (most of it ``requests``). A text with nothing like a secret is
    # passed by the gate alone.
    store = tmp_path / ".ctx"
    imported("--store", str(store), "init")
    modules = imported("--store", str(store), "remember", "Deploys run on Fridays")
    roots = {m.split(".")[0] for m in modules}
    assert not roots & {"detect_secrets", "requests"}
    assert "ctx.hub.redaction" not in modules
    assert (
        "ctx.hub.retrieval.temporal.moment" not in modules
    )  # no --when: no time to parse
    assert "ctx.hub.screen" in modules  # the write was screened


@pytest.mark.parametrize("args", [["--help"], ["hook", "session-start"]])
def test_the_garbage_collector_still_runs_once_a_command_has_started(args) -> None:
    # No collection runs while a command's modules are imported: a long
    # process (`ctx serve`, `ctx mcp`, `ctx hub start`) must get its
    # collector back, and collect what it makes after.
    probe = """
loop = []
loop.append(loop)
del loop
sys.stderr.write(json.dumps([gc.isenabled(), gc.collect() >= 1]))
"""
    assert after(args, probe, stdin="{}") == [True, True]
