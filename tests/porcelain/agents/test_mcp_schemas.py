"""The MCP tools' schemas: honest enums, valid everywhere, a lean default list.

Every closed set a call takes (a kind, a link type, a format...) must be the
set the engine or the hub checks it against, in every tool's input schema as
the SDK client receives it and in the HTTP API's OpenAPI document. Every
schema must pass a strict validator, and the tools listed by default must
stay within a context budget.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from mcp import Client

from ctx.engine import (
    AGENT_PATTERN,
    FORMATS,
    INTENT_PATTERN,
    KINDS,
    LINK_TYPES,
    LISTING_ORDERS,
    PREFERENCES,
    PROPOSAL_STATUSES,
    TAKES,
    Intent,
    InvalidInputError,
    Store,
    TraceNode,
)
from ctx.hub import Workspace
from ctx.hub.calls import CALLS, TOOL_SETS, decode, structured, tool_names
from ctx.hub.code.languages import LANGUAGES, SYMBOL_KINDS
from ctx.hub.retrieval.results import RecallResult
from ctx.porcelain.agents.http_app import ROUTES, ErrorBody, Health
from ctx.porcelain.agents.mcp_server import build_server
from ctx.porcelain.agents.openapi import openapi

pytestmark = pytest.mark.anyio

DEFAULT_BUDGET_TOKENS = 4_000
"""What the default tool list may cost a session, counted as characters / 4."""

CLOSED_SETS: dict[tuple[str, str], tuple[str, ...]] = {
    ("remember", "kind"): KINDS,
    ("edit", "kind"): KINDS,
    ("search", "kind"): KINDS,
    ("ls", "sort"): LISTING_ORDERS,
    ("link", "type"): LINK_TYPES,
    ("unlink", "type"): LINK_TYPES,
    ("related", "types"): LINK_TYPES,
    ("graph", "types"): LINK_TYPES,
    ("compose", "format"): FORMATS,
    ("merge", "prefer"): PREFERENCES,
    ("resolve", "take"): TAKES,
    ("find", "language"): LANGUAGES,
    ("symbols", "kind"): SYMBOL_KINDS,
    ("dream_review", "status"): (*PROPOSAL_STATUSES, "all"),
}
"""Each call's field that takes one of a closed set, and the set the server
checks it against (the engine's constant, or the code index's)."""

# What a strict validator (the MCP Inspector's) knows: the keywords of JSON
# Schema draft 7 that draft 2020-12 keeps with the same meaning.
KEYWORDS = {
    "$ref", "$defs", "type", "enum", "const", "properties", "required",
    "additionalProperties", "items", "minItems", "maxItems", "uniqueItems",
    "anyOf", "oneOf", "allOf", "not", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "title",
    "description", "default", "examples", "minProperties", "maxProperties",
}  # fmt: skip


@pytest.fixture
def ws(tmp_path: Path):
    path = tmp_path / ".ctx"
    Store.init(path, clock=lambda: datetime.now(UTC)).close()
    (path / "config.toml").write_text('[embedder]\nkind = "hashing"\n')
    workspace = Workspace.find(path)
    yield workspace
    workspace.close()


async def listed(ws: Workspace, tools: str | None = None) -> list[dict[str, Any]]:
    """The tools as the SDK client receives them from ``tools/list``."""
    async with Client(build_server(ws, tools=tools)) as client:
        result = await client.list_tools()
    return [t.model_dump(by_alias=True, exclude_none=True) for t in result.tools]


def enums(schema: Any, path: str = "") -> dict[str, list[Any]]:
    """Every ``enum`` in ``schema``, by the property path that holds it."""
    found: dict[str, list[Any]] = {}
    if isinstance(schema, dict):
        if "enum" in schema:
            found[path] = schema["enum"]
        for key, value in schema.items():
            if key == "properties":
                for name, sub in value.items():
                    found.update(enums(sub, f"{path}.{name}".lstrip(".")))
            elif key != "enum":
                found.update(enums(value, path))
    elif isinstance(schema, list):
        for value in schema:
            found.update(enums(value, path))
    return found


def check_enums(call: str, schema: dict[str, Any]) -> set[str]:
    """Asserts that each enum of ``call``'s schema is the server's set."""
    fields = set()
    for field, values in enums(schema).items():
        assert (call, field) in CLOSED_SETS, f"{call}.{field}: a closed set unknown"
        assert sorted(values) == sorted(CLOSED_SETS[call, field]), (call, field)
        fields.add(field)
    return fields


async def test_every_tools_enums_are_the_servers_sets(ws: Workspace) -> None:
    seen = set()
    for tool in await listed(ws, "all"):
        fields = check_enums(tool["name"], tool["inputSchema"])
        seen |= {(tool["name"], f) for f in fields}
    assert seen == {k for k in CLOSED_SETS if k[0] in CALLS}


def test_every_routes_enums_are_the_servers_sets() -> None:
    doc = openapi(ROUTES, error=ErrorBody, health=Health)
    seen = set()
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            if path == "/health":
                continue
            call = operation["operationId"].removesuffix(f"_{method}")
            props = {
                p["name"]: p["schema"]
                for p in operation["parameters"]
                if p["in"] == "query"
            }
            body = operation.get("requestBody", {}).get("content", {})
            if body:
                props.update(body["application/json"]["schema"]["properties"])
            fields = check_enums(call, {"properties": props})
            seen |= {(call, f) for f in fields}
    routed = {c.name for _, _, c in ROUTES}
    assert seen == {k for k in CLOSED_SETS if k[0] in routed}


@pytest.mark.parametrize(
    ("call", "arguments"),
    [
        ("link", {"source": "A" * 26, "target": "B" * 26, "type": "PART_OF"}),
        ("link", {"source": "A" * 26, "target": "B" * 26, "type": "EXAMPLE_OF"}),
        ("compose", {"format": "xml"}),
        ("remember", {"text": "x", "kind": "gossip"}),
        ("merge", {"source": "main", "prefer": "mine"}),
    ],
)
def test_a_value_outside_the_set_is_refused_by_name(
    call: str, arguments: dict[str, Any]
) -> None:
    with pytest.raises(InvalidInputError, match="Invalid enum value"):
        decode(CALLS[call], arguments)


@pytest.mark.parametrize(
    ("field", "pattern", "refused", "taken"),
    [
        ("intent", INTENT_PATTERN, ["Decide", "decide now", "d" * 33], "decide"),
        ("agent", AGENT_PATTERN, ["two words", "-lead", "a" * 65], "codex-2"),
    ],
)
async def test_every_writes_signature_fields_carry_the_engines_pattern(
    ws: Workspace, field: str, pattern: str, refused: list[str], taken: str
) -> None:
    # Issue 32: the intent's schema said "a string", and the engine refused
    # "Decide" and "decide now" only once the call was made.
    writes = [
        t for t in await listed(ws, "all") if field in t["inputSchema"]["properties"]
    ]
    assert {"remember", "edit", "forget", "link"} <= {t["name"] for t in writes}
    for tool in writes:
        text = tool["inputSchema"]["properties"][field]
        assert (text["type"], text["pattern"]) == ("string", pattern), tool["name"]
    for value in refused:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(value, text)
        with pytest.raises(InvalidInputError, match=re.escape(pattern)):
            decode(CALLS["remember"], {"text": "x", field: value})
    jsonschema.validate(taken, text)
    decode(CALLS["remember"], {"text": "x", field: taken})
    # Python's "$" matches before a last newline (ECMA's does not): the
    # engine matches the pattern whole, and refuses what would split a trailer.
    with pytest.raises(InvalidInputError, match="is not allowed"):
        Intent(**{"agent": "codex", "intent": "observe", field: f"{taken}\n"})


def test_every_value_of_a_set_is_decoded() -> None:
    decode(CALLS["link"], {"source": "A" * 26, "target": "B" * 26, "type": "CHILD_OF"})
    for fmt in FORMATS:
        decode(CALLS["compose"], {"format": fmt})


def strict(schema: Any, where: str, key: str = "") -> None:
    """Asserts what a strict validator asks beyond the metaschema.

    No boolean schema but ``additionalProperties: false``, and no keyword
    outside :data:`KEYWORDS` (``prefixItems`` is unknown to draft 7).
    """
    if isinstance(schema, bool):
        assert key == "additionalProperties", (where, key)
        assert schema is False, (where, key)
        return
    assert isinstance(schema, dict), (where, key)
    unknown = set(schema) - KEYWORDS
    assert not unknown, (where, unknown)
    for name, value in schema.items():
        if name in ("properties", "$defs"):
            for sub_name, sub in value.items():
                strict(sub, f"{where}.{sub_name}")
        elif name in ("anyOf", "oneOf", "allOf"):
            for sub in value:
                strict(sub, where)
        elif name in ("items", "not", "additionalProperties"):
            strict(value, where, name)


async def test_every_schema_is_valid_and_self_contained(ws: Workspace) -> None:
    for tool in await listed(ws, "all"):
        name = tool["name"]
        for kind in ("inputSchema", "outputSchema"):
            schema = tool[kind]
            jsonschema.Draft202012Validator.check_schema(schema)
            jsonschema.Draft7Validator.check_schema(schema)
            strict(schema, f"{name}.{kind}")
            assert schema["type"] == "object", name
        assert "$defs" not in tool["inputSchema"], name
        assert "$ref" not in json.dumps(tool["inputSchema"]), name
        out = tool["outputSchema"]
        text = json.dumps(out)
        for def_name, definition in out.get("$defs", {}).items():
            assert f'"#/$defs/{def_name}"' in text, (name, def_name)  # used
            assert definition.get("title") != out.get("title"), name  # not the root


def size(tools: list[dict[str, Any]], *, whole: bool = False) -> int:
    """The characters of a tool list: names, descriptions and input schemas."""
    if whole:
        return len(json.dumps(tools, separators=(",", ":")))
    kept = [{k: t[k] for k in ("name", "description", "inputSchema")} for t in tools]
    return len(json.dumps(kept, separators=(",", ":")))


async def test_the_default_list_is_the_default_set_within_budget(
    ws: Workspace,
) -> None:
    tools = await listed(ws)
    assert [t["name"] for t in tools] == list(tool_names("default"))
    assert size(tools) / 4 < DEFAULT_BUDGET_TOKENS, size(tools)


async def test_descriptions_say_when_to_call_in_two_sentences(ws: Workspace) -> None:
    for tool in await listed(ws, "all"):
        text = tool["description"]
        assert text.startswith("Call "), tool["name"]
        sentences = re.findall(r"[.!?](?:\s|$)", text)
        assert 1 <= len(sentences) <= 2, tool["name"]


async def test_config_and_the_tools_argument_choose_the_list(
    ws: Workspace,
) -> None:
    (ws.path / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[mcp]\ntools = "default,history"\n'
    )
    names = [t["name"] for t in await listed(ws)]
    assert names == list(tool_names("default,log,blame,diff,status"))
    assert [t["name"] for t in await listed(ws, "find,recall")] == ["recall", "find"]
    assert len(await listed(ws, "all")) == len(CALLS)


def test_each_call_is_in_one_set() -> None:
    named = [name for names in TOOL_SETS.values() for name in names]
    assert sorted(named) == sorted(CALLS)


@pytest.mark.parametrize("spec", ["defualt", "", "recall,,find", "graph"])
def test_an_unknown_tool_or_set_is_refused(ws: Workspace, spec: str) -> None:
    with pytest.raises(InvalidInputError, match="Unknown tool or tool set"):
        build_server(ws, tools=spec)


async def recall_answer(ws: Workspace) -> tuple[dict[str, Any], dict[str, Any]]:
    """Recalls the one memory over MCP: the tool's output schema and answer."""
    async with Client(build_server(ws)) as client:
        await client.call_tool("remember", {"text": "Deploys run on Fridays."})
        answer = await client.call_tool("recall", {"query": "deploys"})
        schema = next(
            t.output_schema
            for t in (await client.list_tools()).tools
            if t.name == "recall"
        )
    assert schema is not None
    assert answer.structured_content is not None
    return schema, answer.structured_content


async def test_a_nullable_answer_field_is_a_pair_of_types(ws: Workspace) -> None:
    # A client that checks each answer (the SDK's) takes one step for a pair
    # of types where anyOf took up to three; answers validate as before.
    schema, recalled = await recall_answer(ws)
    hit_schema = schema["$defs"]["Hit"]["properties"]
    assert hit_schema["title"] == {"type": ["string", "null"]}
    assert hit_schema["passage"]["anyOf"][0] == {"type": "null"}  # mostly null
    # A Struct one field holds is said in place, null beside its type.
    assert hit_schema["written"]["type"] == ["object", "null"]
    assert "Written" not in schema["$defs"]
    assert schema["properties"]["budget"] == {"type": ["integer", "null"]}
    check = jsonschema.Draft202012Validator(schema)
    [hit] = recalled["hits"]
    for field, good, bad in [
        ("title", None, 3),
        ("similarity", None, "near"),
        ("explain", None, "because"),
        ("written", None, ["bench"]),
    ]:
        for value, valid in [(good, True), (bad, False)]:
            changed = {**recalled, "hits": [{**hit, field: value}]}
            assert check.is_valid(changed) is valid, (field, value)


async def test_an_answer_leaves_out_what_holds_its_default(ws: Workspace) -> None:
    # Fewer tokens and fewer checks; decoded, it is the same answer.
    schema, recalled = await recall_answer(ws)
    [hit] = recalled["hits"]
    for field in ("explain", "passage", "conflict", "weak"):
        assert field not in hit
    assert hit["title"] is None  # required: said even when null
    assert "nothing_relevant" not in recalled
    jsonschema.Draft202012Validator(schema).validate(recalled)
    decoded = msgspec.convert(recalled, RecallResult)
    assert decoded.hits[0].explain is None
    assert decoded.hits[0].weak is False
    whole = msgspec.json.decode(msgspec.json.encode(decoded))
    assert within(recalled, whole)  # what was said is said the same
    assert set(whole["hits"][0]) - set(hit) == {
        "explain",
        "passage",
        "conflict",
        "weak",
    }


def within(part: Any, whole: Any) -> bool:
    """Whether ``part`` is ``whole`` with some of its objects' keys left out."""
    if isinstance(part, dict):
        return all(k in whole and within(v, whole[k]) for k, v in part.items())
    if isinstance(part, list):
        return len(part) == len(whole) and all(map(within, part, whole))
    return bool(part == whole)


def test_an_answer_deeper_than_the_stack_is_given_whole() -> None:
    # A trace's tree may be as deep as its chain of memories.
    node = TraceNode(id="0", kind=None, headline="first")
    for number in range(1, 2_000):
        node = TraceNode(id=str(number), kind=None, headline="h", children=(node,))
    answer = structured(node)
    depth = 0
    while answer.get("children"):
        [answer] = answer["children"]
        depth += 1
    assert depth == 1_999
    assert answer == {"id": "0", "kind": None, "headline": "first"}
