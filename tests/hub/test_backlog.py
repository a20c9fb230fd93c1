"""Recall never waits for the embedder: the backlog and the hub's backfill."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

from ctx import engine
from ctx.engine import Draft
from ctx.hub.config import HubConfig
from ctx.hub.retrieval.index.projection import INLINE_EMBED, Projection
from ctx.hub.retrieval.sources import open_sources
from ctx.hub.server.backfill import Backfill, next_backlog
from ctx.hub.server.service import Answerer
from ctx.hub.server.wire import (
    IndexStatusAsk,
    IndexStatusReply,
    RecallAsk,
    RecallReply,
    ReindexAsk,
    ReindexReply,
)

HASHING = HubConfig(embedder={"kind": "hashing"})
MANY = INLINE_EMBED + 36  # 100: more than a catch-up embeds before it answers


def import_many(store, count, word="turbine"):
    drafts = [Draft(text=f"note about the {word} called unit{i}") for i in range(count)]
    who = engine.Intent(agent="tester", intent="import")
    return list(engine.remember_many(store, drafts, who).ids)


@pytest.fixture
def answerer(disk_store, clock):
    (disk_store.path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    # A process that will start a hub after answering leaves the backlog.
    return Answerer(disk_store, clock, one_shot=True, defer=True)


def answered(answerer, request, expected):
    reply = answerer.answer(request)
    assert isinstance(reply, expected)
    return reply


def ask(answerer, query):
    return answered(answerer, RecallAsk(query=query), RecallReply).result


def test_a_large_import_is_answered_by_text_and_names_its_backlog(disk_store, answerer):
    ids = import_many(disk_store, MANY)
    result = ask(answerer, "turbine unit7")
    assert result.unembedded == MANY
    assert result.hits[0].id == ids[7]  # BM25 answered
    assert answerer.projection.last_catch_up.embedded == 0
    status = answered(answerer, IndexStatusAsk(), IndexStatusReply).status
    assert (status.documents, status.vectors, status.unembedded) == (MANY, 0, MANY)
    footer = engine_footer(result)
    assert footer.endswith(f"; {MANY} memories not embedded yet")


def test_with_nothing_embedded_the_query_is_not_embedded(
    disk_store, answerer, monkeypatch
):
    ids = import_many(disk_store, MANY)
    ask(answerer, "turbine")
    asked = []
    embedder = answerer.projection.embedder
    monkeypatch.setattr(embedder, "embed", lambda texts: asked.append(texts))
    result = ask(answerer, "turbine unit7")
    assert result.hits[0].id == ids[7]
    assert asked == []  # a model would load for nothing


def engine_footer(result):
    from ctx.hub import recall_summary

    return recall_summary(result)


def test_a_few_new_memories_are_embedded_before_the_answer(disk_store, answerer):
    import_many(disk_store, INLINE_EMBED)
    result = ask(answerer, "turbine")
    assert result.unembedded == 0
    assert answerer.projection.last_catch_up.embedded == INLINE_EMBED
    assert "not embedded" not in engine_footer(result)


def test_the_backlog_is_embedded_newest_first(disk_store, answerer):
    ids = import_many(disk_store, MANY)
    projection = answerer.projection_now()
    job = next_backlog(projection, limit=30)
    assert [projection_id(projection, b) for b in job.blobs] == sorted(ids)[::-1][:30]
    rows = projection.embedder.embed(job.texts)
    assert projection.add_vectors(job.keys, rows) == 30
    assert projection.add_vectors(job.keys, rows) == 0  # already there
    assert ask(answerer, "turbine").unembedded == MANY - 30


def projection_id(projection, blob):
    [source] = open_sources(projection)
    return source.view.by_blob[blob]


def test_the_backfill_thread_empties_the_backlog_and_vectors_then_answer(
    disk_store, answerer
):
    ids = import_many(disk_store, MANY, word="windmill")
    assert ask(answerer, "windmill").unembedded == MANY
    lock, stopping = threading.Lock(), threading.Event()
    backfill = Backfill(answerer, lock, stopping)
    backfill.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with lock:
                if ask(answerer, "windmill").unembedded == 0:
                    break
            time.sleep(0.05)
    finally:
        stopping.set()
        backfill.wake.set()
        backfill.thread.join(10)
    assert not backfill.thread.is_alive()
    projection = answerer.projection
    assert len(projection.vectors) == MANY
    [source] = open_sources(projection)
    hits = projection.searcher(source.view).search_vectors("windmill unit3", 5)
    assert ids[3] in {source.view.by_blob[blob] for blob, _ in hits}


_KILLED_MID_EMBEDDING = """
import os, signal, sys
from datetime import UTC, datetime
from ctx.engine import Store
from ctx.hub.config import HubConfig
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.sources import open_sources
from ctx.hub.server.backfill import next_backlog

from pathlib import Path
store = Store.open(Path(sys.argv[1]), clock=lambda: datetime.now(UTC))
projection = Projection.for_store(
    store, HubConfig(embedder={"kind": "hashing"}), defer=True
)
open_sources(projection)
for step in range(3):
    job = next_backlog(projection, limit=40)
    if step == 2:  # killed while it embeds the third step
        os.kill(os.getpid(), signal.SIGKILL)
    projection.add_vectors(job.keys, projection.embedder.embed(job.texts))
"""


def test_a_hub_killed_mid_embedding_leaves_a_usable_index(disk_store, answerer):
    ids = import_many(disk_store, 150)
    script = textwrap.dedent(_KILLED_MID_EMBEDDING)
    done = subprocess.run(
        [sys.executable, "-c", script, str(disk_store.path)],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == -9, done.stderr
    result = ask(answerer, "turbine unit149")
    assert ids[149] in [hit.id for hit in result.hits]
    assert result.unembedded == 150 - 80  # two steps of 40 were durable
    projection = answerer.projection
    while (job := next_backlog(projection)) is not None:
        projection.add_vectors(job.keys, projection.embedder.embed(job.texts))
    assert ask(answerer, "turbine").unembedded == 0
    assert len(projection.vectors) == 150


def test_a_reindex_embeds_everything_before_it_reports(disk_store, answerer):
    import_many(disk_store, MANY)
    report = answered(answerer, ReindexAsk(), ReindexReply).report
    assert (report.vectors, report.embedded) == (MANY, MANY)
    assert answerer.projection.defer
    assert ask(answerer, "turbine").unembedded == 0


def test_with_no_hub_to_come_a_catch_up_embeds_at_once(disk_store, clock):
    import_many(disk_store, MANY)
    (disk_store.path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    answerer = Answerer(disk_store, clock, one_shot=True)  # CTX_NO_HUB, no autostart
    result = ask(answerer, "turbine")
    assert result.unembedded == 0
    assert answerer.projection.last_catch_up.embedded == MANY


def test_a_projection_that_does_not_defer_embeds_at_once(disk_store):
    import_many(disk_store, MANY)
    projection = Projection.for_store(disk_store, HASHING)
    [source] = open_sources(projection)
    assert projection.backlog(source.view) == []
    assert projection.last_catch_up.embedded == MANY


def test_the_backlog_embeds_a_long_memory_as_passages(disk_store, answerer):
    # As a catch-up and a reindex do: one vector of its first window left the
    # rest of a long runbook out of the vector channel.
    import_many(disk_store, MANY)
    steps = [
        f"Step {i}: check the turbine gauge number {i} and log it." for i in range(60)
    ]
    steps.append("Finally the flux capacitor is recalibrated by the night shift.")
    who = engine.Intent(agent="tester", intent="observe")
    [long_id] = engine.remember(disk_store, Draft(text="\n".join(steps)), who).ids
    ask(answerer, "turbine")
    projection = answerer.projection_now()
    while (job := next_backlog(projection)) is not None:
        rows = projection.embedder.embed(job.texts)
        assert projection.add_vectors(job.keys, rows) == len(job.blobs)
    [source] = open_sources(projection)
    blob = next(b for b, i in source.view.by_blob.items() if i == long_id)
    assert len(projection.vectors.family(blob)) > 3
    assert len(projection.vectors) == MANY + len(projection.vectors.family(blob))
    hits = projection.searcher(source.view).search_vectors(
        "flux capacitor recalibrated night shift", 3
    )
    assert blob in {b for b, _ in hits}


def test_passages_count_as_one_memory_until_every_memory_has_a_vector(
    disk_store, answerer
):
    # Vectors counted as keys: long memories' passages made the index look
    # complete with memories still without one, and the backfill stopped
    # there for good.
    import_many(disk_store, MANY)
    who = engine.Intent(agent="tester", intent="observe")
    lines = [f"Line {i}: the turbine gauge {i} reads normal." for i in range(120)]
    drafts = [Draft(text=f"Runbook {n}\n" + "\n".join(lines)) for n in range(20)]
    engine.remember_many(disk_store, drafts, who)
    ask(answerer, "turbine")
    projection = answerer.projection_now()
    job = next_backlog(projection, limit=20)  # the runbooks, newest
    projection.add_vectors(job.keys, projection.embedder.embed(job.texts))
    assert len(projection.vectors) >= projection.lexical.count()
    assert projection.unembedded() == MANY
    while (job := next_backlog(projection)) is not None:
        projection.add_vectors(job.keys, projection.embedder.embed(job.texts))
    assert projection.unembedded() == 0
    assert projection.vectors.blob_count() == MANY + 20
