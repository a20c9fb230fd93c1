from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctx.porcelain.main import cli


class Ctx:
    """Runs `ctx` against one store folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | bytes | None = None, code: int = 0):
        result = self.runner.invoke(
            cli,
            ["--store", str(self.root / ".ctx"), *args],
            input=input,
            catch_exceptions=False,
        )
        assert result.exit_code == code, (
            result.exit_code,
            result.stdout,
            result.stderr,
        )
        return result

    def json(self, *args: str):
        return json.loads(self(*args, "--json").stdout)

    def files(self) -> dict[str, bytes]:
        """Every file of the store but cache/, which reads may warm (it is
        derived and disposable: docs/storage.md)."""
        store = self.root / ".ctx"
        return {
            str(p.relative_to(store)): p.read_bytes()
            for p in sorted(store.rglob("*"))
            if p.is_file() and p.relative_to(store).parts[0] != "cache"
        }


@pytest.fixture
def ctx(tmp_path: Path) -> Ctx:
    c = Ctx(tmp_path)
    c("init", str(tmp_path))
    return c


@pytest.fixture
def hashing_ctx(ctx: Ctx) -> Ctx:
    """A store whose config picks the hashing embedder (fast, no model)."""
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write('\n[embedder]\nkind = "hashing"\n')
    return ctx
