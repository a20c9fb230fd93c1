"""Memory that travels: ctx push, fetch, pull and clone against real servers.

Each test starts its servers on loopback and stops them: stock `git daemon`
(git://), dulwich's smart-http server, and a bare repository path. Stock git
works on the other side: it clones what ctx pushed, and ctx pulls what it
pushed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import msgspec
import pytest
from integration_support import GIT, git_env, opened, run_ctx, wall_clock
from remote_servers import (
    CuttingProxy,
    dumb_http_server,
    free_port,
    git_daemon,
    http_server,
)

from ctx.engine import (
    Draft,
    FetchResult,
    Intent,
    PushResult,
    RemoteError,
    Store,
    add_remote,
    fetch,
    list_memories,
    push,
)

ALICE = Intent(agent="alice", intent="observe")


def bare(path: Path) -> Path:
    subprocess.run(
        [GIT, "init", "-q", "--bare", "-b", "main", str(path)],
        check=True,
        env=git_env(),
    )
    return path


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    return result.stdout


def bodies(store: Path, branch: str | None = None) -> set[str]:
    with opened(store) as s:
        return {r.memory.body for r in list_memories(s, branch)}


def all_refs(git_dir: Path) -> str:
    return subprocess.run(
        [GIT, "--git-dir", str(git_dir), "for-each-ref"],
        capture_output=True,
        text=True,
        check=True,
        env=git_env(),
    ).stdout


def test_git_daemon_push_clone_pull_and_stock_git(store_path: Path, tmp_path: Path):
    base = tmp_path / "srv"
    bare(base / "memory.git")
    ok(run_ctx(store_path, "remember", "The queue is Postgres", "--agent", "alice"))
    with git_daemon(base) as port:
        url = f"git://127.0.0.1:{port}/memory.git"
        assert ok(run_ctx(store_path, "remote", "add", "origin", url)) == (
            f"Added remote origin at {url}.\n"
        )
        out = ok(run_ctx(store_path, "push"))
        assert out.startswith("Pushed 1 branch to origin:\n  main  (new) -> ")
        clone_at = tmp_path / "b"
        done = subprocess.run(
            [str(Path(GIT)), "--version"], capture_output=True, check=True
        )
        assert done.returncode == 0
        b = clone_at / ".ctx"
        out = ok(run_ctx(b, "clone", url))
        assert out == f"Cloned {url} into {b} (1 branch, on main).\n"
        assert bodies(b) == {"The queue is Postgres"}

        ok(run_ctx(store_path, "remember", "The API listens on 8080"))
        ok(run_ctx(store_path, "push", "origin", "main"))
        out = ok(run_ctx(b, "pull"))
        assert out.startswith("Fast-forwarded main to ")
        assert bodies(b) == {"The queue is Postgres", "The API listens on 8080"}

        # Stock git clones what ctx pushed: the memories and their trailers.
        work = tmp_path / "wc"
        subprocess.run([GIT, "clone", "-q", url, str(work)], check=True, env=git_env())
        files = list((work / "memory").rglob("*.json"))
        assert len(files) == 2
        assert any("Postgres" in f.read_text() for f in files)
        log = subprocess.run(
            [GIT, "-C", str(work), "log", "--format=%B"],
            capture_output=True,
            text=True,
            check=True,
            env=git_env(),
        ).stdout
        assert "Ctx-Agent: alice" in log
        assert "Ctx-Intent: observe" in log

        # ... and ctx pulls what stock git pushed.
        target = next(f for f in files if "Postgres" in f.read_text())
        target.write_text(target.read_text().replace("Postgres", "Postgres 16"))
        subprocess.run(
            [GIT, "-C", str(work), "commit", "-qam", "By hand"],
            check=True,
            env=git_env(),
        )
        subprocess.run(
            [GIT, "-C", str(work), "push", "-q", "origin", "main"],
            check=True,
            env=git_env(),
        )
        ok(run_ctx(store_path, "pull"))
        assert "The queue is Postgres 16" in bodies(store_path)


def test_smart_http_push_fetch_pull_clone_with_json(store_path: Path, tmp_path: Path):
    remote = bare(tmp_path / "memory.git")
    ok(run_ctx(store_path, "remember", "Deploys on Fridays"))
    with http_server({"/memory.git": remote}) as port:
        url = f"http://127.0.0.1:{port}/memory.git"
        ok(run_ctx(store_path, "remote", "add", "origin", url))
        pushed = msgspec.json.decode(
            ok(run_ctx(store_path, "push", "--json")), type=PushResult
        )
        assert [u.branch for u in pushed.updated] == ["main"]
        b = tmp_path / "b" / ".ctx"
        ok(run_ctx(b, "clone", url))
        ok(run_ctx(b, "remember", "Releases ship on Tuesdays"))
        ok(run_ctx(b, "push"))
        fetched = msgspec.json.decode(
            ok(run_ctx(store_path, "fetch", "--json")), type=FetchResult
        )
        assert [u.branch for u in fetched.updated] == ["main"]
        assert ok(run_ctx(store_path, "fetch")) == "origin has nothing new.\n"
        pulled = json.loads(ok(run_ctx(store_path, "pull", "--json")))
        assert pulled["merge"]["fast_forward"] is True
        assert bodies(store_path) == bodies(b)
        listing = ok(run_ctx(store_path, "remote", "ls"))
        assert listing == f"origin  {url}  (main)\n"


def test_a_dumb_http_server_is_refused_before_anything_is_read(
    store_path: Path, tmp_path: Path
):
    # A dumb server hands out files: dulwich would read every object and pack
    # it names into memory before any bound saw them. Refused at its first
    # answer, for a clone, a fetch and a push alike.
    served = tmp_path / "www"
    remote = bare(served / "memory.git")
    ok(run_ctx(store_path, "remember", "Deploys on Fridays"))
    ok(run_ctx(store_path, "remote", "add", "path", str(remote)))
    ok(run_ctx(store_path, "push", "path"))
    subprocess.run(
        [GIT, "--git-dir", str(remote), "update-server-info"], check=True, env=git_env()
    )
    with dumb_http_server(served) as port:
        url = f"http://127.0.0.1:{port}/memory.git"
        ok(run_ctx(store_path, "remote", "add", "web", url))
        git_dir = store_path / "git"
        before = all_refs(git_dir)
        for args in (["fetch", "web"], ["push", "web"], ["pull", "web"]):
            done = run_ctx(store_path, *args)
            assert done.returncode != 0, (args, done.stdout)
            line = done.stderr.splitlines()[0]
            assert (
                f"{url} answered in a way ctx cannot use: It sent "
                "application/octet-stream, not git's own content type: a web page"
                in line
            )
            assert "git's dumb HTTP protocol" in line
            assert "which ctx does not fetch from or push to." in line
        assert all_refs(git_dir) == before
        clone = run_ctx(tmp_path / "b" / ".ctx", "clone", url)
        assert clone.returncode != 0
        assert "dumb HTTP" in clone.stderr
        assert not (tmp_path / "b" / ".ctx").exists()


NO_HELPER = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
"""No git credential helper of the user's or the system's is asked."""


def assert_passwords_refused(store: Path, remote: Path, plain: str) -> None:
    """Pushes ``store`` to ``plain`` (added as the remote ``plain``), whose
    server wants the password of ``alice``: with none, then with a wrong one.
    Each is refused in one line with exit 8, and ``remote`` is unchanged."""
    before = all_refs(remote)
    ok(run_ctx(store, "remote", "add", "plain", plain))
    asked = run_ctx(store, "push", "plain", env=NO_HELPER)
    assert asked.returncode == 8
    assert asked.stderr.startswith(f"Error: {plain} asked for credentials.\n")
    wrong = run_ctx(
        store,
        "push",
        "plain",
        env={**NO_HELPER, "CTX_GIT_USERNAME": "alice", "CTX_GIT_PASSWORD": "x"},
    )
    assert wrong.returncode == 8
    assert wrong.stderr == (
        f"Error: {plain} refused the credentials.\n"
        "Hint: Check the user name and token (or password).\n"
    )
    assert all_refs(remote) == before


def test_http_credentials_from_the_url_the_environment_or_refused(
    store_path: Path, tmp_path: Path
):
    remote = bare(tmp_path / "memory.git")
    ok(run_ctx(store_path, "remember", "Secret plans"))
    with http_server({"/memory.git": remote}, auth=("alice", "s3cret")) as port:
        plain = f"http://127.0.0.1:{port}/memory.git"
        assert_passwords_refused(store_path, remote, plain)
        ok(
            run_ctx(
                store_path,
                "push",
                "plain",
                env={"CTX_GIT_USERNAME": "alice", "CTX_GIT_PASSWORD": "s3cret"},
            )
        )
        with_user = f"http://alice:s3cret@127.0.0.1:{port}/memory.git"
        b = tmp_path / "b" / ".ctx"
        ok(run_ctx(b, "clone", with_user))
        assert bodies(b) == {"Secret plans"}
        shown = f"http://alice@127.0.0.1:{port}/memory.git"  # never the password
        assert ok(run_ctx(b, "remote", "ls")) == f"origin  {shown}  (main)\n"


def _store_with_memories(path: Path, count: int) -> Store:
    store = Store.init(path, clock=wall_clock)
    from ctx.engine import remember_many

    drafts = [Draft(text=f"Memory {i}: " + "words " * 40) for i in range(count)]
    remember_many(store, drafts, ALICE)
    return store


def test_an_interrupted_fetch_or_push_leaves_both_stores_as_they_were(tmp_path: Path):
    base = tmp_path / "srv"
    remote = bare(base / "memory.git")
    a = _store_with_memories(tmp_path / "a", 200)
    b = Store.init(tmp_path / "b", clock=wall_clock)
    with git_daemon(base) as port:
        # A push cut after 4 KiB of its pack: the remote's refs do not move.
        proxy = CuttingProxy(port, 4096, "up")
        add_remote(a, "origin", f"git://127.0.0.1:{proxy.port}/memory.git")
        a_refs, remote_refs = all_refs(tmp_path / "a" / "git"), all_refs(remote)
        with pytest.raises(RemoteError):
            push(a)
        assert proxy.cut.is_set()
        assert all_refs(remote) == remote_refs
        assert all_refs(tmp_path / "a" / "git") == a_refs
        assert push(a).updated[0].branch == "main"  # the next try succeeds
        proxy.close()

        # A fetch cut after 4 KiB of the pack: no ref of B moves.
        proxy = CuttingProxy(port, 4096, "down")
        add_remote(b, "origin", f"git://127.0.0.1:{proxy.port}/memory.git")
        b_refs = all_refs(tmp_path / "b" / "git")
        with pytest.raises(RemoteError):
            fetch(b, "origin")
        assert proxy.cut.is_set()
        assert all_refs(tmp_path / "b" / "git") == b_refs
        result = fetch(b, "origin")
        assert result.branches["main"] == a.branch_tip("main")
        proxy.close()
    from ctx.engine import fsck

    assert fsck(b).ok
    a.close()
    b.close()


def test_bad_input_is_one_line_a_documented_exit_and_no_change(
    store_path: Path, tmp_path: Path
):
    before = all_refs(store_path / "git")
    config = (store_path / "git" / "config").read_text()

    unknown = run_ctx(store_path, "push", "up")
    assert (unknown.returncode, unknown.stdout) == (3, "")
    assert unknown.stderr == (
        "Error: No remote named 'up' (known: none).\n"
        "Hint: `ctx remote add up URL` adds it.\n"
    )

    bad = run_ctx(store_path, "remote", "add", "x", "htp://example.com/x")
    assert (bad.returncode, bad.stdout) == (4, "")
    assert bad.stderr.startswith(
        "Error: 'htp://example.com/x' is not a remote address ctx can use.\nHint: "
    )
    assert (store_path / "git" / "config").read_text() == config

    port = free_port()  # nothing listens there
    ok(run_ctx(store_path, "remote", "add", "gone", f"git://127.0.0.1:{port}/x.git"))
    gone = run_ctx(store_path, "fetch", "gone")
    assert (gone.returncode, gone.stdout) == (8, "")
    assert gone.stderr == (
        f"Error: Cannot reach git://127.0.0.1:{port}/x.git: Connection refused.\n"
        "Hint: Check the address and the network; nothing was changed.\n"
    )
    gone_http = run_ctx(
        tmp_path / "c" / ".ctx", "clone", f"http://127.0.0.1:{port}/x.git"
    )
    assert gone_http.returncode == 8
    assert gone_http.stderr.startswith(f"Error: Cannot reach http://127.0.0.1:{port}")
    assert not (tmp_path / "c").exists()

    code = tmp_path / "code"
    subprocess.run([GIT, "init", "-q", "-b", "main", str(code)], check=True)
    (code / "main.py").write_text("print('hi')\n")
    subprocess.run([GIT, "-C", str(code), "add", "."], check=True, env=git_env())
    subprocess.run(
        [GIT, "-C", str(code), "commit", "-qm", "code"], check=True, env=git_env()
    )
    ok(run_ctx(store_path, "remote", "add", "code", str(code)))
    foreign = run_ctx(store_path, "pull", "code")
    assert (foreign.returncode, foreign.stdout) == (8, "")
    assert foreign.stderr == (
        f"Error: {code} is not a ctx store: branch 'main' holds no memories.\n"
        "Hint: Give the address of a store that `ctx push` wrote to.\n"
    )
    assert all_refs(store_path / "git") == before


def test_a_push_that_is_not_a_fast_forward_exits_5_with_what_to_do(
    store_path: Path, tmp_path: Path
):
    remote = bare(tmp_path / "memory.git")
    ok(run_ctx(store_path, "remote", "add", "origin", str(remote)))
    ok(run_ctx(store_path, "push"))
    b = tmp_path / "b" / ".ctx"
    ok(run_ctx(b, "clone", str(remote)))
    ok(run_ctx(b, "remember", "B was first"))
    ok(run_ctx(b, "push"))
    ok(run_ctx(store_path, "remember", "A did not pull"))
    refused = run_ctx(store_path, "push")
    assert (refused.returncode, refused.stdout) == (5, "")
    assert refused.stderr == (
        "Error: origin has work that main does not have; nothing was pushed.\n"
        "Hint: `ctx pull origin main` merges it first; "
        "`ctx push --force origin main` overwrites it.\n"
    )
    ok(run_ctx(store_path, "pull"))
    ok(run_ctx(store_path, "push"))
    ok(run_ctx(b, "pull"))
    assert bodies(b) == bodies(store_path) == {"B was first", "A did not pull"}


def test_the_hint_of_a_refused_push_of_another_branch_merges_into_that_branch(
    store_path: Path, tmp_path: Path
):
    remote = bare(tmp_path / "memory.git")
    ok(run_ctx(store_path, "branch", "topic"))
    ok(run_ctx(store_path, "remote", "add", "origin", str(remote)))
    ok(run_ctx(store_path, "push", "--all"))
    b = tmp_path / "b" / ".ctx"
    ok(run_ctx(b, "clone", str(remote)))
    ok(run_ctx(b, "remember", "-b", "topic", "B's topic note"))
    ok(run_ctx(b, "push", "origin", "topic"))
    ok(run_ctx(store_path, "remember", "-b", "topic", "A's topic note"))
    refused = run_ctx(store_path, "push", "--all")  # on main, topic is behind
    assert refused.returncode == 5
    hint = refused.stderr.splitlines()[1]
    assert hint == (
        "Hint: `ctx pull origin topic --into topic` merges it first; "
        "`ctx push --force origin topic` overwrites it."
    )
    pull = hint.split("`")[1].split()[1:]
    ok(run_ctx(store_path, *pull))  # as the hint says
    ok(run_ctx(store_path, "push", "--all"))
    topic = {"B's topic note", "A's topic note"}
    assert bodies(store_path, "topic") == topic
    assert not bodies(store_path) & topic  # main got nothing of topic's


def test_a_pull_that_fast_forwards_onto_unsettled_conflicts_says_so(
    store_path: Path, tmp_path: Path
):
    remote = bare(tmp_path / "memory.git")
    kept = ok(run_ctx(store_path, "remember", "Deploys on Fridays")).strip()
    ok(run_ctx(store_path, "remote", "add", "origin", str(remote)))
    ok(run_ctx(store_path, "push"))
    b = tmp_path / "b" / ".ctx"
    ok(run_ctx(b, "clone", str(remote)))
    ok(run_ctx(store_path, "branch", "side"))
    ok(run_ctx(store_path, "edit", kept, "--body", "Deploys on Mondays", "-b", "side"))
    ok(run_ctx(store_path, "edit", kept, "--body", "Deploys on Tuesdays"))
    assert run_ctx(store_path, "merge", "side").returncode == 5  # kept, committed
    ok(run_ctx(store_path, "push"))
    pulled = ok(run_ctx(b, "pull"))
    assert pulled.startswith("Fast-forwarded main to ")
    assert pulled.splitlines()[1] == (
        "  1 conflict left unsettled where it came from, now on main: settle "
        "each with `ctx resolve ID --take ours|theirs|both`."
    )


def test_recall_after_a_pull_sees_the_pulled_memory(store_path: Path, tmp_path: Path):
    remote = bare(tmp_path / "memory.git")
    ok(run_ctx(store_path, "remember", "The queue is Postgres"))
    ok(run_ctx(store_path, "remote", "add", "origin", str(remote)))
    ok(run_ctx(store_path, "push"))
    b = tmp_path / "b" / ".ctx"
    ok(run_ctx(b, "clone", str(remote)))
    (b / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    first = json.loads(ok(run_ctx(b, "recall", "kubernetes cluster", "--json")))
    assert all("kubernetes" not in json.dumps(h).lower() for h in first["hits"])
    ok(run_ctx(store_path, "remember", "The kubernetes cluster runs in Frankfurt"))
    ok(run_ctx(store_path, "push"))
    ok(run_ctx(b, "pull"))
    after = ok(run_ctx(b, "recall", "kubernetes cluster"))
    assert "The kubernetes cluster runs in Frankfurt" in after
