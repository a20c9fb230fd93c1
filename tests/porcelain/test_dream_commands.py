"""ctx dream: run, status, review, accept, reject, merge (wiring and text)."""

from __future__ import annotations

from ctx import engine


def _remember(ctx, text, when):
    return ctx("remember", text, "--when", when).stdout.strip()


def test_the_whole_round_from_run_to_undo(hashing_ctx):
    ctx = hashing_ctx
    old = _remember(ctx, "The build cache lives in S3", "3 days ago")
    new = _remember(ctx, "the build cache lives in s3.", "yesterday")
    main = ctx("log", "--json").stdout
    out = ctx("dream", "run", "--once").stdout
    assert "Examined 2 memories of main" in out
    assert "1 proposal on dream/main (1 duplicate)." in out
    assert ctx("log", "--json").stdout == main  # main untouched
    views = ctx.json("dream", "review")
    [view] = views
    pid = view["proposal"]["id"]
    assert view["changes"] == [f"+ link {new} SUPERSEDES {old}"]
    text = ctx("dream", "review").stdout
    assert f"{pid}  duplicate  proposed  confidence 1" in text
    assert "why: the same text" in text
    status = ctx("dream", "status").stdout
    assert "proposals:  1 proposed" in status
    assert "last cycle: " in status
    assert ctx("dream", "accept", pid[:6]).stdout.startswith("Accepted 1 proposal")
    merged = ctx("dream", "merge").stdout
    assert "1 proposal merged into main." in merged
    assert "`ctx undo` takes the merge back." in merged
    assert old not in ctx("ls").stdout  # superseded: hidden
    ctx("undo")
    assert old in ctx("ls").stdout
    assert ctx.json("dream", "review", "--status", "merged")[0]["proposal"]["id"] == pid


def test_reject_keeps_the_reason_and_the_proposal_is_not_made_again(hashing_ctx):
    ctx = hashing_ctx
    _remember(ctx, "Tea at four", "3 days ago")
    _remember(ctx, "tea at four.", "yesterday")
    ctx("dream", "run", "--once")
    [view] = ctx.json("dream", "review")
    pid = view["proposal"]["id"]
    out = ctx("dream", "reject", pid, "--reason", "two different teams")
    assert out.stdout == f"Rejected 1 proposal: {pid}.\n"
    [rejected] = ctx.json("dream", "review", "--status", "rejected")
    assert rejected["proposal"]["note"] == "two different teams"


def test_bad_input_is_one_error_line_and_changes_nothing(hashing_ctx):
    ctx = hashing_ctx
    _remember(ctx, "Tea at four", "3 days ago")
    before = ctx.files()
    r = ctx("dream", "accept", code=4)
    assert r.stderr == (
        "Error: Give proposal ids or --all, not both or neither.\n"
        "Hint: `ctx dream review` lists the waiting proposals.\n"
    )
    r = ctx("dream", "run", "--once", "--branch", "dream/main", code=4)
    assert r.stderr.startswith("Error: 'dream/main' is one of Dream's own branches.")
    r = ctx("dream", "reject", "abc123", code=3)
    assert r.stderr == (
        "Error: No proposal 'abc123'.\nHint: `ctx dream review` lists them.\n"
    )
    r = ctx("dream", "run", "--once", "--budget", "0", code=2)
    assert ctx.files() == before


def test_nothing_to_merge_says_so(hashing_ctx):
    out = hashing_ctx("dream", "merge").stdout
    assert out.startswith("Nothing accepted to merge.")
    assert engine.dream_branch("main") == "dream/main"
