"""A long memory's best passage is weighed against the chance of it (issue 29).

The best of many passages is high by chance alone, so the vector channel
orders memories by how unlikely their best passage is among as many
passages of unrelated text, not by its cosine alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from ctx.hub.config import HubConfig
from ctx.hub.retrieval.index.passages import chance_order, passage_key
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.rows import FlatVectors
from ctx.hub.retrieval.index.searcher import Searcher
from ctx.hub.retrieval.sources import open_sources

DIMENSIONS = 64


def test_memories_of_one_passage_keep_their_order_by_cosine():
    best = {"a": 0.41, "b": 0.62, "c": 0.55}
    assert chance_order(best, {}, 0.1, 0.08) == ["b", "c", "a"]


def test_a_long_memory_needs_a_better_best_passage():
    best = {"short": 0.60, "long": 0.62}
    # Twenty passages: a best of 0.62 is less telling than one passage at 0.60.
    assert chance_order(best, {"long": 20}, 0.1, 0.08) == ["short", "long"]
    # Far better, it still comes first.
    best["long"] = 0.75
    assert chance_order(best, {"long": 20}, 0.1, 0.08) == ["long", "short"]


def test_no_spread_orders_by_cosine():
    best = {"short": 0.60, "long": 0.62}
    assert chance_order(best, {"long": 20}, 0.6, 0.0) == ["long", "short"]


def test_far_in_the_tail_the_order_holds():
    best = {"a": 0.99, "b": 0.98, "c": 0.97}
    assert chance_order(best, {"a": 3}, 0.0, 0.01) == ["a", "b", "c"]


def test_spread_is_the_mean_and_deviation_of_the_cosines():
    index = FlatVectors(3, None)
    assert index.spread([1, 0, 0]) is None
    index.add(["a", "b", "c", "d"], np.eye(4, 3, dtype=np.float32) + 0.0)
    mean, deviation = index.spread([1, 0, 0])  # cosines 1, 0, 0, 0
    assert mean == pytest.approx(0.25)
    assert deviation == pytest.approx(np.std([1, 0, 0, 0]))


def at_cosine(cosine, rng):
    """Returns a unit vector at ``cosine`` to the first axis (the query)."""
    other = rng.normal(size=DIMENSIONS)
    other[0] = 0.0
    other /= np.linalg.norm(other)
    vector = other * np.sqrt(1 - cosine**2)
    vector[0] = cosine
    return vector


@pytest.fixture
def searcher(disk_store):
    projection = Projection.for_store(
        disk_store, HubConfig(embedder={"kind": "hashing"})
    )
    [source] = open_sources(projection)
    rng = np.random.default_rng(29)
    query = np.eye(1, DIMENSIONS, dtype=np.float32)[0]
    # Noise: 200 memories of one passage, pointing anywhere.
    keys = [f"noise{i}" for i in range(200)]
    rows = [at_cosine(rng.uniform(-0.2, 0.2), rng) for _ in keys]
    # A short memory at 0.60, and a long one of 30 passages whose best, at
    # 0.62, is a little closer to the query.
    keys.append("short")
    rows.append(at_cosine(0.60, rng))
    for number in range(30):
        keys.append(passage_key("long", number))
        rows.append(at_cosine(0.62 if number == 7 else 0.1, rng))
    index = FlatVectors(DIMENSIONS, None)
    index.add(keys, np.array(rows, dtype=np.float32))
    found = Searcher(
        source.view,
        lexical=projection.lexical,
        vectors=index,
        embedder=projection.embedder,
        read=lambda path, blob: None,
    )
    return found, query


def test_the_vector_channel_weighs_a_long_memory_by_chance(searcher):
    found, query = searcher
    plain = found.search_vector(query, 5)
    assert [blob for blob, _ in plain[:2]] == ["long", "short"]
    weighed = found.search_vector(query, 5, by_chance=True)
    assert [blob for blob, _ in weighed[:2]] == ["short", "long"]
    # The cosines are the same; only the order changed.
    assert dict(weighed[:2]) == dict(plain[:2])
    assert found.passage["long"] == 7
