"""ctx recall, search, reindex and index status, through the command line."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

HASHING = '\n[embedder]\nkind = "hashing"\n'


@pytest.fixture
def hctx(ctx):
    """A store whose config picks the hashing embedder (fast, no model)."""
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write(HASHING)
    return ctx


def remember(ctx, text, *args):
    return ctx.json("remember", text, *args)["id"]


def test_recall_prints_hits_and_a_footer(hctx):
    auth = remember(hctx, "We decided to use OAuth with PKCE", "--kind", "decision")
    remember(hctx, "The queue runs on Redis streams")
    out = hctx("recall", "what did we decide about auth?").stdout
    first = out.splitlines()[0]
    assert first.startswith(auth)
    assert "decision" in first
    assert "memory/general/" in first
    footer = out.splitlines()[-1]
    assert footer.startswith("-- ")
    assert "tokens of a 1,500 budget" in footer
    assert "whole live branch (main): 2 memories" in footer
    assert " ms" in footer


def test_recall_json_has_the_documented_shape(hctx):
    remember(hctx, "alpha beta gamma")
    data = hctx.json("recall", "alpha")
    assert set(data) == {
        "query",
        "branch",
        "commit",
        "now",
        "budget",
        "hits",
        "tokens",
        "live_memories",
        "live_tokens",
        "left_out",
        "seconds",
        "temporal",
        "warnings",
        "notices",
        "unembedded",
        "recall_id",
        "store",
        "pinned_left_out",
        "nothing_relevant",
        "weak",
        "near_miss",
        "vector_question",
    }
    assert data["store"] == str(hctx.root / ".ctx")
    hit = data["hits"][0]
    assert set(hit) >= {
        "id",
        "kind",
        "body",
        "path",
        "branch",
        "pinned",
        "score",
        "tokens",
        "created_at",
        "tags",
        "title",
    }
    assert data["tokens"] == hit["tokens"] <= data["budget"]


def test_recall_markdown_is_a_prompt_block(hctx):
    remember(hctx, "Always run the linter", "--pin")
    mid = remember(hctx, "The linter is ruff")
    out = hctx("recall", "linter", "--format", "markdown").stdout
    assert out.startswith("<!-- ctx recall: linter")
    assert "## Pinned" in out
    assert "## Relevant memories" in out
    assert f"`{mid}`" in out
    assert out.rstrip().endswith("-->")


def test_recall_explain_shows_channels_and_blame(hctx):
    remember(hctx, "Deploys happen on Tuesdays", "--agent", "alice")
    out = hctx("recall", "deploys", "--explain").stdout
    assert "why: bm25 #1" in out
    assert "last: " in out
    assert "alice" in out


def test_recall_explain_shows_a_tag_boost(hctx):
    remember(hctx, "Deploys happen on Tuesdays", "--tag", "team:platform")
    remember(hctx, "Deploys freeze in December")
    out = hctx("recall", "platform deploys", "--explain").stdout
    lines = out.splitlines()
    why = lines[lines.index("    Deploys happen on Tuesdays") + 1]
    assert "tag team:platform x2.00" in why
    assert out.count("tag team:platform") == 1


def test_recall_explain_says_what_the_vector_channel_asked(hctx):
    # Issue 29: a speaker's name (a tag on half the turns) is left out of
    # the vector channel's question; --explain says so.
    turns = [
        {"text": f"{who}: note {i} about the week", "tags": [f"speaker:{who.lower()}"]}
        for i in range(12)
        for who in ("Kate", "Fahim")
    ]
    lines = "\n".join(json.dumps(turn) for turn in turns)
    hctx("import", "-", input=lines.encode())
    asked = "What did Fahim say about the move?"
    out = hctx("recall", asked, "--explain").stdout
    assert out.splitlines()[0] == "Vectors asked: What did say about the move?"
    explained = hctx.json("recall", asked, "--explain")
    assert explained["vector_question"] == "What did say about the move?"
    assert hctx.json("recall", asked)["vector_question"] is None


def test_recall_marks_weak_hits_in_text_and_json(hctx):
    # Issue 29: a recall whose best hit is under the floor gives its weak
    # hits, marked, instead of "Nothing relevant."
    weak = remember(hctx, "Invoices are stored as integer cents")
    remember(hctx, "Lunch is at noon on Fridays")
    config = hctx.root / ".ctx" / "config.toml"
    default = config.read_text()
    config.write_text(default.replace("[recall]", "[recall]\nfloor = 0"))
    best = hctx.json("recall", "invoices in the vault")["hits"][0]["relevance"]
    floor = f"[recall]\nfloor = {best + 0.01:.4f}"
    config.write_text(default.replace("[recall]", floor))
    data = hctx.json("recall", "invoices in the vault")
    assert (data["weak"], data["nothing_relevant"]) == (True, False)
    assert data["hits"][0]["id"] == weak
    assert data["hits"][0]["weak"] is True
    out = hctx("recall", "invoices in the vault").stdout.splitlines()
    assert out[0] == "Only weak matches: no memory reached the relevance floor."
    assert out[1].startswith(weak)
    assert out[1].endswith(f"(weak: relevance {best:.2f})")
    found = hctx.json("search", "invoices in the vault")
    assert found["weak"] is True


def test_an_imported_reply_is_recalled_by_what_it_answers(hctx, tmp_path):
    lines = tmp_path / "talk.jsonl"
    lines.write_text(
        '{"text": "Researching adoption agencies."'
        ', "meta": {"reply_to": "What are your plans for the summer?"}}\n'
        '{"text": "The weather was fine all week."}\n'
    )
    # The hashing embedder's cosines are low: this store sets its own floor.
    config = hctx.root / ".ctx" / "config.toml"
    config.write_text(config.read_text().replace("[recall]", "[recall]\nfloor = 0.2"))
    hctx("import", str(lines))
    data = hctx.json("recall", "summer plans", "--explain")
    first = data["hits"][0]
    assert first["body"] == "Researching adoption agencies."
    assert [c["channel"] for c in first["explain"]["channels"]] == ["vector"]
    assert "summer" not in hctx("recall", "summer plans").stdout.split("--")[0]


def test_recall_now_and_time_expressions(hctx):
    old = remember(hctx, "the deploy broke", "--when", "2025-01-10T10:00")
    new = remember(hctx, "the deploy broke again", "--when", "2025-03-03T10:00")
    data = hctx.json("recall", "deploy broke in January", "--now", "2025-03-04")
    assert [h["id"] for h in data["hits"]][:2] == [old, new]
    assert data["temporal"] == ["in january"]
    data = hctx.json("recall", "deploy broke yesterday", "--now", "2025-03-04")
    assert data["hits"][0]["id"] == new


def test_recall_with_overlays_and_labels(hctx):
    base = remember(hctx, "main knows about caching")
    hctx("branch", "agent")
    mine = remember(hctx, "agent knows about caching", "--branch", "agent")
    later = remember(hctx, "main learned caching later")
    data = hctx.json("recall", "caching", "--branch", "agent", "--with", "main")
    labels = {h["id"]: h["branch"] for h in data["hits"]}
    assert labels == {base: "agent", mine: "agent", later: "main"}
    out = hctx("recall", "caching", "--branch", "agent", "--with", "main").stdout
    assert "[main]" in out


def test_recall_at_a_revision_or_date(hctx):
    first = remember(hctx, "rockets are loud", "--when", "2020-01-01")
    time.sleep(1.1)  # commit times have whole seconds
    remember(hctx, "rockets are fast")
    data = hctx.json("recall", "rockets", "--at", "main~1")
    assert [h["id"] for h in data["hits"]] == [first]
    log = hctx.json("log", "-n", "2")
    when = log[1]["commit"]["time"]
    data = hctx.json("recall", "rockets", "--at", when)
    assert [h["id"] for h in data["hits"]] == [first]


def test_search_lists_and_filters(hctx):
    fact = remember(hctx, "postgres is the database", "--tag", "area:db")
    decision = remember(hctx, "we chose postgres", "--kind", "decision")
    found = lambda *a: [h["id"] for h in hctx.json("search", "postgres", *a)["hits"]]  # noqa: E731
    assert set(found()) == {fact, decision}
    assert found("--kind", "decision") == [decision]
    assert found("--tag", "area:db") == [fact]
    assert found("--context", "nowhere") == []
    assert len(found("-n", "1")) == 1
    assert hctx.json("search", "postgress")["hits"]  # typos are tolerated as is


def test_reindex_and_index_status(hctx):
    remember(hctx, "one")
    remember(hctx, "two")
    hctx("branch", "other")
    out = hctx("reindex").stdout
    assert out.startswith("Reindexed 2 branches: 2 documents, 2 vectors (hashing")
    assert "2 embedded, 0 kept" in out
    again = hctx.json("reindex")
    assert (again["documents"], again["embedded"], again["reused"]) == (2, 0, 2)
    again = hctx.json("reindex", "--re-embed")
    assert (again["documents"], again["embedded"], again["reused"]) == (2, 2, 0)
    status = hctx.json("index", "status")
    assert status["documents"] == 2
    assert status["vectors"] == 2
    assert status["embedder"].startswith("hashing")
    assert status["size_bytes"] > 0
    assert {b["branch"]: b["current"] for b in status["branches"]} == {
        "main": True,
        "other": True,
    }
    remember(hctx, "three")
    status = hctx.json("index", "status")
    assert {b["branch"]: b["current"] for b in status["branches"]}["main"] is False
    text = hctx("index", "status").stdout
    assert "Embedder: hashing" in text
    assert "main: indexed at" in text


def test_recall_in_its_own_process_never_loads_an_hnsw_graph(hctx, monkeypatch):
    from ctx.hub.retrieval.index import projection
    from ctx.hub.retrieval.index.hnsw import HnswVectors

    monkeypatch.setattr(projection, "CROSSOVER", 5)
    words = ["amber", "birch", "cobalt", "dune", "ember", "fjord"]
    ids = [remember(hctx, f"a note on sandpipers and {word}") for word in words]
    hctx("recall", "sandpipers")  # builds the index: HNSW from 5 vectors
    assert list((hctx.root / ".ctx" / "index").glob("vectors-*/hnsw-*.bin"))

    def refuse(self):
        raise AssertionError("the graph was loaded")

    monkeypatch.setattr(HnswVectors, "_load_graph", refuse)
    new = remember(hctx, "a note on curlews")
    assert hctx.json("recall", "curlews")["hits"][0]["id"] == new
    hits = hctx.json("search", "cobalt", "-n", "1")["hits"]
    assert hits[0]["id"] == ids[2]
    hctx("index", "status")
    hctx("reindex")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["recall", ""], 4, "The query is empty"),
        (["recall", "x" * 10_001], 4, "characters"),
        (["recall", "q", "--budget", "0"], 4, "budget must be at least 1"),
        (["recall", "q", "--budget", "-3"], 4, "budget must be at least 1"),
        (["recall", "q", "--branch", "nope"], 3, "nope"),
        (["recall", "q", "--with", "nope"], 3, "nope"),
        (["recall", "q", "--at", "deadbeef00"], 3, "Unknown revision"),
        (["recall", "q", "--at", "2001-02-30"], 4, "not a time"),
        (["recall", "q", "--now", "soon"], 4, "not a time"),
        (["search", "q", "-n", "0"], 4, "-n must be at least 1"),
        (["search", "  "], 4, "The query is empty"),
    ],
)
def test_bad_input_is_one_clear_error_and_changes_nothing(hctx, args, code, message):
    remember(hctx, "something")
    hctx("recall", "something")  # the index exists and is current
    before = hctx.files()
    result = hctx(*args, code=code)
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Error: ")
    assert message in lines[0]
    assert hctx.files() == before


def test_a_corrupt_index_is_rebuilt_with_a_notice(hctx):
    mid = remember(hctx, "still recalled")
    hctx("recall", "recalled")
    (hctx.root / ".ctx" / "index" / "state.json").write_text("garbage")
    result = hctx("recall", "recalled", "--json")
    assert result.stderr.startswith("Notice: The index was unreadable")
    assert result.stderr.count("rebuilt") == 1  # a notice, not also a warning
    assert json.loads(result.stdout)["warnings"] == []
    assert json.loads(result.stdout)["hits"][0]["id"] == mid


def test_an_embedder_endpoint_down_warns_and_answers_lexically(ctx):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = (
        f'\n[embedder]\nkind = "openai"\nbase_url = "http://127.0.0.1:{port}"\n'
        'model = "m"\ntimeout = 1.0\n'
    )
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write(config)
    mid = remember(ctx, "lexical recall still works")
    result = ctx("recall", "lexical", "--json")
    assert "Warning: Vectors not updated" in result.stderr
    assert result.stderr.count("lexical only") == 1  # said once, as a warning
    assert json.loads(result.stdout)["hits"][0]["id"] == mid


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[recall]\nbudgett = 3\n", "budgett"),
        ("[hub]\nidle_minutes = 0\n", "idle_minutes"),
        ('[hub]\nautostart = "yes"\n', "autostart"),
    ],
)
def test_a_bad_config_is_a_clear_error(ctx, text, named):
    (ctx.root / ".ctx" / "config.toml").write_text(text)
    result = ctx("recall", "q", code=4)
    assert "config.toml is not valid" in result.stderr
    assert named in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2  # the error and a hint


def test_the_default_embedder_is_minilm_and_semantic(ctx):
    car = remember(ctx, "I bought a new automobile last week")
    remember(ctx, "The cat sleeps on the sofa")
    data = ctx.json("recall", "vehicle purchase", "--explain")
    assert data["hits"][0]["id"] == car
    assert ctx.json("index", "status")["embedder"].startswith("minilm")


def test_the_command_line_loads_the_hub_only_for_its_commands():
    code = (
        "import sys, ctx.porcelain.main; "
        "print(sorted(m for m in ('numpy', 'tantivy', 'onnxruntime', 'hnswlib', "
        "'ctx.hub.retrieval.index.projection', 'dulwich') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_a_recall_loads_neither_the_code_index_nor_an_http_client(hashing_ctx):
    # A store that configures no reranker and searches no code pays for
    # neither: the code index and http.client (with ssl) took 40 ms to
    # import at every recall answered in its own process.
    ctx = hashing_ctx
    ctx("remember", "The janitor job flushes the cache nightly")
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from ctx.hub import Workspace, recall\n"
        f"ws = Workspace(Path({str(ctx.root / '.ctx')!r}))\n"
        "assert recall(ws, 'janitor cache').hits\n"
        "heavy = ('ctx.hub.code.index', 'http.client', 'ssl')\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    env = {**os.environ, "CTX_NO_HUB": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_recall_reviewed_only_reads_heads_branch_alone(hashing_ctx):
    ctx = hashing_ctx
    ctx("branch", "agent/bot")
    ctx("remember", "The janitor job flushes the cache nightly", "-b", "agent/bot")
    ctx("switch", "agent/bot")
    assert ctx.json("recall", "janitor cache")["hits"]
    reviewed = ctx.json("recall", "janitor cache", "--reviewed-only")
    assert (reviewed["branch"], reviewed["hits"]) == ("main", [])
    refused = ctx("recall", "janitor", "--reviewed-only", "--with", "main", code=2)
    assert refused.stderr.endswith(
        "Error: Give --branch or --with, or --reviewed-only.\n"
    )


def test_recall_leaves_out_what_summarize_archived(hctx):
    # Issue 32: the sources of `summarize --archive-sources` came back.
    old = remember(hctx, "The deploy pipeline runs on Jenkins")
    new = remember(hctx, "The deploy pipeline moved to GitHub Actions")
    summary = hctx.json(
        "summarize",
        old,
        new,
        "--body",
        "Deploys: the pipeline is GitHub Actions, Jenkins before",
        "--archive-sources",
    )["id"]
    found = hctx.json("recall", "deploy pipeline Jenkins")
    assert [h["id"] for h in found["hits"]] == [summary]
    every = hctx.json("recall", "deploy pipeline Jenkins", "--all")
    assert {h["id"] for h in every["hits"]} == {summary, old, new}
    searched = hctx.json("search", "deploy pipeline Jenkins")
    assert {h["id"] for h in searched["hits"]} == {summary, old, new}


def test_every_empty_answer_says_why_in_every_form(hctx):
    # An answer with no memory in it is never silent: text, markdown (the MCP
    # tool's block too) and --json say the same thing.
    assert hctx("recall", "what is the deploy window?").stdout.startswith(
        "Nothing matches: main holds no memory yet.\n"
    )
    remember(hctx, "The deploy window is Tuesday afternoon")
    for question in ("部署窗口是什么时候?", "zebra quokka"):  # no word in common
        data = hctx.json("recall", question)
        assert (data["hits"], data["nothing_relevant"]) == ([], True), question
        assert hctx("recall", question).stdout.startswith("Nothing relevant.\n")
        block = hctx("recall", question, "--format", "markdown").stdout
        assert block.splitlines()[1] == "Nothing relevant."
        assert hctx.json("search", question)["nothing_relevant"] is True


def test_a_pinned_memory_over_the_budget_is_no_match(hctx):
    remember(hctx, "Always run the whole test suite before a release", "--pin")
    out = hctx("recall", "quantum chromodynamics", "--budget", "10").stdout
    assert out.startswith("Nothing relevant.\n")
