"""Every write path keeps secrets out: refused, redacted or allowed (issue 33).

Each path is taken through a workspace, as the command line, MCP, HTTP and
the hooks take it; a refusal leaves every branch where it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import secret_samples as s
from dulwich.repo import Repo

from ctx import engine
from ctx.engine import Draft, Intent, LinkChange, Store, make_proposal
from ctx.hub import SecretFoundError, SecretScreen, Workspace, local_now
from ctx.hub.access import Caller
from ctx.hub.calls import CALLS, invoke

WHO = Intent(agent="tester", intent="observe")


def make_ws(folder: Path, mode: str | None = None) -> Workspace:
    Store.init(folder / ".ctx", clock=local_now).close()
    config = '[embedder]\nkind = "hashing"\n'
    if mode:
        config += f'[secrets]\nmode = "{mode}"\n'
    (folder / ".ctx" / "config.toml").write_text(config)
    return Workspace.find(folder / ".ctx")


@pytest.fixture
def ws(tmp_path):
    workspace = make_ws(tmp_path)
    yield workspace
    workspace.close()


def tips(ws: Workspace) -> dict[str, str]:
    store = ws.store()
    return {b: store.branch_tip(b) for b in store.branches()}


def refused(ws: Workspace, write, kind: str, place: str) -> None:
    before = tips(ws)
    with pytest.raises(SecretFoundError) as caught:
        write()
    assert caught.value.message.startswith(f"Refused: a secret ({kind}) in {place}")
    assert caught.value.message.endswith("; nothing was written.")
    assert tips(ws) == before


def bodies(ws: Workspace) -> list[str]:
    return [r.memory.body for r in engine.list_memories(ws.store(), None, "")]


def test_remember_is_refused_naming_the_kind_field_and_line(ws):
    key = s.aws_key()
    text = f"Deploy notes\nThe key is {key}."
    before = tips(ws)
    with pytest.raises(SecretFoundError) as caught:
        engine.remember(ws.store(write=True), Draft(text=text), WHO)
    error = caught.value
    # The memory was never written: no id a reader could look up.
    assert error.message == (
        "Refused: a secret (aws-access-key) in the new memory's body, line 2; "
        "nothing was written."
    )
    assert key not in error.message
    assert key not in (error.hint or "")
    assert error.exit_code == 4
    assert tips(ws) == before
    assert bodies(ws) == []


def test_redact_mode_stores_the_kind_in_place_of_the_secret(tmp_path):
    ws = make_ws(tmp_path, "redact")
    key = s.github_token()
    result = engine.remember(ws.store(write=True), Draft(text=f"{key} ships"), WHO)
    assert bodies(ws) == ["[REDACTED:github-token] ships"]
    assert result.commit is not None
    summary = result.commit.summary
    assert key[:8] not in summary
    assert "[REDACTED:github-token]" in summary


def test_allowing_stores_it_and_new_text_alone_is_scanned_after(ws):
    key = s.stripe_key()
    ws.allow_secrets = True
    [mid] = engine.remember(ws.store(write=True), Draft(text=f"Key {key}"), WHO).ids
    assert bodies(ws) == [f"Key {key}"]
    ws.allow_secrets = False
    # Tagging or editing other lines is fine: the secret is not new text.
    engine.edit(ws.store(), mid, WHO, add_tags=["project:pay"])
    engine.edit(ws.store(), mid, WHO, body=f"Key {key}\nRotated yearly.")
    assert bodies(ws) == [f"Key {key}\nRotated yearly."]
    refused(
        ws,
        lambda: engine.edit(
            ws.store(), mid, WHO, body=f"Key {key}\nOld: {s.stripe_key()}"
        ),
        "stripe-key",
        f"memory {mid}'s body, line 2",
    )


def test_an_edit_title_and_tag_are_scanned(ws):
    [mid] = engine.remember(ws.store(write=True), Draft(text="Payments"), WHO).ids
    refused(
        ws,
        lambda: engine.edit(ws.store(), mid, WHO, title=f"key {s.google_key()}"),
        "google-api-key",
        f"memory {mid}'s title, line 1",
    )


def test_the_reason_trailer_is_scanned(ws):
    why = Intent(agent="tester", intent="observe", reason=f"from {s.sk_key()}")
    refused(
        ws,
        lambda: engine.remember(ws.store(write=True), Draft(text="Plain"), why),
        "openai-key",
        "the commit's reason, line 1",
    )


def test_the_agent_trailer_is_scanned(ws):
    # An agent name takes letters, digits and ._@+- (Intent): a key fits.
    key = s.aws_key()
    who = Intent(agent=key, intent="observe")
    refused(
        ws,
        lambda: engine.remember(ws.store(write=True), Draft(text="Plain"), who),
        "aws-access-key",
        "the commit's agent, line 1",
    )
    (ws.path / "config.toml").write_text('[secrets]\nmode = "redact"\n')
    store = ws.store(write=True)
    engine.remember(store, Draft(text="Plain"), who)
    made = store.commit(store.branch_tip("main"))
    assert made.intent is not None
    assert (made.author, made.intent.agent) == ("redacted", "redacted")


def test_a_refusal_counts_the_other_secrets_in_words():
    one = engine.SecretFinding(path="p", memory=None, kind="k", field="body", line=1)
    message = SecretFoundError((one, one, one)).message
    assert message == "Refused: a secret (k) in p's body, line 1 (and 2 more); " + (
        "nothing was written."
    )


def test_the_session_trailer_and_meta_names_are_scanned(ws):
    # Each is stored as given: a session id in `Ctx-Session:`, a meta
    # field's name in the memory's file.
    token = s.github_token()
    who = Intent(agent="tester", intent="observe", session=f"sess-{token}")
    refused(
        ws,
        lambda: engine.remember(ws.store(write=True), Draft(text="Plain"), who),
        "github-token",
        "the commit's session, line 1",
    )
    named = Draft(text="Plain", meta={f"note {token}": "v"})
    refused(
        ws,
        lambda: engine.remember(ws.store(write=True), named, WHO),
        "github-token",
        "the new memory's meta name 1, line 1",
    )
    (ws.path / "config.toml").write_text('[secrets]\nmode = "redact"\n')
    store = ws.store(write=True)
    [mid] = engine.remember(store, named, who).ids
    assert token not in str(engine.show(store, mid).memory.meta)
    made = store.commit(store.branch_tip("main"))
    assert made.intent is not None
    assert made.intent.session == "redacted"
    # A name over two lines, or two names one once redacted: no traceback.
    odd = Draft(text="Odd names", meta={"line1\nline2": "x", f"k {token}": "y"})
    [oid] = engine.remember(store, odd, WHO).ids
    assert engine.show(store, oid).memory.meta["line1\nline2"] == "x"
    other = s.github_token()
    twice = Draft(text="Plain two", meta={f"a {token}": "1", f"a {other}": "2"})
    with pytest.raises(engine.InvalidInputError, match="would be one"):
        engine.remember(store, twice, WHO)
    # A session's summary is filed under its id: not redacted, refused.
    with pytest.raises(SecretFoundError):
        engine.summarize_session(store, f"sess-{token}", WHO, summary="Went fine")
    # So is a section whose file name is its heading, lower-cased.
    doc = f"# Deploy with {token}\nRun it.\n"
    with pytest.raises(SecretFoundError):
        engine.prime(store, doc, "guide", WHO, file_name="f.md")


def test_a_merge_commits_agent_is_scanned_too(ws):
    store = ws.store(write=True)
    engine.remember(store, Draft(text="Plain"), WHO)
    engine.create_branch(store, "agent/x")
    engine.remember(store, Draft(text="On main"), WHO)
    engine.remember(store, Draft(text="On the branch"), WHO, branch="agent/x")
    who = Intent(agent=s.aws_key(), intent="merge")
    refused(
        ws,
        lambda: engine.merge(store, "agent/x", who),
        "aws-access-key",
        "the commit's agent, line 1",
    )


def test_import_is_refused_as_a_whole(ws):
    lines = [
        json.dumps({"text": "The queue is Postgres"}).encode(),
        json.dumps({"text": f"token {s.slack_token()}"}).encode(),
    ]
    refused(
        ws,
        lambda: engine.import_memories(ws.store(write=True), lines, WHO),
        "slack-token",
        "the new memory's ",
    )
    assert bodies(ws) == []


def test_ingest_is_refused(ws):
    files = [("notes.txt", f"ops\nDATABASE_PASSWORD={s.password()}\n".encode())]
    refused(
        ws,
        lambda: engine.import_files(ws.store(write=True), files, WHO),
        "password",
        "the new memory's ",
    )


def test_prime_is_refused(ws):
    doc = f"# Setup\nRun it.\n\n# Keys\n{s.private_key()}\n"
    refused(
        ws,
        lambda: engine.prime(
            ws.store(write=True), doc, "guide", WHO, file_name="GUIDE.md"
        ),
        "private-key",
        "the new memory's ",
    )


def test_a_session_summary_is_refused(ws):
    refused(
        ws,
        lambda: engine.summarize_session(
            ws.store(write=True), "s1", WHO, summary=f"Used {s.gitlab_token()}"
        ),
        "gitlab-token",
        "the new memory's ",
    )


def test_dreams_proposals_are_scanned(ws):
    store = ws.store(write=True)
    a, b = (
        engine.remember(store, Draft(text=t), WHO).ids[0]
        for t in ("Deploys on Fridays", "Deploys on Fridays.")
    )
    snap = store.snapshot(store.branch_tip("main"))
    proposal = make_proposal(
        kind="duplicate",
        branch="main",
        memories={a: snap.find(a).blob, b: snap.find(b).blob},
        links=[LinkChange(source=b, type="SUPERSEDES", target=a)],
        confidence=0.9,
        reason=f"same as {s.aws_key()}",
        now=local_now(),
    )
    main = store.branch_tip("main")
    with pytest.raises(SecretFoundError, match=r"\(aws-access-key\)"):
        engine.propose(store, proposal)
    # The dream branch may be made, at main's tip: no proposal is on it.
    assert set(tips(ws).values()) == {main}
    assert engine.list_proposals(store, "main") == []


def test_the_agents_calls_are_refused(ws):
    # The MCP tools and the HTTP routes call these handlers (porcelain/agents).
    before = tips(ws)
    with pytest.raises(SecretFoundError):
        invoke(ws, Caller(), CALLS["remember"], {"text": f"key {s.aws_key()}"})
    assert tips(ws) == before


def test_the_http_api_answers_400_and_writes_nothing(ws):
    from starlette.testclient import TestClient

    from ctx.porcelain.agents.http_app import build_app

    before = tips(ws)
    app = build_app(ws, lambda header: None)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        answer = client.post("/api/memories", json={"text": f"k {s.stripe_key()}"})
    assert answer.status_code == 400
    assert "Refused: a secret (stripe-key)" in answer.text
    assert tips(ws) == before


def test_a_merge_is_made_and_names_what_arrived(ws):
    store = ws.store(write=True)
    engine.create_branch(store, "agent")
    ws.allow_secrets = True
    [mid] = engine.remember(
        store, Draft(text=f"A\n{s.aws_key()}"), WHO, branch="agent"
    ).ids
    ws.allow_secrets = False
    result = engine.merge(store, "agent", WHO)
    assert result.fast_forward
    [found] = result.secrets
    assert (found.memory, found.kind, found.field, found.line) == (
        mid,
        "aws-access-key",
        "body",
        2,
    )
    assert found.place() == f"memory {mid}'s body, line 2"
    # A real merge (both sides moved) reports only what it brings.
    ws.allow_secrets = True
    [other] = engine.remember(
        store, Draft(text=f"B {s.github_token()}"), WHO, branch="agent"
    ).ids
    ws.allow_secrets = False
    engine.remember(store, Draft(text="main moves too"), WHO)
    result = engine.merge(store, "agent", WHO)
    assert not result.fast_forward
    assert result.commit is not None
    assert [(f.memory, f.kind) for f in result.secrets] == [(other, "github-token")]


def test_a_pull_is_made_and_names_what_arrived(tmp_path):
    remote = tmp_path / "remote.git"
    Repo.init_bare(str(remote), mkdir=True).close()
    a = Store.init(tmp_path / "a", clock=local_now)  # no screen: as a writer
    engine.remember(a, Draft(text="The queue is Postgres"), WHO)
    engine.add_remote(a, "origin", str(remote))
    engine.push(a)
    engine.clone(tmp_path / "b", str(remote), clock=local_now)
    b = Store.open(
        tmp_path / "b", clock=local_now, screen=SecretScreen(lambda: "refuse")
    )
    [mid] = engine.remember(a, Draft(text=f"pw {s.sk_key()}"), WHO).ids
    engine.push(a)
    result = engine.pull(b, WHO)
    assert result.merge.fast_forward
    assert [(f.memory, f.kind) for f in result.merge.secrets] == [(mid, "openai-key")]
    a.close()
    b.close()


def test_a_secret_in_ctx_remember_is_not_stored_and_the_next_prompt_says_why(
    tmp_path,
):
    from ctx.porcelain.hooks import run_hook

    make_ws(tmp_path).close()
    key = s.aws_key()
    message = f"Noted.\n<ctx:remember>The staging key is {key}</ctx:remember>"

    def hook_input(**fields: object) -> bytes:
        return json.dumps(
            {"session_id": "s-1", "cwd": str(tmp_path), **fields}
        ).encode()

    assert run_hook("stop", hook_input(last_assistant_message=message)) == ""
    answer = run_hook("prompt-submit", hook_input(prompt="ok"))
    text = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    assert (
        "ctx: <ctx:remember> was not carried out: Refused: a secret "
        "(aws-access-key) in the new memory's body"
    ) in text
    assert "Write it again without the secret." in text
    assert key not in text
    ws = Workspace.find(tmp_path / ".ctx")
    assert bodies(ws) == []
    ws.close()


@pytest.mark.anyio
async def test_an_mcp_remember_is_an_error_and_writes_nothing(ws):
    from mcp import Client

    from ctx.porcelain.agents.mcp_server import build_server

    before = tips(ws)
    key = s.github_token()
    async with Client(build_server(ws)) as client:
        result = await client.call_tool("remember", {"text": f"CI uses {key}"})
    assert result.is_error
    assert "Refused: a secret (github-token)" in result.content[0].text
    assert key not in result.content[0].text
    assert tips(ws) == before
