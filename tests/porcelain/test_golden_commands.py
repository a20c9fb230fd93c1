"""ctx test FILE: golden questions a branch must still answer (issue 34)."""

from __future__ import annotations

import json

import pytest


def _file(tmp_path, text):
    path = tmp_path / "memory-tests.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def facts(hashing_ctx):
    ids = {}
    for key, body in {
        "db": "We use Postgres 16 for every service database.",
        "deploy": "Deploys go through the blue-green switch on Fridays.",
        "cache": "The CI cache key is the hash of the lock file.",
    }.items():
        ids[key] = hashing_ctx("remember", body).stdout.strip()
    return hashing_ctx, ids


def test_every_question_found_exits_zero(facts, tmp_path):
    ctx, ids = facts
    path = _file(
        tmp_path,
        f"""
k = 3

[[question]]
ask = "Which database do we use?"
ids = ["{ids["db"][-8:]}"]  # its end, as `ctx ls --abbrev` prints it
words = ["postgres"]

[[question]]
ask = "blue-green deploys"
words = ["Fridays"]
k = 1
""",
    )
    out = ctx("test", str(path)).stdout.splitlines()
    assert out[0].startswith(f"ok    Which database do we use?  ({ids['db'][-8:]} at ")
    assert out[1] == "ok    blue-green deploys"
    assert out[2] == "2 of 2 questions passed on main (100%; needed 100%)."


def test_a_question_that_misses_exits_one_and_says_what(facts, tmp_path):
    ctx, ids = facts
    path = _file(
        tmp_path,
        f"""
[[question]]
ask = "What is the CI cache key?"
ids = ["{ids["deploy"]}"]
words = ["lock file", "nowhere-word"]
k = 1

[[question]]
ask = "Which database do we use?"
words = ["postgres"]
""",
    )
    result = ctx("test", str(path), code=1)
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "MISS  What is the CI cache key?  (not in the first 1: "
        f"{ids['deploy']}, 'nowhere-word')"
    )
    assert lines[-1] == "1 of 2 questions passed on main (50%; needed 100%)."
    assert result.stderr == ""
    ctx("test", str(path), "--min", "0.5")  # half is enough: exit 0
    report = json.loads(ctx("test", str(path), "--json", code=1).stdout)
    assert (report["passed"], report["total"], report["ok"]) == (1, 2, False)
    assert report["results"][0]["missing_ids"] == [ids["deploy"]]
    assert report["results"][0]["absent_ids"] == []


def test_a_branch_is_tested_on_its_own(facts, tmp_path):
    ctx, ids = facts
    ctx("branch", "agent/claude")
    ctx("forget", ids["db"], "--reason", "wrong", "--branch", "agent/claude")
    path = _file(
        tmp_path,
        """
[[question]]
ask = "Which database do we use?"
words = ["postgres"]
""",
    )
    ctx("test", str(path))
    out = ctx("test", str(path), "--branch", "agent/claude", code=1).stdout
    assert out.endswith("0 of 1 questions passed on agent/claude (0%; needed 100%).\n")
    # A branch named is one, as for ctx search: not a revision, never none.
    err = ctx("test", str(path), "--branch", "nosuch", code=3).stderr
    assert err.startswith("Error: No branch named 'nosuch'.")
    err = ctx("test", str(path), "--branch", "no such", code=4).stderr
    assert err.startswith("Error: ")
    ctx("test", str(path), "--branch", "", code=4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("k = 3\n", "has no questions."),
        (
            "[[question]]\nwords = ['x']\n",
            "question 1 has no ask (the question's text).",
        ),
        ("[[question]]\nask = 'q'\n", "question 1 names no ids and no words to find."),
        (
            "[[question]]\nask = 'q'\nwords = ['x']\nk = 0\n",
            "question 1 k is not a whole number of hits, 1 or more.",
        ),
        (
            "[[question]]\nask = 'q'\nids = ['01']\n",
            "question 1: '01' is not a memory id: give its 26 characters, or at "
            "least 6 from its start or its end.",
        ),
        (
            "[[question]]\nask = 'q'\nids = ['not an id!']\n",
            "question 1: 'not an id!' is not a memory id",
        ),
        (
            "[[question]]\nask = 'q'\nids = ['01ARZ3NDEK', '01arz3ndek']\n",
            "question 1 names the id '01arz3ndek' twice.",
        ),
        (
            "[question]\nask = 'q'\nwords = ['x']\n",
            "the file has one [question] table: questions are an array of tables, "
            "each headed [[question]].",
        ),
        (
            "question = 'q'\n",
            "the file question is not an array of tables, [[question]].",
        ),
        (
            "[[question]]\nask = 'q'\nword = ['x']\n",
            "question 1 has an unknown key 'word'.",
        ),
        ("[[question]\n", "is not valid TOML"),
    ],
)
def test_a_bad_file_is_refused_with_exit_4(hashing_ctx, tmp_path, text, message):
    path = _file(tmp_path, text)
    before = hashing_ctx.files()
    err = hashing_ctx("test", str(path), code=4).stderr
    assert err.startswith(f"Error: {path}")
    assert message in err.splitlines()[0]
    assert hashing_ctx.files() == before


# Issue: `ctx test` matched ids by a bare prefix of the hit ids, missed
# lower-case ids and ids' ends, let CTX_BRANCH beat the file's branch, and
# exited 2 on a folder. Ids are now resolved as `ctx show` resolves them.


def test_an_id_is_taken_as_ctx_show_takes_it(facts, tmp_path):
    ctx, ids = facts
    db = ids["db"]
    path = _file(
        tmp_path,
        "".join(
            f'[[question]]\nask = "Which database do we use?"\nids = ["{given}"]\n'
            for given in (db[:10].lower(), db[-7:], db.lower())
        ),
    )
    out = ctx("test", str(path)).stdout.splitlines()
    for line, given in zip(out, (db[:10].lower(), db[-7:], db.lower()), strict=False):
        assert line.startswith("ok    Which database do we use?  (")
        assert f"({given} at " in line


def test_a_prefix_naming_several_memories_is_refused_with_exit_4(facts, tmp_path):
    ctx, ids = facts
    prefix = ids["db"][:6]  # made within seconds: all three start so
    path = _file(
        tmp_path,
        f'[[question]]\nask = "q"\nwords = ["x"]\n\n'
        f'[[question]]\nask = "Which database?"\nids = ["{prefix}"]\n',
    )
    out = ctx("test", str(path), code=4)
    listed = ", ".join(sorted(ids.values()))
    assert out.stdout == ""
    assert out.stderr == (
        f"Error: {path}: question 2: Id {prefix} is ambiguous: it names 3 "
        f"memories ({listed}).\nHint: Give more of its characters.\n"
    )


def test_an_id_of_no_memory_on_the_branch_fails_the_run(facts, tmp_path):
    ctx, ids = facts
    ctx("forget", ids["cache"], "--reason", "moved to the wiki")
    path = _file(
        tmp_path,
        f"""
[[question]]
ask = "What is the CI cache key?"
ids = ["{ids["cache"][-8:]}"]

[[question]]
ask = "Which database do we use?"
words = ["postgres"]
""",
    )
    result = ctx("test", str(path), "--min", "0.5", code=1)
    assert result.stdout.splitlines() == [
        "MISS  What is the CI cache key?  "
        f"(no such memory on main: {ids['cache'][-8:]})",
        "ok    Which database do we use?",
        "1 of 2 questions passed on main (50%; needed 50%).",
        "1 id names no memory on main: the run fails, whatever --min allows.",
    ]
    report = json.loads(ctx("test", str(path), "--json", code=1).stdout)
    assert report["ok"] is False
    assert report["results"][0]["absent_ids"] == [ids["cache"][-8:]]
    # One memory named by its start and its end is named twice.
    db = ids["db"]
    path.write_text(f'[[question]]\nask = "db"\nids = ["{db}", "{db[-8:]}"]\n')
    err = ctx("test", str(path), code=4).stderr
    assert err.startswith(
        f"Error: {path}: question 1: '{db[-8:]}' names the same memory as '{db}'."
    )


def test_the_files_branch_wins_over_ctx_branch(facts, tmp_path, monkeypatch):
    ctx, ids = facts
    ctx("branch", "other")
    ctx("forget", ids["db"], "--reason", "wrong", "--branch", "other")
    path = _file(
        tmp_path,
        """
branch = "other"

[[question]]
ask = "Which database do we use?"
words = ["postgres"]
""",
    )
    monkeypatch.setenv("CTX_BRANCH", "main")
    out = ctx("test", str(path), code=1).stdout
    assert out.endswith("0 of 1 questions passed on other (0%; needed 100%).\n")
    out = ctx("test", str(path), "--branch", "main").stdout
    assert out.endswith("1 of 1 questions passed on main (100%; needed 100%).\n")
    path.write_text(path.read_text().replace('branch = "other"', ""))
    monkeypatch.setenv("CTX_BRANCH", "other")
    out = ctx("test", str(path), code=1).stdout
    assert out.endswith("0 of 1 questions passed on other (0%; needed 100%).\n")


def test_a_folder_is_a_file_that_cannot_be_read(hashing_ctx, tmp_path):
    result = hashing_ctx("test", str(tmp_path), code=4)
    assert result.stderr == f"Error: Cannot read {tmp_path}: Is a directory.\n"
