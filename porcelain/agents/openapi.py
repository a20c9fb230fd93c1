"""The HTTP API's OpenAPI document, generated from the calls' Structs.

Each route's parameters, request body and answers are the JSON schemas of
the same request and answer Structs that the MCP tools and ``--json`` use.
A GET or DELETE takes its arguments in the query string; a POST or PATCH
takes them in a JSON body; ``{id}`` in a path is the memory's id.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ctx.hub.calls import Call
from ctx.porcelain.agents.schemas import is_union_of_lists

__all__ = ["openapi"]

_REF = "#/components/schemas/{name}"


def _schemas(types: list[Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    flat: list[Any] = []
    for t in types:
        if is_union_of_lists(t):
            flat.extend(t.__args__)  # msgspec has no union of lists: one each
        else:
            flat.append(t)
    out, components = msgspec.json.schema_components(flat, ref_template=_REF)
    return list(out), components


def openapi(
    routes: tuple[tuple[str, str, Call], ...], *, error: type, health: type
) -> dict[str, Any]:
    """Returns the OpenAPI 3.1 document of ``routes``.

    ``error`` is the body of every error response, ``health`` the answer of
    ``GET /health``.
    """
    calls = [call for _, _, call in routes]
    types: list[Any] = [error, health]
    for call in calls:
        types += [call.request, call.answer]
    _, components = _schemas(types)
    failed = {"$ref": _REF.format(name=error.__name__)}
    paths: dict[str, dict[str, Any]] = {}
    for method, path, call in routes:
        answer = _answer_schema(call.answer)
        request = msgspec.json.schema(call.request)
        fields = msgspec.structs.fields(call.request)
        in_path = [f for f in fields if "{" + f.encode_name + "}" in path]
        operation: dict[str, Any] = {
            "operationId": f"{call.name}_{method.lower()}",
            "summary": call.description.split(". ")[0].rstrip(".") + ".",
            "description": call.description,
            "parameters": [
                {
                    "name": f.encode_name,
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string", "minLength": 1},
                }
                for f in in_path
            ],
            "responses": {
                "200": {
                    "description": "The answer.",
                    "content": {"application/json": {"schema": answer}},
                },
                **{
                    code: {
                        "description": text,
                        "content": {"application/json": {"schema": failed}},
                    }
                    for code, text in _ERRORS.items()
                },
            },
        }
        props = _properties(request, components)
        if method in ("GET", "DELETE"):
            operation["parameters"] += [
                {
                    "name": name,
                    "in": "query",
                    "required": name in props[1],
                    "schema": _query_schema(schema),
                    "explode": True,
                }
                for name, schema in props[0].items()
                if name not in {f.encode_name for f in in_path}
            ]
        else:
            operation["requestBody"] = {
                "required": bool(props[1] - {f.encode_name for f in in_path}),
                "content": {
                    "application/json": {
                        "schema": _body_schema(props, {f.encode_name for f in in_path})
                    }
                },
            }
        paths.setdefault(path, {})[method.lower()] = operation
    paths["/health"] = {
        "get": {
            "operationId": "health",
            "summary": "Whether the server is up, and the store it serves.",
            "responses": {
                "200": {
                    "description": "Up.",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": _REF.format(name=health.__name__)}
                        }
                    },
                }
            },
            "security": [],
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ctx",
            "version": "1",
            "description": "A versioned, branching memory store for agents.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}, {}],
    }


_ERRORS = {
    "400": "Invalid arguments.",
    "401": "A key was presented and refused, or a key is required.",
    "403": "The key may read this branch but not write it.",
    "404": "No such memory, branch or revision (or none the key may read).",
    "409": "The branch moved during the call, or the call clashes.",
    "413": "The body is too large.",
}


def _answer_schema(answer: Any) -> dict[str, Any]:
    if is_union_of_lists(answer):
        return {"anyOf": [_answer_schema(a) for a in answer.__args__]}
    full = msgspec.json.schema(answer)
    full.pop("$defs", None)
    rebased: dict[str, Any] = _rebase(full)
    return rebased


def _rebase(schema: Any) -> Any:
    """Points ``#/$defs/X`` references at the components instead."""
    if isinstance(schema, dict):
        return {
            k: (_REF.format(name=v.rsplit("/", 1)[1]) if k == "$ref" else _rebase(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_rebase(v) for v in schema]
    return schema


def _properties(
    request: dict[str, Any], components: dict[str, Any]
) -> tuple[dict[str, Any], set[str]]:
    name = request["$ref"].rsplit("/", 1)[1]
    body = components[name]
    return body.get("properties", {}), set(body.get("required", ()))


def _query_schema(schema: dict[str, Any]) -> dict[str, Any]:
    rebased: dict[str, Any] = _rebase(schema)
    return rebased


def _body_schema(
    props: tuple[dict[str, Any], set[str]], in_path: set[str]
) -> dict[str, Any]:
    properties = {k: _rebase(v) for k, v in props[0].items() if k not in in_path}
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(props[1] - in_path),
        "additionalProperties": False,
    }
