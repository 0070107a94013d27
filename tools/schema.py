"""Input schemas: the JSON Schema subset every host reads, and pydantic's schema made compact.

`compact_schema(schema)` turns the schema pydantic generates for a `ToolInput` into the form
tools list: `$ref`s inlined (no `$defs`), generated titles dropped, an optional input's
`anyOf: [X, null]` written as X with no `default: null`, and required inputs first.

`check_schema(schema)` raises `SchemaDefinitionError` when a schema leaves the subset: only
the keywords in `SUPPORTED_KEYWORDS`, every object lists its properties and forbids others.
Both run when a tool is defined, i.e. at start-up, so a tool module that leaves the subset
never serves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator

SUPPORTED_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "description",
        "default",
        "examples",
    }
)
"""No `$ref`, `oneOf`/`anyOf` or `prefixItems`: several hosts reject or mangle them."""

KEY_ORDER = ("type", "description", "properties", "required", "items")
"""Keys written first, for a listing a person can read; the rest keep pydantic's order."""


class SchemaDefinitionError(ValueError):
    """A tool module declares a schema this server does not support."""


def compact_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` (pydantic's, with `$defs`) in the compact, self-contained form tools list."""
    definitions = schema.get("$defs", {})
    return _compact(schema, definitions)


def _compact(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_compact(item, definitions) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$ref" in node:
        target = definitions[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _compact(merged, definitions)
    if "anyOf" in node:
        branches = [b for b in node["anyOf"] if b != {"type": "null"}]
        if len(branches) == 1:  # an optional input: None means "not given"
            rest = {k: v for k, v in node.items() if k != "anyOf" and not (k == "default" and v is None)}
            return _compact({**branches[0], **rest}, definitions)
    compact: dict[str, Any] = {}
    for key, value in _ordered(node.items()):
        if key in ("$defs", "title"):
            continue
        if key == "properties":
            compact[key] = {name: _compact(sub, definitions) for name, sub in _required_first(value, node)}
        elif key == "default" and value is None:
            continue
        elif key == "const" and "enum" not in node:
            compact["enum"] = [value]  # one allowed value: as an enum, which every host reads
        else:
            compact[key] = _compact(value, definitions)
    return compact


def _ordered(items: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    pairs = list(items)
    rank = {key: i for i, key in enumerate(KEY_ORDER)}
    return sorted(pairs, key=lambda pair: rank.get(pair[0], len(KEY_ORDER)))


def _required_first(properties: Mapping[str, Any], node: Mapping[str, Any]) -> list[tuple[str, Any]]:
    required = set(node.get("required", ()))
    return sorted(properties.items(), key=lambda item: item[0] not in required)


def check_schema(schema: Mapping[str, Any], where: str = "inputSchema") -> None:
    """Raise `SchemaDefinitionError` if `schema` leaves the supported subset."""
    if not isinstance(schema, Mapping):
        raise SchemaDefinitionError(f"{where}: must be an object")
    unknown = set(schema) - SUPPORTED_KEYWORDS
    if unknown:
        raise SchemaDefinitionError(f"{where}: unsupported keyword(s) {sorted(unknown)}")
    if schema.get("type") == "object":
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            raise SchemaDefinitionError(f"{where}: an object schema must list its properties")
        if schema.get("additionalProperties", None) is not False:
            raise SchemaDefinitionError(f"{where}: an object schema must set additionalProperties: false")
        missing = set(schema.get("required", ())) - set(properties)
        if missing:
            raise SchemaDefinitionError(f"{where}: required names unknown properties {sorted(missing)}")
        for name, sub in properties.items():
            check_schema(sub, f"{where}.{name}")
    if "items" in schema:
        check_schema(schema["items"], f"{where}[]")
    Draft202012Validator.check_schema(dict(schema))


def argument_path(path: Iterable[Any]) -> str:
    """`["locations", 1, 0]` -> `locations[1][0]`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "arguments"
