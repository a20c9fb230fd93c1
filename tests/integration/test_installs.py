"""ctx installed the ways its users install programs, each into a place of its own (issue 35).

- the wheel, built from a copy of the sources, in a fresh virtual
  environment that holds nothing else (no pip, no pytest, no ruff): every
  module imports, and `ctx init --import`, `remember`, `recall`, `hook
  session-start` and `ctx-memory --version` run from it;
- `uv tool install` of a checkout, and of its git URL;
- `pipx install` of a checkout (pip's backend: a pipx without uv);
- `uvx --from WHEEL ctx-memory mcp` (the MCP registry's entry) answering one
  tool call from the SDK client.

No network at run time: every installer is told to read one local folder
of wheels and no index. That folder holds the closure of the dependencies
ctx's metadata declares (Requires-Dist, with the extras they name), each
repacked from this environment's installed files as its RECORD lists them,
plus the build backend (setuptools) and pip (which pipx puts in its shared
environment). A module ctx needs but does not declare (a dev tool, say) is
not there, so the checks below fail on it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from pathlib import Path

import pytest
import uv
from integration_support import GIT, VENV_BIN
from mcp import Client, StdioServerParameters
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("engine", "hub", "porcelain", "lens", "pyproject.toml", "README.md")
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)
UV = uv.find_uv_bin()
DEV_TOOLS = ("pytest", "ruff", "mypy", "hypothesis", "importlinter", "pip")
# Files of an installed distribution's .dist-info that its wheel did not hold.
INSTALLED_ONLY = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}


def _closure(wanted: list[Requirement]) -> list[Distribution]:
    """The installed distributions ``wanted`` needs, its dependencies' too."""
    found: dict[str, Distribution] = {}
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
        found[dist.metadata["Name"].lower()] = dist
        for line in dist.requires or ():
            dep = Requirement(line)
            for name in ("", *req.extras):
                todo.append((dep, name))
    return list(found.values())


def _repack(dist: Distribution, house: Path) -> None:
    """Writes ``dist``'s wheel into ``house`` from its installed files."""
    (record_file,) = [
        f
        for f in dist.files or ()
        if f.name == "RECORD" and f.parts[0].endswith(".dist-info")
    ]
    info = Path(str(dist.locate_file(record_file))).parent
    site = info.parent
    lines = (info / "WHEEL").read_text(encoding="utf-8").splitlines()
    tags = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Tag:")]
    parts = zip(*(tag.split("-") for tag in tags), strict=True)
    tag = "-".join(".".join(dict.fromkeys(part)) for part in parts)
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"]).lower()
    record = []
    with zipfile.ZipFile(house / f"{name}-{dist.version}-{tag}.whl", "w") as wheel:
        for line in (info / "RECORD").read_text(encoding="utf-8").splitlines():
            path = Path(line.rsplit(",", 2)[0])
            if path.parts[0] == ".." or "__pycache__" in path.parts:
                continue  # a script (the installer writes it) or a cache
            if path.parent.name == info.name and path.name in INSTALLED_ONLY:
                continue
            wheel.write(site / path, path.as_posix())
            record.append(line)
        record.append(f"{info.name}/RECORD,,")
        wheel.writestr(f"{info.name}/RECORD", "\n".join(record) + "\n")


def _made_once(
    factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]
) -> Path:
    """A folder ``make`` fills once for the whole run: the test workers share
    the run's temporary root, and the first to come makes it."""
    root = factory.getbasetemp().parent
    folder = root / name
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".made").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".made").touch()
    return folder


def _fill_house(folder: Path) -> None:
    declared = [Requirement(r) for r in distribution("ctx-memory").requires or ()]
    tools = [Requirement("setuptools"), Requirement("pip")]
    for dist in _closure([*declared, *tools]):
        if dist.metadata["Name"] != "ctx-memory":
            _repack(dist, folder)


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The local folder of wheels every installer here reads, and no index."""
    return _made_once(tmp_path_factory, "house", _fill_house)


def _sources(out: Path) -> Path:
    """A copy of what the package is built from (no .venv, no build/)."""
    src = out / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(ROOT / name, src / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, src / name)
    return src


def _env(home: Path) -> dict[str, str]:
    """A user's environment: their own HOME, nothing from this checkout's
    environment on PATH, no installer configuration of this machine."""
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != VENV_BIN
    )
    keep = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    return keep | {
        "PATH": path,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "CTX_HUB_AUTOSTART": "0",
        "PIP_CONFIG_FILE": os.devnull,
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
    }


def _offline(house: Path) -> list[str]:
    return ["--offline", "--no-index", "--find-links", str(house)]


def _run(args: list[str], env: dict[str, str], **kwargs: object) -> str:
    done = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=300, **kwargs
    )
    assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


def _first_minute(ctx: Path, tmp_path: Path) -> None:
    """What a new user does first, from the installed ``ctx``."""
    home = tmp_path / "user"
    project = tmp_path / "api"
    home.mkdir(exist_ok=True)
    project.mkdir()
    (project / "CLAUDE.md").write_text("# Deploys\nDeploys go out on Fridays.\n")
    env = _env(home)

    def run(*args: str, stdin: str | None = None) -> str:
        return _run([str(ctx), *args], env, cwd=project, input=stdin)

    assert run("--version").startswith("ctx, version ")
    assert "Imported CLAUDE.md into pinned/claude-md" in run("init", "--import")
    run("remember", "The staging database is reset every Monday.")
    assert "every Monday" in run("recall", "when is staging reset?")
    hook = {"session_id": "s-1", "cwd": str(project), "source": "startup"}
    answer = json.loads(run("hook", "session-start", stdin=json.dumps(hook)))
    assert "Fridays" in answer["hookSpecificOutput"]["additionalContext"]


def _build_wheel(out: Path) -> None:
    src = _sources(out)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index"]
    wheels = ["--no-build-isolation", "-q", "-w", str(out), "."]
    _run([*build, *wheels], _env(out / "home"), cwd=src)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    (built,) = _made_once(tmp_path_factory, "wheel", _build_wheel).glob("*.whl")
    return built


@pytest.fixture(scope="module")
def fresh(wheel: Path, house: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment holding the wheel and what it declares."""
    out = tmp_path_factory.mktemp("fresh")
    env = _env(out / "home")
    venv = out / "venv"
    _run([UV, "venv", "--python", BASE_PYTHON, str(venv)], env)
    python = str(venv / "bin" / "python")
    _run([UV, "pip", "install", "--python", python, *_offline(house), str(wheel)], env)
    return venv


def test_the_wheel_imports_every_module_with_only_what_it_declares(fresh, tmp_path):
    code = (
        "import importlib, pkgutil, sys, ctx\n"
        "walk = pkgutil.walk_packages(ctx.__path__, 'ctx.')\n"
        "names = [m.name for m in walk if not m.name.endswith('__main__')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        f"for tool in {DEV_TOOLS!r}:\n"
        "    try:\n"
        "        importlib.import_module(tool)\n"
        "    except ImportError:\n"
        "        continue\n"
        "    sys.exit(f'{tool} is importable')\n"
        "print(len(names), ctx.__path__[0])\n"
    )
    env = _env(tmp_path)
    count, where = _run([str(fresh / "bin" / "python"), "-c", code], env).split()
    assert int(count) > 200
    assert where.startswith(str(fresh))  # ctx from the wheel, not this checkout


def test_the_wheel_alone_runs_the_first_minute(fresh, tmp_path):
    _first_minute(fresh / "bin" / "ctx", tmp_path)
    version = _run([str(fresh / "bin" / "ctx-memory"), "--version"], _env(tmp_path))
    assert version.startswith("ctx, version ")


def test_uv_tool_install_of_a_checkout_and_of_its_git_url(house, tmp_path):
    src = _sources(tmp_path)
    env = _env(tmp_path / "user") | {
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
    }
    install = [UV, "tool", "install", "--python", BASE_PYTHON, *_offline(house)]
    _run([*install, str(src)], env)
    _first_minute(tmp_path / "bin" / "ctx", tmp_path)

    git = [GIT, "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(src)]
    _run([*git, "init", "-q"], env)
    _run([*git, "add", "."], env)
    _run([*git, "commit", "-q", "-m", "ctx"], env)
    _run([*install, "--force", f"git+file://{src}"], env)
    listed = _run([UV, "tool", "list", "--show-paths"], env)
    assert "ctx-memory v0.1.0" in listed
    version = _run([str(tmp_path / "bin" / "ctx-memory"), "--version"], env)
    assert version.startswith("ctx, version ")


def test_pipx_install_of_a_checkout(house, tmp_path):
    src = _sources(tmp_path)
    env = _env(tmp_path / "user") | {
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    pip_args = f"--no-index --find-links {house} --no-compile"
    pipx = [sys.executable, "-m", "pipx", "install", "--backend", "pip"]
    _run([*pipx, "--pip-args", pip_args, "--python", BASE_PYTHON, str(src)], env)
    _first_minute(tmp_path / "bin" / "ctx", tmp_path)


@pytest.mark.anyio
async def test_uvx_runs_the_registry_entry_as_an_mcp_server(wheel, house, tmp_path):
    env = _env(tmp_path / "user") | {"UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    uvx = [UV, "tool", "run", "--python", BASE_PYTHON, *_offline(house)]
    entry = [*uvx, "--from", str(wheel), "ctx-memory"]
    _run([*entry, "init", str(tmp_path)], env)
    params = StdioServerParameters(
        command=entry[0],
        args=[*entry[1:], "mcp", "--store", str(tmp_path / ".ctx")],
        env=env,
    )
    async with Client(params) as client:
        wrote = await client.call_tool("remember", {"text": "Builds run on Linux."})
        assert not wrote.is_error, wrote.content
        assert wrote.structured_content["id"]
        found = await client.call_tool("recall", {"query": "what do builds run on?"})
        assert "Linux" in json.dumps(found.structured_content)
