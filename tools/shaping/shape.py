"""Checking a TomTom answer's shape before shaping it, so bad data is `malformed`, not `internal`.

A *spec* describes what shaping reads, and only that:

- a scalar checker: `NUMBER` (a finite int or float, not a bool), `INTEGER`, `STRING`, `BOOL`, `ID`
  (a string or an integer: something hashable we print), `OBJECT` (any JSON object), `ANY`;
- a `dict` of key -> spec: a JSON object whose listed keys, when present and not null, match
  their spec (other keys are ignored; wrap a spec in `Required` when the key must be there);
- a one-item `list` `[spec]`: a JSON array whose every item matches `spec` (null items too).

`expect(body, SPEC)` raises `ToolError(malformed)` naming the first place that does not match,
e.g. ``TomTom answered with data we cannot read: `routes[0]` is null, not an object.``
Checking is a plain walk (no recursion beyond the spec's own depth) and costs nothing extra
where the spec says `ANY`; paths are built only on failure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.errors import ErrorCode, ToolError

Checker = Callable[[Any], None]


class _Mismatch(Exception):
    """Where (innermost part first) and how a value failed its spec."""

    def __init__(self, expected: str, value: Any, *, missing: bool = False) -> None:
        self.expected, self.value, self.missing = expected, value, missing
        self.parts: list[str] = []


@dataclass(frozen=True, slots=True)
class Required:
    """A key that must be present and not null."""

    spec: Any


def _scalar(expected: str, test: Callable[[Any], bool]) -> Checker:
    def check(value: Any) -> None:
        if not test(value):
            raise _Mismatch(expected, value)

    check.expected = expected  # type: ignore[attr-defined]  # the checker carries its wording
    return check


def _any(value: Any) -> None:
    return None


ANY: Checker = _any
NUMBER = _scalar(
    "a finite number",
    lambda v: (type(v) is int) or (type(v) is float and math.isfinite(v)),
)
INTEGER = _scalar("a whole number", lambda v: type(v) is int)
STRING = _scalar("a string", lambda v: type(v) is str)
ID = _scalar("a string or a whole number", lambda v: type(v) in (str, int))
OBJECT = _scalar("an object", lambda v: type(v) is dict)
BOOL = _scalar("true or false", lambda v: type(v) is bool)


def compile_spec(spec: Any) -> Checker:
    """A checker for `spec` (see the module docstring)."""
    if callable(spec):
        return spec
    if isinstance(spec, dict):
        return _object(spec)
    if isinstance(spec, list) and len(spec) == 1:
        return _array(compile_spec(spec[0]))
    raise TypeError(f"not a shape spec: {spec!r}")


def _object(spec: dict[str, Any]) -> Checker:
    fields = [
        (key, isinstance(sub, Required), compile_spec(sub.spec if isinstance(sub, Required) else sub))
        for key, sub in spec.items()
    ]

    def check(value: Any) -> None:
        if type(value) is not dict:
            raise _Mismatch("an object", value)
        for key, required, sub in fields:
            item = value.get(key)
            if item is None:
                if required:
                    error = _Mismatch("present", item, missing=True)
                    error.parts.append(key)
                    raise error
                continue
            try:
                sub(item)
            except _Mismatch as error:
                error.parts.append(key)
                raise

    return check


def _array(item_check: Checker) -> Checker:
    def check(value: Any) -> None:
        if type(value) is not list:
            raise _Mismatch("a list", value)
        if item_check is _any:
            return
        for i, item in enumerate(value):
            try:
                item_check(item)
            except _Mismatch as error:
                error.parts.append(f"[{i}]")
                raise

    return check


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number" if math.isfinite(value) else "not finite"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def expect(body: Any, checker: Checker, *, where: str = "") -> None:
    """Raise `malformed` naming the first place where `body` does not match `checker`.

    `where` prefixes the path when one tool call combines answers (e.g. `search.`).
    """
    try:
        checker(body)
    except _Mismatch as error:
        path = where
        for part in reversed(error.parts):
            path += part if part.startswith("[") or not path else f".{part}"
        place = f"`{path}`" if path else "the answer"
        problem = f"{place} is missing" if error.missing else f"{place} is {_kind(error.value)}, not {error.expected}"
        raise ToolError(ErrorCode.MALFORMED, f"TomTom answered with data we cannot read: {problem}.") from None


_FINITE = NUMBER.expected  # type: ignore[attr-defined]  # set by _scalar


def _point_list(value: Any) -> None:
    """TomTom's `[{"latitude", "longitude"}, ...]` (both finite numbers): a tight loop, since
    a long route has tens of thousands of points."""
    if type(value) is not list:
        raise _Mismatch("a list", value)
    for i, point in enumerate(value):
        if type(point) is not dict:
            error = _Mismatch("an object", point)
        else:
            for key in ("latitude", "longitude"):
                number = point.get(key)
                if not ((type(number) is int) or (type(number) is float and math.isfinite(number))):
                    error = _Mismatch(_FINITE, number, missing=key not in point)
                    error.parts.append(key)
                    break
            else:
                continue
        error.parts.append(f"[{i}]")
        raise error


POINTS: Checker = _point_list
"""A list of TomTom `{"latitude", "longitude"}` points."""
