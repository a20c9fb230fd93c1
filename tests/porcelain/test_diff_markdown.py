"""`ctx diff A...B --format markdown` as a pull request's review (issue 34):
what each change changed into what, the bodies, the links by title, every
agent, an empty diff said plainly, and memory text that renders as itself."""

from html.parser import HTMLParser

import pytest

EVIL = (
    "Pipe | `tick` <b>bold</b> **star** [link](http://x) "
    "<details><summary>click</summary> www.x.com a@b.co &amp; $x$ _u_ ~~s~~ "
    "already escaped \\| pipe"
)


def _on_branch(ctx, *args, agent="claude"):
    return ctx(*args, "--agent", agent, "--branch", "agent/claude").stdout.strip()


def _review(ctx):
    return ctx("diff", "main...agent/claude", "--format", "markdown").stdout


def test_a_changed_row_says_what_each_field_changed_into(ctx):
    mid = ctx(
        "remember", "Retry 3 times", "--title", "Retries", "--tag", "x:old"
    ).stdout.strip()
    ctx("branch", "agent/claude")
    _on_branch(ctx, "edit", mid, "--body", "Retry 5 times\nCap at 30s")
    _on_branch(ctx, "edit", mid, "--title", "Retry policy", "--kind", "pattern")
    _on_branch(ctx, "tag", mid, "tier:pinned")
    _on_branch(ctx, "untag", mid, "x:old")
    out = _review(ctx)
    assert (
        f"| `{mid}` | pattern | Retry policy | kind: fact → pattern"
        "<br>title: Retries → Retry policy"
        "<br>body: 2 lines added, 1 removed (diff below)"
        "<br>tags: added tier:pinned; removed x:old | claude |\n"
    ) in out
    assert (
        f"<details><summary><code>{mid}</code> Retry policy: body</summary>\n"
        "\n"
        "```diff\n"
        "@@ -1 +1,2 @@\n"
        "-Retry 3 times\n"
        "+Retry 5 times\n"
        "+Cap at 30s\n"
        "```\n"
    ) in out


def test_every_agent_that_changed_a_memory_is_named_in_order(ctx):
    mid = ctx("remember", "Retry 3 times", "--title", "Retries").stdout.strip()
    ctx("branch", "agent/claude")
    _on_branch(ctx, "edit", mid, "--body", "Retry 5 times", agent="claude")
    _on_branch(ctx, "edit", mid, "--title", "Retry policy", agent="bob")
    _on_branch(ctx, "tag", mid, "x:y", agent="claude")
    ctx("edit", mid, "--title", "Main's own", "--agent", "carol")  # not B's
    assert "| claude, bob |\n" in _review(ctx)
    # The typed call gives every door what the review names, when asked.
    from ctx.hub import Caller, Workspace, calls

    ws = Workspace.find(str(ctx.root / ".ctx"))
    try:
        asked = calls.DiffRequest(spec="main...agent/claude", details=True)
        report = calls.diff(ws, Caller(agent="reviewer"), asked)
        plain = calls.diff(ws, Caller(), calls.DiffRequest(spec="main...agent/claude"))
    finally:
        ws.close()
    assert report.agents == {mid: ("claude", "bob")}
    assert (plain.agents, plain.link_titles) == (None, None)
    assert ctx.json("diff", "main...agent/claude")["agents"] is None


def test_an_added_memory_shows_its_body_and_a_long_one_is_cut(ctx):
    ctx("remember", "seed")
    ctx("branch", "agent/claude")
    short = _on_branch(ctx, "remember", "Deploys ```on``` Fridays", "--title", "Deploy")
    long_body = "\n".join(f"line {n}" for n in range(1, 36))
    long = _on_branch(ctx, "remember", long_body, "--title", "Long")
    out = _review(ctx)
    assert (
        f"<details><summary><code>{short}</code> Deploy: body (1 line)</summary>\n"
        "\n"
        "````text\n"
        "Deploys ```on``` Fridays\n"
        "````\n"
        "\n"
        "</details>\n"
    ) in out
    assert "line 30\n```\n\n(5 more lines: " in out
    assert f"`ctx show {long}`)\n" in out
    assert "line 31" not in out


def test_links_name_both_ends_by_title(ctx):
    old = ctx("remember", "Use MySQL", "--title", "Queue backend").stdout.strip()
    ctx("branch", "agent/claude")
    new = _on_branch(ctx, "remember", "Use Postgres", "--title", "Queue v2")
    _on_branch(ctx, "supersede", old, new)
    out = _review(ctx)
    assert out.endswith(
        "### Links (1)\n"
        "\n"
        f"- added `{new}` “Queue v2” **SUPERSEDES** `{old}` “Queue backend”\n"
    )


def test_an_empty_diff_says_there_is_nothing_to_review(ctx):
    ctx("remember", "seed")
    ctx("branch", "agent/claude")
    tip = ctx.json("diff", "main...agent/claude")["target"]
    assert _review(ctx) == (
        "## Memory changes: `main...agent/claude`\n"
        "\n"
        "Nothing to review: no memory and no link changed since the merge "
        f"base `{tip[:10]}` to `{tip[:10]}`.\n"
    )


def test_memory_text_is_escaped_in_tables_and_links(ctx):
    kept = ctx("remember", "plain", "--title", "Kept").stdout.strip()
    ctx("branch", "agent/claude")
    evil = _on_branch(ctx, "remember", "x", "--title", "already escaped \\| pipe")
    _on_branch(ctx, "link", evil, kept, "--type", "RELATES_TO")
    out = _review(ctx)
    # The pipe and its backslash both escaped: one cell, "\|" shown as written.
    assert f"| `{evil}` | fact | already escaped \\\\\\| pipe | claude |\n" in out
    assert f"`{evil}` “already escaped \\\\\\| pipe” **RELATES\\_TO**" in out


class _Html(HTMLParser):
    """The tags and the text of rendered HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.hrefs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.hrefs += [v for k, v in attrs if k == "href"]

    def handle_data(self, data):
        self.text.append(data)


def test_memory_text_renders_as_itself_not_as_markup(ctx):
    markdown_it = pytest.importorskip("markdown_it")  # textual's dependency
    kept = ctx("remember", "plain", "--title", "Kept").stdout.strip()
    gone = ctx("remember", EVIL, "--title", EVIL[:60]).stdout.strip()
    ctx("branch", "agent/claude")
    evil = _on_branch(
        ctx, "remember", f"{EVIL} new", "--title", EVIL[:60], "--tag", "a:<b>"
    )
    _on_branch(ctx, "edit", kept, "--title", EVIL[:60], "--body", EVIL)
    _on_branch(ctx, "forget", gone, "--reason", "x")
    _on_branch(ctx, "link", evil, kept, "--type", "RELATES_TO")
    out = _review(ctx)
    linkify = pytest.importorskip("linkify_it") and "gfm-like"
    page = _Html()
    page.feed(markdown_it.MarkdownIt(linkify).render(out))
    ours = {"h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "br"}
    ours |= {"ul", "li", "strong", "em", "code", "pre", "details", "summary"}
    assert set(page.tags) <= ours, set(page.tags) - ours
    assert page.hrefs == []
    assert page.tags.count("details") == 2  # the added body, the body diff
    assert page.tags.count("strong") == 1  # the link's type, nothing from text
    text = "".join(page.text)
    assert text.count(EVIL[:60]) >= 5  # rows, summaries, link, changes
    assert text.count(EVIL) == 2  # the added body, the diff's + line
