"""The JSON schemas of the calls' Structs, as MCP tools list them.

msgspec gives a Struct's schema as a ``$ref`` into ``$defs``; a tool's
schema must be an object at its root, so the root is inlined. What a model
reads in every session is kept small and self-contained:

- an input schema has no ``$defs`` (a request holds no Struct), no title or
  description at its root (the tool's description says it), and an
  optional field reads as its type alone: ``{"type": "string"}``, not
  ``anyOf`` with ``null`` and ``default: null`` (leaving it out is the same);
  an empty default (``null``, ``[]``, ``false``) is left unsaid;
- an output schema keeps in ``$defs`` only the Structs it refers to more
  than once, never a second copy of its root (a Struct that holds itself
  refers to ``#``); one referred to once is written in place, where a
  client that checks answers resolves no reference for it;
- a fixed-length tuple is an array with its length and one item schema, not
  ``prefixItems`` with ``items: false``: strict validators (the MCP
  Inspector's) refuse a bare boolean schema and the 2020-12-only keyword;
- in an output schema, a value that may be ``null`` reads as a pair of
  types, ``{"type": ["string", "null"]}``, not ``anyOf`` of two schemas:
  the same answers validate, and a client that checks each answer against
  the schema (the SDK's does, with ``jsonschema``) takes one step per such
  field instead of up to three (a recall's answer holds a dozen of them per
  hit). A ``null`` beside a ``$ref``, an ``enum`` or a ``const`` stays
  ``anyOf`` (merged, it would mean something else), with ``null`` first:
  such a field (a hit's ``explain``, ``passage``, ``conflict``) is mostly
  ``null``, and a validator stops at the first schema that holds.

Every schema here validates against the JSON Schema metaschema (draft
2020-12 and draft 7; ``tests/porcelain/agents/test_mcp_schemas.py``).
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["input_schema", "is_union_of_lists", "output_schema"]


def input_schema(request: type[msgspec.Struct]) -> dict[str, Any]:
    """Returns a request's schema: one object, no ``$defs``, nothing repeated."""
    full = msgspec.json.schema(request)
    defs = full.pop("$defs", {})
    root = dict(defs.pop(full["$ref"].rsplit("/", 1)[1]))
    if defs:  # a request is flat: a nested Struct would need its $defs
        raise TypeError(f"{request.__name__} holds a Struct: {sorted(defs)}.")
    root.pop("title", None)
    root.pop("description", None)
    root["properties"] = {
        name: _plain(field) for name, field in root.get("properties", {}).items()
    }
    lean: dict[str, Any] = _tuples(root)
    return lean


def output_schema(answer: Any) -> dict[str, Any]:
    """Returns the schema of an answer, as an object at its root.

    A list is wrapped as ``{"result": [...]}`` (an MCP tool's structured
    result is an object), as :func:`~.calls.structured` wraps the value.
    """
    defs: dict[str, Any] = {}
    if is_union_of_lists(answer):  # msgspec has no such union: one per list
        parts = []
        for part in answer.__args__:
            one = msgspec.json.schema(part)
            defs.update(one.pop("$defs", {}))
            parts.append(one)
        root: dict[str, Any] = _wrapped({"anyOf": parts})
    elif getattr(answer, "__origin__", None) is list:
        inner = msgspec.json.schema(answer)
        defs = inner.pop("$defs", {})
        root = _wrapped(inner)
    else:
        full = msgspec.json.schema(answer)
        defs = full.pop("$defs", {})
        name = full["$ref"].rsplit("/", 1)[1]
        root = _pointed(defs.pop(name), f"#/$defs/{name}")
        defs = {k: _pointed(v, f"#/$defs/{name}") for k, v in defs.items()}
    used = _referred(root, defs)
    once = {name for name, count in used.items() if count == 1}
    root = _inlined(root, defs, once)
    kept = {
        k: _inlined(v, defs, once) for k, v in defs.items() if k in used.keys() - once
    }
    if kept:
        root["$defs"] = kept
    lean: dict[str, Any] = _nullable(_tuples(root))
    return lean


def is_union_of_lists(answer: Any) -> bool:
    """Returns whether ``answer`` is a union of list types (msgspec has none)."""
    args = getattr(answer, "__args__", ())
    return bool(args) and all(getattr(a, "__origin__", None) is list for a in args)


def _wrapped(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"result": result},
        "required": ["result"],
    }


def _plain(field: dict[str, Any]) -> dict[str, Any]:
    """Returns an input field's schema without its ``null`` or empty default."""
    out = dict(field)
    choices = out.get("anyOf")
    if choices and len(choices) == 2 and {"type": "null"} in choices:
        del out["anyOf"]
        [kept] = [c for c in choices if c != {"type": "null"}]
        out = {**out, **kept}
    if "default" in out:
        default = out["default"]
        if default is None or default is False or default == []:
            del out["default"]
    return out


_NULL = {"type": "null"}
_TYPE_ONLY = frozenset(
    {"type", "items", "minItems", "maxItems", "format", "minLength", "maxLength"}
    | {"pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
)
"""The keywords that apply to one JSON type alone: ``null`` added to the
``type`` of a schema made of them changes nothing else."""


def _nullable(schema: Any) -> Any:
    """Returns ``schema`` with each value that may be null said briefly.

    An ``anyOf`` of a plain type and null becomes a pair of types
    (``{"type": ["integer", "null"]}``); any other puts null first.
    """
    if isinstance(schema, list):
        return [_nullable(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _nullable(v) for k, v in schema.items()}
    choices = out.get("anyOf")
    if choices and len(choices) == 2 and _NULL in choices:
        [kept] = [c for c in choices if c != _NULL]
        if isinstance(kept.get("type"), str) and set(kept) <= _TYPE_ONLY:
            del out["anyOf"]
            out = {**kept, **out, "type": [kept["type"], "null"]}
        else:
            out["anyOf"] = [_NULL, kept]
    return out


def _pointed(schema: Any, root_ref: str) -> Any:
    """Returns ``schema`` with references to the root made ``#``."""
    if isinstance(schema, dict):
        return {
            k: ("#" if k == "$ref" and v == root_ref else _pointed(v, root_ref))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_pointed(v, root_ref) for v in schema]
    return schema


def _referred(root: dict[str, Any], defs: dict[str, Any]) -> dict[str, int]:
    """Returns how often ``$ref`` points at each definition ``root`` reaches.

    Counted in ``root`` and once in each definition it reaches (through
    ``$ref``, from definitions too).
    """
    counts: dict[str, int] = {}
    todo: list[Any] = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.rsplit("/", 1)[1]
                if name not in counts:
                    counts[name] = 0
                    todo.append(defs[name])
                counts[name] += 1
            todo.extend(v for k, v in node.items() if k != "$ref")
        elif isinstance(node, list):
            todo.extend(node)
    return counts


def _inlined(schema: Any, defs: dict[str, Any], once: set[str]) -> Any:
    """Returns ``schema`` with each definition of ``once`` written in its place.

    A definition one field refers to is said where it is used: a client
    that checks answers resolves no reference for it. Where the field may
    be null (``anyOf`` of null and the reference), the object's ``type``
    takes ``null`` beside it: ``properties`` and ``required`` hold of
    objects alone, so the same answers validate.
    """
    if isinstance(schema, list):
        return [_inlined(v, defs, once) for v in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    name = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
    if name in once:
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return {**_inlined(defs[name], defs, once), **rest}
    out = {k: _inlined(v, defs, once) for k, v in schema.items()}
    choices = out.get("anyOf")
    if choices and len(choices) == 2 and _NULL in choices:
        [kept] = [c for c in choices if c != _NULL]
        if kept.get("type") == "object" and "$ref" not in kept:
            del out["anyOf"]
            out = {**kept, **out, "type": ["object", "null"]}
    return out


def _tuples(schema: Any) -> Any:
    """Returns ``schema`` with each fixed-length tuple as a plain array.

    msgspec writes ``(str, str)`` as ``prefixItems`` and ``items: false``;
    this keeps its length (``minItems``, ``maxItems``) and gives its items
    their one schema, or the ``anyOf`` of the distinct ones.
    """
    if isinstance(schema, list):
        return [_tuples(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _tuples(v) for k, v in schema.items()}
    if "prefixItems" in out:
        parts: list[Any] = []
        for part in out.pop("prefixItems"):
            if part not in parts:
                parts.append(part)
        out["items"] = parts[0] if len(parts) == 1 else {"anyOf": parts}
    return out
