"""Every kind of bad input: one `Error:` line (maybe a `Hint:`), a documented
exit code, and a store left exactly as it was."""

import subprocess
import sys

import pytest
from click.testing import CliRunner

from ctx.engine import MAX_BODY_BYTES
from ctx.porcelain.main import cli

UNKNOWN = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


@pytest.fixture
def seeded(ctx):
    a = ctx("remember", "first").stdout.strip()
    b = ctx("remember", "second").stdout.strip()
    ctx("branch", "side")
    return ctx, a, b


CASES = [
    (["remember", ""], 4, "Error: The text is empty."),
    (["remember", "   "], 4, "Error: The text is empty."),
    (
        ["remember", "x" * (MAX_BODY_BYTES + 1)],
        4,
        f"Error: The text is {MAX_BODY_BYTES + 1} bytes; the limit is {MAX_BODY_BYTES} bytes.",
    ),
    (["remember", "bad \udcff"], 4, "Error: The text is not valid UTF-8."),
    (["remember", "nul \x00 here"], 4, "Error: The text contains a NUL byte."),
    (
        ["remember", "x", "--context", "../up"],
        4,
        "Error: Context '../up' is not allowed.",
    ),
    (["remember", "x", "--context", "a/b"], 4, "Error: Context 'a/b' is not allowed."),
    (
        ["remember", "x", "--tag", "nocolon"],
        4,
        "Error: Tag 'nocolon' is not of the form namespace:value.",
    ),
    (
        ["remember", "x", "--confidence", "1.5"],
        4,
        "Error: Confidence 1.5 is outside 0..1.",
    ),
    (
        ["remember", "x", "--agent", "bad agent"],
        4,
        "Error: Agent name 'bad agent' is not allowed.",
    ),
    (
        ["remember", "x", "--when", "someday"],
        4,
        "Error: --when 'someday' is not a time.",
    ),
    # Issue 12: times the index and ranking could not convert.
    (
        ["remember", "x", "--when", "9999-12-31T23:59:59-14:00"],
        4,
        "Error: --when 9999-12-31T23:59:59-14:00 is outside the accepted range, "
        "1000-01-01 to 9000-12-31 (UTC).",
    ),
    (
        ["remember", "x", "--when", "0001-01-01T00:00:00+14:00"],
        4,
        "Error: --when 0001-01-01T00:00:00+14:00 is outside the accepted range, "
        "1000-01-01 to 9000-12-31 (UTC).",
    ),
    (
        ["recall", "x", "--at", "0001-01-01"],
        4,
        "Error: --at 0001-01-01T00:00:00 is outside the accepted range, "
        "1000-01-01 to 9000-12-31 (UTC).",
    ),
    (
        ["recall", "x", "--now", "0001-01-01"],
        4,
        "Error: --now 0001-01-01T00:00:00 is outside the accepted range, "
        "1000-01-01 to 9000-12-31 (UTC).",
    ),
    (
        ["search", "x", "--now", "9999-12-31"],
        4,
        "Error: --now 9999-12-31T00:00:00 is outside the accepted range, "
        "1000-01-01 to 9000-12-31 (UTC).",
    ),
    (["search", "x", "--kind", "decisions"], 4, "Error: Unknown kind 'decisions'."),
    (["remember", "x", "--tag", "tier:bogus"], 4, "Error: Unknown tier 'tier:bogus'."),
    (
        ["remember", "x", "--tag", "tier:reference", "--tag", "tier:off-context"],
        4,
        "Error: A memory belongs to one tier at a time.",
    ),
    (
        ["search", "x", "--context", "a b"],
        4,
        "Error: Context 'a b' is not allowed.",
    ),
    (
        ["remember", "x", "--branch", "no such"],
        4,
        "Error: 'no such' is not a valid branch name.",
    ),
    (["remember", "x", "--branch", "missing"], 3, "Error: No branch named 'missing'."),
    (
        ["show", "../../etc/passwd"],
        4,
        "Error: '../../etc/passwd' is not a memory id: give its 26 characters, or at least 6 "
        "from its start or its end.",
    ),
    (
        ["show", "a/b"],
        4,
        "Error: 'a/b' is not a memory id: give its 26 characters, or at least 6 "
        "from its start or its end.",
    ),
    (["show", UNKNOWN], 3, f"Error: No memory {UNKNOWN} here."),
    (["show", f"{UNKNOWN}@nope"], 3, "Error: Unknown revision 'nope'."),
    (["edit", UNKNOWN, "--body", "x"], 3, f"Error: No memory {UNKNOWN} here."),
    (["forget", UNKNOWN, "--reason", "r"], 3, f"Error: No memory {UNKNOWN} here."),
    (
        ["ls", "memory/../x"],
        4,
        "Error: Path prefix 'memory/../x' may not contain '..'.",
    ),
    (["log", "memory/../x"], 4, "Error: Path 'memory/../x' may not contain '..'."),
    (["log", "--branch", "missing"], 3, "Error: Unknown revision 'missing'."),
    (
        ["diff", "main", "HEAD~99"],
        3,
        "Error: Revision 'HEAD~99' goes past the first commit.",
    ),
    (["diff", "nope", "main"], 3, "Error: Unknown revision 'nope'."),
    (["blame", UNKNOWN], 3, f"Error: No commit touched memory {UNKNOWN}."),
    (["log", UNKNOWN], 3, f"Error: No commit touched memory {UNKNOWN}."),
    (
        ["op", "log", "--branch", "nosuch"],
        3,
        "Error: No branch named 'nosuch', nor a deleted one with a log.",
    ),
    (["branch", "bad..name"], 4, "Error: 'bad..name' is not a valid branch name."),
    (["branch", "x.lock"], 4, "Error: 'x.lock' is not a valid branch name."),
    (["branch", "side"], 5, "Error: Branch 'side' already exists."),
    # Issue 12: a branch named like a commit would hide it from every command.
    (
        ["branch", "deadbeef"],
        4,
        "Error: Branch name 'deadbeef' looks like a commit id.",
    ),
    (
        ["branch", "0123456789abcdef0123456789abcdef01234567"],
        4,
        "Error: Branch name '0123456789abcdef0123456789abcdef01234567' looks "
        "like a commit id.",
    ),
    (["branch", "-d", "main"], 5, "Error: Branch 'main' is the current branch."),
    (["branch", "-d", "missing"], 3, "Error: No branch named 'missing'."),
    (
        ["branch", "-d", "main", "other"],
        4,
        "Error: -d and -D delete one branch: START and --from are for making one.",
    ),
    (
        ["branch", "-D", "main", "--from", "nosuch"],
        4,
        "Error: -d and -D delete one branch: START and --from are for making one.",
    ),
    (["branch", "@"], 4, "Error: '@' is not a valid branch name."),
    (["switch", "missing"], 3, "Error: No branch named 'missing'."),
    (["merge", "missing"], 3, "Error: Unknown revision 'missing'."),
    (
        ["resolve", UNKNOWN, "--take", "ours"],
        3,
        f"Error: Memory {UNKNOWN} has no conflict to resolve.",
    ),
    (["undo", "--branch", "side"], 4, "Error: Branch 'side' has no operation to undo."),
    (["tag", UNKNOWN, "a:b"], 3, f"Error: No memory {UNKNOWN} here."),
    (
        ["tag", UNKNOWN, "nocolon"],
        4,
        "Error: Tag 'nocolon' is not of the form namespace:value.",
    ),
    (["untag", UNKNOWN, "a:b"], 3, f"Error: No memory {UNKNOWN} here."),
    (["trace", UNKNOWN], 3, f"Error: No memory {UNKNOWN} here."),
    (["related", UNKNOWN], 3, f"Error: No memory {UNKNOWN} here."),
    (["expand", UNKNOWN], 3, f"Error: No memory {UNKNOWN} here."),
    (["summarize", UNKNOWN, "--body", "s"], 3, f"Error: No memory {UNKNOWN} here."),
    (["supersede", UNKNOWN, UNKNOWN], 4, "Error: A memory cannot supersede itself."),
    (["query", "kind:opinion"], 4, "Error: Unknown kind 'opinion' at column 6."),
    (["query", "(kind:fact"], 4, "Error: Missing ')' for the '(' at column 1."),
    (["compose", "--budget", "0"], 4, "Error: The budget must be positive, not 0."),
    (["compose", "--budget", "-3"], 4, "Error: The budget must be positive, not -3."),
    (
        ["view", "create", "v", "--where", "kind:fact", "--budget", "0"],
        4,
        "Error: The budget must be positive, not 0.",
    ),
    (
        ["view", "create", "../v", "--where", "kind:fact", "--budget", "9"],
        4,
        "Error: View name '../v' is not allowed.",
    ),
    (["view", "render", "missing"], 3, "Error: No view named 'missing'."),
]


@pytest.mark.parametrize(
    ("args", "code", "first_line"), CASES, ids=[" ".join(c[0])[:40] for c in CASES]
)
def test_bad_input_is_refused_cleanly(seeded, args, code, first_line):
    ctx = seeded[0]
    before = ctx.files()
    result = ctx(*args, code=code)
    lines = result.stderr.splitlines()
    assert lines[0] == first_line
    # One Error line; an optional Hint, which for query errors goes on to
    # show the query with a caret under the column (indented lines).
    if len(lines) > 1:
        assert lines[1].startswith("Hint: ")
        assert all(line.startswith("  ") for line in lines[2:])
    assert result.stdout == ""
    assert ctx.files() == before


def test_graph_commands_refuse_bad_links(seeded):
    ctx, a, _ = seeded
    before = ctx.files()
    assert ctx("related", a, "--type", "LIKES", code=4).stderr.startswith(
        "Error: Unknown link type 'LIKES'."
    )
    assert ctx("trace", a, "--depth", "0", code=4).stderr.startswith(
        "Error: The depth must be at least 1."
    )
    assert ctx("supersede", a, UNKNOWN, code=3).stderr.startswith(
        f"Error: No memory {UNKNOWN} here."
    )
    assert ctx("expand", a, code=4).stderr.startswith(
        f"Error: Memory {a} is derived from nothing."
    )
    assert ctx.files() == before


def test_links_to_self_and_unknown_types(seeded):
    ctx, a, b = seeded
    before = ctx.files()
    assert ctx("link", a, a, "--type", "RELATES_TO", code=4).stderr.startswith(
        "Error: A memory cannot link to itself."
    )
    assert ctx("link", a, b, "--type", "LIKES", code=4).stderr.startswith(
        "Error: Unknown link type 'LIKES'."
    )
    assert ctx("link", a, UNKNOWN, "--type", "RELATES_TO", code=3).stderr.startswith(
        f"Error: No memory {UNKNOWN} here."
    )
    assert ctx("unlink", a, b, "--type", "RELATES_TO", code=3).stderr.startswith(
        f"Error: No RELATES_TO link from {a} to {b}."
    )
    assert ctx.files() == before


def test_invalid_utf8_on_stdin(seeded):
    ctx = seeded[0]
    before = ctx.files()
    result = ctx("remember", "-", input=b"caf\xe9", code=4)
    assert result.stderr == "Error: The text on stdin is not valid UTF-8.\n"
    assert ctx.files() == before


def test_a_folder_that_is_not_a_store(tmp_path):
    (tmp_path / "empty").mkdir()
    runner = CliRunner()
    result = runner.invoke(cli, ["--store", str(tmp_path / "empty"), "ls"])
    assert result.exit_code == 6
    assert (
        result.stderr.splitlines()[0]
        == f"Error: {tmp_path / 'empty'} is not a ctx store."
    )
    result = runner.invoke(cli, ["--store", str(tmp_path / "nothing"), "remember", "x"])
    assert result.exit_code == 6
    assert (
        result.stderr.splitlines()[0] == f"Error: No store at {tmp_path / 'nothing'}."
    )
    assert not (tmp_path / "nothing").exists()
    assert list((tmp_path / "empty").iterdir()) == []


def test_invalid_utf8_in_argv_from_a_real_process(seeded):
    ctx = seeded[0]
    before = ctx.files()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from ctx.porcelain.main import main; main()",
            "--store",
            str(ctx.root / ".ctx"),
            "remember",
            b"caf\xe9",
        ],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 4
    assert proc.stderr == b"Error: The text is not valid UTF-8.\n"
    assert ctx.files() == before


def test_usage_errors_exit_2(seeded):
    ctx = seeded[0]
    result = ctx("remember", code=2)
    assert "Missing argument 'TEXT'" in result.stderr
    result = ctx("remember", "x", "--kind", "opinion", code=2)
    assert "Invalid value for '--kind'" in result.stderr


def test_deeply_nested_json_in_an_import_is_one_error_line(seeded):
    # Issue 12: this was a RecursionError traceback.
    ctx = seeded[0]
    before = ctx.files()
    deep = b"[" * 100_000 + b"]" * 100_000
    header = b'{"format": "ctx-export", "version": 1}\n'
    data = header + b'{"x": ' + deep + b', "type": "memory"}\n'
    result = ctx("import", "-", input=data, code=4)
    assert result.stderr == "Error: Line 2: its JSON is nested too deeply.\n"
    assert result.stdout == ""
    # The first line is read to tell the two formats apart.
    result = ctx("import", "-", input=b'{"x": ' + deep + b"}\n", code=4)
    assert result.stderr == "Error: Line 1: Object contains unknown field `x`.\n"
    assert result.stdout == ""
    assert ctx.files() == before


def test_a_store_file_the_system_refuses_is_one_line_and_exit_6(ctx):
    # A folder of the store made unreadable raises PermissionError (which
    # root ignores, so here a folder stands where the file should be).
    ctx("remember", "Queue is Postgres")
    cache = ctx.root / ".ctx" / "cache" / "history.jsonl"
    cache.unlink(missing_ok=True)
    cache.mkdir(parents=True)
    result = ctx("log", "-n", "1", code=6)
    assert result.stderr == (
        f"Error: The store's file {cache} cannot be used: Is a directory.\n"
        "Hint: Check the file and its folder's permissions; `ctx fsck` checks "
        "the rest.\n"
    )
