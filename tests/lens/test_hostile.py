"""Hostile memory texts on the lens's screens (issue 33).

Each memory of the shared table (tests/hostile_texts.py) is listed, opened
and recalled in the real app driven by Textual's pilot, and goes through
the history (commits whose reasons, summaries and authors are hostile), a
review (a branch of hostile memories, a conflict between hostile bodies),
Dream's proposals and the link graph. What reaches the terminal (the
screen's rendered lines) holds no control character raw, shows them as
escapes, and shows Rich markup literally: nothing in a memory styles,
links or runs an action.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from dulwich.objects import Commit
from dulwich.repo import Repo
from hostile_texts import HOSTILE, RAW_CONTROLS
from lens_builders import T0, lens_app, settle, still_clock, workspace
from textual.widgets import DataTable, Input

from ctx.engine import (
    Draft,
    Intent,
    create_branch,
    edit,
    link,
    list_proposals,
    merge,
    remember,
)
from ctx.hub import dream
from ctx.lens.screens.graph import GraphScreen
from ctx.lens.screens.history import HistoryScreen
from ctx.lens.screens.memories import MemoriesScreen
from ctx.lens.screens.memory import MemoryScreen
from ctx.lens.screens.recall import RecallScreen
from ctx.lens.widgets.graph_view import GraphView

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


def pane_text(app, selector: str) -> str:
    """What the terminal is sent within one widget's region."""
    region = app.screen.query_one(selector).region
    strips = app.screen._compositor.render_strips()[region.y : region.bottom]
    return "\n".join(
        "".join(seg.text for seg in strip.crop(region.x, region.right))
        for strip in strips
    )


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


async def test_hostile_memories_open_as_plain_text(hostile_ws):
    """Each memory's page in turn, each page replacing the one before (so the
    history under them is not read again between pages), then back."""
    ws, ids = hostile_ws
    app = lens_app(ws)
    rang = []
    app.bell = lambda: rang.append(1)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        history = app.screen
        for n, name in enumerate(ids):
            page = MemoryScreen(ids[name])
            (app.switch_screen if n else app.push_screen)(page)
            await settle(pilot)
            assert app.screen is page, name
            shown = screen_text(app)
            check_shown(shown)
            assert f"{words[name]} notes: " in shown, name
            assert SHOWN_AS.get(name, "") in shown, name
            if name == "rich action":  # a click on the text runs nothing
                await pilot.click("#text")
        app.pop_screen()
        await settle(pilot)
        assert app.screen is history
        assert app.is_running
        assert rang == []


async def test_hostile_memories_recalled_on_the_recall_screen(hostile_ws):
    ws, _ = hostile_ws
    app = lens_app(ws)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RecallScreen)
        for name, word in words.items():
            query = screen.query_one("#query", Input)
            query.value = f"{word} notes"
            query.focus()
            await pilot.press("enter")
            await settle(pilot)
            assert app.screen is screen, name
            assert screen.result.query == f"{word} notes", name
            shown = screen_text(app)
            check_shown(shown)
            assert f"{word} notes: " in shown, name
            assert SHOWN_AS.get(name, "")[:20] in shown, name  # the table's column
        assert app.is_running


def one_line(text: str) -> str:
    """A hostile text as a reason may hold it: one line."""
    return " ".join(text.splitlines())


@asynccontextmanager
async def lens_at(ws, key: str, size=(200, 50)):
    """The lens on ``ws`` at the screen of ``key``; when the block ends it
    still runs, and nothing rang the bell."""
    app = lens_app(ws)
    rang = []
    app.bell = lambda: rang.append(1)
    async with app.run_test(size=size) as pilot:
        await pilot.press(key)
        await settle(pilot)
        yield pilot
        assert app.is_running
        assert rang == []


async def walk_down(pilot, rows: int, pane: str, keys) -> str:
    """Moves down ``rows`` rows of ``keys``; returns every page shown on the way.

    Each page is checked; a pane that shows an action is clicked (a click on
    the text runs nothing).
    """
    pages, clicked = [], 0
    for _ in range(rows):
        pages.append(screen_text(pilot.app))
        check_shown(pages[-1])
        if "[@click=" in pane_text(pilot.app, pane):
            await pilot.click(pane)
            clicked += 1
            keys.focus()
        await pilot.press("down")
        await settle(pilot)
    assert clicked, f"no page showed an action in {pane}"
    return "\n".join(pages)


def pull_commit(folder, author: str, message: str) -> None:
    """Adds a commit on main as a pull would bring it: made by another tool."""
    repo = Repo(str(folder / ".ctx" / "git"))
    tip = repo.refs[b"refs/heads/main"]
    commit = Commit()
    commit.tree = repo[tip].tree
    commit.parents = [tip]
    commit.author = commit.committer = f"{author} <m@example.invalid>".encode()
    commit.author_time = commit.commit_time = int((T0 + timedelta(days=2)).timestamp())
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode()
    repo.object_store.add_object(commit)
    assert repo.refs.set_if_equals(b"refs/heads/main", tip, commit.id)
    repo.close()


@pytest.fixture
def hostile_history(tmp_path):
    """Commits whose summaries and reasons are hostile, and one pulled commit
    whose author, summary and trailers are (its intent unreadable)."""
    ws = workspace(tmp_path)
    store = ws.store(write=True)
    for name, text in HOSTILE.items():
        why = Intent(
            agent="mallory",
            intent="observe",
            reason=one_line(f"{words[name]} why: {text}"),
        )
        remember(store, Draft(text=f"{words[name]} notes: {text}"), why)
    pull_commit(
        tmp_path,
        "[@click=app.quit]eve[/]\x1b[2J",
        "[@click=app.bell]pulled[/] \x1b]0;pwned\x07\n\n"
        "Ctx-Agent: [bold]eve[/]\nCtx-Intent: observe\n",
    )
    yield ws
    ws.close()


async def test_hostile_commits_in_the_history(hostile_history):
    async with lens_at(hostile_history, "1") as pilot:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        log = screen.query_one("#log", DataTable)
        assert log.row_count == len(HOSTILE) + 2
        shown = await walk_down(pilot, log.row_count, "#diff", log)
        assert log.cursor_row == log.row_count - 1
        # The pulled commit: its author stands for the agent, all literal.
        assert "[@click=app.quit]eve[/]\\x1b[2J" in shown
        assert "[@click=app.bell]pulled[/] \\x1b]0;pwned\\x07" in shown
        for name in HOSTILE:
            assert f"reason {words[name]} why: " in shown
            assert f"{words[name]} notes: " in shown
        assert f"reason {words['rich action']} why: {SHOWN_AS['rich action']}" in shown
        assert f"reason {words['bidi']} why: {SHOWN_AS['bidi']}" in shown
        assert "why: [bold red]LOUD[/]" in shown  # the log's reason column


@pytest.fixture
def hostile_branches(tmp_path):
    """agent/mallory holds the hostile memories; agent/eve's merge left a
    conflict on main between two hostile bodies."""
    ws = workspace(tmp_path)
    store = ws.store(write=True)
    who = Intent(agent="mallory", intent="observe")
    shared = remember(store, Draft(text="zanzibar shared plan"), who).ids[0]
    create_branch(store, "agent/eve")
    create_branch(store, "agent/mallory")
    for name, text in HOSTILE.items():
        draft = Draft(text=f"{words[name]} notes: {text}")
        remember(store, draft, who, branch="agent/mallory")
    edit(store, shared, who, body=HOSTILE["rich action"], branch="agent/eve")
    edit(store, shared, who, body=HOSTILE["terminal"])
    assert merge(store, "agent/eve", who, into="main").conflicts
    yield ws
    ws.close()


async def test_hostile_branch_reviewed_and_conflict_shown(hostile_branches):
    async with lens_at(hostile_branches, "5", (200, 80)) as pilot:
        app = pilot.app
        screen = app.screen
        await pilot.press("down")  # agent/mallory
        await settle(pilot)
        assert screen.chosen == "agent/mallory"
        learned = screen_text(app)
        check_shown(learned)
        for name in HOSTILE:  # in the diff, then in the commits
            assert learned.count(f"{words[name]} notes: ") == 2
        assert "notes: [@click=app.quit]quit the lens[/]" in learned
        await pilot.click("#learned-text")
        await pilot.click("#--content-tab-merge")
        await settle(pilot)
        merging = screen_text(app)
        check_shown(merging)
        assert "theirs (agent/eve):" in merging
        assert SHOWN_AS["rich action"] in merging
        assert SHOWN_AS["terminal"] in merging
        await pilot.click("#conflict")


@pytest.fixture
def hostile_dream(tmp_path):
    """Dream's proposals naming hostile memories (each written twice), one
    rejected with a hostile reason."""
    ws = workspace(tmp_path, still_clock())
    store = ws.store(write=True)
    who = Intent(agent="mallory", intent="observe")
    for name, text in HOSTILE.items():
        for days, word in ((3, words[name]), (1, words[name].upper())):
            draft = Draft(text=f"{word} notes: {text}", when=T0 - timedelta(days=days))
            remember(store, draft, who)
    dream.run(ws, budget=50)
    proposals = list_proposals(ws.store(), "main")
    assert len(proposals) == len(HOSTILE)
    note = one_line(HOSTILE["rich action"] + HOSTILE["terminal"])
    dream.reject(ws, (proposals[0].id,), reason=note, branch="main")
    yield ws
    ws.close()


async def test_hostile_memories_in_dreams_proposals(hostile_dream):
    async with lens_at(hostile_dream, "5") as pilot:
        app = pilot.app
        await pilot.click("#--content-tab-dream")
        await settle(pilot)
        table = app.screen.query_one("#proposals", DataTable)
        assert table.has_focus
        shown = await walk_down(pilot, table.row_count, "#proposal", table)
        for name in HOSTILE:
            assert f"{words[name]} notes: " in shown
            assert f"{words[name].upper()} notes: " in shown
        assert SHOWN_AS["rich action"] in shown
        assert SHOWN_AS["bidi"] in shown
        assert "reviewed by reviewer: " + one_line(SHOWN_AS["rich action"]) in shown


async def test_hostile_memories_on_the_link_graph(hostile_ws):
    ws, ids = hostile_ws
    store = ws.store(write=True)
    hub, *others = ids.values()
    for other in others:
        link(store, other, hub, "RELATES_TO", WRITER)
    async with lens_at(ws, "3") as pilot:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, GraphScreen)
        assert screen.centre == hub
        view = screen.query_one(GraphView)
        shown = await walk_down(pilot, len(ids), "#detail", view)
        for word in words.values():
            assert f"{word} notes: " in shown
        # Titles are cut to the drawing's labels and the detail pane's width.
        assert "[@click=app.quit]quit" in shown
        assert "[bold red]LOUD[/]" in shown
        assert "\\x1b]0;pwned" in shown
