"""Pilot tests: every screen and its keys, on stores the builders made."""

from __future__ import annotations

import time

import pytest
from lens_builders import lens_app, settle
from textual.widgets import DataTable, Input, Static, TabbedContent, Tabs

from ctx.engine import Draft, Intent, Store, list_conflicts, log, remember, show
from ctx.lens.screens.graph import GraphScreen
from ctx.lens.screens.help import KEYS, HelpScreen
from ctx.lens.screens.history import HistoryScreen
from ctx.lens.screens.memories import MemoriesScreen
from ctx.lens.screens.memory import MemoryScreen
from ctx.lens.screens.recall import RecallScreen
from ctx.lens.screens.review import ReviewScreen
from ctx.lens.widgets.graph_view import GraphView

pytestmark = pytest.mark.anyio


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def rows(screen, selector: str) -> list[list[str]]:
    table = screen.query_one(selector, DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_history_lists_branches_log_and_a_commits_diff(story_ws):
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert [r[0] for r in rows(screen, "#branches")] == ["  agent/bob", "* main"]
        log_rows = rows(screen, "#log")
        assert len(log_rows) == 14
        assert log_rows[0][1:5] == [
            "alice",
            "decide",
            "agreed in the design review",
            "0.80",
        ]
        diff = text_of(screen, "#diff")
        assert "reason agreed in the design review" in diff
        assert "+We use Postgres for the job queue, with SKIP LOCKED." in diff
        await pilot.press("down")
        await settle(pilot)
        assert "tier:pinned" in text_of(screen, "#diff")
        screen.query_one("#branches", DataTable).focus()
        await pilot.press("up")
        await settle(pilot)
        assert screen.branch == "agent/bob"
        assert rows(screen, "#log")[0][-1].startswith("Link ")
        # The first commit has no parent to compare with.
        screen.query_one("#log", DataTable).focus()
        await pilot.press("ctrl+end")
        await settle(pilot)
        assert "The first commit of the store." in text_of(screen, "#diff")


async def test_memories_browse_filter_and_open(story_ws):
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MemoriesScreen)
        listed = rows(screen, "#memories")
        assert len(listed) == 5  # the superseded Redis decision is left out
        assert "Queue on Redis" not in {r[3] for r in listed}
        assert text_of(screen, "#count") == "5 memories (all)"
        await pilot.press("slash")
        await pilot.press(*"kind:decision", "enter")
        await settle(pilot)
        assert [r[3] for r in rows(screen, "#memories")] == ["Queue on Postgres"]
        # A query that does not parse: the command line's error, nothing lost.
        await pilot.press("slash", "ctrl+a", *"kind:", "enter")
        await settle(pilot)
        assert any("Error: " in str(n.message) for n in app._notifications)
        assert [r[3] for r in rows(screen, "#memories")] == ["Queue on Postgres"]
        # ... and the count says so, not "1 memory (kind:)" as if it applied.
        assert text_of(screen, "#count").startswith("Not filtered: ")
        assert text_of(screen, "#count").endswith("The list is the one before.")
        await pilot.press("escape")
        await settle(pilot)
        assert len(rows(screen, "#memories")) == 5
        tree = screen.query_one("#browse")
        tiers = next(n for n in tree.root.children if str(n.label) == "tiers")
        pinned = next(n for n in tiers.children if str(n.label) == "pinned")
        tree.select_node(pinned)
        await settle(pilot)
        assert [r[3] for r in rows(screen, "#memories")] == ["API port"]
        tags = next(n for n in tree.root.children if n.data == "tags")
        tags.expand()
        await settle(pilot)
        labels = [str(n.label) for n in tags.children]
        assert "project:ctx (2)" in labels
        tree.select_node(next(n for n in tags.children if n.data == "tag:project:api"))
        await settle(pilot)
        assert screen.query_one("#filter", Input).value == "tag:project:api"
        screen.query_one("#memories", DataTable).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)
        assert app.screen.memory_id == story_ws.ids["port"]


async def test_a_memory_page_versions_blame_links_tag_and_graph(story_ws):
    ids = story_ws.ids
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(MemoryScreen(ids["queue"]))
        await settle(pilot)
        page = app.screen
        assert "Queue on Postgres" in text_of(page, "#text")
        versions = rows(page, "#version-table")
        assert [v[2:4] for v in versions] == [["alice", "decide"]] * 2
        assert rows(page, "#blame-table") == [
            [
                versions[0][0],
                "alice",
                "We use Postgres for the job queue, with SKIP LOCKED.",
            ]
        ]
        page.query_one("#tabs", TabbedContent).active = "versions"
        page.query_one("#version-table", DataTable).focus()
        await pilot.press("down")
        await settle(pilot)
        assert (
            "We use Postgres for the job queue.\n"
            in text_of(page, "#version-body") + "\n"
        )
        links = rows(page, "#link-table")
        # The other end by its headline, not its id (issue 32).
        assert [(r[0], r[1], r[2]) for r in links] == [
            ("out →", "SUPERSEDES", "Queue on Redis"),
            ("← in", "DEPENDS_ON", "Retry policy"),
            ("← in", "RELATES_TO", "Queue lag peaks at 9am on Mondays."),
        ]
        page.query_one("#tabs", TabbedContent).active = "links"
        page.query_one("#link-table", DataTable).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.memory_id == ids["redis"]
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is page
        await pilot.press("t")
        await pilot.press(*"review:done", "enter")
        await settle(pilot)
        store = story_ws.ws.store()
        assert "review:done" in show(store, ids["queue"]).memory.tags
        intent = log(store, limit=1)[0].commit.intent
        assert (intent.agent, intent.intent) == ("reviewer", "review")
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, GraphScreen)
        assert app.screen.centre == ids["queue"]


async def test_graph_moves_centres_goes_back_widens_and_filters(story_ws):
    ids = story_ws.ids
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        await settle(pilot)
        screen = app.screen
        view = screen.query_one(GraphView)
        # With no centre chosen, the memory with the most links.
        assert screen.centre == ids["queue"]
        drawing = str(view.render())
        assert "◉ dec Queue on Postgres" in drawing
        assert drawing.splitlines()[0].startswith("◉ dec Queue on Postgres")
        assert "┬◀DEP─ • pat Retry policy" in drawing
        assert "├◀REL─ • obs Queue lag" in drawing
        assert "└SUP─▶ ⊘ dec Queue on Redis" in drawing
        assert text_of(screen, "#status") == " 1 hop · every type · 4 memories, 3 links"
        await pilot.press("down")
        assert view.highlighted == ids["retry"]
        assert "Retry policy" in text_of(screen, "#detail")
        await pilot.press("enter")
        await settle(pilot)
        assert screen.centre == ids["retry"]
        # Retry contradicts the API port: both drawn in red, marked in the detail.
        assert "CON" in str(view.render())
        await pilot.press("b")
        await settle(pilot)
        assert screen.centre == ids["queue"]
        await pilot.press("plus")
        await settle(pilot)
        assert screen.hood.hops == 2
        assert len(screen.hood.nodes) == 6
        await pilot.press("minus", "t")
        await settle(pilot)
        assert screen.types == ("DERIVED_FROM",)
        assert len(screen.hood.nodes) == 1
        await pilot.press("t", "t")  # SUPERSEDES alone
        await settle(pilot)
        assert [n.id for n in screen.hood.nodes] == [ids["queue"], ids["redis"]]
        await pilot.press("down", "left")
        assert view.highlighted == ids["queue"]
        await pilot.press("right", "o")
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)
        assert app.screen.memory_id == ids["redis"]


async def test_a_memory_with_500_links_is_drawn_within_the_budget(many_links_ws):
    ws, hub = many_links_ws
    app = lens_app(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3")
        await settle(pilot)
        screen = app.screen
        assert screen.centre == hub
        assert text_of(screen, "#status") == (
            " 1 hop · every type · 60 memories, 59 links, 441 left out"
        )
        assert "441 more links to memories not drawn" in text_of(screen, "#detail")
        # The drawing is taller than the screen: the keys move the highlight
        # (and scroll it into view), not the drawing alone.
        view = screen.query_one(GraphView)
        order = view.layout_.order
        await pilot.press(*["down"] * 30)
        assert view.highlighted == order[30]
        assert view.scroll_y > 0
        await pilot.press("up", "enter")
        await settle(pilot)
        assert screen.centre == order[29]
        await pilot.press("b")
        await settle(pilot)
        assert screen.centre == hub
        await pilot.press("left")  # from the memory highlighted before to its parent
        assert view.highlighted == hub
        await pilot.press("o")
        await settle(pilot)
        assert len(rows(app.screen, "#link-table")) == 500
        await pilot.press("escape", "ctrl+end", "down", "up")
        await pilot.press("2")
        await settle(pilot)
        assert text_of(app.screen, "#count") == "501 memories (all)"
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)
        await pilot.press("escape")
        await settle(pilot)
        # Back on the list, where it was (the list read again meanwhile).
        assert app.screen.query_one("#memories", DataTable).cursor_row == 2


async def test_recall_as_you_type_and_the_explanation(story_ws):
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RecallScreen)
        asked = []
        ask = screen._ask
        screen._ask = lambda: (asked.append(1), ask())
        await pilot.press(*"job queue")
        deadline = time.monotonic() + 10
        while not asked and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await settle(pilot)
        # Debounced: a recall once typing pauses, not one per key.
        assert 1 <= len(asked) < len("job queue")
        assert screen.result.query == "job queue"
        hits = rows(screen, "#hits")
        assert hits
        assert "Queue on Postgres" in {h[2] for h in hits}
        explain = text_of(screen, "#explain")
        assert "bm25    #" in explain
        assert "time boost" in explain
        assert "last commit" in explain
        assert "tokens of the branch" in text_of(screen, "#summary")
        # The box has the keys: the footer says how out (q, 1-5 are typed).
        assert app.focused is screen.query_one("#query")
        shown = [b.key for _, b, _, _ in screen.active_bindings.values() if b.show]
        assert "escape" in shown
        await pilot.press("down")  # as the help says: down or enter to the hits
        assert app.focused is screen.query_one("#hits")
        await pilot.press("slash")
        assert app.focused is screen.query_one("#query")
        await pilot.press("escape", "enter")
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)


async def test_review_previews_merges_and_resolves_with_intent(story_ws):
    ids = story_ws.ids
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        learned = text_of(screen, "#learned-text")
        assert "agent/bob: 3 commits since it split from main" in learned
        assert "Poll interval" in learned
        assert "leave 1 conflict." in text_of(screen, "#preview")
        assert "Dream has not written dream/main" in text_of(screen, "#dream-text")
        store = story_ws.ws.store()
        tip = store.branch_tip("main")
        await pilot.press("m", "n")
        await settle(pilot)
        assert store.branch_tip("main") == tip  # asked, declined: nothing written
        await pilot.press("m", "y")
        await settle(pilot)
        assert [c.id for c in list_conflicts(store, "main")] == [ids["queue"]]
        assert rows(screen, "#conflicts")[0][0] == ids["queue"]
        assert "theirs (agent/bob):" in text_of(screen, "#conflict")
        # A resolve writes: its keys work on the Merge tab only, and ask.
        await pilot.click("#--content-tab-learned")
        await settle(pilot)
        assert not {"o", "t", "b"} & set(screen.active_bindings)
        await pilot.press("t")
        await settle(pilot)
        assert [c.id for c in list_conflicts(store, "main")] == [ids["queue"]]
        await pilot.click("#--content-tab-merge")
        await settle(pilot)
        await pilot.press("t", "n")
        await settle(pilot)
        assert [c.id for c in list_conflicts(store, "main")] == [ids["queue"]]
        await pilot.press("t", "y")
        await settle(pilot)
        assert list_conflicts(store, "main") == []
        assert show(store, ids["queue"]).memory.body.endswith("via pgmq.")
        merge_commit, resolve_commit = (e.commit for e in log(store, limit=2)[::-1])
        for commit in (merge_commit, resolve_commit):
            assert (commit.intent.agent, commit.intent.intent) == ("reviewer", "review")
        assert "o" not in screen.active_bindings  # no conflict left


async def test_an_empty_store_shows_something_on_every_screen(empty_ws):
    app = lens_app(empty_ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert len(rows(app.screen, "#log")) == 1
        for key in ("2", "3", "4", "escape", "5"):  # Escape leaves the query box
            await pilot.press(key)
            await settle(pilot)
        assert not app._notifications
        assert text_of(app.screen, "#learned-text") == "No other branch to review."
        await pilot.press("m")
        await pilot.press("3")
        await settle(pilot)
        assert text_of(app.screen, "#status") == "No memories on this branch yet."
        await pilot.press("2")
        await settle(pilot)
        assert text_of(app.screen, "#count") == "0 memories (all)"


async def test_one_memory_on_every_screen(one_ws):
    app = lens_app(one_ws)
    async with app.run_test(size=(80, 24)) as pilot:
        for key in ("1", "2", "3", "4", "escape", "5"):
            await pilot.press(key)
            await settle(pilot)
        assert not app._notifications
        await pilot.press("3")
        await settle(pilot)
        assert (
            text_of(app.screen, "#status") == " 1 hop · every type · 1 memory, 0 links"
        )
        await pilot.press("enter", "b", "plus", "o")
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)
        assert rows(app.screen, "#link-table") == []


async def test_help_and_refresh_on_the_timer(story_ws):
    app = lens_app(story_ws.ws, poll_seconds=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, HistoryScreen)
        before = len(rows(app.screen, "#log"))
        # Another process writes: a second store object on the same folder.
        other = Store.open(story_ws.ws.path, clock=story_ws.ws.clock)
        remember(
            other,
            Draft(text="Written elsewhere."),
            Intent(agent="carol", intent="observe"),
        )
        other.close()
        for _ in range(20):
            await pilot.pause(0.05)
            await settle(pilot)
            if len(rows(app.screen, "#log")) > before:
                break
        assert len(rows(app.screen, "#log")) == before + 1
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert rows(app.screen, "#log")[0][1] == "carol"


async def test_review_keeps_both_sides_and_the_mouse_picks_tabs(story_ws):
    ids = story_ws.ids
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("5")
        await settle(pilot)
        await pilot.click("#--content-tab-merge")
        assert app.screen.query_one("#review-tabs", TabbedContent).active == "merge"
        await pilot.press("m", "y")
        await settle(pilot)
        await pilot.press("b", "y")
        await settle(pilot)
        body = show(story_ws.ws.store(), ids["queue"]).memory.body
        assert body.startswith(
            "ours (main):\nWe use Postgres for the job queue, with SKIP"
        )
        assert body.endswith(
            "theirs (agent/bob):\nWe use Postgres for the job queue, via pgmq."
        )
        assert rows(app.screen, "#conflicts") == []
        tip = story_ws.ws.store().branch_tip("main")
        await pilot.press("m")  # merged already: nothing to ask, nothing written
        await settle(pilot)
        assert story_ws.ws.store().branch_tip("main") == tip
        assert "Already up to date: main has everything in agent/bob." in [
            str(n.message) for n in app._notifications
        ]
        await pilot.click("#--content-tab-dream")
        assert app.screen.query_one("#review-tabs", TabbedContent).active == "dream"


async def test_at_80x24_the_log_shows_the_reason(story_ws):
    # Issue 32: with the time second, the reason was out of sight at 80x24.
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#log", DataTable)
        labels = [str(c.label) for c in table.ordered_columns]
        before = labels.index("reason")
        start = sum(c.get_render_width(table) for c in table.ordered_columns[:before])
        assert start + 10 < table.scrollable_content_region.width


async def test_help_says_how_to_switch_tabs_and_the_keys_do(story_ws):
    # Issue 32: the memory page's and review's tabs were not in `?`.
    assert "tabs (a memory, review): tab to the tab row, then left/right" in KEYS
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(MemoryScreen(story_ws.ids["queue"]))
        await settle(pilot)
        tabs = app.screen.query_one("#tabs", TabbedContent)
        for _ in range(10):  # the page's panes, then its tab row
            if isinstance(app.focused, Tabs):
                break
            await pilot.press("tab")
        assert isinstance(app.focused, Tabs)
        await pilot.press("right")
        await settle(pilot)
        assert tabs.active == "versions"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_review_tabs_fit_beside_the_branch_list(story_ws, size):
    # They were as wide as the terminal, starting after the branch list:
    # their last 26 columns, the merge preview's words and the scrollbar
    # of a long review, were off screen.
    app = lens_app(story_ws.ws)
    async with app.run_test(size=size) as pilot:
        await pilot.press("5")
        await settle(pilot)
        tabs = app.screen.query_one("#review-tabs", TabbedContent)
        branches = app.screen.query_one("#review-branches")
        assert tabs.region.x >= branches.region.right
        assert tabs.region.right <= size[0]
        # Its footer keeps ? and q; 1-5 still switch screens.
        shown = [b.key for _, b, _, _ in app.screen.active_bindings.values() if b.show]
        assert {"question_mark", "q"} <= set(shown)
        await pilot.press("1")
        await settle(pilot)
        assert type(app.screen).__name__ == "HistoryScreen"


async def test_a_write_right_after_the_lens_opened_is_shown_at_the_first_tick(
    story_ws,
):
    # The tips were first read at the first tick: a write before it was
    # taken for the baseline and shown only after a second write.
    app = lens_app(story_ws.ws, poll_seconds=0.5)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        before = len(rows(app.screen, "#log"))
        other = Store.open(story_ws.ws.path, clock=story_ws.ws.clock)
        remember(
            other,
            Draft(text="Written at once."),
            Intent(agent="carol", intent="observe"),
        )
        other.close()
        for _ in range(30):  # up to 1.5 s: three ticks
            await pilot.pause(0.05)
            await settle(pilot)
            if len(rows(app.screen, "#log")) > before:
                break
        assert len(rows(app.screen, "#log")) == before + 1


async def test_a_damaged_store_is_an_error_line_not_a_crash(story_ws):
    store = Store.open(story_ws.ws.path, clock=story_ws.ws.clock)
    blob = show(store, story_ws.ids["queue"]).blob
    store.close()
    loose = story_ws.ws.path / "git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"garbage")
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        errors = [str(n.message) for n in app._notifications]
        assert any(
            e.startswith("Error: The store's git data is damaged (") for e in errors
        ), errors
        assert any("`ctx fsck`" in e for e in errors)
        await pilot.press("1")  # still running: the other screens work
        await settle(pilot)
        assert rows(app.screen, "#log")
    assert not app.return_code


async def test_the_graph_and_a_memory_page_keep_help_and_quit_at_80x24(story_ws):
    # Their own keys and 1-5 pushed "? Help  q Quit" off the footer.
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        for expected in (MemoryScreen, GraphScreen):
            screen = app.screen
            assert isinstance(screen, expected)
            shown = [b.key for _, b, _, _ in screen.active_bindings.values() if b.show]
            assert {"question_mark", "q"} <= set(shown)
            assert not {"1", "2", "3", "4", "5"} & set(shown)
            await pilot.press("g")
            await settle(pilot)
        await pilot.press("1")  # the keys still switch screens
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)


async def test_a_memory_forgotten_elsewhere_leaves_its_page(story_ws):
    # Its old text stayed, as if live, with a passing notice.
    from ctx.engine import forget

    ids = story_ws.ids
    app = lens_app(story_ws.ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(MemoryScreen(ids["lag"]))
        await settle(pilot)
        page = app.screen
        assert "Queue lag peaks" in text_of(page, "#text")
        other = Store.open(story_ws.ws.path, clock=story_ws.ws.clock)
        forget(other, ids["lag"], Intent(agent="carol", intent="forget"))
        other.close()
        await pilot.press("ctrl+r")
        await settle(pilot)
        said = text_of(page, "#text")
        assert "Queue lag peaks" not in said
        assert said.startswith(f"No memory {ids['lag']} here.")
        assert "forgotten since" in said
        assert rows(page, "#link-table") == []


async def test_the_branch_shown_deleted_elsewhere_gives_way_to_the_default(story_ws):
    # Every screen said "Unknown revision" and no key could pick another.
    from ctx.engine import delete_branch
    from ctx.lens import LensApp, Source

    app = LensApp(Source.open(story_ws.ws, "agent/bob"), poll_seconds=0.2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        other = Store.open(story_ws.ws.path, clock=story_ws.ws.clock)
        delete_branch(other, "agent/bob", force=True)
        other.close()
        for _ in range(40):
            await pilot.pause(0.05)
            if app.source.branch == "main":
                break
        assert app.source.branch == "main"
        said = [str(n.message) for n in app._notifications]
        assert any(s.startswith("Branch agent/bob is gone") for s in said), said
        await pilot.press("2")
        await settle(pilot)
        assert len(rows(app.screen, "#memories")) == 5
        errors = [n for n in app._notifications if n.severity == "error"]
        assert not errors


def test_a_diff_keeps_a_space_between_the_longest_kind_and_the_headline(empty_ws):
    from ctx.engine import diff
    from ctx.lens.render import diff_text

    store = empty_ws.store(write=True)
    who = Intent(agent="alice", intent="observe", confidence=0.9, reason="asked")
    remember(store, Draft(text="The cache exists."), who)
    base = log(store)[0].commit.id
    remember(store, Draft(text="Is the cache shared?", kind="open-question"), who)
    remember(store, Draft(text="The cache is per host.", kind="fact"), who)
    text = diff_text(diff(store, base, "main")).plain
    assert "open-question Is the cache shared?" in text
    assert "fact          The cache is per host." in text
