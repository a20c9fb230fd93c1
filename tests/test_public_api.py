import importlib
import pkgutil
import subprocess
import sys
import types

import pytest

import ctx.engine
import ctx.hub
import ctx.hub.dream
import ctx.hub.retrieval.embedders
import ctx.porcelain.hooks
import ctx.porcelain.install

PACKAGES = [
    ctx.engine,
    ctx.hub,
    ctx.hub.retrieval.embedders,
    ctx.porcelain.hooks,
    ctx.porcelain.install,
]
PACKAGES.append(ctx.hub.dream)


def _submodules(package: types.ModuleType) -> list[str]:
    return [
        f"{package.__name__}.{info.name}"
        for info in pkgutil.iter_modules(package.__path__)
        if not info.ispkg
    ]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_exports_are_sorted_and_real(package):
    # Every submodule first: a function named like its module (merge in
    # merge.py) must still be the function once the module is loaded.
    for name in _submodules(package):
        importlib.import_module(name)
    names = package.__all__
    assert names == sorted(names)
    assert len(names) == len(set(names))
    for name in names:
        value = getattr(package, name)
        assert not isinstance(value, types.ModuleType), name
        home = getattr(value, "__module__", None) or package.__name__
        assert home.startswith((package.__name__, "typing", "collections.abc")), (
            name,
            home,
        )
    assert sorted(dir(package)) == names


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_unknown_names_raise_attribute_error(package):
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_the_cli_does_not_import_the_merge_machinery():
    code = (
        "import sys; import ctx.porcelain.main; "
        "print(sorted(m for m in sys.modules if m in "
        "('ctx.engine.merge', 'dulwich.merge', 'dulwich.gc', 'ctx.engine.blame')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_finding_the_store_outside_a_project_loads_no_transfer_machinery(tmp_path):
    # Looking for a linked worktree's main checkout, where no .ctx/ is above,
    # once loaded the code remotes and with them fetch, push and merge.
    code = (
        "import sys, pathlib; from ctx.hub.workspace import Workspace; "
        f"Workspace.locate(cwd=pathlib.Path({str(tmp_path)!r})); "
        "print(sorted(m for m in sys.modules if m in ('ctx.engine.transfer', "
        "'ctx.engine.merge', 'ctx.engine.code_remotes', 'dulwich.client')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_importing_ctx_changes_no_process_state():
    # Issue 11: importing the hub used to set OPENBLAS_NUM_THREADS for every
    # command; only an entry point may change the process's environment.
    code = (
        "import os, pkgutil, importlib; before = dict(os.environ); "
        "import ctx.engine, ctx.hub, ctx.porcelain; "
        "[importlib.import_module(m.name) for p in (ctx.engine, ctx.hub, ctx.porcelain) "
        "for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.') "
        "if not m.name.endswith('__main__')]; "
        "print(sorted(set(os.environ.items()) ^ set(before.items())))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
