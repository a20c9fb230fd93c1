"""Text output shows what a terminal would obey (issue 12): control and bidi
characters in stored text are printed as escapes, while --json and the store
keep them as given. And an empty recall says why it is empty."""

from __future__ import annotations

import json

import pytest

from ctx.porcelain.output import visible

# ESC ] 0 ; ... BEL retitles the window; ESC c resets the terminal; CSI as
# one C1 byte; CR overwrites the line; RLO and LRI reorder what follows.
TITLE = "Deploy \x1b]0;owned\x07 notes \u202eevil"
BODY = "ok \x1bc \x9b2J \rgone \u2066x\u2069 end\nsecond\tline"
TAG = "team:ops\u202e"
REASON = "because \x1b]8;;http://x\x07link"
RAW = ["\x1b", "\x07", "\x9b", "\r", "\u202e", "\u2066", "\u2069"]


def test_visible_escapes_controls_and_bidi_but_keeps_layout():
    assert visible("a\x1b[31mb\x07") == "a\\x1b[31mb\\x07"
    assert visible("\x00\x7f\x85\x9f") == "\\x00\\x7f\\x85\\x9f"
    assert visible("\u202a\u202e\u2066\u2069\u200f\u061c") == (
        "\\u202a\\u202e\\u2066\\u2069\\u200f\\u061c"
    )
    assert visible("tab\tand\nnewline, café, 日本, emoji 🙂") == (
        "tab\tand\nnewline, café, 日本, emoji 🙂"
    )


@pytest.fixture
def hctx(ctx):
    """A store whose config picks the hashing embedder (fast, no model)."""
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write('\n[embedder]\nkind = "hashing"\n')
    return ctx


@pytest.fixture
def hostile(hctx):
    ctx = hctx
    memory_id = ctx(
        "remember", BODY, "--title", TITLE, "--tag", TAG, "--reason", REASON
    ).stdout.strip()
    return ctx, memory_id


def _assert_shown(out: str) -> None:
    for char in RAW:
        assert char not in out, (char, out)


def test_show_prints_escapes_and_json_keeps_the_text(hostile):
    ctx, memory_id = hostile
    out = ctx("show", memory_id).stdout
    _assert_shown(out)
    assert "title:    Deploy \\x1b]0;owned\\x07 notes \\u202eevil\n" in out
    assert "tags:     team:ops\\u202e\n" in out
    assert out.endswith(
        "ok \\x1bc \\x9b2J \\x0dgone \\u2066x\\u2069 end\nsecond\tline\n"
    )
    memory = json.loads(ctx("show", memory_id, "--json").stdout)["memory"]
    assert (memory["title"], memory["body"], memory["tags"]) == (TITLE, BODY, [TAG])


@pytest.mark.parametrize(
    "args",
    [
        ["ls"],
        ["log"],
        ["recall", "deploy notes"],
        ["recall", "deploy notes", "--format", "markdown"],
        ["search", "deploy"],
        ["tags"],
        ["status"],
        ["query", "kind:fact"],
    ],
    ids=" ".join,
)
def test_every_listing_prints_escapes(hostile, args):
    ctx, _ = hostile
    out = ctx(*args).stdout
    _assert_shown(out)
    assert "\\x1b" in out or "\\u202e" in out


def test_log_shows_the_reason_escaped(hostile):
    ctx, _ = hostile
    out = ctx("log").stdout
    assert "reason: because \\x1b]8;;http://x\\x07link" in out
    entry = json.loads(ctx("log", "--json").stdout)[0]
    assert entry["commit"]["intent"]["reason"] == REASON


def test_an_empty_recall_says_when_nothing_fit_the_budget(hctx):
    hctx("remember", "The queue runs on Postgres and retries three times")
    out = hctx("recall", "queue postgres", "--budget", "1").stdout
    assert out.splitlines()[0] == (
        "1 memory matches, but none fit the budget of 1 token; raise it with --budget."
    )
    data = hctx.json("recall", "queue postgres", "--budget", "1")
    assert (data["hits"], data["left_out"]) == ([], 1)
