"""The tag boost is bounded by what else a hit matches (issue 29)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ctx import engine
from ctx.engine import Draft
from ctx.hub.config import HubConfig, RecallConfig
from ctx.hub.index.projection import Projection
from ctx.hub.retrieval.boost import bounded, name_tags, tag_parts
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.ranking import rank
from ctx.hub.retrieval.sources import open_sources

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
HASHING = HubConfig(embedder={"kind": "hashing"})
WHO = engine.Intent(agent="tester", intent="observe")


def remember(store, text, *tags):
    return engine.remember(store, Draft(text=text, when=NOW, tags=tags), WHO).ids[0]


@pytest.fixture
def projection(disk_store):
    return Projection.for_store(disk_store, HASHING)


def ranked(projection, query, config=None):
    [source] = open_sources(projection)
    return rank(
        projection.searcher(source.view),
        query,
        config=config or RecallConfig(),
        now=NOW,
    ).hits


def test_the_other_speakers_turn_with_the_answer_stays_first(disk_store, projection):
    # Issue 29: the boost doubled every turn of the person a question names,
    # and the answer, in the other person's turn, fell out of the top 10.
    answer = remember(
        disk_store,
        "I will help you pack the boxes for the move to Lisbon",
        "speaker:kate",
    )
    for text in (
        "I told my brother about the boxes in the attic",
        "Lisbon has great football",
        "The move went well for my cousin",
        "I packed my football boots",
        "My sister visits soon",
    ):
        remember(disk_store, text, "speaker:fahim")
    query = "What did Fahim hear about packing boxes for the move?"
    plain = ranked(projection, query, RecallConfig(tags=0))
    hits = ranked(projection, query)
    assert plain[0].id == hits[0].id == answer
    # Fahim's turns are boosted, but none above the answer.
    assert any(h.tag_boost > 1 for h in hits if h.named == ("speaker:fahim",))


def test_a_name_never_lifts_a_hit_above_a_clearly_better_match():
    fused = {"answer": 1.0, "near": 0.9, "name": 0.6, "low": 0.5}
    backing = {"answer": 0.9, "near": 0.5, "name": 0.3, "low": 0.0}
    boosted = bounded(fused, backing, {"name", "low"}, 1.0)
    # "name" passes "near" (backing within CLEARLY_BETTER: a near tie), not
    # "answer" (backing 0.6 higher): it stops just under it.
    assert fused["near"] < boosted["name"] < fused["answer"]
    # "low" matches nothing but the name: every hit above it holds the
    # other words clearly better, so it passes none of them.
    assert fused["low"] < boosted["low"] < fused["near"]
    # With nothing clearly better above it, the whole boost.
    alone = bounded(
        {"name": 0.6, "other": 0.9}, {"name": 0.3, "other": 0.4}, {"name"}, 1.0
    )
    assert alone["name"] == pytest.approx(1.2)


def test_a_two_word_name_is_named_by_either_word(disk_store, projection):
    # Issue 29: `speaker:fahim-khan` was never boosted by "Fahim".
    fahim = remember(
        disk_store,
        "I moved the deploy to Friday afternoon after the long review",
        "speaker:fahim-khan",
    )
    remember(disk_store, "I moved the deploy to Friday", "speaker:kate")
    hits = ranked(projection, "when did Fahim move the deploy?")
    assert hits[0].id == fahim
    assert hits[0].named == ("speaker:fahim-khan",)
    assert hits[0].tag_boost == pytest.approx(1 + RecallConfig().tags)
    assert ranked(projection, "when did Khan move the deploy?")[0].id == fahim


def test_a_word_equal_to_a_tag_value_does_not_bury_the_answer(disk_store, projection):
    # Issue 29, as a new user tried it: two memories tagged project:api came
    # before the one that answers "what is the API rate limit?".
    answer = remember(disk_store, "The API rate limit is 100 requests a minute per key")
    remember(disk_store, "The API serves JSON over HTTPS", "project:api")
    remember(disk_store, "The API deploys from the main branch", "project:api")
    remember(disk_store, "Lunch is at noon")
    hits = ranked(projection, "what is the API rate limit?")
    assert hits[0].id == answer
    assert sum(h.tagged for h in hits) == 2


def test_explain_names_the_tag_and_its_boost(disk_store, projection):
    mine = remember(disk_store, "Bo: I moved the deploy to Friday", "speaker:bo")
    result = recall(
        projection,
        open_sources(projection),
        "when did bo move the deploy?",
        config=RecallConfig(),
        now=NOW,
        explain=True,
    )
    why = next(h.explain for h in result.hits if h.id == mine)
    assert why.named_tags == ("speaker:bo",)
    assert why.tag_boost == pytest.approx(2.0)


def test_which_words_name_a_tag():
    assert tag_parts("fahim-khan") == ["fahim", "khan"]
    assert tag_parts("caroline") == []
    assert tag_parts("state-of-the-art") == ["state", "art"]
    named = name_tags(
        "Did Fahim's job queue move?",
        [
            ("a", ("speaker:fahim-khan",)),
            ("b", ("component:job-queue",)),
            ("c", ("speaker:kate", "topic:move")),
            ("d", ("speaker:someone",)),
        ],
    )
    assert named.tags == {
        "a": ("speaker:fahim-khan",),
        "b": ("component:job-queue",),
        "c": ("topic:move",),
    }
    assert named.rest == "Did"
    # A namespace alone names nothing.
    assert name_tags("what did the speaker say?", [("a", ("speaker:kate",))]).tags == {}
