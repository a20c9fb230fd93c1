"""Every `--json` output is exactly the Struct its command's engine call returns.

SCHEMAS is the one table: each command (or command form) and the type its
`--json` prints. Each output must decode strictly into that type, re-encode to
the same JSON (no key gained, none lost, no value changed), and carry exactly
the keys of `msgspec.json.schema(type)` at every level.
"""

import contextlib
import json
import subprocess
from typing import Any

import click
import msgspec
import pytest

from ctx import engine, hub
from ctx.hub import dream
from ctx.porcelain import install
from ctx.porcelain.main import cli

SCHEMAS: dict[str, Any] = {
    "init": hub.InitReport,
    "remember": engine.RememberResult,
    "edit": engine.EditResult,
    "forget": engine.ForgetResult,
    "prime": engine.PrimeResult,
    "show": engine.ShownMemory,
    "ls": list[engine.ListedMemory],
    "link": engine.LinkResult,
    "unlink": engine.UnlinkResult,
    "links": list[engine.LinkRecord],
    "log": list[engine.LogEntry],
    "blame": list[engine.LogEntry],
    "blame --lines": list[engine.BlameLine],
    "diff": engine.DiffReport,
    "branch": engine.BranchResult,
    "branches": list[engine.BranchInfo],
    "switch": engine.BranchInfo,
    "merge": engine.MergeResult,
    "sync": engine.SyncResult,
    "resolve": engine.ResolveResult,
    "undo": engine.UndoResult,
    "op log": list[engine.Operation],
    "status": engine.StoreStatus,
    "gc": engine.GcReport,
    "fsck": engine.FsckReport,
    "redact": engine.RedactResult,
    "tag": engine.EditResult,
    "untag": engine.EditResult,
    "tags": list[engine.TagCount],
    "summarize": engine.SummarizeResult,
    "supersede": engine.SupersedeResult,
    "trace": engine.TraceNode,
    "related": list[engine.RelatedHit],
    "expand": list[engine.MemoryRecord],
    "query": list[engine.SelectedMemory],
    "compose": engine.Composition,
    "view create": engine.CreateViewResult,
    "view list": list[engine.View],
    "view show": engine.View,
    "view render": engine.Composition,
    "view delete": engine.DeleteViewResult,
    "recall": hub.RecallResult,
    "search": hub.RecallResult,
    "test": hub.GoldenReport,
    "feedback": hub.FeedbackResult,
    "recall learn": hub.LearnReport,
    "recall weights": hub.WeightsReport,
    "reindex": hub.ReindexReport,
    "index status": hub.IndexStatus,
    "hub status": hub.HubStatus,
    "hub stop": hub.HubStopped,
    "import": engine.ImportResult,
    "ingest": engine.ImportResult,
    "keys create": hub.CreatedKey,
    "keys ls": list[hub.ApiKey],
    "keys revoke": hub.RevokedKey,
    "remote add": engine.RemoteInfo,
    "remote ls": list[engine.RemoteInfo],
    "remote remove": engine.RemoteInfo,
    "push": engine.PushResult,
    "fetch": engine.FetchResult,
    "pull": engine.PullResult,
    "clone": engine.CloneResult,
    "install": install.InstallResult,
    "uninstall": install.InstallResult,
    "doctor": install.DoctorReport,
    "session end": engine.SessionSummaryResult,
    "session ls": list[engine.SessionInfo],
    "session show": hub.SessionReport,
    "review": engine.Review,
    "brief": engine.Briefing,
    "code index": hub.CodeIndexReport,
    "code status": hub.CodeStatus,
    "find": hub.FindResult,
    "symbols": hub.SymbolList,
    "deps": hub.Dependencies,
    "chunk": hub.CodeHit,
    "dream run": dream.CycleReport,
    "dream status": dream.DreamStatus,
    "dream review": dream.DreamReview,
    "dream reject": engine.ReviewResult,
    "dream accept": engine.ReviewResult,
    "dream merge": engine.DreamMergeResult,
}

# `export` writes its own format and has no --json; `hub start` serves in the
# foreground until stopped (tests/integration/test_hub_server.py runs it).
ELSEWHERE = {
    "export",
    "hub start",
    "code watch",  # watches until stopped: tests/integration/test_code_hub.py
}


def _run_every_command(ctx, tmp_path) -> dict[str, str]:
    """Runs each form in SCHEMAS once, with --json, on a store that makes
    every list non-empty and the merge clash; returns stdout by form."""
    out: dict[str, str] = {}

    def run(form: str, *args: str) -> Any:
        code = 5 if form == "merge" else 0  # the merge leaves a conflict
        out[form] = ctx(*args, "--json", code=code).stdout
        return json.loads(out[form])

    run("init", "init", str(tmp_path))
    a = run("remember", "remember", "Queue is Postgres", "--tag", "project:api")["id"]
    b = ctx("remember", "Port is 8080", "--title", "Port").stdout.strip()
    c = ctx("remember", "Logs use local time").stdout.strip()
    old = ctx("remember", "Queue is Redis").stdout.strip()
    run("edit", "edit", a, "--body", "Queue is Postgres 16")
    run("tag", "tag", b, "tier:reference", "project:api")
    run("untag", "untag", b, "project:api")
    run("link", "link", a, b, "--type", "DEPENDS_ON")
    ctx("link", c, b, "--type", "RELATES_TO")
    run("unlink", "unlink", c, b, "--type", "RELATES_TO")
    run("links", "links", a)
    summary = run("summarize", "summarize", a, b, "--body", "Postgres on 8080")["id"]
    run("supersede", "supersede", old, a)
    run("trace", "trace", summary)
    run("related", "related", a)
    run("expand", "expand", summary)
    doc = tmp_path / "GUIDE.md"
    doc.write_text("# Style\nBe brief.\n\n# Tests\nRun pytest.\n", encoding="utf-8")
    run("prime", "prime", str(doc))
    run("show", "show", a)
    run("ls", "ls")
    run("query", "query", "kind:fact")
    run("compose", "compose", "--budget", "500")
    where = ("--where", "tag:project:api", "--budget", "400")
    run("view create", "view", "create", "api", *where)
    run("view list", "view", "list")
    run("view show", "view", "show", "api")
    run("view render", "view", "render", "api")
    run("view delete", "view", "delete", "api")
    run("log", "log", "-n", "5")
    run("blame", "blame", a)
    run("blame --lines", "blame", a, "--lines")
    run("branch", "branch", "agent")
    ctx("edit", c, "--body", "Logs use UTC", "--branch", "agent")
    new = ctx("remember", "Deploys on Fridays", "--branch", "agent").stdout.strip()
    ctx("link", new, a, "--type", "RELATES_TO", "--branch", "agent")
    ctx("forget", b, "--reason", "moved", "--branch", "agent")
    ctx("edit", c, "--body", "Logs use server time")
    run("diff", "diff", "main", "agent")
    run("review", "review", "agent")
    run("merge", "merge", "agent")
    run("status", "status")
    run("resolve", "resolve", c, "--take", "theirs")
    run("branches", "branches")
    run("switch", "switch", "agent")
    ctx("switch", "main")
    run("undo", "undo")
    run("op log", "op", "log")
    run("forget", "forget", old, "--reason", "replaced")
    run("tags", "tags")
    run("session end", "session", "end", "s1", "--summary", "Chose Postgres")
    run("session ls", "session", "ls")
    run("session show", "session", "show", "s1")
    run("brief", "brief", "--budget", "400")
    ctx("remember", "Standup is every Monday")
    ctx("remember", "standup is every monday.")
    run("dream run", "dream", "run", "--once")
    run("dream status", "dream", "status")
    first = run("dream review", "dream", "review")["proposals"][0]["proposal"]["id"]
    run("dream reject", "dream", "reject", first, "--reason", "not now")
    run("dream accept", "dream", "accept", "--all")
    run("dream merge", "dream", "merge")
    run("gc", "gc")
    run("fsck", "fsck")
    run("redact", "redact", "--text", "Standup is every Monday")
    recalled = run("recall", "recall", "postgres", "--explain")
    used = recalled["hits"][-1]["id"]
    run("feedback", "feedback", recalled["recall_id"], "--used", used)
    run("recall learn", "recall", "learn")
    run("recall weights", "recall", "weights")
    run("search", "search", "queue")
    golden = tmp_path / "memory-tests.toml"
    golden.write_text('[[question]]\nask = "queue"\nwords = ["postgres"]\n')
    run("test", "test", str(golden))
    run("reindex", "reindex")
    run("index status", "index", "status")
    run("hub status", "hub", "status")
    run("hub stop", "hub", "stop")
    lines = tmp_path / "more.jsonl"
    lines.write_text('{"text": "Builds run on Linux", "tags": ["os:linux"]}\n')
    run("import", "import", str(lines))
    notes = tmp_path / "NOTES.txt"
    notes.write_text("Releases ship on Tuesdays.\n", encoding="utf-8")
    run("ingest", "ingest", str(notes))
    run("keys create", "keys", "create", "ci", "--read", "main", "--write", "a/*")
    run("keys ls", "keys", "ls")
    run("keys revoke", "keys", "revoke", "ci")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    run("remote add", "remote", "add", "origin", str(remote))
    run("push", "push", "--all")
    run("fetch", "fetch")
    run("pull", "pull")
    run("remote ls", "remote", "ls")
    clone = tmp_path / "clone" / ".ctx"
    run("clone", "clone", str(remote), "--store", str(clone))
    run("remote remove", "remote", "remove", "origin")
    code = tmp_path / "code"  # ctx sync reads the code's branches
    subprocess.run(["git", "init", "-q", "-b", "main", str(code)], check=True)
    ctx("branch", "feature")
    ctx("remember", "Feature flags live in env", "--branch", "feature")
    who = ("-c", "user.name=t", "-c", "user.email=t@example.com")
    subprocess.run(
        ["git", *who, "-C", str(code), "commit", "-q", "--allow-empty", "-m", "a"],
        check=True,
    )
    subprocess.run(["git", "-C", str(code), "branch", "feature"], check=True)
    with contextlib.chdir(code):
        run("sync", "sync", "--dry-run")
    source = tmp_path / "src"
    source.mkdir()
    (source / "app.py").write_text("import util\n\n\ndef main():\n    util.run()\n")
    (source / "util.py").write_text('def run():\n    """Runs."""\n')
    run("code index", "code", "index", str(source), "--no-vectors")
    run("code status", "code", "status")
    run("find", "find", "run main", "--full")
    run("symbols", "symbols")
    run("deps", "deps", str(source / "util.py"))
    run("chunk", "chunk", f"{source / 'app.py'}:4")
    with contextlib.chdir(tmp_path):
        # The hosts' hooks find the store from their folder: no --store.
        for form in ("install", "uninstall"):
            result = ctx.runner.invoke(cli, [form, "claude", "--json"])
            assert result.exit_code == 0, result.stderr
            out[form] = result.stdout
        # doctor exits 1 when a check fails (ctx may not be on the PATH here)
        result = ctx.runner.invoke(
            cli, ["--store", str(tmp_path / ".ctx"), "doctor", "--json"]
        )
        assert result.exit_code in (0, 1), result.stderr
        out["doctor"] = result.stdout
    return out


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _fits(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    schema = _resolve(schema, defs)
    kind = schema.get("type")
    if "anyOf" in schema:
        return any(_fits(value, s, defs) for s in schema["anyOf"])
    if kind == "null":
        return value is None
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return value is not None and not isinstance(value, dict | list)


def _schema_keys(value: Any, schema: dict[str, Any], defs: dict[str, Any], at: str):
    """Yields each place where the output's keys differ from the schema's."""
    schema = _resolve(schema, defs)
    if "anyOf" in schema:
        fitting = [s for s in schema["anyOf"] if _fits(value, s, defs)]
        assert fitting, (at, value)
        yield from _schema_keys(value, fitting[0], defs, at)
    elif isinstance(value, dict) and "properties" in schema:
        keys, properties = set(value), set(schema["properties"])
        if keys != properties or not set(schema.get("required", ())) <= keys:
            yield f"{at}: keys {sorted(keys)} != schema {sorted(properties)}"
        for key in keys & properties:
            yield from _schema_keys(
                value[key], schema["properties"][key], defs, f"{at}.{key}"
            )
    elif isinstance(value, dict) and "additionalProperties" in schema:
        for key, item in value.items():
            yield from _schema_keys(
                item, schema["additionalProperties"], defs, f"{at}.{key}"
            )
    elif isinstance(value, list):
        items = schema.get("prefixItems") or [schema.get("items", {})] * len(value)
        for n, (item, item_schema) in enumerate(zip(value, items, strict=False)):
            yield from _schema_keys(item, item_schema, defs, f"{at}[{n}]")


def _problems(output: str, type_: Any) -> list[str]:
    decoded = msgspec.json.decode(output, type=type_, strict=True)
    problems = []
    if json.loads(msgspec.json.encode(decoded)) != json.loads(output):
        problems.append("does not re-encode to the same JSON")
    schema = msgspec.json.schema(type_)
    problems += _schema_keys(json.loads(output), schema, schema.get("$defs", {}), "$")
    return problems


def test_every_json_output_is_its_struct(ctx, tmp_path):
    outputs = _run_every_command(ctx, tmp_path)
    assert outputs.keys() == SCHEMAS.keys()
    problems = {
        form: found
        for form, type_ in SCHEMAS.items()
        if (found := _problems(outputs[form], type_))
    }
    assert problems == {}
    # Writes and recalls name the store they used (issue 16).
    store = str(tmp_path / ".ctx")
    named = {
        form: json.loads(outputs[form])["store"]
        for form, type_ in SCHEMAS.items()
        if isinstance(type_, type) and issubclass(type_, engine.Outcome)
    }
    assert named == dict.fromkeys(named, store)
    assert {"remember", "edit", "forget", "import", "merge", "recall"} <= set(named)


def _json_commands(group: click.Group = cli, prefix: str = ""):
    context = click.Context(group)  # the group loads its commands lazily
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from _json_commands(command, f"{prefix}{name} ")
        elif any(p.name == "as_json" for p in command.params):
            # `ctx recall QUERY` runs the recall group's hidden `_ask`.
            yield prefix.strip() if name == "_ask" else f"{prefix}{name}"


def test_the_table_covers_every_command_with_json():
    covered = {form.split(" --")[0] for form in SCHEMAS}
    assert covered | ELSEWHERE == set(_json_commands()) | {"export"}


def test_a_gained_or_lost_key_is_caught():
    good = (
        '{"store":"/s/.ctx","id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","commit":null,'
        '"changed":false}'
    )
    assert _problems(good, engine.EditResult) == []
    gained = good[:-1] + ',"extra":1}'
    assert _problems(gained, engine.EditResult) == [
        "does not re-encode to the same JSON",
        "$: keys ['changed', 'commit', 'extra', 'id', 'store'] "
        "!= schema ['changed', 'commit', 'id', 'store']",
    ]
    lost = '{"store":"/s/.ctx","id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","commit":null}'
    with pytest.raises(msgspec.ValidationError, match="required field `changed`"):
        _problems(lost, engine.EditResult)
