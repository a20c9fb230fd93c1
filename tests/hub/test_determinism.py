"""One store ranks alike in every process: equal scores are ordered by a key.

Issue 15: BM25 ties came back in the order the index stored the documents,
which changed from one build of the index to the next (its writer's threads)
and so from one process to the next.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime

from ctx import engine
from ctx.engine import Draft, Intent
from ctx.hub.retrieval.index.searcher import Searcher

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
LAUNCH = "from ctx.porcelain.launch import main; main()"


def test_recall_is_the_same_in_processes_with_other_hash_seeds(disk_store, tmp_path):
    # Forty memories BM25 cannot tell apart (one unique word each), so the
    # channels' order among them is all ties.
    drafts = [
        Draft(text=f"The deploy runs tests on host h{i}", when=NOW) for i in range(40)
    ]
    drafts += [Draft(text=f"lunch note {i}", when=NOW) for i in range(10)]
    engine.remember_many(disk_store, drafts, Intent(agent="t", intent="observe"))
    (disk_store.path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    answers = []
    for seed in ("1", "2"):
        # Each process builds its own index, from a copy of the store.
        copy = tmp_path / f"copy-{seed}"
        shutil.copytree(disk_store.path, copy)
        command = [sys.executable, "-c", LAUNCH, "--store", str(copy), "recall"]
        command += ["which tests does the deploy run?", "--json", "--budget", "4000"]
        env = {**os.environ, "CTX_NO_HUB": "1", "PYTHONHASHSEED": seed}
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        hits = json.loads(done.stdout)["hits"]
        answers.append([(hit["id"], hit["score"]) for hit in hits])
    assert len(answers[0]) >= 20
    assert answers[0] == answers[1]


def test_a_channel_orders_equal_scores_by_key_and_cuts_ties_by_key(disk_store):
    from ctx.hub.config import HubConfig
    from ctx.hub.retrieval.index.projection import Projection
    from ctx.hub.retrieval.sources import open_sources

    drafts = [Draft(text=f"alpha beta x{i}", when=NOW) for i in range(12)]
    engine.remember_many(disk_store, drafts, Intent(agent="t", intent="observe"))
    projection = Projection.for_store(
        disk_store, HubConfig(embedder={"kind": "hashing"})
    )
    [source] = open_sources(projection)
    searcher: Searcher = projection.searcher(source.view)
    every = searcher.search_bm25("alpha beta", 12)
    assert len({score for _, score in every}) == 1
    assert [blob for blob, _ in every] == sorted(blob for blob, _ in every)
    # The five kept of twelve equal hits are the five first keys.
    assert searcher.search_bm25("alpha beta", 5) == every[:5]
    assert (
        searcher.search_fuzzy("alpah beta", 5)
        == sorted(searcher.search_fuzzy("alpah beta", 12), key=lambda h: (-h[1], h[0]))[
            :5
        ]
    )
