"""Counts, orders and columns people read (issue 16, "Words and numbers")."""

from __future__ import annotations

import re

from ctx.porcelain.output import byte_size


def test_the_recall_footer_says_1_memory_and_an_80_budget(hashing_ctx):
    hashing_ctx("remember", "The queue runs on Postgres")
    out = hashing_ctx("recall", "queue postgres", "--budget", "80").stdout
    footer = out.splitlines()[-1]
    assert footer.startswith("-- 1 memory, 23 tokens of an 80 budget; ")
    assert "the whole live branch (main): 1 memory, 23 tokens (100.0%)" in footer


def test_messages_that_count_one_thing_say_it_in_the_singular(ctx, tmp_path):
    one = tmp_path / "one.jsonl"
    one.write_text('{"text": "Builds run on Linux"}\n', encoding="utf-8")
    assert ctx("import", str(one)).stdout.startswith("Imported 1 memory in ")
    assert ctx("fsck").stdout.endswith(" 2 commits, 1 memory: ok.\n")
    mid = ctx("remember", "Logs use local time").stdout.strip()
    ctx("branch", "agent")
    ctx("edit", mid, "--body", "Logs use UTC", "--branch", "agent")
    ctx("edit", mid, "--body", "Logs use server time")
    merged = ctx("merge", "agent", code=5).stdout
    assert "  1 conflict kept (both versions stored):" in merged
    summary = ctx.json("log", "-n", "1")[0]["commit"]["summary"]
    assert summary == "Merge agent into main (1 conflict)"


def test_status_counts_memories_and_tokens_as_ls_and_recall_do(hashing_ctx):
    old = hashing_ctx("remember", "The queue runs on Redis").stdout.strip()
    new = hashing_ctx("remember", "The queue runs on Postgres").stdout.strip()
    hashing_ctx("remember", "The API listens on port 8080", "--title", "Port")
    hashing_ctx("supersede", old, new)
    status = hashing_ctx.json("status")
    recalled = hashing_ctx.json("recall", "queue")
    assert len(hashing_ctx.json("ls")) == status["memories"] == 2
    assert status["superseded"] == 1
    assert sum(status["by_kind"].values()) == 2
    assert recalled["live_memories"] == 2
    assert recalled["live_tokens"] == status["tokens"]
    searched = hashing_ctx.json("search", "queue")
    assert (searched["live_memories"], searched["live_tokens"]) == (2, status["tokens"])
    assert hashing_ctx.json("recall", "queue", "--all")["live_memories"] == 3
    line = hashing_ctx("status").stdout.splitlines()[3]
    tokens = status["tokens"]
    assert line.startswith(
        f"memories:  2 ({tokens} tokens in a recall; 1 superseded, left out)    links: 1"
    )


def _remember(ctx, title, kind, when):
    args = ("--title", title, "--kind", kind, "--when", when)
    return ctx("remember", f"About {title}", *args).stdout.strip()


def test_ls_lists_newest_first_and_sorts_as_asked(ctx):
    a = _remember(ctx, "beta", "fact", "2024-01-01T00:00:00Z")
    b = _remember(ctx, "Alpha", "decision", "2025-01-01T00:00:00Z")
    c = _remember(ctx, "gamma", "open-question", "2023-01-01T00:00:00Z")
    assert ctx("ls").stdout == (
        f"{b}  decision       Alpha\n"
        f"{a}  fact           beta\n"
        f"{c}  open-question  gamma\n"
    )
    orders = {
        "newest": [b, a, c],
        "oldest": [c, a, b],
        "kind": [b, a, c],
        "title": [b, a, c],
        "id": [a, b, c],
    }
    for order, ids in orders.items():
        assert [m["id"] for m in ctx.json("ls", "--sort", order)] == ids, order
    assert [
        m["id"] for m in ctx.json("ls", "--where", "kind:fact OR kind:decision")
    ] == [
        b,
        a,
    ]
    ctx("ls", "--sort", "size", code=2)


def test_log_columns_line_up(ctx):
    ctx("remember", "Short", "--agent", "al")
    ctx("remember", "Longer", "--agent", "a-long-agent-name", "--confidence", "0.5")
    lines = ctx("log", "-n", "2").stdout.splitlines()
    starts = {line.index("Remember fact") for line in lines}
    assert len(starts) == 1, lines
    assert "  a-long-agent-name  observe (0.5)  Remember" in lines[0]
    assert "  al                 observe        Remember" in lines[1]


def test_an_empty_listing_says_so_on_stderr(ctx):
    ctx("remember", "Something")
    for args in (("ls", "nothing/"), ("query", "kind:task")):
        result = ctx(*args)
        assert (result.stdout, result.stderr) == ("", "No memories match.\n")
        assert ctx.json(*args) == []


def test_branches_line_up_whatever_the_names(ctx):
    ctx("branch", "tour/20261125-020221-agent")
    lines = ctx("branches").stdout.splitlines()
    assert len({len(line) for line in lines}) == 1, lines
    assert lines[0].startswith("* main                        ")


def test_status_and_index_status_print_sizes_in_one_unit(hashing_ctx):
    # Issue 32: status said KiB, index status KB, for the same 1,024 bytes.
    hashing_ctx("remember", "The queue runs on Postgres")
    hashing_ctx("recall", "queue")
    status = hashing_ctx("status").stdout
    index = hashing_ctx("index", "status").stdout
    units = re.findall(r"\d \w*B\b", status + index)
    assert len(units) == 2, units
    assert {u.split()[1] for u in units} <= {"B", "KiB", "MiB", "GiB"}
    assert [byte_size(n) for n in (0, 1023, 1024, 1536, 5 << 20, 3 << 40)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "1.5 KiB",
        "5.0 MiB",
        "3072.0 GiB",
    ]
