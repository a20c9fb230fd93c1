"""What the recall tests of tags and the vector channel's question share: a
fixed now, the hashing embedder, and writing a tagged memory."""

from __future__ import annotations

from datetime import UTC, datetime

from ctx import engine
from ctx.engine import Draft
from ctx.hub.config import HubConfig

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
HASHING = HubConfig(embedder={"kind": "hashing"})
WHO = engine.Intent(agent="tester", intent="observe")


def remember(store, text, *tags):
    return engine.remember(store, Draft(text=text, when=NOW, tags=tags), WHO).ids[0]
