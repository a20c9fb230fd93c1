"""Pilot tests: the review screen's Dream tab on proposals a real cycle made."""

from __future__ import annotations

import pytest
from lens_builders import lens_app, settle
from test_screens import rows, text_of
from textual.widgets import Input

from ctx.engine import Intent, edit, list_links, list_proposals, log, show, undo

pytestmark = pytest.mark.anyio


def statuses(ws) -> dict[str, str]:
    return {p.kind: p.status for p in list_proposals(ws.store(), "main")}


def notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def open_dream(pilot) -> None:
    await pilot.press("5")
    await settle(pilot)
    await pilot.click("#--content-tab-dream")
    await settle(pilot)


async def test_accept_reject_accept_all_and_merge(dreamed_ws):
    ws, ids = dreamed_ws.ws, dreamed_ws.ids
    store = ws.store()
    app = lens_app(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_dream(pilot)
        screen = app.screen
        assert "3 proposals on dream/main, 3 waiting" in text_of(screen, "#dream-text")
        # The surest first.
        assert [r[1:4] for r in rows(screen, "#proposals")] == [
            ["duplicate", "1.00", "proposed"],
            ["update", "0.90", "proposed"],
            ["recurrence", "0.80", "proposed"],
        ]
        # The memories by their headlines, not their ids (issue 32).
        assert "Standup is every Monday at nine" in rows(screen, "#proposals")[2][4]
        await pilot.press("down", "down")
        await settle(pilot)
        detail = text_of(screen, "#proposal")
        assert "evidence: recurs:weekly: 'every monday'" in detail
        assert f"{ids['standup']} Standup is every Monday at nine" in detail
        assert f"~ {ids['standup']} tags +recurs:weekly" in detail
        await pilot.press("up", "up")
        keys = app.screen.active_bindings
        assert {"a", "x", "A", "m"} <= set(keys)
        assert "o" not in keys

        await pilot.press("down", "a")  # accept the update
        await settle(pilot)
        assert statuses(ws)["update"] == "accepted"
        assert "1 proposal accepted." in notes(app)
        accepted = log(store, rev="dream/main", limit=1)[0].commit.intent
        assert (accepted.agent, accepted.intent) == ("reviewer", "review")

        await pilot.press("up", "x")  # reject the duplicate, with a reason
        await pilot.press(*"same words", "enter")
        await settle(pilot)
        [dup] = [p for p in list_proposals(store, "main") if p.kind == "duplicate"]
        assert (dup.status, dup.reviewer, dup.note) == (
            "rejected",
            "reviewer",
            "same words",
        )
        assert "reviewed by reviewer: same words" in text_of(screen, "#proposal")

        tip = store.branch_tip("main")
        await pilot.press("A", "n")  # asked, declined: nothing written
        await settle(pilot)
        assert statuses(ws)["recurrence"] == "proposed"
        await pilot.press("A", "y")
        await settle(pilot)
        assert statuses(ws)["recurrence"] == "accepted"
        assert store.branch_tip("main") == tip  # accepting writes on dream/main only

        await pilot.press("m")  # on the Dream tab, m merges Dream's
        await settle(pilot)
        # The question counts what the merge hides as `dream review` does.
        assert app.screen.question == (
            "Merge 2 accepted proposals into main? It hides 1 memory from recall."
        )
        await pilot.press("y")
        await settle(pilot)
        assert statuses(ws) == {
            "recurrence": "merged",
            "update": "merged",
            "duplicate": "rejected",
        }
        assert "Merged 2 proposals into main." in notes(app)
        supersedes = [
            (r.source, r.target)
            for r in list_links(store, ids["new_port"])
            if r.type == "SUPERSEDES"
        ]
        assert supersedes == [(ids["new_port"], ids["old_port"])]
        assert "recurs:weekly" in show(store, ids["standup"]).memory.tags
        assert list_links(store, ids["new_dup"]) == []
        assert [r[3] for r in rows(screen, "#proposals")] == [
            "rejected",
            "merged",
            "merged",
        ]

        # The merge undone (`ctx undo`): the tab says so, as `ctx dream
        # review` does, and the proposals wait to be accepted again.
        undo(store, "main")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert [r[3] for r in rows(screen, "#proposals")] == [
            "rejected",
            "undone",
            "undone",
        ]
        assert "3 proposals on dream/main, 2 waiting" in text_of(screen, "#dream-text")
        await pilot.press("down")
        await settle(pilot)
        assert "its merge was undone" in text_of(screen, "#proposal")
        await pilot.press("A", "y")
        await settle(pilot)
        assert "2 proposals accepted." in notes(app)
        await pilot.press("m", "y")
        await settle(pilot)
        assert "Merged 2 proposals into main." in notes(app)[-1]
        assert "recurs:weekly" in show(store, ids["standup"]).memory.tags


async def test_stale_proposals_and_errors_are_one_line_notifications(dreamed_ws):
    ws, ids = dreamed_ws.ws, dreamed_ws.ids
    app = lens_app(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_dream(pilot)
        await pilot.press("m")
        assert "No accepted proposal." in notes(app)
        await pilot.press(
            "down", "down", "a"
        )  # the recurrence; then its memory changes
        await settle(pilot)
        edit(
            ws.store(),
            ids["standup"],
            Intent(agent="alice", intent="observe"),
            body="Standup moved to Friday, once",
        )
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "(changed since)" in text_of(app.screen, "#proposal")
        await pilot.press("up", "a", "m", "y")  # the update merges, not it
        await settle(pilot)
        assert "Merged 1 proposal into main; 1 proposal stale." in notes(app)
        assert statuses(ws)["recurrence"] == "stale"
        # Both of Dream's commits on main (its changes, and the merge of
        # them) are the user's review, as every write from the lens.
        for entry in log(ws.store(), limit=2):
            merged = entry.commit.intent
            assert (merged.agent, merged.intent) == ("reviewer", "review")
        await pilot.press("a")  # the update again: merged already
        await settle(pilot)
        [error] = [n for n in app._notifications if n.severity == "error"]
        assert str(error.message).startswith("Error: Proposal ")
        assert "was merged already.\nHint: `ctx undo`" in str(error.message)
        await pilot.press("x")
        assert isinstance(app.screen.focused, Input)
        await pilot.press("escape")  # cancelled: nothing written
        await settle(pilot)
        assert statuses(ws)["duplicate"] == "proposed"
        await pilot.click("#--content-tab-learned")
        await pilot.press("A")  # Dream's keys are the Dream tab's only
        await settle(pilot)
        assert statuses(ws)["duplicate"] == "proposed"
        tip = ws.store().branch_tip("main")
        await pilot.press("m")  # dream/main is not merged as a branch
        await settle(pilot)
        assert ws.store().branch_tip("main") == tip
        assert "Error: dream/main holds Dream's proposals" in notes(app)[-1]
        assert "o" not in app.screen.active_bindings  # no conflict to take
