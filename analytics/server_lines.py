"""The lines this server writes, decoded in one compiled step; every other line by the general parsers.

`parse_log_line(line)` gives exactly what `analytics.tool_call_parsing.parse_log_line` (the
general parser, which is the specification) gives for the same line. It first tries the shape of
an app-status or `Tool call` line as the server's formatter writes it, with msgspec: one pass
over the bytes, in C, that decodes and checks every field at once (ADR 18). A line that decodes
in that shape is one the columns hold whole, so its row is built straight from the decoded fields,
with `raw` empty. Anything else (a field of another type, an empty text, a field the shape does not
name, a message the contract does not know, a `\\u0000` escape, a line that is not JSON, a Django
warning) fails the shape and goes to the general parser, which says what it is.

So the shapes only ever accept less than the general parser stores whole, never more: each field
is the type the general parser keeps (a whole number within a signed 64-bit range and not a bool,
a non-empty text, a non-negative number of milliseconds), `time` is read by the same function
(`utc_time`), and the checks the shapes cannot state (the `kind` matching the message, the
`simplification` and `replaced_by` the columns hold) are made after decoding, failing to the
general parser too. tests/analytics/test_server_lines.py compares the two on every line the tests
know, and on lines that differ from the server's in one field each.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

from analytics.parsing import (
    _KIND_OF_MESSAGE,
    EventRow,
    Malformed,
    Skipped,
    event_identity,
    utc_time,
)
from analytics.tool_call_parsing import ToolCallRow
from analytics.tool_call_parsing import parse_log_line as parse_generally

Text = Annotated[str, msgspec.Meta(min_length=1)]
"""A text the columns keep: the general parser treats an empty one as absent."""
Whole = Annotated[int, msgspec.Meta(ge=-(2**63) + 1, le=2**63 - 1)]
"""A whole number a 64-bit column keeps (msgspec refuses a bool, a float and a null for it)."""
Number = Whole | float
"""A finite number: JSON has no infinity, and msgspec refuses a literal out of a float's range."""
Milliseconds = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] | Annotated[float, msgspec.Meta(ge=0)]

# The shapes are not tracked by the cyclic garbage collector (`gc=False`): they hold texts,
# numbers and lists of texts, never a cycle, and a chunk decodes thousands of them.
# The defaults are what an absent field stores; a null optional field is stored the same (a text
# as "", below). Inside a simplification a null is not held: msgspec checks decoded values, never
# defaults, so there `None` stands for an absent number while a JSON null fails the shape.


class _Simplification(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    original_points: Whole = None  # type: ignore[assignment]
    points: Whole = None  # type: ignore[assignment]
    max_error_m: Number = None  # type: ignore[assignment]


class _AppStatusLine(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An app-status line as core/app_status.py logs it, every field one the columns keep."""

    event: Literal["app_status"]
    message: Literal[tuple(_KIND_OF_MESSAGE)]  # type: ignore[valid-type]
    time: str
    tool: str
    client: str
    level: Any = None
    logger: Literal["tools.app_status"] = "tools.app_status"
    kind: str = None  # type: ignore[assignment]
    user_agent: Text | None = ""
    request_id: Text | None = ""
    replica: Text | None = ""
    delivery: Text | None = ""
    source: Text | None = ""
    reason: Text | None = ""
    stage: Text | None = ""
    error: Text | None = ""
    error_code: Text | None = ""
    input: Text | None = ""
    change: Text | None = ""
    pid: Whole | None = None
    raw_bytes: Whole | None = None
    encoded_chars: Whole | None = None
    result_chars: Whole | None = None
    features: Whole | None = None
    simplification: _Simplification | None = None
    duration_ms: Number | None = None
    replaced_by: list[str] | None = None


class _ToolCallLine(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A `Tool call` line as tools/dispatch.py (`log_calls`) logs it, every field one the columns keep."""

    logger: Literal["tools.calls"]
    message: Literal["Tool call"]
    time: str
    tool: str
    client: str
    outcome: str
    level: Any = None
    backend: Text | None = ""
    transport: Text | None = ""
    tenant: Text | None = ""
    user_agent: Text | None = ""
    request_id: Text | None = ""
    replica: Text | None = ""
    pid: Whole | None = None
    upstream_calls: Whole | None = None
    bytes: Whole | None = None
    upstream_ms: Milliseconds | None = None
    total_ms: Milliseconds | None = None


_decode_app_status = msgspec.json.Decoder(_AppStatusLine).decode
_decode_tool_call = msgspec.json.Decoder(_ToolCallLine).decode
_NOT_IN_SHAPE = (msgspec.ValidationError, msgspec.DecodeError)
_APP_STATUS_MARK: Final = b'"app_status"'
_NUL_ESCAPE: Final = b"\\u0000"
_row = tuple.__new__
"""Builds a row from its values in order, as the row type's `_make` does but without a Python
call per line."""


def parse_log_line(line: bytes) -> EventRow | ToolCallRow | Skipped | Malformed:
    """What one log line is, exactly as `analytics.tool_call_parsing.parse_log_line` says."""
    stripped = line.strip()
    row = server_line(stripped) if stripped else None
    return parse_generally(stripped) if row is None else row


def server_line(stripped: bytes) -> EventRow | ToolCallRow | None:
    """The row of a line (stripped of surrounding whitespace) in the shape the server writes,
    else None: then the general parser decides what the line is."""
    if _NUL_ESCAPE in stripped:  # stored whole, and NUL replaced in every column
        return None
    try:
        if _APP_STATUS_MARK in stripped:
            return _app_status_row(_decode_app_status(stripped), stripped)
        return _tool_call_row(_decode_tool_call(stripped), stripped)
    except _NOT_IN_SHAPE:
        return None


def _tool_call_row(line: _ToolCallLine, stripped: bytes) -> ToolCallRow | None:
    when = utc_time(line.time)
    if type(when) is Malformed:
        return None
    upstream_ms, total_ms = line.upstream_ms, line.total_ms
    return _row(  # ToolCallRow(...)
        ToolCallRow,
        (
            event_identity(stripped),
            when,
            line.tool,
            line.client,
            line.outcome,
            line.backend or "",
            line.transport or "",
            line.tenant or "",
            line.user_agent or "",
            line.request_id or "",
            line.replica or "",
            line.pid,
            line.upstream_calls,
            line.bytes,
            None if upstream_ms is None else float(upstream_ms),
            None if total_ms is None else float(total_ms),
            "",
            False,
        ),
    )


def _app_status_row(line: _AppStatusLine, stripped: bytes) -> EventRow | None:
    when = utc_time(line.time)
    kind = _KIND_OF_MESSAGE[line.message]
    if type(when) is Malformed or (line.kind is not None and line.kind != kind):
        return None
    original_points = points = max_error_m = None
    if (simplification := line.simplification) is not None:
        original_points, points = simplification.original_points, simplification.points
        max_error_m = simplification.max_error_m
        if original_points is None and points is None and max_error_m is None:  # `{}`: stored whole
            return None
    names = ""
    if line.replaced_by is not None:
        names = ", ".join(line.replaced_by)
        if not names or len(names.split(", ")) != len(line.replaced_by):  # the column could not hold the list
            return None
    duration_ms = line.duration_ms
    return _row(  # EventRow(...)
        EventRow,
        (
            event_identity(stripped),
            when,
            kind,
            line.tool,
            line.client,
            line.user_agent or "",
            line.request_id or "",
            line.replica or "",
            line.delivery or "",
            line.source or "",
            line.reason or "",
            line.stage or "",
            line.error or "",
            line.error_code or "",
            line.input or "",
            line.change or "",
            line.pid,
            line.raw_bytes,
            line.encoded_chars,
            line.result_chars,
            line.features,
            original_points,
            points,
            None if max_error_m is None else float(max_error_m),
            None if duration_ms is None else float(duration_ms),
            names,
            "",
        ),
    )
