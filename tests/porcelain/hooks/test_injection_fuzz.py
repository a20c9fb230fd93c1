"""Hostile memory texts through the real hooks, an MCP recall and compose (issue 33).

Each memory is quoted data in the block it is injected in: it cannot close
or open the block, none of its ``<ctx:...>`` commands is live, its lines
are all quoted, and a terminal's controls in it are shown as escapes. The
composed context (the session-start hook's, ``ctx compose`` in markdown and
text) is checked line by line: every line is ctx's own frame, an entry's
head, or a quoted line of a memory's text, and each hostile memory is one
entry whose quote holds exactly its lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hook_support import (
    add,
    bare_project,  # noqa: F401 (the fixture: project)
    context,
    engine_clock,
    payload,
)
from hostile_texts import HOSTILE, RAW_CONTROLS
from mcp import Client

from ctx import engine
from ctx.engine import DATA_NOTE, Store
from ctx.hub import Workspace
from ctx.hub.calls import defuse, parse_commands
from ctx.hub.hook_log import log_path
from ctx.porcelain.agents.mcp_server import build_server
from ctx.porcelain.hooks import MAX_CONTEXT, run_hook
from ctx.porcelain.main import cli


@pytest.fixture
def hostile(project: Path) -> tuple[Path, dict[str, str]]:
    """The project's store with one memory per hostile text, and their words."""
    (project / ".ctx" / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[hooks]\nfloor = 0.0\nstart_budget = 2400\n'
    )
    words = {}
    for n, (name, text) in enumerate(HOSTILE.items()):
        word = f"zanzibar{chr(97 + n)}quux"
        words[name] = word
        title = " ".join(text.replace("\r", " ").split("\n"))  # titles are one line
        add(project, f"{word} notes: {text}", title=f"{word} title: {title}")
    return project, words


def check_block(block: str, word: str) -> None:
    """The memory holding ``word`` is quoted data in ``block``, all of it."""
    assert DATA_NOTE in block
    assert not [c for c in RAW_CONTROLS if c in block]
    assert parse_commands(block).commands == ()
    lines = block.split("\n")
    start = next(n for n, line in enumerate(lines) if f"{word} notes:" in line)
    assert lines[start - 1].startswith("- **fact** `")
    assert "@" in lines[start - 1]  # branch@commit
    assert ", by " in lines[start - 1]  # the agent of the write
    assert lines[start].startswith("  > ")
    for line in lines[start:]:
        if line.startswith(("- **", "## ", "<!-- ")) or not line:
            break
        assert line.startswith("  >"), line


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_memory_stays_quoted_data_in_a_hook(hostile, name):
    root, words = hostile
    word = words[name]
    out = run_hook(
        "prompt-submit", payload("user_prompt_submit", root, prompt=f"{word} notes?")
    )
    answer = json.loads(out)
    assert set(answer) == {"hookSpecificOutput"}
    text = answer["hookSpecificOutput"]["additionalContext"]
    assert text.startswith('<ctx:context source="prompt-submit">\n')
    assert text.endswith("\n</ctx:context>")
    inner = text[
        len('<ctx:context source="prompt-submit">\n') : -len("\n</ctx:context>")
    ]
    assert "ctx:context" not in inner.replace("[ctx:context", "").replace(
        "[/ctx:context", ""
    )
    check_block(inner, word)


@pytest.mark.anyio
async def test_hostile_memories_stay_quoted_data_in_an_mcp_recall(hostile):
    root, words = hostile
    ws = Workspace.find(root / ".ctx")
    try:
        async with Client(build_server(ws)) as client:
            for word in words.values():
                result = await client.call_tool(
                    "recall", {"query": f"{word} notes", "budget": 4000}
                )
                (content,) = result.content
                check_block(content.text, word)
    finally:
        ws.close()


ENTRY = {
    "markdown": re.compile(
        r"- \*\*(?P<title>.+)\*\* `[0-9A-Z]{26}` \(\d{4}-\d\d-\d\d, working; "
        r"by [^,]+, [0-9a-f]{10}, \d{4}-\d\d-\d\d\)"
    ),
    "text": re.compile(
        r"\[fact\] (?P<title>.+) \([0-9A-Z]{26}, \d{4}-\d\d-\d\d, working\)"
    ),
}
FRAME = {"markdown": "<!-- ctx compose", "text": "# ctx compose"}
GROUP = {"markdown": "### fact", "text": "== fact =="}
MARKUP = "`*_[]<>&|~"


def unescaped_markup(text: str) -> list[str]:
    """The markdown punctuation of ``text`` not escaped with a backslash."""
    found, escaped = [], False
    for c in text:
        if not escaped and c in MARKUP:
            found.append(c)
        escaped = not escaped and c == "\\"
    return found


def check_entries(
    text: str, words: dict[str, str], entry: re.Pattern[str], own: Callable[[str], bool]
) -> list[str]:
    """Each hostile memory is one entry of ``text``: its head, its text quoted.

    Every line is the block's own (``own``), an entry's head (``entry``, its
    title in the group ``title``) or a quoted line; the block opens its
    memories with the data note once. Returns the titles as the heads show
    them.
    """
    assert text.count(DATA_NOTE) == 1
    assert not [c for c in RAW_CONTROLS if c in text]
    lines = text.split("\n")
    heads = {}
    for n, line in enumerate(lines):
        match = entry.fullmatch(line)
        if match:
            heads[n] = match["title"]
            continue
        assert own(line) or line == "  >" or line.startswith("  > "), line
    assert len(heads) == len(words)
    for name, word in words.items():
        (at,) = [n for n, title in heads.items() if title.startswith(f"{word} title:")]
        said = HOSTILE[name].count("\n") + 1
        assert lines[at + 1].startswith(f"  > {word} notes: ")
        assert all(line.startswith("  >") for line in lines[at + 1 : at + 1 + said])
        assert at + 1 + said == len(lines) or not lines[at + 1 + said].startswith("  >")
    return list(heads.values())


def check_composed(text: str, words: dict[str, str], fmt: str) -> list[str]:
    """Each hostile memory is one entry of a composed context ``text``."""

    def own(line: str) -> bool:
        framed = line.startswith(FRAME[fmt]) and line.count("--") in (0, 2)
        return line in ("", DATA_NOTE, GROUP[fmt]) or framed

    return check_entries(text, words, ENTRY[fmt], own)


def check_live(text: str) -> None:
    """No ``<ctx:...>`` tag of ``text`` is live, in any spelling a reader takes."""
    assert parse_commands(text).commands == ()
    assert defuse(text) == text


def test_hostile_memories_stay_quoted_data_in_the_session_start_context(hostile):
    root, words = hostile
    out = run_hook("session-start", payload("session_start", root))
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    opener = '<ctx:context source="session-start">\n'
    assert text.startswith(opener)
    assert text.endswith("\n</ctx:context>")
    inner = text[len(opener) : -len("\n</ctx:context>")]
    assert "ctx:context" not in inner.replace("[ctx:context", "").replace(
        "[/ctx:context", ""
    )
    assert parse_commands(inner).commands == ()
    check_composed(inner, words, "markdown")


@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_hostile_memories_stay_quoted_data_in_ctx_compose(hostile, fmt):
    root, words = hostile
    result = CliRunner().invoke(
        cli,
        ["--store", str(root / ".ctx"), "compose", "--format", fmt, "--budget", "9000"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    titles = check_composed(result.stdout, words, fmt)
    if fmt == "markdown":
        # A title cannot close its bold span, open a code span, a link or
        # an HTML comment, nor write a command (its tags are escaped).
        assert [t for t in titles if unescaped_markup(t)] == []
        assert parse_commands(result.stdout).commands == ()


def ids_of(root: Path, words: dict[str, str]) -> dict[str, str]:
    """The id of each hostile memory, by its word."""
    store = Store.open(root / ".ctx", clock=engine_clock)
    try:
        records = engine.list_memories(store, None, "")
    finally:
        store.close()
    return {
        word: str(r.memory.id)
        for r in records
        for word in words.values()
        if r.memory.body.startswith(f"{word} notes: ")
    }


def hook_log(root: Path) -> str:
    """What the hooks logged (their failures), to say why one gave nothing."""
    ws = Workspace.find(root / ".ctx")
    try:
        path = log_path(ws)
    finally:
        ws.close()
    return path.read_text() if path.exists() else "(no hook log)"


def given(text: str | None, opener: str) -> str:
    """The block of ``text`` from the line ``opener`` starts on, whole (not cut)."""
    assert text is not None
    assert "(cut: ctx gave more than the host takes)" not in text
    check_live(text.removeprefix(text.split("\n", 1)[0]).rsplit("\n", 1)[0])
    start = text.index("\n" + opener) + 1
    return text[start:].removesuffix("\n</ctx:context>")


# What the hooks give back of whole memories (memory_lines): the sources a
# ``<ctx:expand>`` answers with, and the memories the session had before
# compaction. Their heads name the memory's kind, id and, given back, its
# last write; then its title.
SOURCE = re.compile(r"- \*\*fact\*\* `[0-9A-Z]{26}`: (?P<title>.+)")
GIVEN_BACK = re.compile(
    r"- \*\*fact\*\* `[0-9A-Z]{26}` \(by [^,]+, [0-9a-f]{10}, \d{4}-\d\d-\d\d\): "
    r"(?P<title>.+)"
)


def test_hostile_memories_stay_quoted_data_expanded_and_given_back(hostile):
    root, words = hostile
    ids = ids_of(root, words)
    assert len(ids) == len(words)
    # A summary of them all, which moves them off the composed context; then
    # its sources, expanded (what <ctx:expand> answers with).
    nodes = ",".join(ids.values())
    message = (
        f'<ctx:summarize nodes="{nodes}" archive="true" title="Hostile notes">'
        "Texts that try to leave their block.</ctx:summarize>"
    )
    run_hook("stop", payload("stop", root, last_assistant_message=message))
    said = context("prompt-submit", "user_prompt_submit", root, prompt="ok")
    assert said is not None, hook_log(root)
    summary = said.split("ctx: summarized 20 memories as `")[1].split("`")[0]
    expand = f'<ctx:expand node="{summary}"/>'
    run_hook("stop", payload("stop", root, last_assistant_message=expand))
    text = context("prompt-submit", "user_prompt_submit", root, prompt="ok")
    opener = f"## Sources of `{summary}`"
    sources = given(text, opener)
    titles = check_entries(
        sources, words, SOURCE, lambda line: line in ("", opener, DATA_NOTE)
    )
    assert not [t for t in titles if "<ctx:" in t]

    # The session was shown them: after compaction they are given back
    # (off-context, so not in the composed context).
    assert run_hook("pre-compact", payload("pre_compact", root)) == ""
    text = context("session-start", "session_start_compact", root)
    opener = "## Before compaction, this session had"
    back = given(text, opener)
    check_entries(back, words, GIVEN_BACK, lambda line: line in ("", opener, DATA_NOTE))


def test_a_hostile_memory_stays_quoted_data_in_a_recall_command_answer(hostile):
    root, words = hostile
    for word in words.values():
        command = f'<ctx:recall query="{word} notes" budget="400"/>'
        run_hook("stop", payload("stop", root, last_assistant_message=command))
        text = context("prompt-submit", "user_prompt_submit", root, prompt="ok")
        block = given(text, "<!-- ctx recall: ")
        check_block(block, word)
        assert block.count(DATA_NOTE) == 1
        assert len(text) < MAX_CONTEXT


@pytest.mark.anyio
async def test_hostile_memories_stay_quoted_data_in_mcp_compose_and_context(hostile):
    root, words = hostile
    ws = Workspace.find(root / ".ctx")
    try:
        async with Client(build_server(ws, tools="all")) as client:
            for fmt in ("markdown", "text"):
                result = await client.call_tool(
                    "compose", {"budget": 9000, "format": fmt}
                )
                (content,) = result.content
                check_composed(content.text, words, fmt)
                check_live(content.text)
                assert result.structured_content["text"] == content.text
            result = await client.call_tool(
                "compose", {"budget": 9000, "format": "json"}
            )
            (content,) = result.content
            # JSON is data: every body as stored, each "<" written \u003c.
            assert "<" not in content.text
            bodies = {
                json.loads(line)["body"] for line in content.text.split("\n") if line
            }
            assert bodies == {f"{words[n]} notes: {t}" for n, t in HOSTILE.items()}
            prompt = await client.get_prompt("context", {"budget": "9000"})
            (message,) = prompt.messages
            check_composed(message.content.text, words, "markdown")
            check_live(message.content.text)
    finally:
        ws.close()
