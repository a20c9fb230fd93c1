"""The stores a hub holds open: one embedder for all, idle ones dropped (issue 30)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ctx import engine
from ctx.engine import Draft, InvalidInputError, NotAStoreError
from ctx.hub import Workspace
from ctx.hub.server.stores import Limits, OpenStores, rss_bytes
from ctx.hub.server.wire import RecallAsk, RecallReply

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)


def _store(root: Path, name: str, text: str, clock) -> Path:
    path = root / name / ".ctx"
    engine.Store.init(path, clock=clock).close()
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    ws = Workspace(path, clock=clock)
    engine.remember(ws.store(write=True), Draft(text=text), ws.intent("observe"))
    ws.close()
    return path


@pytest.fixture
def stores(tmp_path: Path, clock) -> list[Path]:
    return [
        _store(tmp_path, "a", "The deploy key lives in the vault", clock),
        _store(tmp_path, "b", "Lunch is served at noon on Fridays", clock),
    ]


def _pool(clock, limits: Limits) -> OpenStores:
    return OpenStores(clock, limits, threading.Event())


def _dropped(drop, want: int) -> int:
    """Calls ``drop`` until it has dropped ``want`` stores in all, or 30 s.

    A store whose backfill is embedding is not dropped: after a recall, the
    hub's backfill may be at work for a moment.
    """
    total, deadline = 0, time.monotonic() + 30
    while total < want and time.monotonic() < deadline:
        total += drop()
        if total < want:
            time.sleep(0.01)
    return total


def _recall(pool: OpenStores, path: Path, query: str) -> list[str]:
    with pool.use(str(path)) as answerer:
        reply = answerer.answer(RecallAsk(query=query, now=NOW))
    assert isinstance(reply, RecallReply)
    return [hit.body for hit in reply.result.hits]


def test_every_store_shares_one_embedder_and_answers_its_own(
    stores: list[Path], clock
) -> None:
    pool = _pool(clock, Limits())
    try:
        assert _recall(pool, stores[0], "deploy key") == [
            "The deploy key lives in the vault"
        ]
        assert _recall(pool, stores[1], "lunch on Fridays") == [
            "Lunch is served at noon on Fridays"
        ]
        assert _recall(pool, stores[1], "deploy key vault") == []  # never a's
        first, second = (pool.open(str(path)) for path in stores)
        assert first.projection is not None
        assert second.projection is not None
        assert first.projection.embedder is second.projection.embedder
        assert len(pool.embedders) == 1
        assert [Path(e.store) for e in pool.listed()] == [p.resolve() for p in stores]
    finally:
        pool.stopping.set()
        pool.close()


def test_idle_stores_are_dropped_and_opened_again(stores: list[Path], clock) -> None:
    pool = _pool(clock, Limits(idle_s=0.0))
    try:
        _recall(pool, stores[0], "deploy")
        answerer = pool.open(str(stores[0]))
        with pool.use(str(stores[1])):
            assert _dropped(pool.drop_idle, 1) == 1  # a store in use is kept
            assert [Path(e.store) for e in pool.listed()] == [stores[1].resolve()]
        assert answerer.projection is None  # its indexes let go
        # The other store, idle now, goes too (it may have read its config,
        # which names the same embedder).
        assert _dropped(pool.drop_idle, 1) == 1
        assert pool.listed() == ()
        assert len(pool.embedders) == 0  # nothing names it any more
        assert _recall(pool, stores[0], "deploy key")  # opened again
    finally:
        pool.close()


def test_over_the_memory_bound_idle_stores_go_least_recently_used_first(
    stores: list[Path], clock
) -> None:
    assert rss_bytes() is not None
    pool = _pool(clock, Limits(memory_bound=1))  # always over it
    try:
        for path in stores:
            _recall(pool, path, "deploy")
        with pool.use(str(stores[1])):
            assert _dropped(pool.keep_bound, 1) == 1
            assert [Path(e.store) for e in pool.listed()] == [stores[1].resolve()]
        # Idle now, but the store asked last: it stays until another is asked.
        kept = pool.open(str(stores[1]))
        assert pool.keep_bound() == 0
        assert pool.open(str(stores[1])) is kept
        _recall(pool, stores[0], "deploy")
        assert _dropped(pool.keep_bound, 1) == 1
        assert [Path(e.store) for e in pool.listed()] == [stores[0].resolve()]
    finally:
        pool.close()


def test_a_store_over_the_bound_alone_is_not_loaded_again_for_each_request(
    stores: list[Path], clock
) -> None:
    pool = _pool(clock, Limits(memory_bound=1))  # one store is more than it
    try:
        answerer = pool.open(str(stores[0]))
        for _ in range(3):  # as the hub's worker does after every request
            assert _recall(pool, stores[0], "deploy key")
            assert pool.keep_bound() == 0
        assert pool.open(str(stores[0])) is answerer
        assert answerer.projection is not None  # its indexes still loaded
    finally:
        pool.close()


def test_a_store_named_by_a_request_is_checked(tmp_path: Path, clock) -> None:
    pool = _pool(clock, Limits())
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in (str(plain), "relative/.ctx", str(tmp_path / "missing")):
        with pytest.raises(NotAStoreError, match=r"is not a ctx store\.$"):
            pool.open(name)
    with pytest.raises(InvalidInputError, match="names no store"):
        pool.open("")
    assert pool.listed() == ()


def test_limits_come_from_the_environment() -> None:
    limits = Limits.from_env({"CTX_HUB_STORE_IDLE": "2", "CTX_HUB_MEMORY_MB": "300"})
    assert limits == Limits(idle_s=120.0, memory_bound=300_000_000)
    assert Limits.from_env({"CTX_HUB_STORE_IDLE": "soon"}) == Limits()
    assert Limits.from_env({"CTX_HUB_MEMORY_MB": "-1"}) == Limits()
