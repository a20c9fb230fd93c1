"""Memory follows the code's branches through every door: the workspace's store
reports the code's branch as its default (issue 34). Real git repositories made
with the git binary in tmp dirs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from code_repos import code_repo, commit, git
from mcp import Client

from ctx import engine
from ctx.engine import Store
from ctx.engine.reflogs import reflog
from ctx.hub import FollowingStore, Workspace
from ctx.hub.code_branches import sync_at_start
from ctx.hub.lazy_branches import LazyBranches
from ctx.porcelain.agents.mcp_server import build_server
from ctx.porcelain.hooks import run_hook

T0 = datetime(2026, 1, 5, tzinfo=UTC)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    return code_repo(tmp_path / "code")


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    path = tmp_path / ".ctx"
    Store.init(path, clock=lambda: T0).close()
    (path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n\n[branches]\nfollow_code = true\n'
    )
    return path


def agents_on_their_branches(store_dir: Path) -> None:
    """Turns ``[agents] branch_per_agent`` on in the store's config."""
    with (store_dir / "config.toml").open("a", encoding="utf-8") as f:
        f.write("\n[agents]\nbranch_per_agent = true\n")


def test_a_workspace_that_names_no_code_follows_nothing(store_dir, code):
    ws = Workspace(store_dir)
    try:
        assert type(ws.store()) is LazyBranches
    finally:
        ws.close()


def test_off_the_store_is_a_plain_store(store_dir, code):
    (store_dir / "config.toml").write_text("[branches]\nfollow_code = false\n")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        assert type(ws.store()) is LazyBranches
        assert ws.store().head_branch() == "main"
    finally:
        ws.close()


def test_reads_see_the_ancestor_until_a_write_creates_the_branch(store_dir, code):
    git(code, "checkout", "-q", "-b", "feature/x")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        store = ws.store()
        assert isinstance(store, FollowingStore)
        assert store.head_branch() == "main"
        assert store.branches() == ["main"]
        store = ws.store(write=True)
        assert store.head_branch() == "feature/x"
        # Named, not made: a command refused before it writes leaves none.
        assert store.branches() == ["main"]
        assert store.branch_tip("feature/x") == store.branch_tip("main")
        fork = store.branch_tip("main")
        engine.remember(store, engine.Draft(text="x knows"), ws.intent("observe"))
        assert store.branches() == ["feature/x", "main"]
        assert store.commit(store.branch_tip("feature/x")).parents == (fork,)
        made, wrote = reflog(store, "feature/x")
        assert made.message == "ctx: created for code branch feature/x from main"
        assert wrote.message.startswith("ctx observe: Remember")
    finally:
        ws.close()


def test_a_refused_write_leaves_reads_of_the_unmade_branch_working(store_dir, code):
    """A server's workspace writes for days: reads after a refusal still answer."""
    from ctx.hub.access import Caller
    from ctx.hub.calls import LsRequest, RememberRequest, ls, remember

    agents_on_their_branches(store_dir)
    ws = Workspace.find(store_dir, cwd=code)
    try:
        engine.remember(
            ws.store(write=True), engine.Draft(text="on main"), ws.intent("o")
        )
        git(code, "checkout", "-q", "-b", "feature/x")
        with pytest.raises(engine.InvalidInputError):
            remember(ws, Caller(), RememberRequest(text="  "))
        assert [m.headline for m in ls(ws, Caller(), LsRequest())] == ["on main"]
        # An agent's own branch starts from the code branch's, unmade.
        remember(ws, Caller(agent="bot"), RememberRequest(text="bot fact"))
        store = ws.store()
        assert store.branches() == ["agent/bot@feature/x", "main"]
        own = engine.list_memories(store, "agent/bot@feature/x", "")
        assert sorted(r.memory.body for r in own) == ["bot fact", "on main"]
    finally:
        ws.close()


def test_an_awaited_branch_is_made_by_its_first_move_and_then_forgotten(store_dir):
    ws = Workspace(store_dir)
    try:
        store = ws.store(write=True)
        assert isinstance(store, LazyBranches)
        tip = store.branch_tip("main")
        store.await_branch("agent/bot", "main")
        assert store.branch_tip("agent/bot") == tip
        with pytest.raises(engine.RefNotFoundError):
            engine.delete_branch(store, "agent/bot")  # not there yet
        engine.switch_branch(store, "agent/bot")  # HEAD names a made branch
        assert store.branches() == ["agent/bot", "main"]
        assert store._awaited == {}
        engine.switch_branch(store, "main")
        # A call that is done forgets what it named and did not write.
        store.await_branch("agent/eve", "main")
        store.drop_awaited("agent/eve")
        with pytest.raises(engine.RefNotFoundError):
            store.branch_tip("agent/eve")
    finally:
        ws.close()


def test_an_agent_has_a_branch_per_code_branch(store_dir, code):
    """Its writes on an unmerged code branch never reach it on main."""
    from ctx.hub.access import Caller
    from ctx.hub.calls import RecallRequest, RememberRequest, recall, remember

    agents_on_their_branches(store_dir)
    bot = Caller(agent="bot")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        remember(ws, bot, RememberRequest(text="Retries happen three times on x"))
        git(code, "checkout", "-q", "-b", "feature/x")
        engine.remember(
            ws.store(write=True),
            engine.Draft(text="Feature x caches in Redis"),
            ws.intent("o"),
        )
        remember(ws, bot, RememberRequest(text="Feature x retries five times"))
        store = ws.store()
        assert store.branches() == [
            "agent/bot@feature/x",
            "agent/bot@main",
            "feature/x",
            "main",
        ]
        review = engine.review(store, "agent/bot@feature/x")
        assert review.base == "feature/x"
        assert [m.body for m in review.diff.added] == ["Feature x retries five times"]
        git(code, "checkout", "-q", "main")
        found = recall(ws, bot, RecallRequest(query="how many times do retries happen"))
        bodies = [h.body for h in found.hits]
        assert found.branch == "agent/bot@main"
        assert "Retries happen three times on x" in bodies
        assert not {"Feature x caches in Redis", "Feature x retries five times"} & set(
            bodies
        )
    finally:
        ws.close()


def test_an_agent_reads_its_code_branch_s_writes_in_a_new_process(store_dir, code):
    """Named the same by a reader and a writer, though feature/y has no memory."""
    from ctx.hub.access import Caller
    from ctx.hub.calls import RecallRequest, RememberRequest, recall, remember

    agents_on_their_branches(store_dir)
    bot = Caller(agent="bot")
    git(code, "checkout", "-q", "-b", "feature/y")
    writer = Workspace.find(store_dir, cwd=code)
    try:
        remember(writer, bot, RememberRequest(text="Feature y retries five times"))
    finally:
        writer.close()
    reader = Workspace.find(store_dir, cwd=code)
    try:
        store = reader.store()
        assert store.branches() == ["agent/bot@feature/y", "main"]
        found = recall(reader, bot, RecallRequest(query="feature y retries"))
        assert found.branch == "agent/bot@feature/y"
        assert [h.body for h in found.hits] == ["Feature y retries five times"]
        # Reviewed against what it was made from, feature/y having no memory.
        assert engine.review(store, "agent/bot@feature/y").base == "main"
    finally:
        reader.close()


def test_the_nearest_code_ancestor_with_memory_is_chosen(store_dir, code):
    """feature/y split from feature/x after main: x's memory, not main's."""
    git(code, "checkout", "-q", "-b", "feature/x")
    (code / "b.txt").write_text("b")
    git(code, "add", "b.txt")
    git(code, "commit", "-q", "-m", "b")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        ws.store(write=True)
        engine.remember(ws.store(), engine.Draft(text="x knows"), ws.intent("observe"))
    finally:
        ws.close()
    git(code, "checkout", "-q", "-b", "feature/y")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        assert ws.store().head_branch() == "feature/x"
        assert ws.store(write=True).head_branch() == "feature/y"
        store = ws.store()
        assert store.branch_tip("feature/y") == store.branch_tip("feature/x")
    finally:
        ws.close()


@pytest.mark.anyio
async def test_the_mcp_door_writes_on_the_code_branch(store_dir, code):
    git(code, "checkout", "-q", "-b", "feature/mcp")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        async with Client(build_server(ws)) as client:
            await client.call_tool("remember", {"text": "learned over MCP"})
        store = ws.store()
        assert store.branches() == ["feature/mcp", "main"]
        listed = engine.list_sorted(store, "feature/mcp").memories
        assert [r.memory.body for r in listed] == ["learned over MCP"]
        assert engine.list_sorted(store, "main").memories == ()
    finally:
        ws.close()


def test_the_hooks_follow_the_code_branch_of_the_agents_folder(
    store_dir, code, monkeypatch
):
    """The hook's workspace runs in the payload's cwd: its code branch."""
    monkeypatch.setenv("CTX_DIR", str(store_dir))
    fixture = Path(__file__).parents[1] / "fixtures" / "hooks" / "session_start.json"
    store = Store.open(store_dir, clock=lambda: T0)
    who = engine.Intent(agent="tester", intent="observe")
    try:
        engine.remember(store, engine.Draft(text="Main knows the queue"), who)
        engine.create_branch(store, "feature/x", "main")
        draft = engine.Draft(text="Only feature x retries", pinned=True)
        engine.remember(store, draft, who, branch="feature/x")
    finally:
        store.close()

    def started() -> str:
        data = json.loads(fixture.read_text())
        data["cwd"] = str(code)
        out = json.loads(run_hook("session-start", json.dumps(data).encode()))
        return str(out["hookSpecificOutput"]["additionalContext"])

    assert "Only feature x retries" not in started()
    git(code, "checkout", "-q", "-b", "feature/x")
    assert "Only feature x retries" in started()


def start_session(code: Path) -> str:
    fixture = Path(__file__).parents[1] / "fixtures" / "hooks" / "session_start.json"
    data = json.loads(fixture.read_text())
    data["cwd"] = str(code)
    out = run_hook("session-start", json.dumps(data).encode())
    if not out:
        return ""  # nothing to give
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def remember_here(store_dir: Path, code: Path, text: str) -> str:
    """Writes as a command run in ``code`` does; returns the memory's id."""
    ws = Workspace.find(store_dir, cwd=code)
    try:
        draft = engine.Draft(text=text, pinned=True)
        done = engine.remember(ws.store(write=True), draft, ws.intent("observe"))
        return str(done.ids[0])
    finally:
        ws.close()


def tips(store_dir: Path) -> dict[str, str]:
    store = Store.open(store_dir, clock=lambda: T0)
    try:
        return {b: store.branch_tip(b) for b in store.branches()}
    finally:
        store.close()


def merged_feature(store_dir: Path, code: Path, *, merge: bool = True) -> None:
    """feature/x: a commit, then memory; merged into main (with ``merge``)."""
    git(code, "checkout", "-q", "-b", "feature/x")
    commit(code, "x.txt")
    remember_here(store_dir, code, "Only feature x retries")
    git(code, "checkout", "-q", "main")
    if merge:
        git(code, "merge", "-q", "--no-ff", "--no-edit", "feature/x")


MERGED_LINE = "ctx: memory of merged code branches merged into main: feature/x."


def test_session_start_merges_the_memory_of_merged_code_branches_first(
    store_dir, code, monkeypatch
):
    monkeypatch.setenv("CTX_DIR", str(store_dir))
    merged_feature(store_dir, code, merge=False)
    assert "Only feature x retries" not in start_session(code)  # not merged yet
    git(code, "merge", "-q", "--no-ff", "--no-edit", "feature/x")
    context = start_session(code)
    assert "Only feature x retries" in context
    assert MERGED_LINE in context.splitlines()
    merged = tips(store_dir)
    assert merged["main"] == merged["feature/x"]  # a fast-forward of memory
    again = start_session(code)
    assert "Only feature x retries" in again
    assert "merged code branches" not in again
    assert tips(store_dir) == merged


def test_a_conflict_at_session_start_is_one_line_not_a_failure(
    store_dir, code, monkeypatch
):
    monkeypatch.setenv("CTX_DIR", str(store_dir))
    kept = remember_here(store_dir, code, "Deploys on Fridays")
    git(code, "checkout", "-q", "-b", "feature/x")
    commit(code, "x.txt")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        engine.edit(ws.store(write=True), kept, ws.intent("refine"), body="Mondays")
    finally:
        ws.close()
    git(code, "checkout", "-q", "main")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        engine.edit(ws.store(write=True), kept, ws.intent("refine"), body="Tuesdays")
    finally:
        ws.close()
    git(code, "merge", "-q", "--no-edit", "feature/x")
    context = start_session(code)
    assert (
        "ctx: memory of merged code branches merged into main: feature/x "
        "(1 conflict kept: `ctx resolve` settles them)."
    ) in context.splitlines()
    assert "memory unavailable" not in context
    store = Store.open(store_dir, clock=lambda: T0)
    try:
        assert engine.conflicted_ids(store, "main") == {kept}
    finally:
        store.close()


def test_out_of_time_the_merges_are_left_for_ctx_sync(store_dir, code):
    merged_feature(store_dir, code)
    before = tips(store_dir)
    ws = Workspace.find(store_dir, cwd=code)
    try:
        said = sync_at_start(ws, 0.0)
    finally:
        ws.close()
    assert said == "ctx: out of time, left for `ctx sync`: feature/x."
    assert tips(store_dir) == before


def test_a_busy_store_is_one_line_and_no_merge(store_dir, code):
    merged_feature(store_dir, code)
    before = tips(store_dir)
    holder = Store.open(store_dir, clock=lambda: T0)
    ws = Workspace.find(store_dir, cwd=code)
    try:
        with holder.locked():
            # Time enough to reach the lock on a busy machine; the lock is
            # held throughout, so the wait for it is what runs out.
            said = sync_at_start(ws, 1.5)
    finally:
        ws.close()
        holder.close()
    assert said == (
        "ctx: the memory of merged code branches was not merged (Another writer "
        "held the store for over 1.5 s); `ctx sync` merges it."
    )
    assert tips(store_dir) == before


def test_a_target_sync_refuses_is_one_line_with_its_way_out(store_dir, code):
    # ctx sync would refuse it too: no line that it merges it.
    git(code, "checkout", "-q", "-b", "deadbeef1")
    git(code, "checkout", "-q", "-b", "feature/x")
    commit(code, "x.txt")
    remember_here(store_dir, code, "Only feature x retries")
    git(code, "checkout", "-q", "deadbeef1")
    git(code, "merge", "-q", "--no-ff", "--no-edit", "feature/x")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        said = sync_at_start(ws, 5.0)
    finally:
        ws.close()
    assert said == (
        "ctx: the memory of merged code branches was not merged (Code branch "
        "'deadbeef1' cannot have memory of its own: Branch name 'deadbeef1' "
        "looks like a commit id). Merge into a code branch of another name."
    )


def test_no_sync_without_following_or_at_a_detached_head(store_dir, code):
    merged_feature(store_dir, code)
    before = tips(store_dir)
    git(code, "checkout", "-q", "--detach")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        assert sync_at_start(ws, 5.0) is None
    finally:
        ws.close()
    git(code, "checkout", "-q", "main")
    (store_dir / "config.toml").write_text("[branches]\nfollow_code = false\n")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        assert sync_at_start(ws, 5.0) is None
    finally:
        ws.close()
    assert tips(store_dir) == before


def test_a_fresh_branchs_memory_is_not_merged_at_session_start(
    store_dir, code, monkeypatch
):
    """feature/y has memory but no commit: main moving on does not merge it."""
    monkeypatch.setenv("CTX_DIR", str(store_dir))
    git(code, "checkout", "-q", "-b", "feature/y")
    remember_here(store_dir, code, "Plan for y, not written yet")
    git(code, "checkout", "-q", "main")
    commit(code, "m.txt")
    before = tips(store_dir)
    assert "Plan for y" not in start_session(code)
    assert tips(store_dir) == before


@pytest.mark.anyio
async def test_a_server_follows_its_own_folder_and_takes_named_branches_as_given(
    store_dir, code
):
    """docs/branches.md, "Servers": a call naming no branch follows the
    server's folder at the call; a named branch must exist."""
    remember_here(store_dir, code, "Main knows the queue")
    ws = Workspace.find(store_dir, cwd=code)
    try:
        async with Client(build_server(ws, tools="all")) as client:

            async def listed(**branch: str) -> tuple[bool, str]:
                done = await client.call_tool("ls", branch)
                return done.is_error, done.content[0].text

            git(code, "checkout", "-q", "-b", "feature/s")
            error, text = await listed()
            assert not error
            assert "Main knows the queue" in text  # main's, read through
            wrote = await client.call_tool("remember", {"text": "Served on s"})
            assert not wrote.is_error, wrote.content
            git(code, "checkout", "-q", "main")
            assert "Served on s" not in (await listed())[1]
            assert "Served on s" in (await listed(branch="feature/s"))[1]

            error, text = await listed(branch="feature/t")
            assert error
            assert "Unknown revision 'feature/t'." in text
            named = {"text": "Named t", "branch": "feature/t"}
            refused = await client.call_tool("remember", named)
            assert refused.is_error
            assert "feature/t" not in ws.store().branches()
            made = await client.call_tool("branch", {"name": "feature/t"})
            assert not made.is_error, made.content
            wrote = await client.call_tool("remember", named)
            assert not wrote.is_error, wrote.content
    finally:
        ws.close()


def test_a_linked_worktree_outside_the_checkout_finds_the_projects_store(
    tmp_path, code, monkeypatch
):
    monkeypatch.delenv("CTX_DIR", raising=False)
    Store.init(code / ".ctx", clock=lambda: T0).close()
    tree = tmp_path / "elsewhere" / "tree"
    git(code, "worktree", "add", "-q", "-b", "feature/wt", str(tree))
    (tree / "src").mkdir()
    for where in (tree, tree / "src"):
        assert Workspace.locate(cwd=where) == (code / ".ctx", False)
    # A submodule of the worktree: its .git names a folder of its own; the
    # checkout around it is the worktree, whose project's store it is.
    lib = code_repo(tmp_path / "lib")
    git(
        tree,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(lib),
        "libs/lib",
    )
    assert (tree / "libs" / "lib" / ".git").is_file()
    assert Workspace.locate(cwd=tree / "libs" / "lib") == (code / ".ctx", False)
    # A checkout of a bare repository's worktree has no main work tree.
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(code), str(bare))
    git(bare, "worktree", "add", "-q", "-b", "other", str(tmp_path / "other"))
    assert Workspace.locate(cwd=tmp_path / "other")[1]  # the user's store
