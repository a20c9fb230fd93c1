"""ctx hook EVENT: each event on recorded host inputs, and the whole cycle."""

from __future__ import annotations

import json
import os
import stat
from datetime import timedelta
from pathlib import Path

import pytest
from hook_support import (
    OWNER,
    SESSION,
    add,
    context,
    empty_project,
    engine_clock,
    payload,
)

from ctx import engine
from ctx.engine import DATA_NOTE, Draft, Store
from ctx.hub.retrieval.prompt import QUERY_SHOWN
from ctx.hub.session_state import read_session, session_path
from ctx.hub.shown import read_shown
from ctx.porcelain.hooks import EVENTS, MAX_CONTEXT, run_hook
from ctx.porcelain.hooks.events import Event


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a store of a few memories (hashing embedder).

    Without a hub (:func:`~hook_support.empty_project`); with none and
    without ``CTX_NO_HUB`` it would be answered by the lexical channel
    alone (test_hooks_cold.py).
    """
    root = empty_project(tmp_path, monkeypatch)
    add(root, "Never push to main without a review.", kind="pattern", pinned=True)
    add(
        root,
        "The API is deployed to Kubernetes with Argo CD and blue-green rollouts.",
        kind="decision",
        tags=("project:api",),
    )
    add(
        root,
        "The job queue lives in Postgres: a jobs table read with SKIP LOCKED.",
        kind="decision",
        tags=("project:api",),
    )
    add(root, "Why does staging run out of memory at night?", kind="open-question")
    return root


def log_of(root: Path) -> list[engine.LogEntry]:
    store = Store.open(root / ".ctx", clock=engine_clock)
    try:
        return engine.log(store)
    finally:
        store.close()


def live_bodies(root: Path) -> list[str]:
    store = Store.open(root / ".ctx", clock=engine_clock)
    try:
        return [r.memory.body for r in engine.list_memories(store, None, "")]
    finally:
        store.close()


def bodies_on(root: Path, branch: str) -> set[str]:
    store = Store.open(root / ".ctx", clock=engine_clock)
    try:
        tip = store.branch_tip(branch)
        return {r.memory.body for r in store.snapshot(tip).memories()}
    finally:
        store.close()


# -- session-start -----------------------------------------------------------


def test_session_start_gives_the_composed_context(project):
    text = context("session-start", "session_start", project)
    assert text is not None
    assert "Never push to main without a review." in text
    assert "Argo CD" in text
    assert "SKIP LOCKED" in text
    # Open questions come last, under their own heading.
    assert text.index("## Open questions") < text.index("run out of memory")
    assert text.index("Argo CD") < text.index("## Open questions")


def test_session_start_on_an_empty_store_gives_nothing(tmp_path):
    Store.init(tmp_path / ".ctx", clock=engine_clock).close()
    assert run_hook("session-start", payload("session_start", tmp_path)) == ""


def test_the_start_budget_is_configurable_and_the_cap_holds(project):
    for n in range(40):
        add(project, f"Note {n}: " + "the service keeps a long log line. " * 30)
    config = project / ".ctx" / "config.toml"
    config.write_text(config.read_text() + "start_budget = 2400\n")
    text = context("session-start", "session_start", project)
    assert text is not None
    assert 8_000 < len(text) <= MAX_CONTEXT
    config.write_text(config.read_text().replace("2400", "300"))
    small = context("session-start", "session_start", project, session_id="other")
    assert small is not None
    assert len(small) < 2_000


# -- prompt-submit -----------------------------------------------------------


def test_prompt_submit_recalls_what_the_session_was_not_given(project):
    context("session-start", "session_start", project)
    later = add(
        project,
        "Kubernetes deploys of the API need the image tag pinned in values.yaml.",
        kind="fact",
    )
    text = context("prompt-submit", "user_prompt_submit", project)
    assert text is not None
    assert later in text
    # Pinned and already given memories are not given again.
    assert "Never push to main" not in text
    assert "Argo CD" not in text
    # Asked again, nothing is new.
    assert context("prompt-submit", "user_prompt_submit", project) is None


def test_prompt_submit_gives_memory_where_its_state_cannot_be_kept(
    project, monkeypatch
):
    # A read-only mount of the store: recall answers from indexes in memory;
    # the session's state cannot be written, so the memory may come again.
    import errno

    from ctx.hub import session_state

    later = add(
        project,
        "Kubernetes deploys of the API need the image tag pinned in values.yaml.",
        kind="fact",
    )

    def read_only(*_args):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(session_state, "private_folder", read_only)
    for _ in range(2):
        text = context("prompt-submit", "user_prompt_submit", project)
        assert text is not None
        assert later in text
    # An unreadable state, never written back, is not reported at each prompt.
    hooks = project / ".ctx" / "private" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    recorded = json.loads(payload("user_prompt_submit", project))["session_id"]
    (hooks / f"{recorded}.json").write_text("garbage")
    text = context("prompt-submit", "user_prompt_submit", project)
    assert text is not None
    assert "unreadable" not in text


def test_a_question_after_a_pasted_log_gets_its_memory_once(project):
    # Issue 29: read whole, a prompt of a long log and then a question had
    # the question's words a small share of all its words and left out of
    # the embedder's window: nothing was given. It is asked by its lines
    # too. And the block, which sits beside the prompt it answers, repeated
    # the prompt whole in its first line, its tokens paid twice.
    log = "\n".join(
        f"E   psycopg.OperationalError: port {5400 + n} refused" for n in range(80)
    )
    prompt = f"{log}\nHow do we deploy the API to Kubernetes?"
    text = context("prompt-submit", "user_prompt_submit", project, prompt=prompt)
    assert text is not None
    assert "Argo CD" in text
    first = text.splitlines()[1]
    assert first.startswith("<!-- ctx recall: E   psycopg.OperationalError: port 5400")
    assert "…" in first
    assert len(first) < QUERY_SHOWN + 100
    assert text.count("OperationalError") <= 3


def test_a_trivial_prompt_adds_nothing_and_keeps_nothing(project):
    for prompt in ("ok", "thanks, go ahead", "yes please, continue", "👍"):
        assert (
            context("prompt-submit", "user_prompt_submit", project, prompt=prompt)
            is None
        )
    assert not session_path(project / ".ctx", SESSION).exists()


def test_only_memories_close_enough_to_the_prompt_are_added(project):
    config = project / ".ctx" / "config.toml"
    config.write_text(config.read_text().replace("floor = 0.1", "floor = 1.0"))
    assert context("prompt-submit", "user_prompt_submit", project) is None
    config.write_text(config.read_text().replace("floor = 1.0", "floor = -1.0"))
    text = context("prompt-submit", "user_prompt_submit", project, session_id="s2")
    assert text is not None
    assert "Argo CD" in text


def test_a_prompt_in_chinese_gets_its_memory_with_minilm(project):
    # MiniLM does not read Chinese: the recall has no vector channel, and no
    # hit a cosine; the hook keeps the relevance floor instead of dropping
    # every hit for want of one (issue 29).
    (project / ".ctx" / "config.toml").write_text('[embedder]\nkind = "minilm"\n')
    answer = add(project, "我们的数据库用的是 PostgreSQL 15，部署在北京机房。")  # noqa: RUF001
    add(project, "消息队列使用 Kafka，保留七天。")  # noqa: RUF001
    asked = "数据库用什么？"  # noqa: RUF001
    text = context("prompt-submit", "user_prompt_submit", project, prompt=asked)
    assert text is not None
    assert answer in text
    assert "Kafka" not in text
    weather = context(
        "prompt-submit",
        "user_prompt_submit",
        project,
        prompt="天气怎么样",
        session_id="s2",
    )
    assert weather is None


def test_a_prompt_gets_its_memory_when_the_embedder_cannot_be_reached(project):
    # Nothing listens there: the vector channel fails, and no hit has a cosine.
    (project / ".ctx" / "config.toml").write_text(
        '[embedder]\nkind = "ollama"\nbase_url = "http://127.0.0.1:9"\n'
        'model = "nomic-embed-text"\n'
    )
    answer = add(project, "The payment service retries webhooks five times.")
    add(project, "The queue is Postgres, backed up nightly.")
    asked = "How many times are payment webhooks retried?"
    text = context("prompt-submit", "user_prompt_submit", project, prompt=asked)
    assert text is not None
    assert answer in text


def test_a_context_over_the_cap_is_cut_on_a_line(project, monkeypatch):
    lines = "".join(f"line {n:05d} of a long context\n" for n in range(1000))
    big = Event("session-start", "SessionStart", lambda hook: lines)
    monkeypatch.setitem(EVENTS, "session-start", big)
    text = context("session-start", "session_start", project)
    assert text is not None
    assert len(text) <= MAX_CONTEXT
    assert text.endswith(
        " of a long context\n(cut: ctx gave more than the host takes)\n</ctx:context>"
    )


def test_gemini_cli_names_the_event_its_way(project):
    text = context("BeforeAgent", "gemini_before_agent", project)
    assert text is not None
    assert "Argo CD" in text


# -- stop, and the whole cycle -------------------------------------------------


def test_the_whole_cycle(project):
    start = context("session-start", "session_start", project)
    assert start is not None
    assert "Argo CD" in start
    assert context("prompt-submit", "user_prompt_submit", project) is None

    ids = {line.split("`")[1] for line in start.splitlines() if line.startswith("- `")}
    one, other = sorted(ids)[:2]
    message = (
        "Done: the deploy doc is updated.\n\n"
        '<ctx:remember type="decision" tags="project:api,tier:reference">'
        "Canary deploys were dropped: blue-green is simpler to roll back."
        "</ctx:remember>\n"
        '<ctx:recall query="postgres job queue"/>\n'
        "<ctx:status/>\n"
        '<ctx:link from="NOPE" to="ALSO-NOPE"/>\n'
        '<ctx:link from="x"/>\n'
        f'<ctx:link from="{one}" to="{other}" type="depends-on"/>\n'
    )
    assert (
        run_hook("stop", payload("stop", project, last_assistant_message=message)) == ""
    )

    text = context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert text is not None
    # The queued recall, with the memory the session start already gave.
    assert "<!-- ctx recall: postgres job queue" in text
    assert "SKIP LOCKED" in text
    # The queued status.
    assert "## ctx status: branch main" in text
    assert "5 memories" in text
    # What each command did, or why not.
    assert "ctx: remembered decision `" in text
    assert "not carried out" in text
    assert "NOPE" in text
    assert "line 7: <ctx:link> needs the attribute 'to'; not run." in text
    assert f"linked `{one}` DEPENDS_ON `{other}`." in text  # the engine's spelling
    assert ids  # the session start named its memories by id
    # Delivered once.
    assert context("prompt-submit", "user_prompt_submit", project, prompt="ok") is None

    # The write carries the intent: the host as agent, the session as trailer.
    newest = log_of(project)[0].commit
    assert newest.author == "claude-code"
    assert newest.intent is not None
    assert newest.intent.session == SESSION
    assert newest.intent.agent == "claude-code"
    assert (
        "Canary deploys were dropped: blue-green is simpler to roll back."
        in live_bodies(project)
    )
    # ... so the session is seen in history, with its decision.
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        [seen] = engine.list_sessions(store)
        detail = engine.session_detail(store, SESSION)
    finally:
        store.close()
    assert (seen.id, seen.agent, seen.commits) == (SESSION, "claude-code", 2)
    assert [m.kind for m in detail.decisions] == ["decision"]
    # What it was given (its recalls) comes from the hooks' private state.
    from ctx.hub import Workspace, session_report

    ws = Workspace.find(project / ".ctx")
    try:
        assert set(ids) <= set(session_report(ws, SESSION).recalls)
    finally:
        ws.close()


def test_with_a_branch_per_agent_the_hooks_write_there_and_recall_main_too(project):
    with (project / ".ctx" / "config.toml").open("a") as f:
        f.write("[agents]\nbranch_per_agent = true\n")
    before = [e.commit.id for e in log_of(project)]
    message = (
        "<ctx:remember>Kubernetes deploys of the API roll out at nine.</ctx:remember>"
    )
    run_hook("stop", payload("stop", project, last_assistant_message=message))
    assert [e.commit.id for e in log_of(project)] == before  # main untouched
    mine = bodies_on(project, "agent/claude-code")
    assert "Kubernetes deploys of the API roll out at nine." in mine
    later = add(project, "Kubernetes deploys of the API need a pinned image tag.")
    text = context("prompt-submit", "user_prompt_submit", project)
    assert text is not None
    assert later in text  # main's, written after the agent branched
    assert "roll out at nine" in text  # the agent's own


def test_with_a_branch_per_agent_a_new_session_starts_with_the_agents_own(project):
    with (project / ".ctx" / "config.toml").open("a") as f:
        f.write("[agents]\nbranch_per_agent = true\n")
    message = (
        '<ctx:remember type="decision">Releases are cut from the release '
        "branch on Thursdays.</ctx:remember>"
    )
    run_hook("stop", payload("stop", project, last_assistant_message=message))
    text = context("session-start", "session_start", project, session_id="next")
    assert text is not None
    assert "cut from the release branch on Thursdays" in text  # its own branch
    assert "Argo CD" in text  # main's, beneath it


def test_the_hooks_work_on_the_branch_ctx_branch_names(project, monkeypatch):
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        engine.create_branch(store, "other")
        engine.remember(
            store,
            Draft(text="On this branch the cache is Valkey.", kind="decision"),
            engine.Intent(agent="alice", intent="observe"),
            branch="other",
        )
    finally:
        store.close()
    before = [e.commit.id for e in log_of(project)]
    monkeypatch.setenv("CTX_BRANCH", "other")
    text = context("session-start", "session_start", project)
    assert text is not None
    assert "the cache is Valkey" in text
    message = (
        "<ctx:remember>Valkey runs with three replicas.</ctx:remember>\n"
        '<ctx:remember tags="tier:off-context">Valkey was tried on a '
        "Tuesday.</ctx:remember>\n"
        '<ctx:recall query="cache Valkey"/>'
    )
    run_hook("stop", payload("stop", project, last_assistant_message=message))
    assert [e.commit.id for e in log_of(project)] == before  # main untouched
    assert "Valkey runs with three replicas." in bodies_on(project, "other")
    # What the session was shown is recorded where it was read: on other.
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        tip = store.branch_tip("other")
    finally:
        store.close()
    shown = read_shown(project / ".ctx")
    assert [(e.via, e.branch) for e in shown] == [("hook", "other")] * len(shown)
    assert shown[-1].commit == tip
    # After compaction, what it wrote there comes back (an archived memory,
    # which no composed context holds).
    text = context("session-start", "session_start_compact", project)
    assert text is not None
    assert "Valkey was tried on a Tuesday." in text
    # With a branch of its own, the agent still works where CTX_BRANCH says.
    with (project / ".ctx" / "config.toml").open("a") as f:
        f.write("[agents]\nbranch_per_agent = true\n")
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        engine.create_branch(store, "agent/claude-code")
        engine.remember(
            store,
            Draft(text="On the agent's branch the cache is Memcached."),
            engine.Intent(agent="claude-code", intent="observe"),
            branch="agent/claude-code",
        )
    finally:
        store.close()
    asked = context(
        "prompt-submit", "user_prompt_submit", project, prompt="cache?", session_id="s2"
    )
    assert asked is not None
    assert "the cache is Valkey" in asked
    assert "the whole live branch (other)" in asked
    assert "Memcached" not in asked


def test_memories_cut_at_the_hosts_cap_are_not_taken_as_given(project):
    # The recalls of an answer wait for the next prompt; what the host's cap
    # cuts off was not given, and a later prompt may give it.
    for n in range(60):
        add(project, f"Note {n}: the deploy worker drains queue {n} every night.")
    message = "\n".join(
        f'<ctx:recall query="deploy worker queue {q}" budget="2000"/>'
        for q in (1, 2, 3)
    )
    run_hook("stop", payload("stop", project, last_assistant_message=message))
    text = context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert text is not None
    assert text.endswith("(cut: ctx gave more than the host takes)\n</ctx:context>")
    shown = set(read_session(project / ".ctx", SESSION).shown)
    given = {i for i in shown if i in text}
    assert shown == given  # every memory taken as given is in the context


def test_a_session_id_that_cannot_be_a_trailer_is_hashed(project):
    message = "<ctx:remember>Builds take four minutes.</ctx:remember>"
    run_hook(
        "stop",
        payload("stop", project, session_id="a b/c", last_assistant_message=message),
    )
    newest = log_of(project)[0].commit
    assert newest.intent is not None
    assert newest.intent.session is not None
    assert newest.intent.session.startswith("h-")


def test_the_recorded_stop_runs_its_commands(project):
    assert run_hook("stop", payload("stop", project)) == ""
    assert any("Argo CD with blue-green rollouts" in b for b in live_bodies(project))
    text = context("prompt-submit", "user_prompt_submit", project, prompt="continue")
    assert text is not None
    assert "<!-- ctx recall: postgres queue" in text
    assert "## ctx status" in text


def test_ctx_agent_names_the_agent(project, monkeypatch):
    monkeypatch.setenv("CTX_AGENT", "reviewer")
    run_hook("stop", payload("stop", project))
    assert log_of(project)[0].commit.author == "reviewer"


def test_a_message_is_carried_out_once(project):
    before = len(live_bodies(project))
    data = payload("stop", project)
    run_hook("stop", data)
    run_hook("stop", payload("stop", project, stop_hook_active=True))
    assert len(live_bodies(project)) == before + 1


@pytest.mark.parametrize(
    "message",
    [
        "```\n<ctx:remember>in a fence</ctx:remember>\n```",
        "~~~xml\n<ctx:remember>in a tilde fence</ctx:remember>",
        "Write `<ctx:remember>inline code</ctx:remember>` to store.",
        "> <ctx:remember>a quoted line</ctx:remember>",
        '<ctx:context source="prompt-submit">\n<ctx:remember>given back</ctx:remember>\n</ctx:context>',
    ],
)
def test_commands_in_code_quotes_or_injected_text_are_not_run(project, message):
    before = live_bodies(project)
    run_hook("stop", payload("stop", project, last_assistant_message=message))
    assert live_bodies(project) == before
    assert not session_path(project / ".ctx", SESSION).exists()


def test_what_a_hook_injected_is_never_captured_back(project):
    start = context("session-start", "session_start", project)
    assert start is not None
    # An agent that echoes its context, commands and all, writes nothing.
    echoed = start.replace("Argo CD", "<ctx:remember>Argo CD</ctx:remember>")
    before = live_bodies(project)
    run_hook("stop", payload("stop", project, last_assistant_message=echoed))
    assert live_bodies(project) == before


def test_summarize_supersede_and_expand(project):
    a = add(project, "Builds take 12 minutes on the old runners.")
    b = add(project, "Builds take 4 minutes on the new runners.")
    message = (
        f'<ctx:summarize nodes="{a},{b}" archive="true" title="Build times">'
        "Builds went from 12 to 4 minutes with the new runners.</ctx:summarize>\n"
        f'<ctx:supersede old="{a}" new="{b}"/>\n'
        '<ctx:task name="ci" action="finish"/>'
    )
    run_hook("stop", payload("stop", project, last_assistant_message=message))
    text = context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert text is not None
    assert "ctx: summarized 2 memories as `" in text
    assert f"ctx: `{b}` supersedes `{a}`." in text
    assert 'a task needs a name and action="start" or action="end"' in text
    summary = text.split("ctx: summarized 2 memories as `")[1].split("`")[0]

    run_hook(
        "stop",
        payload(
            "stop", project, last_assistant_message=f'<ctx:expand node="{summary}"/>'
        ),
    )
    text = context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert text is not None
    assert f"## Sources of `{summary}`\n\n{DATA_NOTE}\n\n- **fact** `" in text
    # Each source's text is quoted data, as in a recall's block (issue 33).
    assert "\n  > Builds take 12 minutes on the old runners." in text
    assert "\n  > Builds take 4 minutes on the new runners." in text


def test_stop_reads_the_transcript_when_the_host_sends_no_message(project, tmp_path):
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "remember this"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "<ctx:remember>From the transcript.</ctx:remember>",
                    }
                ],
            },
        },
    ]
    transcript.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    data = json.loads(payload("stop", project))
    del data["last_assistant_message"]
    data["transcript_path"] = str(transcript)
    run_hook("stop", json.dumps(data).encode())
    assert "From the transcript." in live_bodies(project)


# -- the other events ----------------------------------------------------------


def fill(project: Path, count: int) -> None:
    """Writes reference memories, which a composed context takes first.

    They are written a minute on: the most recently changed of their tier
    even when the session's own reference memory was written in the same
    second (a tie the composed context would order by chance).
    """
    store = Store.open(
        project / ".ctx", clock=lambda: engine_clock() + timedelta(minutes=1)
    )
    try:
        for n in range(count):
            text = f"Note {n}: the build cache was cleared on runner {n}. " * 3
            engine.remember(store, Draft(text=text, tags=("tier:reference",)), OWNER)
    finally:
        store.close()


def test_pre_compact_then_compact_gives_the_session_back(project):
    config = project / ".ctx" / "config.toml"
    config.write_text(config.read_text() + "start_budget = 600\n")
    context("session-start", "session_start", project)
    run_hook("stop", payload("stop", project))
    context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert run_hook("pre-compact", payload("pre_compact", project)) == ""
    fill(project, 20)
    text = context("session-start", "session_start_compact", project)
    assert text is not None
    main, back = text.split("## Before compaction, this session had\n\n", 1)
    assert back.startswith(f"{DATA_NOTE}\n\n- **")
    assert back.count(DATA_NOTE) == 1
    assert "Note " in main
    assert "Note " not in back  # what the context holds is not repeated
    # What it wrote (a reference memory, so in the context) comes once.
    assert text.count("Deploys of the API go through Argo CD") == 1
    # The queued recall showed it: it comes back once, in the composed context
    # when that holds it (memories written in the same second tie in its
    # order), else given back.
    assert text.count("SKIP LOCKED") == 1
    assert ("SKIP LOCKED" in back) != ("SKIP LOCKED" in main)
    # What it gave back counts as given: a prompt does not repeat it.
    prompt = "Deploys of the API go through Argo CD with blue-green rollouts?"
    recalled = context("prompt-submit", "user_prompt_submit", project, prompt=prompt)
    assert recalled is None or "Deploys of the API go through" not in recalled


def test_compact_without_pre_compact_gives_back_what_the_session_had(project):
    config = project / ".ctx" / "config.toml"
    config.write_text(config.read_text() + "start_budget = 600\n")
    context("session-start", "session_start", project)
    fill(project, 20)
    text = context("session-start", "session_start_compact", project)
    assert text is not None
    main, back = text.split("## Before compaction, this session had\n\n", 1)
    # Once: given back unless the composed context already holds it.
    assert text.count("Argo CD") == 1
    assert ("Argo CD" in back) != ("Argo CD" in main)


def test_gemini_compress_gives_back_what_the_session_had(project):
    # Gemini CLI starts the session again after compressing with source
    # "compress" (Claude Code and Codex say "compact"), after its PreCompress.
    config = project / ".ctx" / "config.toml"
    config.write_text(config.read_text() + "start_budget = 600\n")
    context("session-start", "session_start", project)
    pre = payload("pre_compact", project, hook_event_name="PreCompress")
    assert run_hook("PreCompress", pre) == ""
    fill(project, 20)
    text = context("session-start", "session_start_compact", project, source="compress")
    assert text is not None
    main, back = text.split("## Before compaction, this session had\n\n", 1)
    assert text.count("Argo CD") == 1
    assert ("Argo CD" in back) != ("Argo CD" in main)


def test_startup_gives_nothing_back(project):
    context("session-start", "session_start", project)
    text = context("session-start", "session_start", project)
    assert text is not None
    assert "## Before compaction" not in text


def test_subagent_start_gives_a_briefing(project):
    text = context("subagent-start", "subagent_start", project)
    assert text is not None
    assert text.splitlines()[1].startswith("A briefing for the Explore subagent")
    assert "Argo CD" in text


def test_subagent_stop_carries_out_the_subagents_commands(project):
    assert run_hook("subagent-stop", payload("subagent_stop", project)) == ""
    assert "The API's health check is GET /healthz on port 8081." in live_bodies(
        project
    )


def test_session_end_removes_the_sessions_state(project):
    run_hook("stop", payload("stop", project))
    path = session_path(project / ".ctx", SESSION)
    assert path.exists()
    old = session_path(project / ".ctx", "old-session")
    old.write_text("{}")
    week_ago = path.stat().st_mtime - 8 * 24 * 3600
    os.utime(old, (week_ago, week_ago))
    assert run_hook("session-end", payload("session_end", project)) == ""
    assert not path.exists()
    assert not old.exists()


def test_session_start_removes_the_state_of_sessions_idle_for_a_week(project):
    # Codex sends no session-end: without this, each session's files stayed.
    old = session_path(project / ".ctx", "old-session")
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text("{}")
    week_ago = old.stat().st_mtime - 8 * 24 * 3600
    os.utime(old, (week_ago, week_ago))
    run_hook("session-start", payload("session_start", project))
    assert session_path(project / ".ctx", SESSION).exists()
    assert not old.exists()


def test_a_session_resumed_after_a_week_keeps_its_state(project):
    run_hook("session-start", payload("session_start", project))
    path = session_path(project / ".ctx", SESSION)
    week_ago = path.stat().st_mtime - 8 * 24 * 3600
    for file in (path, path.with_suffix(".lock")):
        os.utime(file, (week_ago, week_ago))
    before = path.read_bytes()
    resumed = payload("session_start", project, source="resume")
    run_hook("session-start", resumed)  # gives what it gave: nothing changes
    assert path.read_bytes() == before


def test_a_lock_in_use_stays_whatever_its_age(project):
    # Made once and never touched: judged by its session's state, or two
    # hooks of one long session would each lock a file of their own.
    other = session_path(project / ".ctx", "long-session")
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text("{}")
    lock = other.with_suffix(".lock")
    lock.write_text("")
    week_ago = lock.stat().st_mtime - 8 * 24 * 3600
    os.utime(lock, (week_ago, week_ago))
    run_hook("session-start", payload("session_start", project))
    assert lock.exists()


def test_the_state_is_private_and_never_committed(project):
    commits = len(log_of(project))
    run_hook("stop", payload("stop", project, last_assistant_message="<ctx:status/>"))
    assert len(log_of(project)) == commits
    folder = project / ".ctx" / "private"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert (folder / ".gitignore").read_text().endswith("*\n")
    path = session_path(project / ".ctx", SESSION)
    assert path.parent == folder / "hooks"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["blocks"][0]["title"] == "Status"


def test_an_unsafe_session_id_is_hashed(project):
    run_hook("stop", payload("stop", project, session_id="../../etc/x"))
    names = sorted(p.name for p in (project / ".ctx" / "private" / "hooks").iterdir())
    assert all(n.startswith("session-") for n in names)


def test_a_command_that_breaks_is_reported_and_the_others_run(project, monkeypatch):
    from ctx.porcelain.hooks import actions

    def broken(turn, command):
        raise RuntimeError("boom")

    monkeypatch.setitem(actions._ACTIONS, "status", broken)
    message = "<ctx:status/><ctx:remember>After the broken one.</ctx:remember>"
    run_hook("stop", payload("stop", project, last_assistant_message=message))
    assert "After the broken one." in live_bodies(project)
    text = context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert text is not None
    assert "ctx: <ctx:status/> failed: RuntimeError: boom" in text


def test_a_task_tags_its_memories_and_its_end_files_them(project):
    start = (
        '<ctx:task name="auth" action="start"/>\n'
        '<ctx:remember type="decision">Sessions are signed JWTs, 15 minutes.'
        "</ctx:remember>\n"
        "<ctx:remember>Tried cookie sessions first; too slow.</ctx:remember>"
    )
    run_hook("stop", payload("stop", project, last_assistant_message=start))
    text = context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert text is not None
    assert "ctx: task 'auth' started" in text
    end = (
        '<ctx:task name="auth" action="end" summarize="true">Auth uses JWTs.</ctx:task>'
    )
    run_hook("stop", payload("stop", project, last_assistant_message=end))
    text = context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert text is not None
    assert (
        "ctx: task 'auth' ended: 1 decision promoted to reference, 1 memory archived; summary `"
        in text
    )
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        tiers = {
            s.record.memory.body: s.tier
            for s in engine.select(store, "tag:task:auth", now=engine_clock())
        }
    finally:
        store.close()
    assert tiers == {
        "Sessions are signed JWTs, 15 minutes.": "reference",
        "Tried cookie sessions first; too slow.": "off-context",
        "Auth uses JWTs.": "working",
    }


def _stop(project: Path, message: str) -> str:
    """Runs the stop hook on ``message``; returns the report lines it left."""
    run_hook("stop", payload("stop", project, last_assistant_message=message))
    text = context("prompt-submit", "user_prompt_submit", project, prompt="ok")
    assert text is not None
    return "\n".join(line for line in text.splitlines() if line.startswith("ctx: "))


def _records(project: Path) -> list[engine.MemoryRecord]:
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        return list(engine.list_memories(store, None, ""))
    finally:
        store.close()


def test_a_remember_with_a_known_kind_and_title_updates_that_memory(project):
    # Issue 32: it wrote a second memory that contradicted the first.
    before = len(_records(project))
    first = _stop(
        project,
        '<ctx:remember type="decision" title="Queue backend">The queue runs on '
        "Redis.</ctx:remember>",
    )
    assert "ctx: remembered decision `" in first
    (mid,) = [
        r.memory.id for r in _records(project) if r.memory.title == "Queue backend"
    ]
    again = _stop(
        project,
        '<ctx:remember type="decision" title="Queue backend" tags="project:api">'
        "The queue runs on Postgres.</ctx:remember>",
    )
    assert f"ctx: updated decision `{mid}` (the same kind and title)." in again
    titled = [r for r in _records(project) if r.memory.title == "Queue backend"]
    assert [(r.memory.id, r.memory.body) for r in titled] == [
        (mid, "The queue runs on Postgres.")
    ]
    assert "project:api" in titled[0].memory.tags
    assert len(_records(project)) == before + 1


def test_remembering_the_same_text_again_adds_its_new_tags(project):
    # Issue 32: the tags of a second, identical remember were dropped silently.
    text = "Release notes are written by the on-call engineer."
    _stop(project, f"<ctx:remember>{text}</ctx:remember>")
    again = _stop(
        project, f'<ctx:remember tags="team:ops,project:api">{text}</ctx:remember>'
    )
    (record,) = [r for r in _records(project) if r.memory.body == text]
    assert {"team:ops", "project:api"} <= set(record.memory.tags)
    assert (
        f"ctx: remembered fact `{record.memory.id}` (already stored; its tags now "
        "include team:ops, project:api)." in again
    )
    same = _stop(project, f'<ctx:remember tags="team:ops">{text}</ctx:remember>')
    assert f"ctx: remembered fact `{record.memory.id}` (already stored)." in same


@pytest.mark.parametrize("reviewed_only", [False, True])
def test_session_start_composes_reviewed_memory_only_when_asked(project, reviewed_only):
    # An agent's unreviewed memory on its own branch, which someone made
    # the default (`ctx switch agent/bot`).
    unreviewed = "Deploys of the API skip the review on Fridays."
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        engine.create_branch(store, "agent/bot")
        engine.remember(
            store, Draft(text=unreviewed, pinned=True), OWNER, branch="agent/bot"
        )
        engine.switch_branch(store, "agent/bot")
    finally:
        store.close()
    if reviewed_only:
        with (project / ".ctx" / "config.toml").open("a") as f:
            f.write("[recall]\nreviewed_only = true\n")
    text = context("session-start", "session_start", project)
    assert text is not None
    assert "Never push to main without a review." in text  # main's, reviewed
    assert (unreviewed in text) is not reviewed_only


def test_an_answer_past_its_deadline_leaves_the_session_as_it_was(project, monkeypatch):
    # As the hub answers a relayed hook (off the main thread, no signal): the
    # answer that comes too late is thrown away, so it must not note its
    # memories as given to the session, or the next prompt would withhold
    # what this one never delivered.
    import threading

    from ctx.hub import read_session
    from ctx.porcelain.hooks import events

    config = project / ".ctx" / "config.toml"
    config.write_text(config.read_text() + "timeout = 0.5\n")
    recalled = events._recalled
    late = threading.Event()

    def slow(hook, prompt):
        found = recalled(hook, prompt)
        late.wait(30)  # past the deadline
        return found

    monkeypatch.setattr(events, "_recalled", slow)
    asked = {"prompt": "Where does the job queue live?"}
    answers: list[str] = []
    caller = threading.Thread(
        target=lambda: answers.append(
            run_hook("prompt-submit", payload("user_prompt_submit", project, **asked))
        )
    )
    caller.start()
    caller.join(30)
    assert "no answer within 0.5 s" in answers[0]
    late.set()
    for thread in threading.enumerate():
        if thread.name == "hook-answer":
            thread.join(30)
    state = read_session(project / ".ctx", SESSION)
    assert state is None or state.shown == []
    monkeypatch.setattr(events, "_recalled", recalled)
    text = context("prompt-submit", "user_prompt_submit", project, **asked)
    assert text is not None
    assert "SKIP LOCKED" in text


def test_a_commands_arguments_are_checked_as_a_tools_are(project):
    # Built as typed requests, they are checked against the same schemas: an
    # id that names a revision would pass round the branch's scope check.
    (mid,) = [r.memory.id for r in _records(project)][:1]
    reports = _stop(
        project,
        f'<ctx:expand node="{mid}@main~1"/>\n<ctx:link from="{mid}" to="{mid}" '
        'type="likes"/>',
    )
    assert f'<ctx:expand node="{mid}@main~1"/> was not carried out: Invalid ' in (
        reports
    )
    assert "Invalid arguments for expand: Expected `str` matching regex" in reports
    assert "Invalid arguments for link: Expected `str` matching regex" not in reports
    assert "Invalid arguments for link: Invalid enum value 'LIKES'" in reports


def test_a_task_named_like_a_query_files_its_own_memories_only(project):
    # The end selects the task's memories by their tag, quoted: the name
    # fix(auth)OR(kind:fact) is one value, not a query over the store.
    name = "fix(auth)OR(kind:fact)"
    _stop(project, "<ctx:remember>The cache holds a day.</ctx:remember>")
    others = {r.memory.id for r in _records(project)}
    reports = _stop(
        project,
        f'<ctx:task name="{name}" action="start"/>\n'
        "<ctx:remember>Tried cookie sessions first; too slow.</ctx:remember>\n"
        f'<ctx:task name="{name}" action="end"/>\n'
        '<ctx:task name="two words" action="start"/>',
    )
    assert f"ctx: task {name!r} ended: 0 decisions promoted to reference, 1 memory" in (
        reports
    )
    assert "a task's name is one word" in reports
    store = Store.open(project / ".ctx", clock=engine_clock)
    try:
        off = {
            s.record.memory.id
            for s in engine.select(store, "tag:tier:off-context", now=engine_clock())
        }
    finally:
        store.close()
    assert len(off) == 1
    assert not off & others
