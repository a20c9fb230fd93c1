import re

import click
import pytest

from ctx.porcelain.main import cli


def test_branch_merge_and_conflict_flow(ctx):
    mid = ctx("remember", "Logs use local time", "--agent", "alice").stdout.strip()
    assert ctx("branch", "agent/claude").stdout.startswith(
        "Created branch agent/claude at "
    )
    ctx(
        "edit",
        mid,
        "--body",
        "Logs use UTC",
        "--branch",
        "agent/claude",
        "--agent",
        "claude",
    )
    ctx("edit", mid, "--body", "Logs use server time", "--agent", "alice")
    branches = ctx("branches").stdout.splitlines()
    assert len(branches) == 2
    assert branches[0].startswith("  agent/claude ")
    assert branches[1].startswith("* main ")
    diff = ctx("diff", "main", "agent/claude").stdout
    assert f"~ {mid}  fact  Logs use UTC  [body]" in diff
    assert "    -Logs use server time" in diff
    assert "    +Logs use UTC" in diff
    out = ctx("merge", "agent/claude", code=5).stdout  # conflicts left: exit 5
    assert "1 conflict kept (both versions stored):" in out
    status = ctx("status").stdout
    assert "conflicts: 1" in status
    assert mid in status
    assert ctx("resolve", mid, "--take", "theirs").stdout.startswith(
        f"Resolved {mid} in "
    )
    assert ctx.json("show", mid)["memory"]["body"] == "Logs use UTC"
    assert "conflicts: none" in ctx("status").stdout


def test_fast_forward_and_switch(ctx):
    ctx("branch", "exp")
    assert ctx("switch", "exp").stdout.startswith("Switched to exp (")
    ctx("remember", "on exp")
    ctx("switch", "main")
    assert ctx("merge", "exp").stdout.startswith("Fast-forwarded main to ")
    assert (
        ctx("merge", "exp").stdout
        == "Already up to date: main has everything in exp.\n"
    )
    assert ctx("branch", "-d", "exp").stdout.startswith("Deleted branch exp (was ")


def test_log_blame_and_undo(ctx):
    mid = ctx("remember", "v1", "--reason", "first", "--agent", "alice").stdout.strip()
    ctx("edit", mid, "--body", "v1\nv2", "--agent", "bob", "--confidence", "0.5")
    log = ctx("log").stdout.splitlines()
    assert re.match(
        r"^[0-9a-f]{10}  \d{4}-\d\d-\d\d \d\d:\d\d  bob +refine \(0\.5\)  Edit " + mid,
        log[0],
    )
    assert re.search(r"  alice +observe +Remember fact", log[1])
    assert log[2] == "            reason: first"
    blame = ctx("blame", mid).stdout
    assert blame.count("~ memory/general/") == 1
    assert blame.count("+ memory/general/") == 1
    lines = ctx("blame", mid, "--lines").stdout.splitlines()
    assert [re.sub(r"^[0-9a-f]{10} ", "", line)[:5] for line in lines] == [
        "alice",
        "bob  ",
    ]
    assert lines[0].endswith("  v1")
    assert lines[1].endswith("  v2")
    out = ctx("undo").stdout
    assert out.startswith("Moved main from ")
    assert "(undid: ctx refine: Edit" in out
    assert ctx.json("show", mid)["memory"]["body"] == "v1"
    ctx("undo")
    assert ctx.json("show", mid)["memory"]["body"] == "v1\nv2"


def test_status_gc_fsck(ctx):
    ctx("remember", "a", "--kind", "decision")
    status = ctx.json("status")
    assert status["memories"] == 1
    assert status["by_kind"] == {"decision": 1}
    assert ctx("gc").stdout.startswith("Packed ")
    out = ctx("fsck").stdout
    assert re.match(r"^Checked \d+ objects, 2 commits, 1 memory: ok\.$", out.strip())


def test_a_damaged_object_or_branch_file_is_one_error_line(ctx):
    """Bad bytes met anywhere: exit 6 and the way to find them, no traceback."""
    mid = ctx("remember", "The queue runs on Postgres").stdout.strip()
    blob = ctx.json("show", mid)["blob"]
    git = ctx.root / ".ctx" / "git"
    loose = git / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(loose.read_bytes()[:10])  # cut short, as by a crash
    for command in (["ls"], ["recall", "queue"], ["status"], ["export"]):
        result = ctx(*command, code=6)
        assert result.stderr == (
            "Error: The store's git data is damaged (ObjectFormatException: "
            "Invalid object header, no \\0).\n"
            "Hint: `ctx fsck` lists what cannot be read; a clone or a backup of "
            "the store restores it.\n"
        ), command
    (git / "refs" / "heads" / "main").write_text("garbage\n")
    err = ctx("log", code=6).stderr
    assert err.startswith("Error: Branch 'main' holds 'garbage', not a commit id.")
    assert "Branch 'main' holds 'garbage'" in ctx("fsck", code=6).stdout
    # A branch naming a commit the store lacks (a copy that lost it): every
    # command says so, never "No commit" as of an id the user gave.
    (git / "refs" / "heads" / "main").write_text("1" * 40 + "\n")
    for command in (["remember", "One more"], ["ls"], ["recall", "queue"]):
        err = ctx(*command, code=6).stderr
        assert err.startswith(
            f"Error: Branch 'main' points at commit {'1' * 40}, which the store "
            "does not hold.\nHint: `ctx fsck`"
        ), command


def test_a_damaged_branch_is_listed_and_deleted_and_blocks_no_other(ctx):
    ctx("remember", "hello")
    ctx("branch", "bad")
    ctx("branch", "good")
    (ctx.root / ".ctx" / "git" / "refs" / "heads" / "bad").write_text("1" * 40 + "\n")
    assert "  bad   1111111111\n" in ctx("branches").stdout
    ctx("branch", "-d", "good")  # merged: the damaged one contains nothing
    err = ctx("branch", "-d", "bad", code=6).stderr
    assert "`ctx branch -D bad` drops the branch." in err
    assert ctx("branch", "-D", "bad").stdout.startswith("Deleted branch bad (was ")
    assert ctx("fsck").stdout.strip().endswith(": ok.")


def test_an_empty_branch_file_blocks_no_other_branch(ctx):
    # HEAD was read with every branch file (dulwich's get_symrefs): one
    # emptied file (a disk that lost it) stopped every command.
    mid = ctx("remember", "The queue runs on Postgres").stdout.strip()
    ctx("branch", "bad")
    (ctx.root / ".ctx" / "git" / "refs" / "heads" / "bad").write_text("")
    listed = ctx("branches").stdout
    assert "  bad   (damaged: its file holds no commit; `ctx fsck`)\n" in listed
    assert "* main  " in listed
    assert mid in ctx("ls").stdout
    assert ctx("log", "-n", "1").stdout.strip()
    assert mid in ctx("recall", "queue").stdout
    ctx("remember", "One more")
    assert "Branch 'bad' holds ''" in ctx("fsck", code=6).stdout
    ctx("branch", "-D", "bad")
    assert ctx("fsck").stdout.strip().endswith(": ok.")


def test_a_damaged_pack_is_one_error_line(ctx):
    # A pack is read through a memory map: the error's frames hold views of
    # it, which closing the store at exit failed on (a BufferError after the
    # Error line, exit 1).
    ctx("remember", "The queue runs on Postgres")
    ctx("gc")
    [pack] = (ctx.root / ".ctx" / "git" / "objects" / "pack").glob("*.pack")
    pack.chmod(0o644)
    data = pack.read_bytes()
    pack.write_bytes(data[:40] + bytes(len(data) - 80) + data[-40:])
    result = ctx("log", code=6)
    assert result.stderr.startswith("Error: The store's git data is damaged (")
    assert len(result.stderr.splitlines()) == 2  # the Error line and its Hint
    # Its index damaged: the same.
    pack.write_bytes(data)
    [index] = pack.parent.glob("*.idx")
    index.chmod(0o644)
    table = index.read_bytes()
    index.write_bytes(table[:8] + b"x" * (len(table) - 48) + table[-40:])
    assert ctx("log", code=6).stderr.startswith("Error: The store's git data is")


def test_init_is_idempotent(ctx, tmp_path):
    assert (
        ctx("init", str(tmp_path)).stdout
        == f"Store already exists at {tmp_path / '.ctx'}.\n"
    )
    assert (tmp_path / ".ctx" / "config.toml").exists()


def _commands(group=cli, prefix=()):
    # list_commands and get_command: the group loads its commands lazily.
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


def test_every_command_is_listed():
    assert len(list(_commands())) > 60


@pytest.mark.parametrize(
    ("path", "command"),
    list(_commands()),
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_every_command_has_help_with_an_example(ctx, path, command):
    out = ctx(*path, "--help").stdout
    assert "Example:" in out
    assert command.help
    assert not command.help.split("\n")[0].endswith(".")
    # export writes JSON Lines already; mcp and serve are servers (JSON-RPC,
    # HTTP); hook answers in its host's JSON; lens is a terminal UI
    if not isinstance(command, click.Group) and path not in (
        ("export",),
        ("mcp",),
        ("serve",),
        ("hook",),
        ("lens",),
    ):
        assert any(p.name == "as_json" for p in command.params), path
