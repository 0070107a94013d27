"""Typed tool inputs: each tool declares its inputs once, as a `ToolInput` model.

A model states every input's type, bounds, enum, default and description, the rules between
inputs (`radius` needs `position`; `departAt` xor `arriveAt`) as model validators, and what a
backend refuses (`only_on_backend`: the values it takes, or none). Four things come from that
one declaration:

- the input JSON Schema the tool lists (`input_schema`): pydantic's schema, made compact and
  kept to the subset every host reads (`tools.schema`): no titles, no `$defs`, no `anyOf`
  for optional inputs;
- the schema each backend lists (`backend_schema`): without the inputs it refuses (or takes
  only at their default), and with only the enum values it takes;
- validation (`parse`): strict types (no "5" for 5), finite numbers, unknown arguments
  rejected, and every problem answered at once, up to `MAX_PROBLEMS`, each naming its argument
  path (`locations[1][0]`), or every input of a broken rule (`arguments`): `invalid_arguments`;
  a value the call's backend refuses, alone, is `unsupported`, naming the backend that takes it;
- the typed value `run` receives: `input.position`, never `arguments["position"]`.

An input left out is `None` (or its default); `given(name)` tells a default from a choice.

Rules raise `rule(...)` (names every input involved) and value checks raise `problem(...)`
(names the input, or one of its items with `item=`); both are pydantic custom errors, so a
rule inside a nested input reports the nested path. A rule that depends on the backend reads
it with `backend_of(info)` (`info` is the validator's `ValidationInfo`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError, WithJsonSchema
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError, core_schema

from core.errors import ErrorCode, ToolError
from tools.schema import SchemaDefinitionError, argument_path, check_schema, compact_schema
from tools.tomtom.backends import Backend, switch_to

RULE = "rule"
PROBLEM = "problem"
UNSUPPORTED = "unsupported"
"""The error kind of a value the call's backend refuses (`only_on_backend`)."""
MAX_PROBLEMS = 10
"""Problems one answer lists; `total` counts them all."""
MAX_NAMES = 10
"""Unknown argument names one problem lists (each cut to `MAX_NAME_CHARS`)."""
MAX_NAME_CHARS = 64
BACKENDS_KEY = "x-backends"
"""Where an input's schema carries what each backend takes, until `backend_schema` applies it."""


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
    """`Annotated[list[X], Field(max_length=...), UNIQUE]`: an item given twice counts once (the
    first stays in place). Nothing is listed for it: a repeat changes no answer, so it needs no
    words. It comes after the list's bounds, which count the items as sent (as listed)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(_unique, handler(source))


def _unique(values: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for value in values:
        if value not in kept:
            kept.append(value)
    return kept


UNIQUE = _UniqueItems()


def listed_by_example(vocabulary: Any, *examples: str) -> WithJsonSchema:
    """`Annotated[Vocabulary, listed_by_example(Vocabulary, "A", "B")]`: a long closed vocabulary
    (a `Literal` of TomTom's names) listed as a string with examples, not every value: every
    conversation would pay for them all. It is checked as the `Literal` it is, so a wrong value's
    answer lists them all (`literal_error`)."""
    values = get_args(vocabulary)
    if not examples or not set(examples) <= set(values):
        raise SchemaDefinitionError(f"examples must be values of the vocabulary: {examples}")
    return WithJsonSchema(
        {
            "type": "string",
            "description": f"e.g. {', '.join(examples)} (one of {len(values)})",
            "maxLength": max(len(value) for value in values),
        }
    )


@dataclass(frozen=True, slots=True)
class OnlyOnBackend:
    """`Annotated[X, only_on_backend(Backend.ORBIS, "car", why=...)]`: on that backend the input
    takes only these values (an enum's), or, given none, is not offered at all.

    That backend's listing shows only those values (not the input when none is left, or only its
    default), and a call there with another value is answered `unsupported`, naming the values it
    takes and the backends that take the value sent. A default is never refused (a validator
    sees only values sent).
    """

    backend: Backend
    values: tuple[Any, ...]
    why: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.with_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        target = handler.resolve_ref_schema(json_schema)
        target[BACKENDS_KEY] = {**target.get(BACKENDS_KEY, {}), self.backend.value: list(self.values)}
        return json_schema

    def _check(self, value: Any, info: core_schema.ValidationInfo) -> Any:
        if backend_of(info) is not self.backend or (self.values and value in self.values):
            return value
        elsewhere = switch_to(self.backend.others())
        if self.values:
            takes = ", ".join(str(v) for v in self.values)
            message = (
                f"{value!r} is not available on {self.backend.value} ({self.why}); send {takes}, or use {elsewhere}"
            )
        else:
            message = f"is not available on {self.backend.value} ({self.why}); leave it out, or use {elsewhere}"
        others = [b.value for b in self.backend.others()]
        raise PydanticCustomError(
            UNSUPPORTED, message, {"backend": self.backend.value, "supported_on": others, "allowed": list(self.values)}
        )


def only_on_backend(backend: Backend, *values: Any, why: str) -> OnlyOnBackend:
    """On `backend`, only these `values` (none: the input is not offered there); `why` says why."""
    return OnlyOnBackend(backend, values, why)


def backend_of(info: core_schema.ValidationInfo) -> Backend | None:
    """The backend a call is validated for (`parse(..., backend=)`), None when it is not known."""
    context = info.context
    return context.get("backend") if isinstance(context, Mapping) else None


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
def _declared_schema(model: type[ToolInput]) -> dict[str, Any]:
    """The compact schema of `model`, each backend's limits still on the inputs they narrow."""
    return compact_schema(model.model_json_schema())


def choices(model: type[ToolInput], name: str, backend: Backend) -> list[Any] | None:
    """The values `backend` takes for the enum input `name` of `model` (all of them, or the
    ones the backend is limited to), None when `model` has no such input."""
    node = _declared_schema(model).get("properties", {}).get(name)
    if not isinstance(node, Mapping) or "enum" not in node:
        return None
    takes = node.get(BACKENDS_KEY, {}).get(backend.value)
    return [value for value in node["enum"] if takes is None or value in takes]


@cache
def input_schema(model: type[ToolInput]) -> dict[str, Any]:
    """The compact input schema of `model` on every backend (all inputs, all values), checked
    against the supported subset."""
    schema = _narrowed(_declared_schema(model), None)
    check_schema(schema)
    return schema


@cache
def backend_schema(model: type[ToolInput], backend: Backend) -> dict[str, Any]:
    """The input schema `backend` lists: without the inputs it refuses or takes only at their
    default, with only the values it takes."""
    schema = _narrowed(_declared_schema(model), backend)
    check_schema(schema)
    return schema


def _narrowed(node: Any, backend: Backend | None, where: str = "inputSchema") -> Any:
    """`node` as `backend` offers it (None: every backend), without the limits' own key."""
    if isinstance(node, list):
        return [_narrowed(item, backend, where) for item in node]
    if not isinstance(node, Mapping):
        return node
    takes = node.get(BACKENDS_KEY, {}).get(backend.value) if backend is not None else None
    if takes and "enum" not in node:
        raise SchemaDefinitionError(f"{where}: only an enum's values can be limited per backend")
    narrowed: dict[str, Any] = {}
    for key, value in node.items():
        if key == BACKENDS_KEY:
            continue
        if key == "properties":
            offered = {name: sub for name, sub in value.items() if _offered(sub, backend)}
            missing = set(node.get("required", ())) - set(offered)
            if missing:
                raise SchemaDefinitionError(f"{where}: a required input is not offered on a backend {sorted(missing)}")
            narrowed[key] = {name: _narrowed(sub, backend, f"{where}.{name}") for name, sub in offered.items()}
        elif key == "enum" and takes:
            narrowed[key] = [v for v in value if v in takes]
        else:
            narrowed[key] = _narrowed(value, backend, where)
    return narrowed


def _offered(node: Any, backend: Backend | None) -> bool:
    """Whether `backend` lists the input: not when it refuses it, nor when it takes only its
    default (no choice to offer; a call that sends that value is still answered)."""
    if backend is None or not isinstance(node, Mapping):
        return True
    takes = node.get(BACKENDS_KEY, {}).get(backend.value)
    if takes is None:
        return True
    offered = [value for value in node.get("enum", ()) if value in takes]
    only_the_default = "default" in node and offered == [node["default"]]
    return bool(takes) and not only_the_default


def parse[I: ToolInput](
    model: type[I],
    arguments: Mapping[str, Any],
    hints: Mapping[str, str] | None = None,
    *,
    backend: Backend | None = None,
    listed: Mapping[str, Any] | None = None,
) -> I:
    """`arguments` as a `model`, or a ToolError naming every problem (up to `MAX_PROBLEMS`).

    `backend` is the call's: values it refuses are `unsupported` (None: not checked). `listed`
    is the schema this caller was listed (default: `input_schema(model)`); an unknown argument's
    answer names the valid ones from it. `hints` add a sentence to the message of a custom error
    kind (the registry adds the tools that have geometry to the error of a point-only tool asked
    for it).
    """
    try:
        return model.model_validate(arguments, context={"backend": backend})
    except ValidationError as exc:
        schema = listed if listed is not None else input_schema(model)
        raise describe(exc.errors(include_url=False), schema, arguments, hints or {}) from None


_FIRST = {"extra_forbidden": 0, "missing": 1}
_LEAD = re.compile(r"^(Input|String|List|Value|Tuple|Set|Dictionary) (?=should )|^Value error, ")
"""Pydantic's lead word: "String should have at most 400 characters" reads "should have ..."."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a call: its text names the argument (or every input of a rule)."""

    text: str
    argument: str | None = None
    arguments: tuple[str, ...] = ()
    unsupported: bool = False
    data: Mapping[str, Any] = field(default_factory=dict)

    def names(self) -> dict[str, Any]:
        return {"argument": self.argument} if self.argument is not None else {"arguments": list(self.arguments)}


def describe(
    errors: Sequence[ErrorDetails], listed: Mapping[str, Any], arguments: Mapping[str, Any], hints: Mapping[str, str]
) -> ToolError:
    """The one answer a caller reads for pydantic's `errors`: every problem, unknown names first,
    then missing ones (they explain the rest: a misspelt required argument), then the others.

    Only values the backend refuses: `unsupported`. Otherwise `invalid_arguments`, with the first
    problem's `argument` (or `arguments`) and, when there are several, `problems` (each with its
    own), `total`, `returned` and `truncated`."""
    ranked = sorted(errors, key=lambda e: (_FIRST.get(e["type"], 2), len(_input_loc(e["loc"]))))
    problems: list[Problem] = []
    unknown_parents: set[tuple[int | str, ...]] = set()
    for error in ranked:
        loc = _input_loc(error["loc"])
        if error["type"] == "extra_forbidden":
            if loc[:-1] not in unknown_parents:
                unknown_parents.add(loc[:-1])
                problems.append(_unknown(loc[:-1], ranked, listed))
        else:
            problems.append(_problem(error, loc, arguments, hints))
    code = ErrorCode.UNSUPPORTED if all(p.unsupported for p in problems) else ErrorCode.INVALID_ARGUMENTS
    first = problems[0]
    if len(problems) == 1:
        return ToolError(code, first.text, **first.names(), **first.data)
    shown = problems[:MAX_PROBLEMS]
    more = len(problems) - len(shown)
    message = "; ".join(p.text for p in shown) + (f"; and {more} more" if more else "")
    return ToolError(
        code,
        f"{len(problems)} problems: {message}",
        **first.names(),
        problems=[{**p.names(), "message": p.text, **p.data} for p in shown],
        total=len(problems),
        returned=len(shown),
        truncated=bool(more),
    )


def _unknown(parent: tuple[int | str, ...], errors: Sequence[ErrorDetails], listed: Mapping[str, Any]) -> Problem:
    names = sorted(
        str(e["loc"][-1]) for e in errors if e["type"] == "extra_forbidden" and _input_loc(e["loc"])[:-1] == parent
    )
    shown = [name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS] + "..." for name in names[:MAX_NAMES]]
    more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    valid = ", ".join(sorted(_allowed(listed, parent))) or "none"
    return Problem(
        f"unknown argument(s) {', '.join(shown)}{more} in {argument_path(parent)}; valid: {valid}",
        argument=argument_path([*parent, shown[0]]),
    )


def _problem(
    error: ErrorDetails, loc: tuple[int | str, ...], arguments: Mapping[str, Any], hints: Mapping[str, str]
) -> Problem:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == RULE:
        prefix = argument_path(loc) + "." if loc else ""
        names = tuple(prefix + name for name in ctx["arguments"])
        return Problem(" and ".join(f"`{name}`" for name in names) + f": {error['msg']}", arguments=names)
    item = ctx.get("item", ())
    where = argument_path([*loc, *(item if isinstance(item, tuple) else (item,))])
    if kind == "missing":
        message = "is required"
    elif kind == "literal_error":
        choices = ", ".join(str(v) for v in _literal_values(ctx))
        message = f"{_value(arguments, loc)!r} is not one of the allowed values: {choices}"
    else:
        message = _LEAD.sub("", error["msg"], count=1)
    hint = hints.get(kind)
    text = f"{where}: {message}" + (f" {hint}" if hint else "")
    if kind == UNSUPPORTED:
        data = {key: ctx[key] for key in ("backend", "supported_on", "allowed") if ctx.get(key)}
        return Problem(text, argument=where, unsupported=True, data=data)
    return Problem(text, argument=where)


def _input_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """Pydantic's location without the tags it adds for unions and function validators."""
    return tuple(part for part in loc if isinstance(part, int) or not str(part).startswith(("function-", "lax-")))


def _allowed(schema: Mapping[str, Any], parent: tuple[int | str, ...]) -> list[str]:
    """The input names valid at `parent` (the top level, or a nested object input) in `schema`."""
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
