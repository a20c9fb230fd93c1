import json
import re


def _mem(ctx, text, *args):
    return ctx("remember", text, *args).stdout.strip()


def test_tags_and_tiers(ctx):
    a = _mem(ctx, "first")
    assert ctx("tag", a, "project:ctx", "tier:reference").stdout.startswith(
        f"{a} tagged in "
    )
    assert ctx("tag", a, "project:ctx").stdout == f"{a} unchanged: nothing to commit.\n"
    assert ctx("tags").stdout == "     1  project:ctx\n     1  tier:reference\n"
    assert ctx("tags", "--prefix", "tier:").stdout == "     1  tier:reference\n"
    assert ctx("untag", a, "tier:reference").stdout.startswith(f"{a} untagged in ")
    err = ctx("tag", a, "tier:urgent", code=4).stderr
    assert err.startswith("Error: Unknown tier 'tier:urgent'.")


def test_summarize_trace_expand_related(ctx):
    a = _mem(ctx, "raw note one")
    b = _mem(ctx, "raw note two")
    s = ctx(
        "summarize", a, b, "--body", "both notes", "--archive-sources"
    ).stdout.strip()
    assert re.match(r"^[0-9A-Z]{26}$", s)
    tree = ctx("trace", s).stdout.splitlines()
    assert tree[0] == f"{s}  summary  both notes"
    assert sorted(line.split()[2] for line in tree[1:]) == sorted([a, b])
    assert all(" DERIVED_FROM " in line for line in tree[1:])
    back = ctx("trace", a, "--reverse").stdout.splitlines()
    assert back[1].startswith("└─ DERIVED_FROM " + s)
    assert "raw note one" in ctx("expand", s).stdout
    hits = json.loads(ctx("related", a, "--json").stdout)
    assert [(h["id"], h["distance"]) for h in hits] == [(s, 1), (b, 2)]
    status = ctx("status").stdout
    assert "off-context 2" in status
    assert "DERIVED_FROM 2" in status


def test_supersede_hides_from_ls(ctx):
    old = _mem(ctx, "old way")
    new = _mem(ctx, "new way")
    assert ctx("supersede", old, new).stdout.startswith(f"{new} supersedes {old}")
    assert [m["id"] for m in json.loads(ctx("ls", "--json").stdout)] == [new]
    assert sorted(
        m["id"] for m in json.loads(ctx("ls", "--all", "--json").stdout)
    ) == sorted([old, new])


def test_query_ls_where_compose_and_views(ctx):
    d = _mem(
        ctx, "Postgres for the queue", "--kind", "decision", "--tag", "project:api"
    )
    _mem(ctx, "Port 8080", "--tag", "project:api")
    assert ctx("query", "kind:decision AND tag:project:api").stdout.startswith(d)
    assert ctx("ls", "--where", "postgres").stdout.startswith(d)
    err = ctx("query", "kind:decision AND (", code=4).stderr.splitlines()
    assert err[0].startswith("Error: ")
    assert "column" in err[0]
    out = ctx("compose", "--where", "tag:project:api", "--budget", "300")
    assert out.stdout.startswith(
        "<!-- ctx compose (where tag:project:api): 2 of 2 memories"
    )
    small = ctx("compose", "--budget", "45")
    assert "left out: " in small.stderr
    assert ctx("compose", "--budget", "0", code=4).stderr.startswith(
        "Error: The budget must be positive"
    )
    assert ctx(
        "view", "create", "api", "--where", "tag:project:api", "--budget", "300"
    ).stdout.startswith("View api stored in ")
    assert ctx("view", "list").stdout.startswith("api ")
    assert "where:    tag:project:api" in ctx("view", "show", "api").stdout
    assert ctx("view", "render", "api", "--format", "text").stdout.startswith(
        "# ctx compose"
    )
    assert ctx("view", "delete", "api").stdout.startswith("View api deleted in ")
    assert ctx("view", "show", "api", code=3).stderr.startswith(
        "Error: No view named 'api'."
    )
