"""What the Dream tests share: a store on disk with the hashing embedder, a
fixed now, and writing memories of a given age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ctx import engine
from ctx.engine import Draft
from ctx.hub import Workspace

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
WHO = engine.Intent(agent="tester", intent="observe")


def hashing_workspace(store):
    """Returns a workspace on ``store`` with the hashing embedder, at NOW."""
    (store.path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    return Workspace(store.path, clock=lambda: NOW)


def remember(ws, text, *, days_ago=0.0, written=None, **kw):
    """Remembers ``text`` about ``days_ago`` days before NOW, written then
    (or ``written`` days before NOW)."""
    when = NOW - timedelta(days=days_ago)
    draft = Draft(text=text, when=when, **kw)
    store = ws.store()
    clock = store.clock
    at = when if written is None else NOW - timedelta(days=written)
    store.clock = lambda: at
    try:
        return engine.remember(store, draft, WHO).ids[0]
    finally:
        store.clock = clock


def proposals(ws, kind=None):
    found = engine.list_proposals(ws.store(), "main")
    return [p for p in found if kind is None or p.kind == kind]
