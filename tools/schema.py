"""Input schemas: a JSON Schema subset checked when a tool is defined, enforced on every call.

Definition time (`check_schema`): only the keywords in `SUPPORTED_KEYWORDS` may appear, every
object lists its properties and forbids others, so a typo in a tool module fails at start-up.

Call time (`validate_arguments`): Draft 2020-12 validation; the first error is reported with
the argument's path (`locations[1][0]`), and an unknown argument is named, never ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from tools.errors import ErrorCode, ToolError

SUPPORTED_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
        "uniqueItems", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "minLength", "maxLength", "pattern", "format", "description", "default", "title", "examples",
    }
)  # fmt: skip
"""No `$ref`, `oneOf`/`anyOf` or `prefixItems`: several hosts reject or mangle them."""


class SchemaDefinitionError(ValueError):
    """A tool module declares a schema this server does not support."""


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


def argument_path(path: Any) -> str:
    """`["locations", 1, 0]` -> `locations[1][0]`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "arguments"


def _describe(error: ValidationError) -> ToolError:
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        where = argument_path(error.absolute_path)
        names = ", ".join(extra)
        argument = f"{where}.{extra[0]}" if error.absolute_path else extra[0]
        return ToolError(
            ErrorCode.INVALID_ARGUMENTS,
            f"unknown argument(s) {names} in {where}; valid: {', '.join(allowed)}",
            argument=argument,
        )
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        where = argument_path([*error.absolute_path, missing])
        return ToolError(ErrorCode.INVALID_ARGUMENTS, f"{where}: is required", argument=where)
    where = argument_path(error.absolute_path)
    if error.validator == "enum":
        allowed = ", ".join(str(value) for value in error.validator_value)
        message = f"{where}: {error.instance!r} is not one of the allowed values: {allowed}"
    else:
        message = f"{where}: {error.message}"
    return ToolError(ErrorCode.INVALID_ARGUMENTS, message, argument=where)


def compile_validator(schema: Mapping[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(dict(schema))


def validate_arguments(validator: Draft202012Validator, arguments: Mapping[str, Any]) -> None:
    """Raise an `invalid_arguments` ToolError naming the first wrong argument."""
    if validator.is_valid(arguments):
        return
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: (len(e.absolute_path), e.path))
    if errors:
        # Unknown names first: they explain the rest (a misspelt required argument).
        errors.sort(key=lambda e: e.validator not in {"additionalProperties", "required"})
        raise _describe(errors[0])
