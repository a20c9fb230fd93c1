import re

ULID = re.compile(r"^[0-9A-Z]{26}$")


def test_remember_prints_the_id(ctx):
    out = ctx(
        "remember",
        "We chose Postgres",
        "--kind",
        "decision",
        "--title",
        "Queue",
        "--tag",
        "project:api",
        "--agent",
        "claude",
        "--reason",
        "team knows it",
        "--confidence",
        "0.8",
        "--when",
        "2023-05-08T13:56",
    )
    mid = out.stdout.strip()
    assert ULID.match(mid)
    assert out.stderr == ""
    shown = ctx.json("show", mid)
    assert shown["memory"]["kind"] == "decision"
    assert shown["memory"]["tags"] == ["project:api"]
    assert shown["memory"]["created_at"].startswith("2023-05-08T13:56:00")
    log = ctx.json("log", "-n", "1")
    assert log[0]["commit"]["intent"] == {
        "agent": "claude",
        "intent": "observe",
        "confidence": 0.8,
        "reason": "team knows it",
        "session": None,
    }


def test_remember_from_stdin(ctx):
    mid = ctx("remember", "-", input="line one\nline two\n").stdout.strip()
    # The line break that ends the piped text is not the memory's.
    assert ctx.json("show", mid)["memory"]["body"] == "line one\nline two"
    lines = ctx.json("blame", mid, "--lines")
    assert [line["line"] for line in lines] == ["line one", "line two"]
    ctx("edit", mid, "--body", "-", input="line one\nline two\r\n")
    assert len(ctx.json("log", mid)) == 1  # the same words: nothing changed


def test_show_text(ctx):
    mid = ctx("remember", "Body text", "--title", "T", "--tag", "a:b").stdout.strip()
    out = ctx("show", mid).stdout
    path = f"memory/general/{mid[-1]}/{mid[-2]}/{mid[-3]}/{mid}.json"
    assert out.splitlines()[:5] == [
        f"id:       {mid}",
        "kind:     fact",
        "title:    T",
        f"path:     {path}",
        out.splitlines()[4],
    ]
    assert out.endswith("tags:     a:b\n\nBody text\n")


def test_ls_edit_forget(ctx):
    a = ctx("remember", "first memory", "--context", "decisions").stdout.strip()
    b = ctx("remember", "second memory").stdout.strip()
    assert sorted(ctx("ls").stdout.splitlines()) == sorted(
        [f"{a}  fact           first memory", f"{b}  fact           second memory"]
    )
    assert ctx("ls", "memory/decisions").stdout == f"{a}  fact           first memory\n"
    assert ctx("edit", b, "--body", "second, edited").stdout.startswith(
        f"{b} edited in "
    )
    assert (
        ctx("edit", b, "--body", "second, edited").stdout
        == f"{b} unchanged: nothing to commit.\n"
    )
    assert ctx("forget", b, "--reason", "wrong").stdout.startswith(f"{b} forgotten in ")
    assert [m["id"] for m in ctx.json("ls")] == [a]
    assert ctx.json("show", f"{b}@HEAD~1")["memory"]["body"] == "second, edited"


def test_forget_needs_a_reason(ctx):
    mid = ctx("remember", "x").stdout.strip()
    assert "Missing option '--reason'" in ctx("forget", mid, code=2).stderr
    out = ctx("forget", mid, "--reason", "", code=4)
    assert out.stderr.splitlines()[0] == (
        "Error: A reason must hold 1 to 2000 characters."
    )


def test_import(ctx, tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text('{"text": "a"}\n{"text": "b", "kind": "decision"}\n')
    out = ctx("import", str(f))
    assert re.match(r"^Imported 2 memories in [0-9a-f]{10}\.$", out.stdout.strip())
    assert len(ctx.json("ls")) == 2
    out = ctx("import", "-", input=b'{"text": "c"}\n{"text": ""}\n', code=4)
    assert (
        out.stderr
        == "Error: Line 2: The text is empty.\nHint: Give the memory some text, or - for stdin.\n"
    )
    assert len(ctx.json("ls")) == 2


def test_prime(ctx, tmp_path):
    doc = tmp_path / "CLAUDE.md"
    doc.write_text("# Style\nUse black.\n\n# Tests\nRun pytest.\n")
    out = ctx("prime", str(doc), "--pin")
    assert out.stdout.startswith("Primed CLAUDE.md as pinned/claude in ")
    assert ctx("prime", str(doc), "--pin").stdout == (
        "CLAUDE.md is already primed as pinned/claude: nothing to commit.\n"
    )
    assert sorted(m["path"] for m in ctx.json("ls")) == [
        "pinned/claude/style.json",
        "pinned/claude/tests.json",
    ]


def test_links(ctx):
    a = ctx("remember", "a").stdout.strip()
    b = ctx("remember", "b").stdout.strip()
    assert ctx("link", a, b, "--type", "DEPENDS_ON").stdout.startswith("Linked in ")
    assert ctx("links", b, "--in").stdout == f"{a} DEPENDS_ON {b}\n"
    assert ctx("links", b, "--out").stdout == ""
    assert ctx("unlink", a, b, "--type", "DEPENDS_ON").stdout.startswith("Unlinked in ")
    assert ctx("links", a).stdout == ""
