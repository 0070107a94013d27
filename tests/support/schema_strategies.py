"""Hypothesis strategies for tool arguments, read from a tool's advertised input schema.

The schemas are the subset `tools.schema` allows (objects with listed properties, arrays,
strings with lengths and patterns, bounded numbers, enums), so a small generator covers them.

- `valid(schema)` draws values the schema accepts. Inputs may still break a rule between
  inputs (`radius` needs `position`): JSON Schema cannot say that, the model validators do.
- `broken(schema)` draws `(arguments, name, base)`: arguments with one fault the schema states,
  the input the fault is in (a wrong type, a value out of range, an over-long string, too many
  or too few items, a value outside the enum, an unknown or missing name), however deep inside
  it, and the valid draw the fault was put into (which may break a rule of its own).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

MAX_ITEMS_DRAWN = 6
"""Arrays are drawn with at most this many items beyond their minimum (limits are tried by `broken`)."""
MAX_TEXT_DRAWN = 30
LONGEST_DRAWN = 100_000
"""A string input is also drawn at its maximum length when that is at most this long."""
TEXT = st.characters(codec="utf-8")

_JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object")
_SAMPLES: dict[str, Any] = {"string": "x", "number": 1.5, "integer": 7, "boolean": True, "array": [], "object": {}}


def _types(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if kind is None:
        return []
    return [kind] if isinstance(kind, str) else list(kind)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def valid(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    types = _types(schema)
    if not types:  # `{}`: anything
        return st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.text(TEXT, max_size=5))
    return st.one_of(*(_valid_of(kind, schema) for kind in types))


def _valid_of(kind: str, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    if kind == "object":
        properties = schema["properties"]
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {name: valid(sub) for name, sub in properties.items() if name in required},
            optional={name: valid(sub) for name, sub in properties.items() if name not in required},
        )
    if kind == "array":
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", low + MAX_ITEMS_DRAWN), low + MAX_ITEMS_DRAWN)
        unique = _canonical if schema.get("uniqueItems") else None
        return st.lists(valid(schema.get("items", {})), min_size=low, max_size=high, unique_by=unique)
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if "pattern" in schema:
            drawn = st.from_regex(schema["pattern"], fullmatch=True)
            return drawn.filter(lambda s: low <= len(s) and (high is None or len(s) <= high))
        text = st.text(TEXT, min_size=low, max_size=max(low, min(high or MAX_TEXT_DRAWN, MAX_TEXT_DRAWN)))
        if high is None or high > LONGEST_DRAWN:
            return text
        return st.one_of(text, st.just("é" * high))  # the longest allowed, too
    if kind in ("number", "integer"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        if kind == "integer":
            return st.integers(
                None if low is None else math.ceil(low) + ("exclusiveMinimum" in schema),
                None if high is None else math.floor(high) - ("exclusiveMaximum" in schema),
            )
        return st.floats(
            low,
            high,
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "boolean":
        return st.booleans()
    raise ValueError(f"schema type {kind!r} is outside the supported subset")


def invalid(schema: Mapping[str, Any]) -> st.SearchStrategy[Any] | None:
    """Values the schema refuses, or None when it refuses nothing (`{}`)."""
    options: list[st.SearchStrategy[Any]] = []
    types = _types(schema)
    if "enum" in schema:
        allowed = {_canonical(v) for v in schema["enum"]}
        options.append(st.sampled_from(["not-a-choice", "", 12345]).filter(lambda v: _canonical(v) not in allowed))
    if types:
        wrong = [_SAMPLES[kind] for kind in _JSON_TYPES if kind not in types]
        if "number" in types:  # an integer is a number
            wrong = [v for v in wrong if not isinstance(v, int) or isinstance(v, bool)]
        options.append(st.sampled_from(wrong))
    if "string" in types and "maxLength" in schema:
        over = schema["maxLength"] + 1
        options.append(st.sampled_from([over, over + 1000]).map(lambda n: "x" * n))
    if "string" in types and schema.get("minLength", 0) > 0:
        options.append(st.just("x" * (schema["minLength"] - 1)))
    if "number" in types or "integer" in types:
        numbers = [math.nan, math.inf, -math.inf]
        for bound, step in (("maximum", 1), ("minimum", -1)):
            if bound in schema:
                numbers += [schema[bound] + step, schema[bound] * 10 + step, 1e308 * step]
        numbers += [schema[bound] for bound in ("exclusiveMinimum", "exclusiveMaximum") if bound in schema]
        options.append(st.sampled_from(numbers))
        if "integer" in types and "number" not in types:
            options.append(st.just(2.5))
    if "array" in types:
        items = schema.get("items", {})
        if "maxItems" in schema:
            options.append(st.lists(valid(items), min_size=schema["maxItems"] + 1, max_size=schema["maxItems"] + 3))
        if schema.get("minItems", 0) > 0:
            options.append(st.lists(valid(items), min_size=0, max_size=schema["minItems"] - 1))
        bad_item = invalid(items)
        if bad_item is not None:
            options.append(_with_one_bad_item(schema, bad_item))
    if "object" in types:
        options.append(broken(schema).map(lambda drawn: drawn[0]))
    return st.one_of(*options) if options else None


@st.composite
def _with_one_bad_item(draw: st.DrawFn, schema: Mapping[str, Any], bad_item: st.SearchStrategy[Any]) -> list[Any]:
    items = list(draw(valid({**schema, "uniqueItems": False})))
    if not items:
        items = [None]
    items[draw(st.integers(0, len(items) - 1))] = draw(bad_item)
    return items


@st.composite
def broken(draw: st.DrawFn, schema: Mapping[str, Any]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """Object arguments with one fault, the name of the input it is in, and the arguments before."""
    base = dict(draw(valid(schema)))
    arguments = dict(base)
    properties = schema["properties"]
    required = list(schema.get("required", ()))
    faults = ["unknown"] + (["missing"] if required else [])
    breakable = {name: strategy for name, sub in properties.items() if (strategy := invalid(sub)) is not None}
    if breakable:
        faults.append("value")
    fault = draw(st.sampled_from(faults))
    if fault == "unknown":
        name = draw(st.from_regex(r"[a-z][A-Za-z_]{0,15}", fullmatch=True).filter(lambda n: n not in properties))
        arguments[name] = draw(st.sampled_from([1, "x", None, [1]]))
    elif fault == "missing":
        name = draw(st.sampled_from(required))
        del arguments[name]
    else:
        name = draw(st.sampled_from(sorted(breakable)))
        arguments[name] = draw(breakable[name])
    return arguments, name, base
