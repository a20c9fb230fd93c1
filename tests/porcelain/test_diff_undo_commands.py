"""diff ranges, branch -d/-D, op log and undo N (issue 16, "Diff, branches and
undo as git users expect"): wiring and rendering."""

import re


def _split(ctx):
    mid = ctx("remember", "Logs use local time", "--title", "Logs").stdout.strip()
    ctx("branch", "agent")
    new = ctx("remember", "Deploys on Fridays", "--branch", "agent").stdout.strip()
    ctx("edit", mid, "--body", "Logs use UTC")
    return mid, new


def test_three_dot_diff_leaves_out_mains_own_edits(ctx):
    mid, new = _split(ctx)
    both = ctx("diff", "main", "agent").stdout
    assert f"~ {mid}  fact  Logs  [body]" in both  # main's edit, shown reversed
    since = ctx("diff", "main...agent").stdout
    lines = since.splitlines()
    assert re.fullmatch(r"Since the merge base [0-9a-f]{10}:", lines[0])
    assert lines[1].startswith(f"+ {new}  fact  Deploys on Fridays")
    assert mid not in since
    assert lines[-1] == "1 added, 0 changed, 0 removed (1 memory); 0 link changes"
    assert ctx("diff", "main..agent").stdout == both
    assert ctx.json("diff", "main...agent")["from_merge_base"] is True


def test_diff_shows_title_and_tag_changes(ctx):
    mid = ctx("remember", "Port is 8080", "--title", "Port", "--tag", "x:a").stdout
    mid = mid.strip()
    ctx("branch", "agent")
    ctx("edit", mid, "--title", "HTTP port", "--branch", "agent")
    ctx("tag", mid, "x:b", "--branch", "agent")
    out = ctx("diff", "main", "agent").stdout.splitlines()
    assert out[0] == f"~ {mid}  fact  HTTP port  [title, tags]"
    assert out[1] == "    title: Port -> HTTP port"
    assert out[2] == "    tags: x:a -> x:a, x:b"


def test_branch_d_refuses_unmerged_work_and_tells_how_to_restore(ctx):
    ctx("branch", "exp")
    ctx("remember", "only on exp", "--branch", "exp")
    refused = ctx("branch", "-d", "exp", code=5)
    assert refused.stdout == ""
    assert refused.stderr == (
        "Error: Branch 'exp' has work not merged into any branch.\n"
        "Hint: `ctx merge exp` keeps it; `ctx branch -D exp` deletes it anyway.\n"
    )
    tip = ctx.json("branches")[0]["tip"]
    out = ctx("branch", "-D", "exp").stdout
    assert out == (
        f"Deleted branch exp (was {tip[:10]}); "
        f"`ctx branch exp {tip[:10]}` brings it back.\n"
    )
    restore = re.search(r"`ctx (branch exp [0-9a-f]{10})`", out)
    assert restore
    ctx(*restore.group(1).split())
    assert {b["name"]: b["tip"] for b in ctx.json("branches")}["exp"] == tip


def test_op_log_lists_operations_newest_first(ctx):
    mid = ctx("remember", "v1", "--agent", "alice").stdout.strip()
    ctx("branch", "exp")
    ctx("edit", mid, "--body", "v2", "--agent", "bob")
    lines = ctx("op", "log").stdout.splitlines()
    # The reflog keeps whole seconds: moves of two branches within one second
    # are listed by branch name (tests/engine/test_oplog.py checks the order).
    by_id = {line.split()[0]: line for line in lines}
    assert [i for i in by_id if i.startswith("main")] == ["main@3", "main@2", "main@1"]
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    assert re.fullmatch(
        rf"main@3  {stamp}  [0-9a-f]{{10}} -> [0-9a-f]{{10}}  ctx refine: Edit "
        rf"{mid}  bob",
        by_id["main@3"],
    ), lines
    assert re.fullmatch(
        rf"exp@1   {stamp}  {'-' * 10} -> [0-9a-f]{{10}}  "
        r"ctx branch: created from main  -",
        by_id["exp@1"],
    ), lines
    ops = ctx.json("op", "log", "--branch", "exp")
    assert [op["id"] for op in ops] == ["exp@1"]
    assert ctx("op", "log", "-n", "1").stdout.splitlines() == lines[:1]


def test_second_undo_says_redid(ctx):
    mid = ctx("remember", "v1").stdout.strip()
    ctx("edit", mid, "--body", "v2")
    first = ctx("undo").stdout
    assert f"(undid: ctx refine: Edit {mid})." in first
    second = ctx("undo").stdout
    assert re.fullmatch(
        rf"Moved main from [0-9a-f]{{10}} forward to [0-9a-f]{{10}} "
        rf"\(redid: ctx refine: Edit {mid}\)\.\n",
        second,
    ), second
    assert "undid" not in second
    assert ctx.json("show", mid)["memory"]["body"] == "v2"


def test_undo_n_and_undo_to(ctx):
    for text in ("a", "b", "c"):
        ctx("remember", text)
    out = ctx("undo", "2").stdout
    assert re.fullmatch(
        r"Moved main from [0-9a-f]{10} back to [0-9a-f]{10} "
        r"\(undid 2 operations, to main@2\)\.\n",
        out,
    ), out
    assert len(ctx.json("ls")) == 1
    result = ctx.json("undo", "--to", "main@4")
    assert (result["steps"], result["redo"]) == (1, True)
    assert len(ctx.json("ls")) == 3
    refused = ctx("undo", "--to", "nope", code=4)
    assert refused.stderr.startswith("Error: 'nope' is not an operation id.\n")


def test_diff_as_a_review_summary_in_markdown(ctx):
    # issue 34: what a pull request of ctx/agent/claude into ctx/main carries.
    gone = ctx("remember", "A piped note", "--title", "Old | note").stdout.strip()
    kept = ctx("remember", "Logs use local time", "--title", "Logs").stdout.strip()
    ctx("branch", "agent/claude")
    new = ctx(
        "remember",
        "Deploys on Fridays",
        "--kind",
        "decision",
        "--agent",
        "claude",
        "--branch",
        "agent/claude",
    ).stdout.strip()
    ctx(
        "edit",
        kept,
        "--body",
        "Logs use ```UTC```",
        "--agent",
        "claude",
        "--branch",
        "agent/claude",
    )
    ctx(
        "forget",
        gone,
        "--reason",
        "stale",
        "--agent",
        "reviewer",
        "--branch",
        "agent/claude",
    )
    ctx("edit", kept, "--body", "Logs use UTC, main's own edit")
    out = ctx("diff", "main...agent/claude", "--format", "markdown").stdout
    base = ctx.json("diff", "main...agent/claude")["base"]
    tip = {b["name"]: b["tip"] for b in ctx.json("branches")}["agent/claude"]
    assert out == (
        "## Memory changes: `main...agent/claude`\n"
        "\n"
        "1 added, 1 changed, 1 removed (3 memories); 0 link changes, since the "
        f"merge base `{base[:10]}` to `{tip[:10]}`.\n"
        "\n"
        "### Added (1)\n"
        "\n"
        "| memory | kind | title | agents |\n"
        "| --- | --- | --- | --- |\n"
        f"| `{new}` | decision | Deploys on Fridays | claude |\n"
        "\n"
        f"<details><summary><code>{new}</code> Deploys on Fridays: body (1 line)"
        "</summary>\n"
        "\n"
        "```text\n"
        "Deploys on Fridays\n"
        "```\n"
        "\n"
        "</details>\n"
        "\n"
        "### Changed (1)\n"
        "\n"
        "| memory | kind | title | changes | agents |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"| `{kept}` | fact | Logs | body: 1 line added, 1 removed (diff below) "
        "| claude |\n"
        "\n"
        f"<details><summary><code>{kept}</code> Logs: body</summary>\n"
        "\n"
        "````diff\n"
        "@@ -1 +1 @@\n"
        "-Logs use local time\n"
        "+Logs use ```UTC```\n"
        "````\n"
        "\n"
        "</details>\n"
        "\n"
        "### Removed (1)\n"
        "\n"
        "| memory | kind | title | agents |\n"
        "| --- | --- | --- | --- |\n"
        f"| `{gone}` | fact | Old \\| note | reviewer |\n"
    )
