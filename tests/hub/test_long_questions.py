"""A long question (a prompt with a pasted log) is asked by its lines too (issue 29)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from recall_support import NOW, WHO

from ctx import engine
from ctx.engine import Draft
from ctx.hub.config import HubConfig, RecallConfig
from ctx.hub.retrieval.index.parts import QUESTION_WORDS, question_parts
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.searcher import Searcher
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.ranking import rank, search_channels
from ctx.hub.retrieval.sources import open_sources

NOTES = [
    "The deploy pipeline runs on GitHub Actions and deploys to Fly.io on every merge to main",
    "Integration tests need the local Postgres started with make db-up before pytest",
    "Redis is only a cache; the source of truth for sessions is Postgres",
    "The frontend uses pnpm, never npm: the lockfile is pnpm-lock.yaml",
    "Feature flags live in LaunchDarkly; the flag for the new checkout is checkout-v2",
]
BUILD = "\n".join(
    f"step {n}/40: building layer sha256:{n:064d} ... done in 0.{n} s"
    for n in range(1, 41)
)


@pytest.fixture
def projection(disk_store):
    for days, text in enumerate(NOTES):
        draft = Draft(text=text, when=NOW - timedelta(days=days))
        engine.remember(disk_store, draft, WHO)
    return Projection.for_store(disk_store, HubConfig())  # MiniLM


def ask(projection, query):
    return recall(
        projection, open_sources(projection), query, config=RecallConfig(), now=NOW
    )


@pytest.mark.parametrize(
    "prompt",
    [
        f"How do we deploy to production? The last run printed:\n{BUILD}",
        f"{BUILD}\nThat was the last run. How do we deploy to production?",
        f"{BUILD}\nHow do we deploy?",
    ],
    ids=["question first", "question last", "one word asked"],
)
def test_a_question_beside_a_pasted_log_finds_its_memory(projection, prompt):
    # Read whole, the build's forty lines were most of the words the word
    # share weighs (ids and numbers no memory holds), and after them the
    # question was past the embedder's window: "nothing relevant".
    result = ask(projection, prompt)
    assert not result.nothing_relevant
    assert not result.weak
    assert result.hits[0].body == NOTES[0]


def test_a_long_questions_cosine_to_a_memory_is_its_best_parts(projection):
    # What a linked neighbour bears on the question (ranking step 6) is
    # its cosine to it: of a long prompt, the best of its parts', as the
    # vector channel's, not that of the log the embedder read first.
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    found = rank(
        searcher,
        f"{BUILD}\nHow do we deploy to production?",
        config=RecallConfig(),
        now=NOW,
    )
    deploy = found.hits[0]
    blob = searcher.view.catalog.entries[deploy.id].blob
    channel = deploy.channels["vector"][1]
    assert searcher.cosine(blob) == pytest.approx(channel)
    assert float(searcher.vector_of(blob) @ searcher.query_vector) < channel - 0.1


TOOLS = (
    "We moved the frontend from npm and webpack to pnpm and vite; jest stays,"
    " eslint runs in the pre-commit hook, and tsc checks types in CI"
)
TOOLING = "\n".join(
    line
    for n in range(1, 11)
    for line in (
        f"npm warn deprecated package-{n}@1.0.{n}: no longer supported",
        f"webpack compiled chunk-{n}.js with 0 errors in {n} ms",
        f"jest PASS suite-{n}.test.ts ({n}.2 s)",
        f"eslint: src/module-{n}.ts is clean",
    )
)


def test_the_word_channels_score_a_long_prompt_by_its_best_part(disk_store):
    # Summed over the whole prompt, a memory that holds a word of several
    # of the log's lines (npm, webpack, jest, eslint) outscored the one
    # that answers the question the prompt asks: BM25 ranked it first.
    # Both channels now score a memory by the part it matches best.
    for days, text in enumerate([*NOTES, TOOLS]):
        draft = Draft(text=text, when=NOW - timedelta(days=days))
        engine.remember(disk_store, draft, WHO)
    projection = Projection.for_store(disk_store, HubConfig())
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    prompt = f"{TOOLING}\nThe build is green. How do we deploy to production?"
    entries = searcher.view.catalog.entries
    deploy = next(
        e.blob for m, e in entries.items() if searcher.read(m).body == NOTES[0]
    )
    channels = search_channels(searcher, prompt, config=RecallConfig(), now=NOW)
    assert channels.hits["bm25"][0][0] == deploy
    # The fuzzy channel too: the tooling note scores as the one line of the
    # log it matches best, not as the sum of them all.
    tools = next(e.blob for m, e in entries.items() if searcher.read(m).body == TOOLS)
    best_line = max(
        dict(searcher.search_fuzzy(part, 10)).get(tools, 0.0) for part in channels.parts
    )
    assert dict(channels.hits["fuzzy"])[tools] == best_line
    whole = dict(searcher.search_fuzzy(prompt, 10))[tools]
    assert whole > best_line
    # A question of a few lines is read whole, as before.
    short = "Do we use npm, webpack, jest and eslint? And how do we deploy?"
    found = search_channels(searcher, short, config=RecallConfig(), now=NOW)
    assert found.hits["bm25"][0][0] != deploy


def searcher_of(store) -> Searcher:
    projection = Projection.for_store(store, HubConfig())
    [source] = open_sources(projection)
    return projection.searcher(source.view)


def test_a_line_of_words_most_memories_hold_searches_nothing_alone(
    disk_store, monkeypatch
):
    # The fuzzy channel leaves out a word that most memories hold when the
    # question has a rarer one (as if the store were large: the bound is
    # lowered). A long prompt's line of such words alone has none, and was
    # a search of most of the index: the whole prompt decides.
    for i in range(9):
        engine.remember(disk_store, Draft(text=f"deploy note {i}"), WHO)
    engine.remember(disk_store, Draft(text="deploy the pelican"), WHO)
    monkeypatch.setattr("ctx.hub.retrieval.index.fuzzy._FUZZY_COMMON_MIN", 5)
    searcher = searcher_of(disk_store)
    filler = "\n".join(f"qwxz{n} vbkj{n} plmt{n} said zzyq{n}" for n in range(20))
    prompt = f"deploy note deploy\n{filler}\nWhere is the pelican?"
    found = searcher.search_fuzzy(prompt, 20, parts=question_parts(prompt))
    assert [searcher.read(searcher.view.by_blob[b]).body for b, _ in found] == [
        "deploy the pelican"
    ]


def test_a_long_prompt_about_nothing_the_store_holds_still_gets_nothing(projection):
    result = ask(projection, f"{BUILD}\nWhich cat did I adopt from the shelter?")
    assert result.nothing_relevant


def test_only_a_long_question_has_parts_and_each_line_is_one_once():
    short = " ".join(["word"] * QUESTION_WORDS)
    assert question_parts(short) == []
    log = "\n".join(["E connection refused"] * 30 + ["Why do the tests fail?"])
    assert question_parts(log) == ["E connection refused", "Why do the tests fail?"]
    # A line too short alone joins the next (the last, the one before).
    frames = [f'File "app/{n}.py", line {n}, in handle' for n in range(20)]
    said = ["KeyError: 'STRIPE_WEBHOOK_SECRET'", "Why does this fail?", "Thanks!"]
    trace = "\n".join([*frames, *said])
    assert question_parts(trace)[-1] == (
        "KeyError: 'STRIPE_WEBHOOK_SECRET' Why does this fail? Thanks!"
    )
    # With the line before them, though it repeats one said before.
    lines = [*frames, "It failed twice here.", *frames[:2], "KeyError: 'X'"]
    parts = question_parts("\n".join(lines))
    assert parts[-1] == f"{frames[1]} KeyError: 'X'"
    assert frames[1] in parts
    # A long line is cut at its sentences' ends.
    line = "We ship on Fridays. " * 30
    assert set(question_parts(line)) == {"We ship on Fridays."}
