"""The rules of the tool surface, as pure functions over a registry and a history.

`governance.checks` reports them for the whole surface (the committed fixture, and the tables);
`services` refuses a write that would break them; `runtime` uses `is_outdated`, `describe` and
`translate` to answer a call that still uses an old input, `map_arguments` to pass an alias's
call on, the notices for deprecated tools and aliases, and `listed_replacements` to name only
the replacements a caller is listed. "Live" means registered in this
release (tools.registry), not retired and not an alias (a deprecated tool is live).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import date
from typing import Any, TypeGuard

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from governance.surface import Alias, ChangeKind, InputChange
from governance.surface import mapping_problems as mapping_problems  # judged where the records live
from tools.definition import Tool

SHAPE_KEYWORDS = ("type", "items", "minItems", "maxItems", "properties", "required", "enum")
"""The keywords a contract change's `was`/`now` shape may use (a subset of the tools' own)."""


def is_live(name: str, registry: Mapping[str, Tool], retired: Collection[str]) -> bool:
    """Whether `name` is registered and not among `retired` (pass the aliases' names too: an
    aliased name answers as another tool)."""
    return name in registry and name not in retired


def replacement_problems(
    name: str, replaced_by: Collection[str], registry: Mapping[str, Tool], retired: Collection[str]
) -> list[str]:
    """Why `replaced_by` cannot replace the retired tool `name` (empty when it can)."""
    problems = []
    if len(set(replaced_by)) != len(replaced_by):
        problems.append("names a tool twice")
    for replacement in replaced_by:
        if replacement == name:
            problems.append(f"{replacement} cannot replace itself")
        elif not is_live(replacement, registry, retired):
            problems.append(f"{replacement} is not a live tool")
    return problems


def alias_problems(alias: Alias, registry: Mapping[str, Tool], gone: Collection[str]) -> list[str]:
    """Why `alias` cannot pass its calls on (empty when it can): its target must be a live tool
    (`gone`: the retired and aliased names), and every argument it renames must become an input
    of the target."""
    if alias.target == alias.name:
        return [f"{alias.name} cannot be an alias of itself"]
    if not is_live(alias.target, registry, gone):
        return [f"{alias.target} is not a live tool"]
    inputs = registry[alias.target].input_schema.get("properties", {})
    problems = []
    for old, new in alias.arguments:
        if new == old:
            problems.append(f"{old} is mapped to itself")
        elif new is not None and new not in inputs:
            problems.append(f"{new} (for {old}) is not an input of {alias.target}")
    return problems


def retire_on_problem(retire_on: date | None, today: date) -> str | None:
    """Why a retire-on date cannot be set now (None when it can): it must be a later day."""
    if retire_on is not None and retire_on <= today:
        return f"{retire_on.isoformat()} is not after today ({today.isoformat()}, UTC): retire the tool now instead"
    return None


def map_arguments(alias: Alias, arguments: Mapping[str, object]) -> tuple[dict[str, object], list[tuple[str, str]]]:
    """The call's arguments as the alias's target takes them: each argument the alias renames
    under its new name, each it drops left out, the rest as sent. Also the (old, new) pairs sent
    under both names, which the caller must settle."""
    renamed = dict(alias.arguments)
    mapped: dict[str, object] = {}
    both: list[tuple[str, str]] = []
    for name, value in arguments.items():
        if name not in renamed:
            mapped[name] = value
            continue
        new = renamed[name]
        if new is None:
            continue
        if new in arguments:
            both.append((name, new))
            continue
        mapped[new] = value
    return mapped, both


def listed_replacements(replaced_by: Sequence[str], offered: Collection[str] | None) -> tuple[str, ...]:
    """The replacements a caller may be told of: those among `replaced_by` it is `offered` (its
    listing), in the recorded order; None: every one (no caller in view, e.g. the admin). The
    recorded list may name a tool for each kind of caller (an interactive map where widgets
    show, a map image elsewhere): each caller hears of the ones it is listed."""
    if offered is None:
        return tuple(replaced_by)
    return tuple(name for name in replaced_by if name in offered)


_TOOL_NAME_TOKEN = re.compile(r"[A-Za-z0-9._-]+")


def names_any(text: str, names: Collection[str]) -> bool:
    """Whether `text` names any of the tool `names` (as a whole word; a sentence's full stop
    after a name does not hide it)."""
    if not names:
        return False
    return any(token.rstrip(".") in names for token in _TOOL_NAME_TOKEN.findall(text))


def deprecation_notice(replaced_by: Collection[str], retire_on: date | None, *, name: str = "") -> str:
    """The one short notice of a deprecated tool: what its description starts with, and (with
    `name`) what every result of it carries. "Deprecated, retired on 2027-01-15: use
    tomtom-routing instead." """
    text = f"{name} is deprecated" if name else "Deprecated"
    if retire_on is not None:
        text += f", retired on {retire_on.isoformat()}"
    if replaced_by:
        text += f": use {' or '.join(replaced_by)} instead"
    return text + "."


def alias_notice(alias: Alias) -> str:
    """What every result of a call through an alias carries."""
    retired = f", retired on {alias.retire_on.isoformat()}" if alias.retire_on is not None else ""
    return f"{alias.name} is deprecated{retired}: call {alias.target} instead, which answered this call."


def record_problem(change: InputChange) -> str | None:
    """Why the record itself is incomplete for its kind (None when it is whole)."""
    kind, new = change.kind, change.new_input
    if kind is ChangeKind.REMOVED and (new or change.was is not None or change.now is not None):
        return "a removed input names no new input, `was` or `now`"
    if kind is ChangeKind.RENAMED and (not new or new == change.input):
        return f"a rename names the new input, which differs from {change.input}"
    if kind is ChangeKind.TYPE_CHANGED:
        for label, shape in (("was", change.was), ("now", change.now)):
            problem = shape_problem(shape)
            if problem is not None:
                return f"`{label}` {problem}"
    if kind is ChangeKind.UNIT_CHANGED:
        if not new or new == change.input:
            return (
                f"a unit change names the new input, which differs from {change.input} "
                "(a value alone cannot tell its unit)"
            )
        if not all(isinstance(unit, str) and unit.strip() for unit in (change.was, change.now)):
            return "a unit change names the old and the new unit in `was` and `now`"
    return None


def input_problem(tool: Tool, change: InputChange) -> str | None:
    """Why the tool's current schema contradicts the change (None when it agrees)."""
    problem = record_problem(change)
    if problem is not None:
        return problem
    properties = tool.input_schema.get("properties", {})
    old, new = change.input, change.current_input
    if change.kind is ChangeKind.REMOVED:
        return f"{old} is still an input of {tool.name}" if old in properties else None
    if new != old and old in properties:
        return f"{old} is still an input of {tool.name}"
    if new not in properties:
        return f"{new} is not an input of {tool.name}"
    if change.kind is ChangeKind.TYPE_CHANGED:
        current = properties[new]
        if not shape_within(change.now, current):
            return f"{new} in {tool.name}'s input schema is not {describe(change.now)}"
        if new == old and not shapes_disjoint(change.was, current):
            return f"{tool.name}'s input schema still takes {describe(change.was)} for {old}"
    return None


def is_outdated(change: InputChange, arguments: Mapping[str, object]) -> bool:
    """Whether a call with `arguments` still uses the input as it was before the change."""
    if change.input not in arguments:
        return False
    if change.kind is ChangeKind.TYPE_CHANGED and not change.new_input:
        return matches(arguments[change.input], change.was)
    return True


def translate(change: InputChange, value: object) -> dict[str, object] | None:
    """What the caller should send instead of `{input: value}`, where that is mechanical: the
    same value under a new name, a comma-separated string as a list, two corner pairs as
    [minLon, minLat, maxLon, maxLat]. None when it takes the caller's judgement."""
    if change.kind is ChangeKind.RENAMED:
        return {change.new_input: value}
    now = change.now
    if change.kind is not ChangeKind.TYPE_CHANGED or not isinstance(now, Mapping):
        return None
    target = change.current_input
    items = now.get("items")
    if not isinstance(items, Mapping):
        items = {}
    if isinstance(value, str) and now.get("type") == "array":
        parts = [part.strip() for part in value.split(",") if part.strip()]
        if items.get("type") in {"number", "integer"}:
            try:
                numbers = [float(part) for part in parts]
            except ValueError:
                return None
            return {target: [int(n) if items["type"] == "integer" and n.is_integer() else n for n in numbers]}
        return {target: parts}
    if _is_corner_pairs(value) and now.get("type") == "array" and items.get("type") == "number":
        (a_lon, a_lat), (b_lon, b_lat) = value
        return {target: [min(a_lon, b_lon), min(a_lat, b_lat), max(a_lon, b_lon), max(a_lat, b_lat)]}
    return None


def _is_corner_pairs(value: object) -> TypeGuard[list[list[float]]]:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(n, int | float) and not isinstance(n, bool) for n in pair)
            for pair in value
        )
    )


# --- Shapes: small JSON Schemas for an input's old and new form --------------------------------


def shape_problem(shape: Any) -> str | None:
    """Why `shape` is not a usable JSON Schema of an input's form (None when it is)."""
    if not isinstance(shape, Mapping) or "type" not in shape:
        return "must be a JSON Schema with a `type`"
    unknown = _unknown_keywords(shape)
    if unknown:
        return f"uses keywords a shape does not take: {', '.join(sorted(unknown))}"
    try:
        Draft202012Validator.check_schema(shape)
    except SchemaError as exc:
        return f"is not a JSON Schema: {exc.message}"
    return None


def _unknown_keywords(shape: Mapping[str, Any]) -> set[str]:
    unknown = set(shape) - set(SHAPE_KEYWORDS)
    if isinstance(shape.get("items"), Mapping):
        unknown |= _unknown_keywords(shape["items"])
    for sub in (shape.get("properties") or {}).values():
        if isinstance(sub, Mapping):
            unknown |= _unknown_keywords(sub)
    return unknown


def matches(value: object, shape: Any) -> bool:
    """Whether `value` has the form `shape` describes."""
    if not isinstance(shape, Mapping):
        return False
    return Draft202012Validator(shape).is_valid(value)


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    types = {declared} if isinstance(declared, str) else set(declared or ())
    if "number" in types:
        types.add("integer")
    return types


def shape_within(shape: Any, schema: Mapping[str, Any]) -> bool:
    """Whether the current `schema` has the form `shape` names (every keyword `shape` sets,
    `schema` sets alike; descriptions and bounds `shape` leaves out do not matter)."""
    if not isinstance(shape, Mapping):
        return False
    for keyword in SHAPE_KEYWORDS:
        if keyword not in shape:
            continue
        ours, theirs = shape[keyword], schema.get(keyword)
        if keyword == "items":
            if not isinstance(theirs, Mapping) or not shape_within(ours, theirs):
                return False
        elif keyword == "properties":
            if not isinstance(theirs, Mapping) or any(
                name not in theirs or not shape_within(sub, theirs[name]) for name, sub in ours.items()
            ):
                return False
        elif keyword == "type":
            if _types(shape) - _types(schema):
                return False
        elif keyword in {"required", "enum"}:
            if sorted(ours) != sorted(theirs or ()):
                return False
        elif ours != theirs:
            return False
    return True


def shapes_disjoint(was: Any, schema: Mapping[str, Any]) -> bool:
    """Whether no value of the old form `was` passes the current `schema` (judged on types,
    list lengths and items; conservative: False when it cannot tell)."""
    if not isinstance(was, Mapping):
        return False
    if not (_types(was) & _types(schema)):
        return True
    if _types(was) == {"array"} and "array" in _types(schema):
        low = max(was.get("minItems", 0), schema.get("minItems", 0))
        high = min(was.get("maxItems", 1 << 31), schema.get("maxItems", 1 << 31))
        if low > high:
            return True
        old_items, new_items = was.get("items"), schema.get("items")
        if isinstance(old_items, Mapping) and isinstance(new_items, Mapping) and low > 0:
            return shapes_disjoint(old_items, new_items)
    return False


_NOUNS = {
    "string": ("a string", "strings"),
    "number": ("a number", "numbers"),
    "integer": ("a whole number", "whole numbers"),
    "boolean": ("true or false", "booleans"),
    "object": ("an object", "objects"),
    "null": ("null", "nulls"),
}


def describe(shape: Any, *, plural: bool = False) -> str:
    """A shape in words: "a string", "a list of 4 numbers", "a list of 2 lists of 2 numbers"."""
    if not isinstance(shape, Mapping):
        return json.dumps(shape)
    types = sorted(_types(shape) - ({"integer"} if "number" in _types(shape) else set()))
    if types != ["array"]:
        nouns = [_NOUNS.get(t, (t, t))[1 if plural else 0] for t in types] or ["anything"]
        text = " or ".join(nouns)
        keys = list((shape.get("properties") or {}).keys())
        return f"{text} with {', '.join(keys)}" if keys and types == ["object"] else text
    low, high = shape.get("minItems"), shape.get("maxItems")
    count = f"{low} " if low is not None and low == high else ""
    items = shape.get("items")
    noun = "lists" if plural else "a list"
    if not isinstance(items, Mapping):
        return f"{noun} of {count}items" if count else noun
    return f"{noun} of {count}{describe(items, plural=True)}"
