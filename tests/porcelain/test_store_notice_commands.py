"""Which store a command used: the user store named, and `ctx init`'s advice
(issue 16, "Ids, stores, dates")."""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctx.porcelain.main import cli

NOTICE = (
    "Notice: {verb} the user store ~/.local/share/ctx (no .ctx/ here or above; "
    "`ctx init` makes one).\n"
)


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """Runs `ctx` in a folder with no .ctx/ above it: the user store."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    runner = CliRunner()

    def run(*args: str, code: int = 0):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result

    return run


def _user_store() -> str:
    return str(Path(os.environ["XDG_DATA_HOME"]) / "ctx")


def test_a_write_in_the_user_store_says_so(elsewhere):
    out = elsewhere("remember", "Queue is Postgres")
    assert out.stderr == NOTICE.format(verb="wrote to")
    mid = out.stdout.strip()
    assert elsewhere("edit", mid, "--title", "Q").stderr == NOTICE.format(
        verb="wrote to"
    )


def test_a_recall_in_the_user_store_says_so(elsewhere):
    elsewhere("remember", "Queue is Postgres")
    assert elsewhere("recall", "queue").stderr == NOTICE.format(verb="recalled from")
    assert elsewhere("search", "queue").stderr == NOTICE.format(verb="searched")


def test_golden_questions_in_the_user_store_say_so(elsewhere, tmp_path):
    # In CI, a clone that failed would otherwise read as a recall regression.
    golden = tmp_path / "golden.toml"
    golden.write_text('[[question]]\nask = "Which database?"\nwords = ["postgres"]\n')
    out = elsewhere("test", str(golden), code=1)
    assert out.stdout.startswith("MISS  Which database?")
    assert out.stderr == NOTICE.format(verb="tested")


def test_reads_and_failures_say_nothing(elsewhere):
    assert "Notice" not in elsewhere("ls").stderr
    out = elsewhere("edit", "ZZZZZZZZ", "--title", "x", code=3)
    assert "Notice" not in out.stderr


def test_json_names_the_store_instead(elsewhere):
    out = elsewhere("remember", "Queue is Postgres", "--json")
    assert out.stderr == ""
    assert json.loads(out.stdout)["store"] == _user_store()
    recalled = elsewhere("recall", "queue", "--json")
    assert recalled.stderr == ""
    assert json.loads(recalled.stdout)["store"] == _user_store()


def test_a_project_store_is_not_announced(ctx):
    assert ctx("remember", "Queue is Postgres").stderr == ""
    assert ctx("recall", "queue").stderr == ""
    assert ctx.json("remember", "Port is 8080")["store"] == str(ctx.root / ".ctx")


def test_init_says_to_leave_the_store_out_of_commits(tmp_path):
    out = CliRunner().invoke(cli, ["init", str(tmp_path)], catch_exceptions=False)
    store = tmp_path / ".ctx"
    assert out.stdout == (
        f"Created an empty store at {store} (branch main).\n"
        "Leave .ctx/ out of the project's commits (add `.ctx/` to its .gitignore): "
        "it is\na git repository of its own, which ctx commits to; share memories "
        "by pushing\nits branches (`ctx remote add origin --with-code` puts them on "
        "the code's own\nremote, under ctx/). Its own .gitignore keeps the derived "
        "index and private\nstate out of any commit.\n"
    )
    ignored = (store / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert [line for line in ignored if not line.startswith("#")] == [
        "cache/",
        "index/",
        "private/",
        "lock",
        "git.new-*/",
        "*.pending",
    ]
    # Everything else the store holds is what a commit of .ctx/ would carry.
    kept = {p.name for p in store.iterdir()} - {"cache", "index", "private", "lock"}
    assert kept == {"git", "config.toml", ".gitignore"}


def test_init_of_an_existing_store_adds_the_gitignore(ctx, tmp_path):
    (tmp_path / ".ctx" / ".gitignore").unlink()
    ctx("init", str(tmp_path))
    assert (tmp_path / ".ctx" / ".gitignore").exists()


def test_with_no_store_status_and_log_show_no_commit(elsewhere):
    # Issue 32: they showed the commit of an in-memory stand-in, a new one
    # at each run, which the user store never has.
    status = elsewhere("status").stdout.splitlines()
    assert status[0] == "store:     none yet (the user store is made on first write)"
    assert status[2] == "head:      none"
    assert elsewhere("log").stdout == (
        "No commits yet: the user store is made on first write.\n"
    )
    assert json.loads(elsewhere("log", "--json").stdout) == []
    # Nor in --json, nor as a branch's tip (each run made up another).
    assert json.loads(elsewhere("status", "--json").stdout)["head"] is None
    assert json.loads(elsewhere("branches", "--json").stdout) == []
    assert elsewhere("branches").stdout == (
        "No branches yet: the user store is made on first write.\n"
    )
    assert not Path(_user_store()).exists()


def test_a_dream_cycle_needs_a_store_and_makes_none(elsewhere):
    # Dream's typed call checks the branch it writes, which opens the store
    # for writing: it must refuse before, as Dream itself does.
    result = elsewhere("dream", "run", "--once", code=4)
    assert result.stderr.splitlines()[0] == "Error: Dream needs a store on disk."
    assert not Path(_user_store()).exists()
