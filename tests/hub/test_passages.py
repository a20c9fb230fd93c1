"""Long memories as passages (issue 15): split, stored, searched, explained."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import numpy as np
import pytest

from ctx import engine
from ctx.engine import Draft
from ctx.hub.config import HubConfig, RecallConfig
from ctx.hub.retrieval.index.passages import (
    OVERLAP_WORDS,
    PASSAGE_WORDS,
    WINDOW_WORDS,
    owner,
    passage_key,
    passages,
)
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.rows import FlatVectors
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.ranking import rank
from ctx.hub.retrieval.sources import open_sources

HASHING = HubConfig(embedder={"kind": "hashing"})
NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
WHO = engine.Intent(agent="tester", intent="observe")

FILLER = [
    "Alice: the garden needs watering before the weekend and the roses too.",
    "Bob: I will bring the hose from the shed after lunch tomorrow.",
    "Alice: remember the tomatoes on the balcony, they dry out quickly.",
    "Bob: the neighbours offered to help with the hedge on Sunday morning.",
]
SECRET = "Alice: my violin teacher moved to Lisbon and gives lessons online now."


def transcript(turns: int, last: str = SECRET) -> str:
    lines = [FILLER[i % len(FILLER)] for i in range(turns)]
    return "\n".join([*lines, last])


class Counting:
    def __init__(self, inner):
        self.inner = inner
        self.texts = []
        self.name = inner.name
        self.dimensions = inner.dimensions

    def embed(self, texts):
        self.texts.extend(texts)
        return self.inner.embed(texts)


def remember(store, text, **kw):
    draft = Draft(text=text, when=NOW, **kw)
    return engine.remember(store, draft, WHO, allow_duplicate=True).ids[0]


@pytest.fixture
def projection(disk_store):
    projection = Projection.for_store(disk_store, HASHING)
    projection.embedder = Counting(projection.embedder)
    return projection


def test_a_short_text_is_its_own_only_passage():
    assert passages("one line\nand another") == ["one line\nand another"]


def test_a_text_that_fits_the_window_keeps_one_vector():
    text = "\n".join(["word " * 20] * (WINDOW_WORDS // 20))
    assert PASSAGE_WORDS < len(text.split()) <= WINDOW_WORDS
    assert passages(text) == [text]
    assert len(passages(text + "\none more line")) > 1


def test_a_long_text_is_cut_at_lines_with_overlap():
    text = transcript(60)
    pieces = passages(text)
    assert len(pieces) > 1
    assert all(len(p.split()) <= PASSAGE_WORDS for p in pieces)
    lines = text.splitlines()
    # every line is in some passage, in order, none cut
    assert all(any(line in p.splitlines() for p in pieces) for line in lines)
    for before, after in itertools.pairwise(pieces):
        assert after.splitlines()[0] == before.splitlines()[-1]  # the overlap
    assert pieces[-1].endswith(SECRET)


def test_a_long_line_is_cut_at_sentences_then_words():
    sentence = "word " * 30
    text = ". ".join([sentence.strip()] * 20) + "."
    pieces = passages(text)
    assert len(pieces) > 1
    assert all(len(p.split()) <= PASSAGE_WORDS for p in pieces)
    unbroken = "x " * (PASSAGE_WORDS * 3)
    assert all(len(p.split()) <= PASSAGE_WORDS for p in passages(unbroken))
    assert OVERLAP_WORDS < PASSAGE_WORDS


def test_keys_name_the_blob_and_the_passage():
    assert passage_key("ab12", 0) == "ab12"
    assert owner(passage_key("ab12", 3)) == ("ab12", 3)
    assert owner("ab12") == ("ab12", 0)


def test_a_memorys_vectors_go_together():
    index = FlatVectors(4, None)
    rows = np.eye(4, dtype=np.float32)
    index.add(["a", "a#1", "a#2", "b"], rows)
    assert index.family("a") == ["a", "a#1", "a#2"]
    assert index.has_passages()
    # a search allowed "a" finds its passages too
    assert index.search(rows[2], 1, frozenset({"a"})) == [("a#2", pytest.approx(1.0))]
    index.remove(["a#1"])  # a damaged passage takes its whole memory along
    assert index.keys() == ["b"]
    assert not index.has_passages()


def test_the_vector_channel_finds_the_end_of_a_long_memory(disk_store, projection):
    long_id = remember(disk_store, transcript(80))
    for line in FILLER:
        remember(disk_store, line)
    [source] = open_sources(projection)
    count = len(passages(transcript(80)))
    assert count > 2
    assert len(projection.vectors) == count + len(FILLER)
    searcher = projection.searcher(source.view)
    hits = searcher.search_vectors("violin teacher moved to Lisbon", 3)
    blob = source.view.catalog.entries[long_id].blob
    assert hits[0][0] == blob
    assert searcher.passage[blob] == count - 1
    assert len({b for b, _ in hits}) == len(hits)  # one hit per memory


def test_explain_names_the_passage_that_matched(disk_store, projection):
    long_id = remember(disk_store, transcript(80))
    sources = open_sources(projection)
    result = recall(
        projection,
        sources,
        "violin teacher Lisbon lessons",
        config=RecallConfig(),
        now=NOW,
        explain=True,
        budget=5000,
    )
    hit = result.hits[0]
    assert hit.id == long_id
    match = hit.explain.passage
    assert match is not None
    assert (match.number, match.of) == (match.of, len(passages(transcript(80))))
    assert SECRET in match.text


def test_passages_are_reused_across_branches_and_by_text(disk_store, projection):
    memory_id = remember(disk_store, transcript(80))
    open_sources(projection)
    embedded = len(projection.embedder.texts)
    assert embedded == len(passages(transcript(80)))
    engine.create_branch(disk_store, "side")
    open_sources(projection, branch="side")
    assert len(projection.embedder.texts) == embedded
    engine.tag(disk_store, memory_id, ["topic:garden"], WHO)
    [source] = open_sources(projection)
    assert (projection.last_catch_up.embedded, projection.last_catch_up.reused) == (
        0,
        1,
    )
    blob = source.view.catalog.entries[memory_id].blob
    assert len(projection.vectors.family(blob)) == embedded
    assert len(projection.embedder.texts) == embedded


def test_a_rebuild_copies_every_passage(disk_store, projection):
    remember(disk_store, transcript(80))
    open_sources(projection)
    embedded = len(projection.embedder.texts)
    projection.reindex()
    open_sources(projection)
    assert projection.last_catch_up.reused == 1
    assert len(projection.embedder.texts) == embedded
    assert len(projection.vectors) == embedded


def test_a_long_memory_over_the_budget_is_given_as_its_passage(disk_store, projection):
    long_id = remember(disk_store, transcript(80))
    sources = open_sources(projection)
    question = "violin teacher Lisbon lessons"
    config = RecallConfig()
    whole = recall(projection, sources, question, config=config, now=NOW, budget=5000)
    assert whole.hits[0].passage is None
    assert whole.hits[0].body == transcript(80)
    small = recall(projection, sources, question, config=config, now=NOW, budget=300)
    hit = small.hits[0]
    assert hit.id == long_id
    assert hit.passage is not None
    assert hit.body == hit.passage.text
    assert SECRET in hit.body
    assert hit.tokens <= 300 < whole.hits[0].tokens
    assert small.tokens <= 300


def test_a_rebuild_embeds_again_a_memory_now_cut_otherwise(
    disk_store, projection, monkeypatch
):
    # Index format 7 cut texts of 181-300 words too; they now keep one vector.
    text = transcript(20)
    assert 180 < len(text.split()) <= WINDOW_WORDS
    memory_id = remember(disk_store, text)
    monkeypatch.setattr("ctx.hub.retrieval.index.passages.WINDOW_WORDS", 180)
    [source] = open_sources(projection)
    blob = source.view.catalog.entries[memory_id].blob
    assert len(projection.vectors.family(blob)) > 1
    monkeypatch.undo()
    projection.reindex()
    open_sources(projection)
    assert projection.last_catch_up.reused == 0
    assert projection.vectors.family(blob) == [blob]


def test_a_long_memorys_words_count_in_its_best_passage(disk_store, projection):
    # Issue 29: a session of many turns holds most of a question's words here
    # and there, whatever the question asks, and every foreign question found
    # such a session relevant. Its words now count where its cosine does.
    lines = [FILLER[i % len(FILLER)] for i in range(60)]
    lines[0] = "Alice: my violin is older than the house."
    lines[30] = "Bob: the lessons start again in May."
    lines[59] = "Alice: Lisbon was sunny all week."
    scattered = remember(disk_store, "\n".join(lines))
    together = remember(disk_store, transcript(60))
    short = remember(disk_store, "Bob: violin lessons in Lisbon, twice a week.")
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    question = "violin lessons in Lisbon"
    ranking = rank(searcher, question, config=RecallConfig(vector=0.0), now=NOW)
    relevance = {r.id: r.relevance for r in ranking.hits}
    entries = source.view.catalog.entries
    whole = searcher.coverage(question, {entries[scattered].blob})
    assert whole[entries[scattered].blob] == pytest.approx(1.0)  # holds them all
    assert relevance[scattered] < 0.5  # one word in any one passage
    assert relevance[together] == pytest.approx(1.0)  # all in one passage
    assert relevance[short] == pytest.approx(1.0)


def test_a_time_phrase_leaves_a_long_memorys_other_words_whole(disk_store, projection):
    # A question's words but its time phrase are judged apart: "migration"
    # is all "migration last week" asks of the words, and one passage holds
    # it, though no passage holds it beside "week".
    lines = [FILLER[i % len(FILLER)] for i in range(60)]
    lines[0] = "Bob: the database migration is planned."
    lines[50] = "Alice: the week was long."
    session = remember(disk_store, "\n".join(lines))
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    config = RecallConfig(vector=0.0)
    for question in ("migration last week", "migration"):
        ranking = rank(searcher, question, config=config, now=NOW)
        [hit] = [r for r in ranking.hits if r.id == session]
        assert hit.relevance == pytest.approx(1.0), question
