"""The tag boost is bounded by what else a hit matches (issue 29)."""

from __future__ import annotations

import pytest
from recall_support import HASHING, NOW, WHO, remember

from ctx import engine
from ctx.engine import Draft
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.boost import (
    bounded,
    name_tags,
    selectivity,
    tag_parts,
)
from ctx.hub.retrieval.index.lexical import LexicalIndex
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.ranking import rank
from ctx.hub.retrieval.sources import open_sources


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
    boosted = bounded(fused, backing, {"name": 1.0, "low": 1.0})
    # "name" passes "near" (backing within CLEARLY_BETTER: a near tie), not
    # "answer" (backing 0.6 higher): it stops just under it.
    assert fused["near"] < boosted["name"] < fused["answer"]
    # "low" matches nothing but the name: every hit above it holds the
    # other words clearly better, so it passes none of them.
    assert fused["low"] < boosted["low"] < fused["near"]
    # With nothing clearly better above it, the whole boost.
    alone = bounded(
        {"name": 0.6, "other": 0.9}, {"name": 0.3, "other": 0.4}, {"name": 1.0}
    )
    assert alone["name"] == pytest.approx(1.2)
    # A smaller boost (a less selective tag) lifts less.
    half = bounded(
        {"name": 0.6, "other": 0.9}, {"name": 0.3, "other": 0.4}, {"name": 0.5}
    )
    assert half["name"] == pytest.approx(0.9)


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


def test_selectivity_is_the_share_of_the_other_memories_without_the_tag():
    assert selectivity(1, 10) == 1.0  # no other memory carries it
    assert selectivity(10, 10) == 0.0  # every memory does
    assert selectivity(6, 11) == pytest.approx(0.5)
    assert selectivity(1, 1) == 1.0


def boosts(hits):
    return {h.id: round(h.tag_boost, 3) for h in hits if h.tagged}


def test_a_tag_every_memory_carries_boosts_nothing_and_a_rare_one_fully(
    disk_store, projection
):
    queue = remember(disk_store, "The queue drains every minute", "project:ctx", "c:q")
    store = remember(disk_store, "The store writes git objects", "project:ctx")
    remember(disk_store, "The lens draws the graph", "project:ctx")
    remember(disk_store, "The hub answers recall", "project:ctx")
    # Every memory is of project ctx: naming it tells none apart.
    assert boosts(ranked(projection, "what does ctx store?"))[store] == 1.0
    assert set(boosts(ranked(projection, "what does ctx store?")).values()) == {1.0}
    # c:q is on one memory of four: the whole boost.
    assert boosts(ranked(projection, "how does q drain?")) == {queue: 2.0}


def test_a_tag_on_half_the_memories_boosts_half(disk_store, projection):
    kate = [
        remember(disk_store, f"Kate: I moved the deploy to day {i}", "speaker:kate")
        for i in range(3)
    ]
    remember(disk_store, "Fahim: the deploy moved again", "speaker:fahim")
    remember(disk_store, "Fahim: lunch is at noon", "speaker:fahim")
    # Three of five carry it: two of the other four lack it.
    hits = boosts(ranked(projection, "when did Kate move the deploy?"))
    assert hits == dict.fromkeys(kate, 1.5)


def test_only_the_views_memories_count_as_carriers(disk_store, projection):
    kept = remember(disk_store, "The cache holds the last 8,192 reads", "topic:cache")
    remember(disk_store, "Lunch is at noon")
    remember(disk_store, "The lens draws the graph")
    then = engine.remember(
        disk_store, Draft(text="The hub answers recall", when=NOW), WHO
    ).commit
    later = [
        remember(disk_store, f"The cache was warm on day {i}", "topic:cache")
        for i in range(2)
    ]
    question = "what does the cache hold?"
    assert boosts(ranked(projection, question)) == dict.fromkeys([kept, *later], 1.6)
    # Three of six carry it: 1 + 3/5. As things stood before, the index
    # holds the later memories too, but they are not in that view: the tag
    # is on one memory of four.
    [source] = open_sources(projection, at=then.id)
    hits = rank(
        projection.searcher(source.view), question, config=RecallConfig(), now=NOW
    ).hits
    assert boosts(hits) == {kept: 2.0}


def test_carriers_are_counted_once_per_question(disk_store, projection, monkeypatch):
    for i in range(6):
        remember(disk_store, f"Kate moved the deploy to day {i}", "speaker:kate")
    remember(disk_store, "Fahim moved lunch", "speaker:fahim")
    counted = []
    term = LexicalIndex.term

    def spy(self, field, text, boost):
        if field == "tags" and boost == 1.0:  # a count of a tag's carriers
            counted.append(text)
        return term(self, field, text, boost)

    monkeypatch.setattr(LexicalIndex, "term", spy)
    hits = ranked(projection, "when did Kate and Fahim move the deploy?")
    assert sum(h.tagged for h in hits) == 7
    # The vector channel's question and the boost both ask; each tag is
    # counted once.
    assert sorted(counted) == ["speaker:fahim", "speaker:kate"]


def test_a_tag_value_in_chinese_is_named_inside_a_sentence(disk_store, projection):
    named = name_tags(
        "支付服务的超时是多少", [("a", ("项目:支付",)), ("b", ("项目:订单",))]
    )
    assert named.tags == {"a": ("项目:支付",)}
    assert named.rest == "服务的超时是多少"
    pay = remember(disk_store, "支付服务的超时是三十秒", "项目:支付")
    remember(disk_store, "订单服务的超时是十秒", "项目:订单")
    remember(disk_store, "午饭在中午")
    hits = ranked(projection, "支付服务的超时是多少")
    assert hits[0].id == pay
    assert boosts(hits) == {pay: 2.0}


def test_what_one_person_told_another_is_found_in_either_turn(disk_store, projection):
    # Issue 29: "what did Fahim tell Kate about X" is answered in Kate's turn.
    answer = remember(
        disk_store,
        "Kate: so Fahim says the visa office wants the bank statements by March",
        "speaker:kate",
    )
    for text in ("Hi Kate, how are you?", "I was at the office all day", "See you"):
        remember(disk_store, f"Fahim: {text}", "speaker:fahim-khan")
    for text in ("Kate, lunch?", "The office is closed", "Bank holiday soon"):
        remember(disk_store, f"Lina: {text}", "speaker:lina")
    hits = ranked(projection, "What did Fahim tell Kate about the visa?")
    assert hits[0].id == answer
    assert boosts(hits)[answer] > 1.0
