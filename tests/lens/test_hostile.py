"""Hostile memory texts on the lens's screens (issue 33).

Each memory of the shared table (tests/hostile_texts.py) is listed, opened
and recalled in the real app driven by Textual's pilot. What reaches the
terminal (the screen's rendered lines) holds no control character raw,
shows them as escapes, and shows Rich markup literally: nothing in a
memory styles, links or runs an action.
"""

from __future__ import annotations

import pytest
from hostile_texts import HOSTILE, RAW_CONTROLS
from lens_builders import lens_app, settle, workspace
from textual.widgets import Input

from ctx.engine import Draft, Intent, remember
from ctx.lens.screens.memories import MemoriesScreen
from ctx.lens.screens.memory import MemoryScreen
from ctx.lens.screens.recall import RecallScreen

pytestmark = pytest.mark.anyio

WRITER = Intent(agent="mallory", intent="observe")
SHOWN_AS = {
    "rich markup": "[bold red]LOUD[/] [link=https://example.invalid]click[/link]",
    "rich action": "[@click=app.quit]quit the lens[/] [@click=app.bell]ring[/]",
    "terminal": "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[1;1Hcleared\\x0d\\x9b31m",
    "bidi": "invoice \\u202egpj.exe\\u202c and \\u2066isolate\\u2069",
}
"""How the lens shows what a terminal or Rich would obey: as it is written."""
words = {name: f"zanzibar{chr(97 + n)}quux" for n, name in enumerate(HOSTILE)}


@pytest.fixture
def hostile_ws(tmp_path):
    """A store with one memory per hostile text: the workspace and their ids."""
    ws = workspace(tmp_path)
    store = ws.store(write=True)
    ids = {}
    for name, text in HOSTILE.items():
        made = remember(store, Draft(text=f"{words[name]} notes: {text}"), WRITER)
        ids[name] = str(made.ids[0])
    yield ws, ids
    ws.close()


def screen_text(app) -> str:
    """What the terminal is sent: the text of every rendered line."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def check_shown(text: str) -> None:
    """Nothing raw, escapes shown, markup literal."""
    assert not [c for c in RAW_CONTROLS if c in text]


async def test_hostile_memories_are_listed_as_plain_text(hostile_ws):
    ws, _ = hostile_ws
    app = lens_app(ws)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen)
        listed = screen_text(app)
        check_shown(listed)
        assert all(f"{word} notes: " in listed for word in words.values())
        assert "[bold red]LOUD[/]" in listed
        assert "[@click=app.quit]quit the lens[/]" in listed
        assert "\\x1b]0;pwned\\x07" in listed


# Half the table per test: each page costs a read and a render.
@pytest.mark.parametrize("half", [0, 1])
async def test_hostile_memories_open_as_plain_text(hostile_ws, half):
    ws, ids = hostile_ws
    app = lens_app(ws)
    rang = []
    app.bell = lambda: rang.append(1)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        for name in list(ids)[half::2]:
            app.push_screen(MemoryScreen(ids[name]))
            await settle(pilot)
            assert isinstance(app.screen, MemoryScreen)
            page = screen_text(app)
            check_shown(page)
            assert f"{words[name]} notes: " in page
            assert SHOWN_AS.get(name, "") in page
            if name == "rich action":  # a click on the text runs nothing
                await pilot.click("#text")
            app.pop_screen()
            await settle(pilot)
        assert app.is_running
        assert rang == []


@pytest.mark.parametrize("half", [0, 1])
async def test_hostile_memories_recalled_on_the_recall_screen(hostile_ws, half):
    ws, _ = hostile_ws
    app = lens_app(ws)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RecallScreen)
        for name in list(words)[half::2]:
            word = words[name]
            query = screen.query_one("#query", Input)
            query.value = f"{word} notes"
            query.focus()
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen is screen
            assert screen.result.query == f"{word} notes"
            shown = screen_text(app)
            check_shown(shown)
            assert f"{word} notes: " in shown
            assert SHOWN_AS.get(name, "")[:20] in shown  # the table's column
        assert app.is_running
