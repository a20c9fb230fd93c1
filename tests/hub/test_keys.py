"""API keys: scopes, tokens, revocation, storage on disk, concurrency."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import threading
from datetime import UTC, datetime

import pytest

from ctx.engine import (
    InvalidInputError,
    NotAStoreError,
    NotFoundError,
    ReadOnlyStoreError,
    StoreError,
)
from ctx.hub import (
    ApiKey,
    AuthError,
    Workspace,
    authenticate,
    create_key,
    keys_required,
    list_keys,
    revoke_key,
)

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
T1 = datetime(2026, 1, 6, 9, 30, tzinfo=UTC)


@pytest.fixture
def ws(disk_store) -> Workspace:
    return Workspace(disk_store.path, clock=lambda: T0)


def _files(ws: Workspace) -> dict[str, bytes]:
    return {
        str(p.relative_to(ws.path)): p.read_bytes()
        for p in sorted(ws.path.rglob("*"))
        if p.is_file()
    }


def _key(read=(), write=(), revoked=False) -> ApiKey:
    return ApiKey(
        id="0badcafe",
        label="k",
        read=tuple(read),
        write=tuple(write),
        admin=False,
        created_at=T0,
        revoked_at=T1 if revoked else None,
    )


BRANCHES = ["main", "agent/a", "agent/a/b", "agents", "Main", "dream/main", "x"]

# patterns (read, write) -> (branches readable, branches writable)
SCOPES = [
    ((["main"], []), ({"main"}, set())),
    (([], ["main"]), ({"main"}, {"main"})),
    ((["agent/*"], []), ({"agent/a", "agent/a/b"}, set())),
    ((["*"], ["agent/a"]), (set(BRANCHES), {"agent/a"})),
    ((["agent?"], ["*/main"]), ({"agents", "dream/main"}, {"dream/main"})),
    ((["[mx]*"], []), ({"main", "x"}, set())),
    (([], []), (set(), set())),
]


@pytest.mark.parametrize(("patterns", "allowed"), SCOPES)
def test_patterns_against_branches(patterns, allowed):
    key = _key(*patterns)
    readable = {b for b in BRANCHES if key.can_read(b)}
    writable = {b for b in BRANCHES if key.can_write(b)}
    assert (readable, writable) == allowed


def test_a_revoked_key_opens_nothing():
    key = _key(["*"], ["*"], revoked=True)
    assert not any(key.can_read(b) or key.can_write(b) for b in BRANCHES)


def test_create_authenticate_and_list(ws):
    made = create_key(ws, "ci", read=["main"], write=["agent/*"], now=T0)
    assert made.token.startswith("ctx_")
    assert len(made.token) == 4 + 43
    assert made.key.label == "ci"
    assert made.key.read == ("main",)
    assert made.key.write == ("agent/*",)
    assert made.key.created_at == T0
    assert made.key.revoked_at is None
    assert authenticate(ws, f"Bearer {made.token}") == made.key
    assert authenticate(ws, f"bearer  {made.token}") == made.key
    assert list_keys(ws) == [made.key]


def test_each_token_opens_its_own_key(ws):
    a = create_key(ws, "a", read=["*"])
    b = create_key(ws, "b", write=["agent/b"], admin=True)
    assert a.token != b.token
    assert a.key.id != b.key.id
    assert authenticate(ws, f"Bearer {a.token}").label == "a"
    assert authenticate(ws, f"Bearer {b.token}").admin


def test_revoke_by_id_or_label(ws):
    a = create_key(ws, "a", read=["*"])
    b = create_key(ws, "b", read=["*"])
    done = revoke_key(ws, a.key.id, now=T1)
    assert done.changed
    assert done.key.revoked_at == T1
    assert revoke_key(ws, "b", now=T1).key.id == b.key.id
    with pytest.raises(AuthError, match="unknown or revoked"):
        authenticate(ws, f"Bearer {a.token}")
    with pytest.raises(AuthError, match="unknown or revoked"):
        authenticate(ws, f"Bearer {b.token}")
    assert [k.revoked_at for k in list_keys(ws)] == [T1, T1]


def test_revoking_twice_changes_nothing(ws):
    create_key(ws, "a", read=["*"])
    revoke_key(ws, "a", now=T0)
    before = _files(ws)
    again = revoke_key(ws, "a", now=T1)
    assert not again.changed
    assert again.key.revoked_at == T0
    assert _files(ws) == before


def test_a_revoked_label_can_be_used_again(ws):
    old = create_key(ws, "ci", read=["*"])
    revoke_key(ws, "ci")
    new = create_key(ws, "ci", read=["main"])
    assert authenticate(ws, f"Bearer {new.token}").id == new.key.id
    # The label names the live key; revoking it leaves the old one as it was.
    assert revoke_key(ws, "ci").key.id == new.key.id
    assert [k.id for k in list_keys(ws)] == [old.key.id, new.key.id]


def test_revoking_an_unknown_key(ws):
    create_key(ws, "a", read=["*"])
    before = _files(ws)
    with pytest.raises(NotFoundError, match=r"No key has the id or label 'b'\."):
        revoke_key(ws, "b")
    assert _files(ws) == before


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "ctx_" + "a" * 43,  # no scheme
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer ",
        "Bearer ctx_short",
        "Bearer " + "a" * 47,
        "Bearer ctx_" + "a" * 44,
        "Bearer ctx_" + "a" * 42 + "!",
        "Bearer ctx_" + "a" * 43 + " extra",
        "Bearer\tctx_" + "a" * 43,
    ],
)
def test_missing_and_malformed_headers(ws, header):
    create_key(ws, "a", read=["*"])
    with pytest.raises(AuthError):
        authenticate(ws, header)


def test_an_unknown_token(ws):
    made = create_key(ws, "a", read=["*"])
    other = "ctx_" + ("A" if made.token[4] != "A" else "B") + made.token[5:]
    with pytest.raises(AuthError, match="unknown or revoked"):
        authenticate(ws, f"Bearer {other}")


def test_a_store_with_no_keys_lets_nobody_in(ws):
    assert list_keys(ws) == []
    with pytest.raises(AuthError, match="unknown or revoked"):
        authenticate(ws, "Bearer ctx_" + "a" * 43)


@pytest.mark.parametrize(
    ("label", "read", "write", "admin", "message"),
    [
        ("", ["*"], [], False, "A key's label cannot be empty."),
        ("  ", ["*"], [], False, "A key's label cannot be empty."),
        ("x" * 101, ["*"], [], False, "at most 100 characters, not 101."),
        ("a\x1bb", ["*"], [], False, "holds a control character."),
        ("taken", ["*"], [], False, "A key labelled 'taken' already exists."),
        ("new", [], [], False, "Key 'new' would open nothing."),
        ("new", [""], [], False, "Branch pattern '' is empty."),
        ("new", ["a b"], [], False, "holds a character no branch name has."),
        ("new", [], ["a~1"], False, "holds a character no branch name has."),
        ("new", [], ["x\n"], False, "holds a character no branch name has."),
        ("new", ["a..b"], [], False, "cannot match a branch name."),
        ("new", ["agent/"], [], False, "cannot match a branch name."),
        ("new", ["p" * 256], [], False, "is longer than 255 characters."),
    ],
)
def test_bad_input_changes_nothing(ws, label, read, write, admin, message):
    create_key(ws, "taken", read=["*"])
    before = _files(ws)
    with pytest.raises(InvalidInputError, match=message.replace(".", r"\.")):
        create_key(ws, label, read=read, write=write, admin=admin)
    assert _files(ws) == before


def test_a_label_may_not_be_another_keys_id(ws):
    a = create_key(ws, "a", read=["*"])
    with pytest.raises(InvalidInputError, match="already exists"):
        create_key(ws, a.key.id, read=["*"])


def test_an_admin_key_needs_no_pattern(ws):
    made = create_key(ws, "root", admin=True)
    assert made.key.admin
    assert not made.key.can_read("main")


def test_patterns_are_kept_once_in_order(ws):
    made = create_key(ws, "a", read=["b", "a", "b"], write=["*", "*"])
    assert (made.key.read, made.key.write) == (("b", "a"), ("*",))


def test_the_token_is_nowhere_on_disk(ws, tmp_path):
    made = create_key(ws, "a", read=["*"])
    revoke_key(ws, "a")
    token = made.token.encode()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert token not in path.read_bytes(), path
            assert made.token[4:].encode() not in path.read_bytes(), path


def test_file_modes(ws):
    old = os.umask(0)  # modes hold whatever the umask
    try:
        create_key(ws, "a", read=["*"])
    finally:
        os.umask(old)
    private = ws.path / "private"
    assert stat.S_IMODE(os.lstat(private).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(private / "keys.json").st_mode) == 0o600
    assert (private / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_private_folder_opened_to_others_is_closed_again(ws):
    (ws.path / "private").mkdir(mode=0o755)
    os.chmod(ws.path / "private", 0o755)
    create_key(ws, "a", read=["*"])
    assert stat.S_IMODE(os.lstat(ws.path / "private").st_mode) == 0o700


def test_a_symlinked_private_folder_is_refused(ws, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws.path / "private").symlink_to(elsewhere)
    with pytest.raises(StoreError, match="is not a folder of yours"):
        create_key(ws, "a", read=["*"])
    assert list(elsewhere.iterdir()) == []


def test_keys_never_reach_git_history(ws, disk_store, intent):
    from ctx.engine import Draft, remember

    made = create_key(ws, "a", read=["*"])
    remember(disk_store, Draft(text="Queue is Postgres"), intent)
    git = ["git", "--git-dir", str(ws.path / "git")]
    objects = subprocess.run(
        [*git, "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    assert b"Queue is Postgres" in objects
    stored = json.loads((ws.path / "private" / "keys.json").read_bytes())
    sha = stored["keys"][0]["sha256"].encode()
    assert made.token.encode() not in objects
    assert sha not in objects
    assert b"keys.json" not in objects
    assert b"private" not in objects


def test_a_changed_file_is_read_again(ws):
    made = create_key(ws, "a", read=["*"])
    authenticate(ws, f"Bearer {made.token}")  # cached
    # Another process revokes it: a new file, so this one reads it again.
    code = (
        "import sys; from pathlib import Path; from ctx.hub import Workspace, "
        "revoke_key; revoke_key(Workspace(Path(sys.argv[1])), 'a')"
    )
    subprocess.run([sys.executable, "-c", code, str(ws.path)], check=True)
    with pytest.raises(AuthError):
        authenticate(ws, f"Bearer {made.token}")


def test_a_read_only_store_is_refused_cleanly(ws, monkeypatch):
    # Tests may run as root, which writes through any mode: fail the mkdir.
    def read_only(*_):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, "mkdir", read_only)
    with pytest.raises(ReadOnlyStoreError, match="Cannot write the keys"):
        create_key(ws, "a", read=["*"])


def test_an_unchanged_file_is_not_read_again(ws, monkeypatch):
    import ctx.hub.keys as keys

    made = create_key(ws, "a", read=["*"])
    decoded = []
    real = keys._decode
    monkeypatch.setattr(keys, "_decode", lambda *a: decoded.append(1) or real(*a))
    for _ in range(3):
        authenticate(ws, f"Bearer {made.token}")
    assert list_keys(ws) == [made.key]
    assert decoded == [1]  # read once, then kept while the file is unchanged


def test_a_damaged_key_file_lets_nobody_in(ws):
    made = create_key(ws, "a", read=["*"])
    (ws.path / "private" / "keys.json").write_text("{not json")
    with pytest.raises(StoreError, match="is not valid"):
        authenticate(ws, f"Bearer {made.token}")
    with pytest.raises(StoreError, match="is not valid"):
        create_key(ws, "b", read=["*"])


def test_concurrent_creates_from_threads_lose_nothing(ws):
    tokens: list[str] = []

    def make(n: int) -> None:
        for i in range(5):
            tokens.append(create_key(ws, f"t{n}-{i}", read=["*"]).token)

    threads = [threading.Thread(target=make, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(list_keys(ws)) == 40
    assert {authenticate(ws, f"Bearer {t}").label for t in tokens} == {
        f"t{n}-{i}" for n in range(8) for i in range(5)
    }


def test_concurrent_creates_from_processes_lose_nothing(ws):
    code = (
        "import sys; from pathlib import Path; from ctx.hub import Workspace, "
        "create_key\nws = Workspace(Path(sys.argv[1]))\n"
        "for i in range(5): print(create_key(ws, f'{sys.argv[2]}-{i}', "
        "read=['*']).token)"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(ws.path), f"p{n}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    tokens = [line for p in procs for line in p.communicate()[0].split()]
    assert [p.returncode for p in procs] == [0] * 4
    assert len(tokens) == 20
    assert len(list_keys(ws)) == 20
    for token in tokens:
        authenticate(ws, f"Bearer {token}")


def test_no_store_no_keys(tmp_path):
    ws = Workspace(tmp_path / "none")
    with pytest.raises(NotAStoreError):
        create_key(ws, "a", read=["*"])
    with pytest.raises(NotAStoreError):
        list_keys(ws)
    assert not (tmp_path / "none").exists()


def test_the_user_store_is_made_on_the_first_key(tmp_path):
    ws = Workspace(tmp_path / "user", user_store=True)
    assert list_keys(ws) == []
    with pytest.raises(AuthError):
        authenticate(ws, "Bearer ctx_" + "a" * 43)
    made = create_key(ws, "a", read=["*"])
    assert (tmp_path / "user" / "git").is_dir()
    assert list_keys(ws) == [made.key]
    ws.close()


@pytest.mark.parametrize(
    ("config", "host", "required"),
    [
        ("", None, True),
        ("", "127.0.0.1", True),
        ("", "127.1.2.3", True),
        ("", "::1", True),
        ("", "[::1]", True),
        ("", "localhost", True),
        ("", "0.0.0.0", True),
        ("", "::", True),
        ("", "192.168.1.5", True),
        ("", "example.com", True),
        ("[serve]\nrequire_keys = true\n", None, True),
        ("[serve]\nrequire_keys = true\n", "127.0.0.1", True),
        ("[serve]\nrequire_keys = false\n", "127.0.0.1", False),
        ("[serve]\nrequire_keys = false\n", "127.1.2.3", False),
        ("[serve]\nrequire_keys = false\n", None, False),
        ("[serve]\nrequire_keys = false\n", "0.0.0.0", True),
        ("[serve]\nrequire_keys = false\n", "localhost.example", True),
    ],
)
def test_keys_required(ws, config, host, required):
    (ws.path / "config.toml").write_text(config)
    assert keys_required(ws, host=host) is required


def test_a_bad_serve_setting_is_an_error(ws):
    (ws.path / "config.toml").write_text('[serve]\nrequire_keys = "yes"\n')
    with pytest.raises(InvalidInputError, match=r"config\.toml is not valid"):
        keys_required(ws)


def test_a_key_signs_only_as_those_it_stands_for(ws):
    # An agent key once signed its commits as anyone it named, and a key's
    # write that named nobody as the server's own login.
    from ctx.engine import create_branch, log
    from ctx.hub.access import Caller
    from ctx.hub.calls import CALLS, invoke

    claude = create_key(ws, "claude-bot", write=["agent/claude*"]).key
    ci = create_key(ws, "ci", write=["main"]).key
    admin = create_key(ws, "owner", write=["*"], admin=True).key
    store = ws.store(write=True)

    def write(key, branch, agent=None, client=None):
        args = {"text": f"by {key.label} as {agent}", "branch": branch}
        if agent is not None:
            args["agent"] = agent
        invoke(ws, Caller(scope=key, agent=client), CALLS["remember"], args)
        return log(ws.store(), rev=branch, limit=1)[0].commit

    invoke(ws, Caller(), CALLS["remember"], {"text": "seed"})
    create_branch(store, "agent/claude")
    assert write(claude, "agent/claude", "claude-code").author == "claude-code"
    with pytest.raises(ReadOnlyStoreError, match="may not sign writes as 'alice'"):
        write(claude, "agent/claude", "alice")
    assert write(claude, "agent/claude").author == "claude-bot"
    assert write(ci, "main").author == "ci"
    # A client's name the key does not stand for gives way to the key's.
    assert write(ci, "main", client="cursor").author == "ci"
    with pytest.raises(ReadOnlyStoreError, match="may not sign writes as 'alice'"):
        write(ci, "main", "alice")
    assert write(admin, "main", "alice").author == "alice"


def test_a_key_reads_the_own_branch_it_writes_to(ws):
    # With an agent's own branch, a key's write naming nobody went to the
    # key's branch, and its read to the branch of the server's login.
    from ctx.hub.access import Caller
    from ctx.hub.calls import CALLS, invoke

    (ws.path / "config.toml").write_text("[agents]\nbranch_per_agent = true\n")
    bot = create_key(ws, "bot", write=["agent/*"]).key
    invoke(ws, Caller(), CALLS["remember"], {"text": "seed"})
    wrote = invoke(ws, Caller(scope=bot), CALLS["remember"], {"text": "bot's note"})
    assert ws.store().branch_tip("agent/bot") == wrote.commit
    [read] = invoke(ws, Caller(scope=bot), CALLS["log"], {"limit": 1})
    assert read.commit.id == wrote.commit
