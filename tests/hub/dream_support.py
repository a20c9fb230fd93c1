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


def remember(ws, text, *, days_ago=0.0, **kw):
    draft = Draft(text=text, when=NOW - timedelta(days=days_ago), **kw)
    return engine.remember(ws.store(), draft, WHO).ids[0]


def proposals(ws, kind=None):
    found = engine.list_proposals(ws.store(), "main")
    return [p for p in found if kind is None or p.kind == kind]
