"""The built wheel works on its own, without the dev tools (issue 35).

The wheel is built from a copy of the sources and installed into a fresh
virtual environment that holds nothing else: no pip, no pytest, no ruff.
Its dependencies are the ones its own metadata declares (Requires-Dist,
with the extras they name), taken from this environment's site-packages
through a path file: a module the package needs but does not declare (a dev
tool, say) is missing there, and the commands below fail. Then, from that
environment's own `ctx`: `ctx init --import`, `ctx remember`, `ctx recall`,
`ctx hook session-start`, one MCP tool call over stdio, `ctx-memory`.

It builds a wheel and starts a dozen processes: about a minute on two busy
cores, so it runs when asked (`make wheel-check`, which sets CTX_WHEEL_TEST),
not in every run of the suite. Installing the dependencies themselves from
an index into a fresh environment took 2 min 52 s here (pip, two busy cores).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from packaging.requirements import Requirement

asked = pytest.mark.skipif(
    not os.environ.get("CTX_WHEEL_TEST"),
    reason="builds and installs the wheel (about a minute): `make wheel-check`",
)

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("engine", "hub", "porcelain", "lens", "pyproject.toml", "README.md")


def _build_wheel(out: Path) -> Path:
    src = out / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(ROOT / name, src / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), "."],
        cwd=src,
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = out.glob("ctx_memory-*.whl")
    return wheel


def _requirements(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(name).decode("utf-8"))
    return [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]


def _runtime_closure(wanted: list[Requirement]) -> set[str]:
    """Every top-level entry of site-packages the declared dependencies install."""
    entries: set[str] = set()
    seen: set[tuple[str, str]] = set()
    todo = [(r, "") for r in wanted]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        key = (req.name.lower(), ",".join(sorted(req.extras)))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = distribution(req.name)
        except PackageNotFoundError:
            continue  # an optional platform dependency, not installed here
        for file in dist.files or ():
            top = file.parts[0]
            if top != ".." and not top.endswith(".pth"):
                entries.add(top)
        for line in dist.requires or ():
            dep = Requirement(line)
            for name in ("", *req.extras):
                todo.append((dep, name))
    return entries


def _link_closure(requirements: list[Requirement], deps: Path) -> None:
    """Links every site-packages entry the requirements install into ``deps``."""
    site = Path(sysconfig.get_paths()["purelib"])
    deps.mkdir()
    for entry in _runtime_closure(requirements):
        if (site / entry).exists() and not entry.startswith("ctx_memory"):
            (deps / entry).symlink_to(site / entry)


def test_every_module_imports_with_only_the_declared_dependencies(tmp_path):
    # The quick form of the wheel check, run every time: ctx's own packages
    # and the closure of its declared dependencies, nothing else on the path.
    requirements = [Requirement(r) for r in distribution("ctx-memory").requires or ()]
    deps = tmp_path / "deps"
    _link_closure(requirements, deps)
    package = tmp_path / "pkg" / "ctx"
    package.mkdir(parents=True)
    for name in ("engine", "hub", "porcelain", "lens"):
        (package / name).symlink_to(ROOT / name)
    code = (
        "import importlib, pkgutil, sys\n"
        f"sys.path[:0] = [{str(deps)!r}, {str(package.parent)!r}]\n"
        "import ctx\n"
        "walk = pkgutil.walk_packages(ctx.__path__, 'ctx.')\n"
        "names = [m.name for m in walk if not m.name.endswith('__main__')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "for tool in ('pytest', 'ruff', 'mypy', 'hypothesis', 'importlinter'):\n"
        "    try:\n"
        "        importlib.import_module(tool)\n"
        "    except ImportError:\n"
        "        continue\n"
        "    sys.exit(f'{tool} is importable')\n"
        "print(len(names))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) > 200


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(out)
    venv = out / "fresh"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True,
        timeout=300,
    )
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")),
            *("install", "--no-deps", "--no-index", "-q", str(wheel)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    deps = out / "deps"
    _link_closure(_requirements(wheel), deps)
    fresh_site = next((venv / "lib").glob("python3.*")) / "site-packages"
    (fresh_site / "runtime-deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return venv


def _env(home: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    return env | {"HOME": str(home), "CTX_HUB_AUTOSTART": "0"}


@asked
def test_the_wheel_alone_runs_the_first_minute(fresh, tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "api"
    home.mkdir()
    project.mkdir()
    (project / "CLAUDE.md").write_text("# Deploys\nDeploys go out on Fridays.\n")
    env = _env(home)

    def ctx(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            [str(fresh / "bin" / "ctx"), *args],
            cwd=project,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    python = str(fresh / "bin" / "python")
    probe = "import ctx.porcelain, sys; print(ctx.porcelain.__file__)"
    where = subprocess.run(
        [python, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert where.stdout.startswith(str(fresh))  # ctx from the wheel, not a checkout
    for dev_tool in ("pytest", "ruff", "mypy", "hypothesis", "pip"):
        gone = subprocess.run([python, "-c", f"import {dev_tool}"], env=env)
        assert gone.returncode != 0, dev_tool

    assert "Imported CLAUDE.md into pinned/claude-md" in ctx("init", "--import")
    ctx("remember", "The staging database is reset every Monday.")
    assert "every Monday" in ctx("recall", "when is staging reset?")
    hook = {"session_id": "s-1", "cwd": str(project), "source": "startup"}
    answer = json.loads(ctx("hook", "session-start", stdin=json.dumps(hook)))
    assert "Fridays" in answer["hookSpecificOutput"]["additionalContext"]
    version = subprocess.run(
        [str(fresh / "bin" / "ctx-memory"), "--version"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.startswith("ctx, version ")


@asked
@pytest.mark.anyio
async def test_the_wheel_serves_mcp(fresh, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    subprocess.run(
        [str(fresh / "bin" / "ctx"), "init", str(tmp_path)],
        env=_env(home),
        capture_output=True,
        check=True,
        timeout=120,
    )
    params = StdioServerParameters(
        command=str(fresh / "bin" / "ctx"),
        args=["mcp", "--store", str(tmp_path / ".ctx")],
        env=_env(home),
    )
    async with Client(params) as client:
        wrote = await client.call_tool("remember", {"text": "Builds run on Linux."})
        assert not wrote.is_error, wrote.content
        assert wrote.structured_content["id"]
