"""Typed tool inputs: each tool declares its inputs once, as a `ToolInput` model.

A model states every input's type, bounds, enum, default and description, and the rules
between inputs (`radius` needs `position`; `departAt` xor `arriveAt`) as model validators.
Three things come from that one declaration:

- the input JSON Schema the tool lists (`input_schema`): pydantic's schema, made compact and
  kept to the subset every host reads (`tools.schema`): no titles, no `$defs`, no `anyOf`
  for optional inputs;
- validation (`parse`): strict types (no "5" for 5), finite numbers, unknown arguments
  rejected, and the first problem answered as an `invalid_arguments` error naming its
  argument path (`locations[1][0]`), or every input of a broken rule (`arguments`);
- the typed value `run` receives: `input.position`, never `arguments["position"]`.

An input left out is `None` (or its default); `given(name)` tells a default from a choice.

Rules raise `rule(...)` (names every input involved) and value checks raise `problem(...)`
(names the input, or one of its items with `item=`); both are pydantic custom errors, so a
rule inside a nested input reports the nested path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError, core_schema

from core.errors import ErrorCode, ToolError, conflicting
from tools.schema import argument_path, check_schema, compact_schema

RULE = "rule"
PROBLEM = "problem"


class ToolInput(BaseModel):
    """The base of every tool's input model (and of reusable groups of inputs)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        # A model's docstring is for readers of the code, not a description every listing pays for.
        json_schema = handler(schema)
        handler.resolve_ref_schema(json_schema).pop("description", None)
        return json_schema

    def given(self, name: str) -> bool:
        """Whether the caller sent `name` (rather than leaving it to its default)."""
        return name in self.model_fields_set

    def given_any(self, names: Sequence[str]) -> list[str]:
        """The names among `names` the caller sent, in that order."""
        return [name for name in names if getattr(self, name) is not None]


class _UniqueItems:
    """`Annotated[list[X], UNIQUE]`: no item twice (`uniqueItems` in the schema, and checked)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(_unique, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), "uniqueItems": True}


def _unique(values: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for index, value in enumerate(values):
        if value in seen:
            raise problem(f"{value!r} is listed twice", item=index)
        seen.append(value)
    return values


UNIQUE = _UniqueItems()


def rule(*arguments: str, message: str) -> PydanticCustomError:
    """A broken rule between inputs: `raise rule("radius", "position", message=...)`."""
    return PydanticCustomError(RULE, message, {"arguments": list(arguments)})


def problem(
    message: str, *, item: int | str | tuple[int | str, ...] | None = None, kind: str = PROBLEM
) -> PydanticCustomError:
    """A wrong value: `raise problem("...")` in a validator; `item` extends the argument path
    (`position` + item 0 is `position[0]`; a tuple extends it by several parts: `pairs` +
    `(1, 0)` is `pairs[1][0]`)."""
    return PydanticCustomError(kind, message, {} if item is None else {"item": item})


def requires(value: ToolInput, name: str, needed: str) -> None:
    """Rule: `name` needs `needed`."""
    if getattr(value, name) is not None and getattr(value, needed) is None:
        raise rule(name, needed, message=f"`{name}` needs `{needed}`")


def exclusive(value: ToolInput, *names: str, message: str = "give only one of these") -> None:
    """Rule: at most one of `names`."""
    given = value.given_any(names)
    if len(given) > 1:
        raise rule(*given, message=message)


def exactly_one(value: ToolInput, *names: str, what: str) -> str:
    """Rule: exactly one of `names` (`what` names the choice, e.g. "area"); returns it."""
    given = value.given_any(names)
    if len(given) == 1:
        return given[0]
    if given:
        raise rule(*given, message=f"give exactly one {what}")
    raise rule(*names, message=f"give {'an' if what[:1] in 'aeiou' else 'a'} {what}")


@cache
def input_schema(model: type[ToolInput]) -> dict[str, Any]:
    """The compact input schema of `model`, checked against the supported subset."""
    schema = compact_schema(model.model_json_schema())
    check_schema(schema)
    return schema


def parse[I: ToolInput](model: type[I], arguments: Mapping[str, Any], hints: Mapping[str, str] | None = None) -> I:
    """`arguments` as a `model`, or an `invalid_arguments` ToolError naming what is wrong.

    `hints` add a sentence to the message of a custom error kind (the registry adds the tools
    that have geometry to the error of a point-only tool asked for it).
    """
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise describe(exc.errors(include_url=False), model, arguments, hints or {}) from None


_FIRST = {"extra_forbidden": 0, "missing": 1}
_LEAD = re.compile(r"^(Input|String|List|Value|Tuple|Set|Dictionary) (?=should )|^Value error, ")
"""Pydantic's lead word: "String should have at most 400 characters" reads "should have ..."."""


def _rank(error: ErrorDetails) -> tuple[int, int, str]:
    # Unknown names first, then missing ones: they explain the rest (a misspelt required argument).
    return _FIRST.get(error["type"], 2), len(error["loc"]), repr(error["loc"])


def describe(
    errors: Sequence[ErrorDetails], model: type[ToolInput], arguments: Mapping[str, Any], hints: Mapping[str, str]
) -> ToolError:
    """The one `invalid_arguments` error a caller reads for pydantic's `errors`."""
    first = min(errors, key=_rank)
    loc = _input_loc(first["loc"])
    kind = first["type"]
    ctx = first.get("ctx") or {}
    if kind == "extra_forbidden":
        parent = loc[:-1]
        extra = sorted(
            str(e["loc"][-1]) for e in errors if e["type"] == "extra_forbidden" and _input_loc(e["loc"])[:-1] == parent
        )
        allowed = sorted(_allowed(model, parent))
        where = argument_path(parent)
        argument = argument_path([*parent, extra[0]])
        return ToolError(
            ErrorCode.INVALID_ARGUMENTS,
            f"unknown argument(s) {', '.join(extra)} in {where}; valid: {', '.join(allowed)}",
            argument=argument,
        )
    if kind == RULE:
        prefix = argument_path(loc) + "." if loc else ""
        return conflicting(*(prefix + name for name in ctx["arguments"]), message=first["msg"])
    item = ctx.get("item", ())
    where = argument_path([*loc, *(item if isinstance(item, tuple) else (item,))])
    if kind == "missing":
        message = "is required"
    elif kind == "literal_error":
        choices = ", ".join(str(v) for v in _literal_values(ctx))
        message = f"{_value(arguments, loc)!r} is not one of the allowed values: {choices}"
    else:
        message = _LEAD.sub("", first["msg"], count=1)
    hint = hints.get(kind)
    return ToolError(ErrorCode.INVALID_ARGUMENTS, f"{where}: {message}" + (f" {hint}" if hint else ""), argument=where)


def _input_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """Pydantic's location without the tags it adds for unions and function validators."""
    return tuple(part for part in loc if isinstance(part, int) or not str(part).startswith(("function-", "lax-")))


def _allowed(model: type[ToolInput], parent: tuple[int | str, ...]) -> list[str]:
    """The input names valid at `parent` (the top level, or a nested object input)."""
    schema: Mapping[str, Any] = input_schema(model)
    for part in parent:
        schema = schema.get("items", {}) if isinstance(part, int) else schema.get("properties", {}).get(part, {})
    return list(schema.get("properties", {}))


def _value(arguments: Mapping[str, Any], loc: Sequence[int | str]) -> Any:
    value: Any = arguments
    for part in loc:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _literal_values(ctx: Mapping[str, Any]) -> list[str]:
    # pydantic renders the choices as "'a', 'b' or 'c'"
    expected = str(ctx.get("expected", ""))
    return [part.strip().strip("'") for part in expected.replace(" or ", ",").split(",") if part.strip()]
