"""The command line makes the same typed calls as the agents' doors (issue 32).

``ctx remember``, ``show``, ``ls``, ``query``, ``edit``, ``forget``,
``prime``, ``link``, ``unlink``, ``summarize``, ``supersede``, ``trace``,
``related``, ``expand``, ``diff``, ``status``, ``blame``, ``branches``,
``branch``, ``merge``, ``resolve`` and ``dream`` make the call of :mod:`ctx.hub.calls`
that the MCP tool and the HTTP route of that name make (the lens its merge
and resolve), so what one door accepts and answers the others do.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from ctx.engine import InvalidInputError
from ctx.hub import Workspace, calls
from ctx.hub.access import Caller

COMMANDS = Path(__file__).parents[2] / "porcelain" / "commands"
LENS = Path(__file__).parents[2] / "lens"

# The engine functions whose typed call the command line now makes instead.
MADE_THROUGH_CALLS = (
    "remember",
    "show_memory",
    "list_sorted",
    "prime",
    "edit",
    "forget",
    "link",
    "unlink",
    "summarize",
    "supersede",
    "trace",
    "related",
    "expand",
    "diff_range",
    "status",
    "list_branches",
    "blame",
    "blame_lines",
    "create_branch",
    "merge",
    "resolve",
)


def test_no_command_calls_the_engine_for_what_a_typed_call_does():
    called = re.compile(r"\bengine\.(" + "|".join(MADE_THROUGH_CALLS) + r")\(")
    found = [
        f"{path.name}: engine.{m.group(1)}"
        for path in sorted(COMMANDS.glob("*.py"))
        for m in called.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
    # Dream's commands make Dream's calls (run loops over cycles itself).
    dreams = (COMMANDS / "dream.py").read_text(encoding="utf-8")
    assert re.findall(r"\bdream\.(\w+)\(", dreams) == ["loop"]
    # The lens writes a merge and a resolution through the same calls.
    review = (LENS / "screens" / "review.py").read_text(encoding="utf-8")
    assert re.findall(r"source\.write\((\w+)", review) == []
    assert sorted(re.findall(r"source\.call\(calls\.(\w+)", review)) == [
        "merge",
        "resolve",
    ]


def test_a_write_names_its_intent_through_every_door(ctx):
    mid = ctx(
        "remember", "Queue is Postgres", "--intent", "decide", "--reason", "load"
    ).stdout.strip()
    ws = Workspace.find(str(ctx.root / ".ctx"))
    try:
        request = calls.EditRequest(
            id=mid, body="Queue is Postgres 16", intent="correct", agent="bot"
        )
        calls.edit(ws, Caller(agent="mcp-client"), request)
    finally:
        ws.close()
    log = ctx.json("log", mid)
    assert [e["commit"]["intent"]["intent"] for e in log] == ["correct", "decide"]
    assert log[0]["commit"]["intent"]["agent"] == "bot"
    assert log[1]["commit"]["intent"]["reason"] == "load"


def test_edit_moves_when_a_memory_happened_through_every_door(ctx):
    mid = ctx("remember", "The audit ran", "--when", "2024-03-01").stdout.strip()
    ctx("edit", mid, "--when", "2024-03-05T09:30")
    assert ctx.json("show", mid)["memory"]["created_at"].startswith("2024-03-05T09:30")
    ws = Workspace.find(str(ctx.root / ".ctx"))
    try:
        request = calls.EditRequest(id=mid, when="2024-03-07T10:00")
        calls.edit(ws, Caller(agent="bot"), request)
    finally:
        ws.close()
    assert ctx.json("show", mid)["memory"]["created_at"].startswith("2024-03-07T10:00")


def test_a_bad_time_is_refused_in_the_options_name(ctx):
    before = ctx.files()
    result = ctx("edit", "0" * 26, "--when", "someday", code=4)
    assert result.stderr.splitlines()[0] == "Error: --when 'someday' is not a time."
    assert ctx.files() == before


def test_the_command_line_writes_where_it_names_when_agents_have_branches(
    ctx, monkeypatch: pytest.MonkeyPatch
):
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write("\n[agents]\nbranch_per_agent = true\n")
    monkeypatch.setenv("CTX_AGENT", "claude")
    # An agent's door writes on the agent's own branch ...
    ws = Workspace.find(str(ctx.root / ".ctx"))
    try:
        calls.remember(ws, Caller(), calls.RememberRequest(text="From the MCP door"))
    finally:
        ws.close()
    # ... the command line where it names, or HEAD, as before.
    ctx("remember", "From the command line")
    ctx("branch", "mine")
    ctx("remember", "On a branch of mine", "--branch", "mine")
    listed = {
        branch: [m["headline"] for m in ctx.json("ls", "--branch", branch)]
        for branch in ("main", "agent/claude", "mine")
    }
    assert listed == {
        "main": ["From the command line"],
        "agent/claude": ["From the MCP door"],
        "mine": ["On a branch of mine", "From the command line"],
    }


def test_a_link_keeps_the_confidence_given_as_the_mcp_tool_does(ctx):
    a = ctx("remember", "Billing calls the ledger").stdout.strip()
    b = ctx("remember", "The ledger is append-only").stdout.strip()
    ctx("link", a, b, "--type", "DEPENDS_ON", "--confidence", "0.7")
    (found,) = ctx.json("links", a)
    assert found["link"]["confidence"] == 0.7


@pytest.mark.parametrize(
    ("call", "arguments"),
    [
        ("edit", {"when": "someday"}),
        ("remember", {"text": "x", "intent": "Not An Intent"}),
        ("remember", {"text": "x", "intent": ""}),  # as `--intent ""` is refused
        ("forget", {"reason": "two\nlines"}),
    ],
)
def test_a_refused_request_makes_no_branch_for_its_agent(ctx, call, arguments):
    with (ctx.root / ".ctx" / "config.toml").open("a", encoding="utf-8") as f:
        f.write("\n[agents]\nbranch_per_agent = true\n")
    mid = ctx("remember", "The audit ran").stdout.strip()
    before = ctx.files()
    ws = Workspace.find(str(ctx.root / ".ctx"))
    try:
        if call != "remember":
            arguments = {"id": mid, **arguments}
        with pytest.raises(InvalidInputError):
            calls.invoke(ws, Caller(agent="mallory"), calls.CALLS[call], arguments)
    finally:
        ws.close()
    assert [b["name"] for b in ctx.json("branches")] == ["main"]
    assert ctx.files() == before


def test_feedback_naming_no_memory_is_refused_by_its_schema(ctx):
    """The schema the door gives says what the server requires: one id at least."""
    ws = Workspace.find(str(ctx.root / ".ctx"))
    try:
        with pytest.raises(InvalidInputError, match=r"length >= 1 - at `\$\.used`"):
            calls.invoke(
                ws,
                Caller(agent="a"),
                calls.CALLS["feedback"],
                {"recall_id": "r", "used": []},
            )
    finally:
        ws.close()
    schema = msgspec.json.schema(calls.CALLS["feedback"].request)
    [request] = schema["$defs"].values()
    assert request["properties"]["used"]["minItems"] == 1


def test_a_merge_naming_two_targets_is_refused(ctx):
    ctx("branch", "a")
    ctx("branch", "b")
    before = ctx.files()
    ws = Workspace.find(str(ctx.root / ".ctx"))
    try:
        with pytest.raises(InvalidInputError, match="Merge into 'b' or 'a', not both"):
            calls.invoke(
                ws,
                Caller(agent="a"),
                calls.CALLS["merge"],
                {"source": "main", "branch": "a", "into": "b"},
            )
    finally:
        ws.close()
    assert ctx.files() == before


def test_an_agent_is_told_fields_not_the_command_line_s_options(ctx):
    """The engine says "--take or --body"; over MCP and HTTP those are fields."""
    mid = ctx("remember", "The audit ran").stdout.strip()
    ws = Workspace.find(str(ctx.root / ".ctx"))
    try:
        with pytest.raises(InvalidInputError) as told:
            calls.invoke(ws, Caller(agent="a"), calls.CALLS["resolve"], {"id": mid})
        assert told.value.message == "Give either `take` or `body`."
        with pytest.raises(InvalidInputError) as told:
            calls.invoke(
                ws,
                Caller(agent="a"),
                calls.CALLS["remember"],
                {"text": "x", "upsert": True},
            )
        assert "--" not in told.value.message
    finally:
        ws.close()
