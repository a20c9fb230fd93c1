"""`ctx lens`: the command that opens the lens; bad input stops before it."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from ctx.engine import NotAStoreError
from ctx.porcelain.main import cli


def test_an_unknown_branch_is_an_error_before_the_screen_is_taken(ctx):
    before = ctx.files()
    result = ctx("lens", "--branch", "nope", code=3)
    assert (
        result.stderr
        == "Error: No branch named 'nope'.\nHint: `ctx branches` lists them.\n"
    )
    assert result.stdout == ""
    result = ctx("lens", "--branch", "main~1", code=4)
    assert result.stderr.startswith("Error: 'main~1' is not a valid branch name.")
    assert ctx.files() == before


def test_no_store_is_an_error(tmp_path):
    result = CliRunner().invoke(cli, ["--store", str(tmp_path / "none"), "lens"])
    assert (result.exit_code, result.stdout) == (NotAStoreError.exit_code, "")
    assert result.stderr.startswith("Error: No store at ")


def test_no_store_found_and_no_user_store_is_an_error(tmp_path, monkeypatch):
    # It opened a user store made up in memory, with a first commit nobody
    # wrote, and nothing to say that the folder had no store.
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["lens"])
    assert (result.exit_code, result.stdout) == (NotAStoreError.exit_code, "")
    assert result.stderr.startswith("Error: No store here or above, and the user ")
    assert "`ctx init` makes one here" in result.stderr
    assert not any(tmp_path.iterdir())


def test_other_commands_do_not_import_textual():
    code = (
        "import sys; from ctx.porcelain.main import cli; "
        "cli(['--version'], standalone_mode=False); "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split()[-1] == "False"
