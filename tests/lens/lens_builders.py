"""Stores for the lens's tests, built through the engine with fixed times and ids.

Every builder writes a real store on disk (``<folder>/.ctx``) and returns
the workspace the lens opens on it. Memory ids are ULIDs whose random part
comes from a seeded generator while the store is built, and the clock
advances one second per call from a fixed time, so two builds give the same
ids, commits and pictures.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

import ctx.engine.ids
from ctx.engine import (
    Draft,
    Intent,
    Store,
    create_branch,
    edit,
    export_lines,
    import_memories,
    link,
    remember,
    remember_many,
    tag,
)
from ctx.hub import Workspace
from ctx.lens import LensApp, Source

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
HASHING = '[embedder]\nkind = "hashing"\n'  # recall without loading MiniLM


def still_clock():
    """The lens's clock in tests: one moment, a day after the story, whatever
    the number of reads (a recall's time boost is measured from it)."""
    return lambda: T0 + timedelta(days=1)


def fixed_clock():
    ticks = itertools.count()
    return lambda: T0 + timedelta(seconds=next(ticks))


@contextmanager
def seeded_ids(seed: int = 7) -> Iterator[None]:
    """Draws the random part of new memory ids from a seeded generator."""
    rng = random.Random(seed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ctx.engine.ids, "os", SimpleNamespace(urandom=rng.randbytes))
        yield


def _who(agent: str, intent: str, confidence: float, reason: str) -> Intent:
    return Intent(agent=agent, intent=intent, confidence=confidence, reason=reason)


def workspace(folder: Path, clock=None) -> Workspace:
    """Returns the workspace of the store in ``folder`` (made empty if absent)."""
    path = folder / ".ctx"
    clock = clock or fixed_clock()
    if not path.exists():
        Store.init(path, clock=clock).close()
        (path / "config.toml").write_text(HASHING)
    return Workspace(path, clock=clock, agent="reviewer")


def empty_store(folder: Path) -> Workspace:
    return workspace(folder)


def one_memory(folder: Path) -> Workspace:
    ws = workspace(folder)
    with seeded_ids():
        remember(
            ws.store(write=True),
            Draft(text="The API listens on port 8080.", title="API port"),
            _who("alice", "observe", 0.9, "read the config"),
        )
    return ws


class Story:
    """The ids of the small story's memories."""

    def __init__(self, ws: Workspace, ids: dict[str, str]) -> None:
        self.ws = ws
        self.ids = ids


def story(folder: Path) -> Story:
    """A small history: two agents, three places, links of every mark, a branch.

    ``agent/bob`` learned two memories and edits the queue decision that
    main edited too, so merging it leaves one conflict.
    """
    ws = workspace(folder)
    store = ws.store(write=True)
    alice = _who("alice", "observe", 0.9, "read the runbook")
    decide = _who("alice", "decide", 0.8, "agreed in the design review")
    bob = _who("bob", "observe", 0.6, "seen in the logs")
    ids: dict[str, str] = {}
    with seeded_ids():
        for key, text, title, kind, context, tags, who in [
            (
                "queue",
                "We use Postgres for the job queue.",
                "Queue on Postgres",
                "decision",
                "decisions",
                ("project:ctx", "tier:reference"),
                decide,
            ),
            (
                "redis",
                "The job queue runs on Redis.",
                "Queue on Redis",
                "decision",
                "decisions",
                ("project:ctx",),
                alice,
            ),
            (
                "port",
                "The API listens on port 8080.",
                "API port",
                "fact",
                "api",
                ("project:api",),
                alice,
            ),
            (
                "retry",
                "Retry failed jobs three times with backoff.",
                "Retry policy",
                "pattern",
                "api",
                (),
                alice,
            ),
            (
                "lag",
                "Queue lag peaks at 9am on Mondays.",
                None,
                "observation",
                "ops",
                ("tier:working",),
                bob,
            ),
            (
                "why",
                "Is the Monday peak caused by the weekly report?",
                None,
                "open-question",
                "ops",
                (),
                bob,
            ),
        ]:
            ids[key] = remember(
                store,
                Draft(text=text, title=title, kind=kind, context=context, tags=tags),
                who,
            ).ids[0]
        link(store, ids["queue"], ids["redis"], "SUPERSEDES", decide, confidence=0.9)
        link(store, ids["retry"], ids["queue"], "DEPENDS_ON", alice)
        link(store, ids["lag"], ids["queue"], "RELATES_TO", bob, confidence=0.5)
        link(store, ids["why"], ids["lag"], "DERIVED_FROM", bob)
        link(store, ids["port"], ids["retry"], "CONTRADICTS", bob, confidence=0.3)
        tag(store, ids["port"], ["tier:pinned"], alice)
        create_branch(store, "agent/bob")
        edit(
            store,
            ids["queue"],
            decide,
            body="We use Postgres for the job queue, with SKIP LOCKED.",
        )
        ids["learned"] = remember(
            store,
            Draft(
                text="Workers poll every 500 ms.", title="Poll interval", context="ops"
            ),
            bob,
            branch="agent/bob",
        ).ids[0]
        edit(
            store,
            ids["queue"],
            bob,
            body="We use Postgres for the job queue, via pgmq.",
            branch="agent/bob",
        )
        link(store, ids["learned"], ids["queue"], "RELATES_TO", bob, branch="agent/bob")
    return Story(ws, ids)


def many_links(folder: Path, n: int = 500) -> tuple[Workspace, str]:
    """A memory linked to ``n`` others (one commit of memories, one of links)."""
    ws = workspace(folder)
    store = ws.store(write=True)
    who = _who("alice", "import", 0.7, "bulk")
    with seeded_ids():
        written = remember_many(
            store,
            [Draft(text="Hub memory with many links.", title="hub")]
            + [Draft(text=f"Spoke number {i}.", context="spokes") for i in range(n)],
            who,
        )
    hub, *spokes = written.ids
    lines = list(export_lines(store))
    header = json.loads(lines[0])
    header["links"] = n
    lines[0] = json.dumps(header, separators=(",", ":")).encode() + b"\n"
    for spoke in spokes:
        lines.append(
            json.dumps(
                {
                    "type": "link",
                    "source": spoke,
                    "link_type": "RELATES_TO",
                    "target": hub,
                    "link": {
                        "version": 1,
                        "agent": "alice",
                        "created_at": "2026-01-05T09:30:05Z",
                        "confidence": None,
                        "reason": None,
                    },
                },
                separators=(",", ":"),
            ).encode()
            + b"\n"
        )
    import_memories(store, lines, who, merge=True)
    return ws, hub


def lens_app(ws, *, poll_seconds: float | None = None) -> LensApp:
    """The app `ctx lens` runs, on ``ws`` (no refresh timer unless asked)."""
    return LensApp(Source.open(ws), poll_seconds=poll_seconds)


async def settle(pilot) -> None:
    """Waits until every read the screens started has been shown.

    A read's result is shown from its worker thread, and showing it may
    start the next read (a branch's log, then a commit's diff): the app is
    settled when two looks in a row find every worker finished and none new.
    """
    seen, quiet = -1, 0
    while quiet < 2:
        await pilot.pause()
        workers = list(pilot.app.workers)
        # A read superseded by a newer one is cancelled, not completed.
        if all(w.is_finished for w in workers) and len(workers) == seen:
            quiet += 1
        else:
            quiet = 0
        seen = len(workers)
        await pilot.pause(0.01)


def dreamed(folder: Path) -> tuple[Workspace, dict[str, str]]:
    """A store with a duplicate, an update, a recurrence, and Dream's proposals.

    One real Dream cycle (``hub.dream.run``) wrote them on ``dream/main``.
    """
    from ctx.hub import dream

    ws = workspace(folder, still_clock())
    store = ws.store(write=True)
    observe = _who("alice", "observe", 0.9, "read the runbook")

    def add(text: str, days: int, **fields: str) -> str:
        draft = Draft(text=text, when=T0 - timedelta(days=days), **fields)
        return remember(store, draft, observe).ids[0]

    with seeded_ids():
        ids = {
            "old_dup": add("The staging database is Postgres 15.", 3),
            "new_dup": add("the staging database is postgres 15", 1),
            "old_port": add(
                "The API listens on 8080", 9, title="API port", kind="fact"
            ),
            "new_port": add(
                "The API listens on 9090", 2, title="API port", kind="fact"
            ),
            "standup": add("Standup is every Monday at nine", 4),
        }
    dream.run(ws, budget=50)
    return ws, ids
