"""Hostile memory texts through the real hooks and an MCP recall (issue 33).

Each memory is quoted data in the block it is injected in: it cannot close
or open the block, none of its ``<ctx:...>`` commands is live, its lines
are all quoted, and a terminal's controls in it are shown as escapes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_texts import HOSTILE, RAW_CONTROLS
from mcp import Client
from test_hooks import add, payload
from test_shown import project  # noqa: F401 (the fixture)

from ctx.hub import Workspace
from ctx.hub.agents.mcp_server import build_server
from ctx.hub.hooks import run_hook
from ctx.hub.hooks.commands import parse_commands
from ctx.hub.retrieval.prompt import DATA_NOTE


@pytest.fixture
def hostile(project: Path) -> tuple[Path, dict[str, str]]:  # noqa: F811
    """The project's store with one memory per hostile text, and their words."""
    (project / ".ctx" / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[hooks]\nfloor = 0.0\n'
    )
    words = {}
    for n, (name, text) in enumerate(HOSTILE.items()):
        word = f"zanzibar{chr(97 + n)}quux"
        words[name] = word
        add(project, f"{word} notes: {text}")
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
