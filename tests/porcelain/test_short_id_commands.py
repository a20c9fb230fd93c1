"""Short ids on the command line, and --abbrev (issue 16, "Ids, stores, dates")."""

import pytest


@pytest.fixture
def three(ctx):
    return [
        ctx("remember", text, "--title", title).stdout.strip()
        for text, title in [
            ("Postgres for the queue", "Queue"),
            ("Redis for the cache", "Cache"),
            ("Deploy on Fridays is banned", "Deploys"),
        ]
    ]


def test_ls_abbrev_prints_the_end_of_each_id(ctx, three):
    lines = ctx("ls", "--abbrev").stdout.splitlines()
    shorts = [line.split()[0] for line in lines]
    assert len(shorts) == 3
    assert {len(s) for s in shorts} == {8}
    assert sorted(shorts) == sorted(mid[-8:] for mid in three)
    # --json keeps whole ids
    assert sorted(m["id"] for m in ctx.json("ls", "--abbrev")) == sorted(three)


def test_a_short_id_works_wherever_an_id_is_taken(ctx, three):
    a, b, c = three
    assert ctx.json("show", a[-8:])["memory"]["id"] == a
    assert ctx.json("show", a[:12].lower())["memory"]["id"] == a
    assert ctx.json("edit", b[-7:], "--title", "Cache 2")["id"] == b
    ctx("link", a[-8:], b[-8:], "--type", "DEPENDS_ON")
    assert [item["target"] for item in ctx.json("links", a[-8:])] == [b]
    assert ctx.json("trace", a[-8:])["id"] == a
    assert ctx.json("tag", c[-8:], "x:y")["id"] == c
    assert ctx.json("log", c[-8:])[0]["changes"][0]["memory_id"] == c
    assert ctx.json("blame", c[-8:])[0]["changes"][0]["memory_id"] == c
    assert ctx.json("show", f"{c[-8:]}@main")["memory"]["id"] == c
    assert ctx.json("forget", c[-8:], "--reason", "wrong")["id"] == c
    assert ctx.json("log", c[-8:])[0]["commit"]["summary"] == f"Forget {c}"


def test_an_ambiguous_short_id_is_refused_with_its_candidates(ctx, three):
    before = ctx.files()
    prefix = three[0][:6]  # made within seconds: all three start so
    out = ctx("edit", prefix, "--title", "X", code=4)
    listed = ", ".join(sorted(three))
    assert out.stdout == ""
    assert out.stderr == (
        f"Error: Id {prefix} is ambiguous: it names 3 memories ({listed}).\n"
        "Hint: Give more of its characters.\n"
    )
    assert ctx.files() == before


def test_a_short_id_that_names_nothing(ctx, three):
    out = ctx("show", "ZZZZZZZZ", code=3)
    assert out.stderr == (
        "Error: No memory here has an id that starts or ends with ZZZZZZZZ.\n"
        "Hint: `ctx ls` lists memories; `ctx log` shows removed ones.\n"
    )


def test_query_log_and_search_abbrev(ctx, three):
    a = three[0]
    lines = ctx("query", "title:Queue", "--abbrev").stdout.splitlines()
    assert lines[0].split()[0] == a[-8:]
    log = ctx("log", "--abbrev", "--stat", "-n", "3").stdout
    assert a not in log
    assert f"fact {a[-8:]}: Queue" in log
    assert f"/{a[-8:]}.json" in log
    hits = ctx("search", "Postgres", "--abbrev").stdout.splitlines()
    assert hits[0].split()[0] == a[-8:]
    assert ctx.json("search", "Postgres", "--abbrev")["hits"][0]["id"] == a
