import subprocess
import sys
import types

import pytest

import ctx.engine


def test_engine_exports_are_sorted_and_real():
    names = ctx.engine.__all__
    assert names == sorted(
        names, key=lambda n: (not n.isupper(), not n[0].isupper(), n)
    )
    for name in names:
        value = getattr(ctx.engine, name)
        assert not isinstance(value, types.ModuleType), name
        home = getattr(value, "__module__", None) or "ctx.engine"
        assert home.startswith(("ctx.engine", "typing", "collections.abc")), (
            name,
            home,
        )


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        ctx.engine.no_such_name  # noqa: B018


def test_the_cli_does_not_import_the_merge_machinery():
    code = (
        "import sys; import ctx.porcelain.main; "
        "print(sorted(m for m in sys.modules if m in "
        "('ctx.engine.threeway', 'dulwich.merge', 'dulwich.gc', 'ctx.engine.annotate')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
