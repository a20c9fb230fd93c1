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
ids = ["{ids["db"][:8]}"]
words = ["postgres"]

[[question]]
ask = "blue-green deploys"
words = ["Fridays"]
k = 1
""",
    )
    out = ctx("test", str(path)).stdout.splitlines()
    assert out[0].startswith(f"ok    Which database do we use?  ({ids['db'][:8]} at ")
    assert out[1] == "ok    blue-green deploys"
    assert out[2] == "2 of 2 questions passed on main (100%; needed 100%)."


def test_a_question_that_misses_exits_one_and_says_what(facts, tmp_path):
    ctx, ids = facts
    ctx("forget", ids["cache"], "--reason", "moved to the wiki")
    path = _file(
        tmp_path,
        f"""
[[question]]
ask = "What is the CI cache key?"
ids = ["{ids["cache"]}"]
words = ["lock file", "nowhere-word"]

[[question]]
ask = "Which database do we use?"
words = ["postgres"]
""",
    )
    result = ctx("test", str(path), code=1)
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "MISS  What is the CI cache key?  (not in the first 5: "
        f"{ids['cache']}, 'lock file', 'nowhere-word')"
    )
    assert lines[-1] == "1 of 2 questions passed on main (50%; needed 100%)."
    assert result.stderr == ""
    ctx("test", str(path), "--min", "0.5")  # half is enough: exit 0
    report = json.loads(ctx("test", str(path), "--json", code=1).stdout)
    assert (report["passed"], report["total"], report["ok"]) == (1, 2, False)
    assert report["results"][0]["missing_ids"] == [ids["cache"]]


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
            "question 1 id '01' is shorter than 4.",
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
