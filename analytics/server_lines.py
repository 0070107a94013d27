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

# The defaults are what an absent field stores. msgspec checks decoded values, never defaults, so
# `None` stands for an absent field while a JSON null fails the shape: the general parser keeps
# the line whole for a null.


class _Simplification(msgspec.Struct, forbid_unknown_fields=True):
    original_points: Whole = None  # type: ignore[assignment]
    points: Whole = None  # type: ignore[assignment]
    max_error_m: Number = None  # type: ignore[assignment]


class _AppStatusLine(msgspec.Struct, forbid_unknown_fields=True):
    """An app-status line as tools/app_status.py logs it, every field one the columns keep."""

    event: Literal["app_status"]
    message: Literal[tuple(_KIND_OF_MESSAGE)]  # type: ignore[valid-type]
    time: str
    tool: str
    client: str
    level: Any = None
    logger: Literal["tools.app_status"] = "tools.app_status"
    kind: str = None  # type: ignore[assignment]
    user_agent: Text = ""
    request_id: Text = ""
    replica: Text = ""
    delivery: Text = ""
    source: Text = ""
    reason: Text = ""
    stage: Text = ""
    error: Text = ""
    error_code: Text = ""
    input: Text = ""
    change: Text = ""
    pid: Whole = None  # type: ignore[assignment]
    raw_bytes: Whole = None  # type: ignore[assignment]
    encoded_chars: Whole = None  # type: ignore[assignment]
    result_chars: Whole = None  # type: ignore[assignment]
    features: Whole = None  # type: ignore[assignment]
    simplification: _Simplification = None  # type: ignore[assignment]
    duration_ms: Number = None  # type: ignore[assignment]
    replaced_by: list[str] = None  # type: ignore[assignment]


class _ToolCallLine(msgspec.Struct, forbid_unknown_fields=True):
    """A `Tool call` line as tools/catalog.py logs it, every field one the columns keep."""

    logger: Literal["tools.calls"]
    message: Literal["Tool call"]
    time: str
    tool: str
    client: str
    outcome: str
    level: Any = None
    backend: Text = ""
    transport: Text = ""
    tenant: Text = ""
    user_agent: Text = ""
    request_id: Text = ""
    replica: Text = ""
    pid: Whole = None  # type: ignore[assignment]
    upstream_calls: Whole = None  # type: ignore[assignment]
    bytes: Whole = None  # type: ignore[assignment]
    upstream_ms: Milliseconds = None  # type: ignore[assignment]
    total_ms: Milliseconds = None  # type: ignore[assignment]


_decode_app_status = msgspec.json.Decoder(_AppStatusLine).decode
_decode_tool_call = msgspec.json.Decoder(_ToolCallLine).decode
_NOT_IN_SHAPE = (msgspec.ValidationError, msgspec.DecodeError)
_APP_STATUS_MARK: Final = b'"app_status"'
_NUL_ESCAPE: Final = b"\\u0000"


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
    return ToolCallRow(
        event_identity(stripped),
        when,  # type: ignore[arg-type]
        line.tool,
        line.client,
        line.outcome,
        line.backend,
        line.transport,
        line.tenant,
        line.user_agent,
        line.request_id,
        line.replica,
        line.pid,
        line.upstream_calls,
        line.bytes,
        None if upstream_ms is None else float(upstream_ms),
        None if total_ms is None else float(total_ms),
        "",
        False,
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
    return EventRow(
        event_identity(stripped),
        when,  # type: ignore[arg-type]
        kind,
        line.tool,
        line.client,
        line.user_agent,
        line.request_id,
        line.replica,
        line.delivery,
        line.source,
        line.reason,
        line.stage,
        line.error,
        line.error_code,
        line.input,
        line.change,
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
    )
