"""A prompt on a cold store: no hub, nothing indexed (issue 30).

The hook answers from the lexical channel in its own process, says so in
the block, and a failure on the way is one line there and in ``ctx doctor``.
The hermetic environment sets ``CTX_HUB_AUTOSTART=0``: no hub starts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.hub import Workspace, local_now
from ctx.hub.api import reindex
from ctx.hub.retrieval.lexical_recall import lexical_recall
from ctx.porcelain.hooks import run_hook
from ctx.porcelain.install.doctor import doctor

WHO = Intent(agent="t", intent="import")
ANSWER = "The payment service retries webhooks 5 times with exponential backoff."
PROMPT = "How many times does the payment service retry webhooks?"
WORDS = [
    "cache",
    "queue",
    "deploy",
    "rollback",
    "billing",
    "database",
    "index",
    "token",
    "budget",
    "branch",
    "merge",
    "latency",
    "schema",
    "review",
    "release",
    "staging",
    "cluster",
    "node",
    "backup",
    "shard",
]


def filler(i: int) -> str:
    picked = " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(12))
    return f"Note {i}: the {WORDS[i % len(WORDS)]} team wrote {picked}."


@pytest.fixture
def cold(tmp_path: Path) -> Path:
    """A project whose store holds 300 memories, imported, never indexed."""
    root = tmp_path / "app"
    root.mkdir()
    store = Store.init(root / ".ctx", clock=local_now)
    drafts = [Draft(text=filler(i)) for i in range(300)]
    drafts[137] = Draft(text=ANSWER, kind="fact")
    drafts.append(Draft(text="Always run the payment tests.", pinned=True))
    engine.remember_many(store, drafts, WHO, summary="import")
    store.close()
    (root / ".ctx" / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    return root


def given(root: Path, prompt: str = PROMPT, session: str = "s-1") -> str:
    data = json.dumps({"session_id": session, "cwd": str(root), "prompt": prompt})
    answer = run_hook("prompt-submit", data.encode())
    assert answer, "the hook gave nothing"
    return json.loads(answer)["hookSpecificOutput"]["additionalContext"]


def test_a_cold_store_answers_lexically_and_says_so(cold):
    text = given(cold)
    assert "ctx: memory warming up: lexical answer only.\n" in text
    assert ANSWER in text
    assert "Always run the payment tests." not in text  # pinned: the start's
    assert "Note " not in text  # weak matches stay out of a prompt
    assert not (cold / ".ctx" / "index" / "state.json").exists()  # nothing built


def test_the_index_when_current_ranks_as_the_memory_ranking_does(cold):
    store = Store.open(cold / ".ctx", clock=local_now)
    try:
        ask = {"branch": "main", "budget": 2000, "floor": 0.45, "now": local_now()}
        in_memory = lexical_recall(store, PROMPT, **ask)
        ws = Workspace(cold / ".ctx")
        try:
            reindex(ws)
        finally:
            ws.close()
        indexed = lexical_recall(store, PROMPT, **ask)
    finally:
        store.close()
    assert in_memory.hits[0].body == indexed.hits[0].body == ANSWER
    # The index weighs function words too ("how", "the"), a quarter each:
    # memories that hold only those come after, with no relevance.
    relevant = [h for h in indexed.hits if h.relevance]
    assert [h.id for h in relevant] == [h.id for h in in_memory.hits]
    for a, b in zip(relevant, in_memory.hits, strict=True):
        assert a.relevance == pytest.approx(b.relevance)
    assert (
        in_memory.notices
        == indexed.notices
        == ("memory warming up: lexical answer only",)
    )


@pytest.mark.parametrize(
    "log",
    [
        # Issue 29: read whole, the log's ids were most of the prompt's word
        # weight and the answer was weak: the hook, which keeps the floor,
        # gave nothing. A long prompt's relevance is its best line's.
        "\n".join(f"E   job {n:06x} failed with exit code {n % 7}" for n in range(40)),
        # The index reads a text's first 10,000 characters: past a log that
        # long, the question was never searched and the answer was no
        # candidate. Each line is searched on its own, a memory scoring as
        # the line it matches best.
        "\n".join(
            f"E   job {n:06x} failed, its exit status not zero" for n in range(300)
        ),
    ],
    ids=["ids", "past 10,000 characters"],
)
def test_a_question_after_a_pasted_log_is_weighed_by_its_line_from_the_index(cold, log):
    # From a current index, as a hub's recall weighs a long prompt.
    store = Store.open(cold / ".ctx", clock=local_now)
    try:
        ws = Workspace(cold / ".ctx")
        try:
            reindex(ws)
        finally:
            ws.close()
        ask = {"branch": "main", "budget": 2000, "floor": 0.45, "now": local_now()}
        answered = lexical_recall(store, f"{log}\n{PROMPT}", **ask)
    finally:
        store.close()
    assert answered.hits[0].body == ANSWER
    assert not answered.hits[0].weak


def test_an_unreadable_index_is_one_line_in_the_block_and_in_doctor(cold, monkeypatch):
    ws = Workspace(cold / ".ctx")
    try:
        reindex(ws)
    finally:
        ws.close()
    index = cold / ".ctx" / "index"
    state = json.loads((index / "state.json").read_text())
    for file in (index / state["lexical"]).iterdir():
        if file.suffix != ".lock":
            file.write_bytes(b"\0" * 64)
    text = given(cold)
    assert ANSWER in text  # ranked in memory instead
    (line,) = [x for x in text.splitlines() if x.startswith("ctx: ")]
    assert line.startswith(
        "ctx: memory warming up: lexical answer only; the index could not be read ("
    )
    assert line.endswith("; ranked in memory.")
    monkeypatch.chdir(cold)
    (check,) = [c for c in doctor(spawn=False).checks if c.name == "hook failures"]
    assert check.status == "warn"
    assert "the index could not be read" in check.detail


def test_a_store_that_cannot_log_logs_in_the_users_cache(cold, monkeypatch):
    # A store whose private folder cannot be written (read-only, or as here
    # a file in its place) still has its failures logged, and doctor says so.
    from ctx.hub import cache_log_path, log_line

    private = cold / ".ctx" / "private"
    if private.exists():
        import shutil

        shutil.rmtree(private)
    private.write_text("not a folder")
    ws = Workspace.find(cold / ".ctx")
    try:
        log_line(ws, "stop", "s-9", "PermissionError: the store is read-only")
    finally:
        ws.close()
    logged = cache_log_path().read_text()
    assert f"store={str(cold / '.ctx')!r} PermissionError" in logged
    monkeypatch.chdir(cold)
    (check,) = [c for c in doctor(spawn=False).checks if c.name == "hook failures"]
    assert check.status == "warn"
    assert "the store is read-only" in check.detail
    assert check.hint == f"The hooks' log is {cache_log_path()}."


def test_doctor_says_when_no_hook_failed(cold, monkeypatch):
    monkeypatch.chdir(cold)
    (check,) = [c for c in doctor(spawn=False).checks if c.name == "hook failures"]
    assert (check.status, check.detail) == ("ok", "none logged")


def test_a_hit_not_embedded_yet_is_weighed_by_its_words_beside_embedded_ones(
    tmp_path, monkeypatch
):
    """A large import waits to be embedded while older memories have vectors
    (a hub embeds it in the background): the answer among the new ones has
    no cosine, and the hook weighs it by its words, as it weighs every hit of
    a lexical answer. It gave the filler around it, or nothing, before."""
    from ctx.hub.server.service import Answerer
    from ctx.hub.server.wire import RecallAsk, RecallReply
    from ctx.porcelain.hooks import events

    root = tmp_path / "app"
    root.mkdir()
    store = Store.init(root / ".ctx", clock=local_now)
    older = [Draft(text=f"The payment service {filler(i)}") for i in range(40)]
    engine.remember_many(store, older, WHO)
    store.close()
    (root / ".ctx" / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    ws = Workspace(root / ".ctx")
    reindex(ws)  # the first 40 have vectors
    ws.close()
    store = Store.open(root / ".ctx", clock=local_now)
    drafts = [Draft(text=filler(i)) for i in range(40, 200)]
    drafts[60] = Draft(text=ANSWER, kind="fact")
    engine.remember_many(store, drafts, WHO, summary="import")  # the backlog

    def as_a_hub_answers(hook, prompt):  # before its backfill is done
        answerer = Answerer(store, local_now, one_shot=True, defer=True)
        asked = RecallAsk(query=prompt, budget=hook.settings.prompt_budget)
        reply = answerer.answer(asked)
        assert isinstance(reply, RecallReply)
        assert reply.result.unembedded == 160
        assert {h.similarity is None for h in reply.result.hits} == {True, False}
        return reply.result

    monkeypatch.setattr(events, "_recalled", as_a_hub_answers)
    try:
        text = given(root)
        assert ANSWER in text
        # With nothing waiting, a hit with no cosine is one the vector channel
        # did not find close: the cosine floor holds for it.
        import msgspec

        def none_waiting(hook, prompt):
            done = as_a_hub_answers(hook, prompt)
            return msgspec.structs.replace(done, unembedded=0)

        monkeypatch.setattr(events, "_recalled", none_waiting)
        data = json.dumps({"session_id": "s-2", "cwd": str(root), "prompt": PROMPT})
        assert ANSWER not in run_hook("prompt-submit", data.encode())
    finally:
        store.close()


def test_a_long_memory_over_the_hooks_budget_comes_as_its_answering_passage(cold):
    # The whole runbook is over the budget: it was left out, and the prompt
    # got nothing of it.
    steps = [f"Step {i}: restart worker pool {i} and check it." for i in range(150)]
    store = Store.open(cold / ".ctx", clock=local_now)
    try:
        engine.remember(
            store, Draft(text="\n".join([*steps, "Rotate the zanzibar keys."])), WHO
        )
        ask = {"branch": "main", "budget": 400, "floor": 0.45, "now": local_now()}
        answered = lexical_recall(store, "rotate the worker zanzibar keys", **ask)
    finally:
        store.close()
    [hit] = [h for h in answered.hits if h.passage is not None]
    assert hit.body.endswith("Rotate the zanzibar keys.")
    assert hit.passage.number == hit.passage.of > 1
    assert answered.tokens <= 400


@pytest.mark.parametrize("indexed", [False, True])
def test_a_cold_answer_leaves_archived_memories_out(cold, indexed):
    # `summarize --archive-sources` takes its sources off the context: recall
    # left them out, and the hook's lexical answer gave them back.
    store = Store.open(cold / ".ctx", clock=local_now)
    try:
        drafts = [
            Draft(text="The refund worker retries failed refunds 3 times."),
            Draft(text="The refund worker retries refunds again every night."),
        ]
        sources = engine.remember_many(store, drafts, WHO).ids
        summary = "The refund worker retries refunds: 3 times, then nightly."
        engine.summarize(store, sources, summary, WHO, archive_sources=True)
    finally:
        store.close()
    if indexed:
        ws = Workspace(cold / ".ctx")
        try:
            reindex(ws)
        finally:
            ws.close()
    text = given(cold, "How often does the refund worker retry refunds?")
    assert summary in text
    assert "failed refunds 3 times" not in text
    assert "again every night" not in text


def test_an_archived_memory_over_the_budget_is_not_counted_left_out(cold):
    # It is off the context: not a match the budget left out, as recall
    # counts it, nor searched for a passage.
    steps = [
        f"Step {i}: rotate refund worker key {i} and check it." for i in range(150)
    ]
    store = Store.open(cold / ".ctx", clock=local_now)
    try:
        [runbook] = engine.remember_many(store, [Draft(text="\n".join(steps))], WHO).ids
        engine.tag(store, runbook, ["tier:off-context"], WHO)
        ask = {"branch": "main", "budget": 60, "floor": 0.45, "now": local_now()}
        answered = lexical_recall(store, "rotate the refund worker keys", **ask)
    finally:
        store.close()
    assert runbook not in [h.id for h in answered.hits]
    assert answered.left_out == 0
