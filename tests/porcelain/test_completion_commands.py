"""ctx install completion bash|zsh|fish: click's own scripts, where each shell
loads them (issue 35)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import get_completion_class
from click.testing import CliRunner

from ctx.porcelain.main import cli

BIN = str(Path(sys.executable).parent)


def run(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


def _script(shell: str) -> str:
    kind = get_completion_class(shell)
    assert kind is not None
    return kind(cli, {}, "ctx", "_CTX_COMPLETE").source()


def test_dry_run_prints_the_script_and_writes_nothing():
    home = Path(os.environ["HOME"])
    for shell in ("bash", "zsh", "fish"):
        out = run("install", "completion", shell, "--dry-run").stdout
        assert out == _script(shell)
    assert "_CTX_COMPLETE=bash_complete" in _script("bash")
    assert not any(p.is_file() for p in home.rglob("*"))


def test_install_writes_where_each_shell_loads_it_and_uninstall_takes_it_out():
    home = Path(os.environ["HOME"])
    places = {
        "bash": Path(os.environ["XDG_DATA_HOME"]) / "bash-completion/completions/ctx",
        "zsh": home / ".zfunc" / "_ctx",
        "fish": Path(os.environ["XDG_CONFIG_HOME"]) / "fish/completions/ctx.fish",
    }
    for shell, path in places.items():
        out = run("install", "completion", shell).stdout
        assert out.startswith(f"created   {path}\n")
        assert path.read_text(encoding="utf-8") == _script(shell)
        assert run("install", "completion", shell).stdout.startswith(
            f"unchanged {path}\n"
        )
    assert "fpath=(~/.zfunc $fpath)" in run("install", "completion", "zsh").stdout
    places["bash"].write_text("# mine\n", encoding="utf-8")
    out = run("install", "completion", "bash").stdout
    assert out.startswith(
        f"changed   {places['bash']} (backup: {places['bash']}.ctx-backup)\n"
    )
    assert Path(f"{places['bash']}.ctx-backup").read_text() == "# mine\n"
    places["fish"].write_text("# edited\n", encoding="utf-8")
    kept = run("uninstall", "completion", "fish").stdout
    assert f"Note: {places['fish']} is not the script ctx wrote; it was kept." in kept
    assert places["fish"].exists()
    assert (
        run("uninstall", "completion", "zsh").stdout == f"removed   {places['zsh']}\n"
    )
    assert not places["zsh"].exists()


def test_a_shell_is_needed_for_completion_and_refused_for_a_host():
    err = run("install", "completion", code=2).stderr
    assert err.endswith("Error: Give the shell: completion bash, zsh or fish.\n")
    err = run("install", "claude", "bash", code=2).stderr
    assert err.endswith("Error: claude takes no shell; only completion does.\n")
    err = run("install", "completion", "tcsh", code=2).stderr
    assert "'tcsh' is not one of 'bash', 'zsh', 'fish'" in err


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_ctx_commands_through_the_installed_script():
    run("install", "completion", "bash")
    script = Path(os.environ["XDG_DATA_HOME"]) / "bash-completion/completions/ctx"
    shell = (
        f'source "{script}"; COMP_WORDS=(ctx rem); COMP_CWORD=1; '
        '_ctx_completion ctx; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", shell],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    assert out.stdout.split() == ["remember", "remote"]
