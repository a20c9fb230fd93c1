"""ctx dream: run, status, review, accept, reject, merge (wiring and text)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ctx import engine
from ctx.engine import Draft, Intent, Store


def _remember(ctx, text, when):
    return ctx("remember", text, "--when", when).stdout.strip()


def _written_long_ago(ctx, *texts, days=400):
    """Remembers ``texts`` as written ``days`` ago (commits of then)."""
    then = datetime.now(UTC) - timedelta(days=days)
    store = Store.open(ctx.root / ".ctx", clock=lambda: then)
    try:
        who = Intent(agent="tester", intent="observe")
        return [
            engine.remember(store, Draft(text=t, when=then), who).ids[0] for t in texts
        ]
    finally:
        store.close()


def test_the_whole_round_from_run_to_undo(hashing_ctx):
    ctx = hashing_ctx
    old = _remember(ctx, "The build cache lives in S3", "3 days ago")
    new = _remember(ctx, "the build cache lives in s3.", "yesterday")
    main = ctx("log", "--json").stdout
    out = ctx("dream", "run", "--once").stdout
    assert "Examined 2 memories of main" in out
    assert "1 proposal on dream/main (1 duplicate)." in out
    assert out.endswith("Review them with `ctx dream review`.\n")
    assert ctx("log", "--json").stdout == main  # main untouched
    views = ctx.json("dream", "review")["proposals"]
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
    assert (
        ctx.json("dream", "review", "--status", "merged")["proposals"][0]["proposal"][
            "id"
        ]
        == pid
    )
    # The review says the merge was taken back, and how to merge it again.
    [back] = ctx.json("dream", "review")["proposals"]
    assert (back["proposal"]["id"], back["undone"]) == (pid, True)
    assert back["hides"] == [old]
    text = ctx("dream", "review").stdout
    assert f"its merge was undone: `ctx dream accept {pid}` merges it again" in text
    # So does the status (it counted the proposal merged).
    assert "proposals:  1 undone" in ctx("dream", "status").stdout
    ctx("dream", "accept", pid)
    ctx("dream", "merge")
    assert old not in ctx("ls").stdout


def test_reject_keeps_the_reason_and_the_proposal_is_not_made_again(hashing_ctx):
    ctx = hashing_ctx
    _remember(ctx, "Tea at four", "3 days ago")
    _remember(ctx, "tea at four.", "yesterday")
    ctx("dream", "run", "--once")
    [view] = ctx.json("dream", "review")["proposals"]
    pid = view["proposal"]["id"]
    out = ctx("dream", "reject", pid, "--reason", "two different teams")
    assert out.stdout == f"Rejected 1 proposal: {pid}.\n"
    [rejected] = ctx.json("dream", "review", "--status", "rejected")["proposals"]
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


def test_merge_asks_for_yes_when_it_hides_more_than_three_memories(hashing_ctx):
    ctx = hashing_ctx
    for n in range(4):
        _remember(ctx, f"Queue {n} drains every minute", "3 days ago")
        _remember(ctx, f"queue {n} drains every minute.", "yesterday")
    ctx("dream", "run", "--once")
    text = ctx("dream", "review").stdout
    assert text.endswith(
        "Merging these 4 proposals would hide 4 memories from recall; "
        "`ctx dream merge` asks for --yes past 3.\n"
    )
    review = ctx.json("dream", "review")
    assert (len(review["hides"]), review["merge_asks_yes"]) == (4, True)
    assert review["hides"] == [v["hides"][0] for v in review["proposals"]]
    ctx("dream", "accept", "--all")
    # Nothing left to review: where the accepted ones are, and none stale.
    assert ctx("dream", "review").stdout == (
        "No proposals waiting. `ctx dream run --once` looks for some; "
        "`ctx dream review --status accepted` shows those accepted, for "
        "`ctx dream merge`.\n"
    )
    assert ctx("dream", "review", "--status", "stale").stdout == "No stale proposals.\n"
    before = ctx.files()
    r = ctx("dream", "merge", code=4)
    assert r.stderr == (
        "Error: The merge would hide 4 memories from recall.\n"
        "Hint: `ctx dream review --status accepted` shows them; confirm with --yes "
        '("yes": true through MCP and HTTP).\n'
    )
    assert ctx.files() == before
    merged = ctx("dream", "merge", "--yes").stdout
    assert "4 proposals merged into main." in merged
    assert "  4 memories hidden from recall (--all)" in merged


def test_a_tier_proposal_is_reviewed_memory_by_memory(hashing_ctx):
    ctx = hashing_ctx
    ids = _written_long_ago(
        ctx, "Hackathon idea kites", "Hackathon idea llamas", "Hackathon idea yaks"
    )
    ctx("dream", "run", "--once")
    [view] = ctx.json("dream", "review")["proposals"]
    pid = view["proposal"]["id"]
    assert view["proposal"]["kind"] == "tier"
    out = ctx("dream", "reject", pid, "--memory", ids[0]).stdout
    assert out == (
        f"Declined 1 memory of proposal {pid}; it waits on for its other 2 memories.\n"
    )
    [view] = ctx.json("dream", "review")["proposals"]
    assert view["proposal"]["declined"] == [ids[0]]
    assert f"~ {ids[0]} tags +tier:off-context  (declined)" in view["changes"]
    r = ctx("dream", "accept", "--all", "--memory", ids[1], code=4)
    assert r.stderr.startswith(
        "Error: Memories are reviewed inside one proposal that changes tags."
    )
    result = ctx.json("dream", "accept", pid, "--memory", ids[1])
    assert (result["memories"], result["others"]) == ([ids[1]], 2)
    [view] = ctx.json("dream", "review", "--status", "accepted")["proposals"]
    assert set(view["proposal"]["declined"]) == {ids[0], ids[2]}
    # Accepting another adds it: the one accepted before stays accepted.
    added = ctx("dream", "accept", pid, "--memory", ids[2]).stdout
    assert added.startswith(
        f"Accepted proposal {pid} for 1 memory; its other 1 memory declined.\n"
    )
    [view] = ctx.json("dream", "review", "--status", "accepted")["proposals"]
    assert view["proposal"]["declined"] == [ids[0]]
    # Declining one of an accepted proposal says it stays accepted.
    out = ctx("dream", "reject", pid, "--memory", ids[2]).stdout
    assert out == (
        f"Declined 1 memory of proposal {pid}; it stays accepted for its other "
        "1 memory.\n"
    )


def test_a_run_on_a_named_branch_says_how_to_review_it(hashing_ctx):
    ctx = hashing_ctx
    ctx("branch", "agent/x")
    for text in ("The build cache lives in S3", "the build cache lives in s3."):
        ctx("remember", text, "--branch", "agent/x")
    out = ctx("dream", "run", "--once", "--branch", "agent/x").stdout
    assert out.endswith("Review them with `ctx dream review --branch agent/x`.\n")
