"""Turn one log line into an app-status event, a tool-call event, or say why it is neither.

The server logs one `Tool call` line per tool call (tools/dispatch.py, `log_calls`): logger
`tools.calls`, message `Tool call`, with `tool`, `client`, `outcome` (`ok` or an error code),
`backend`, `transport`, `user_agent`, `request_id`, `upstream_calls`, `upstream_ms`, `total_ms`
and `bytes` (the answer's size). `parse_log_line` decodes a line once and hands it to the
app-status parser (analytics/parsing.py) or to `tool_call_row`. It is the general parser, and
the specification: the ingestion first tries analytics/server_lines.py, which decodes the lines
the server writes in one compiled step and gives the same answer for them (ADR 18).

A tool-call line is malformed without a text `time` (with a UTC offset), `tool`, `client` and
`outcome`. Anything else is optional: a field that is null, or of an unexpected type, is stored
empty (NULL for numbers), and a line with fields this parser does not know (a newer server) is
kept with the fields it knows and counted (`unknown_fields`); the raw line keeps the rest. As
for app-status events, identity is the line, and the line is stored (`raw`) only when the
columns do not hold all of it.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import NamedTuple

import orjson

from analytics.parsing import (
    SKIPPED,
    EventRow,
    Malformed,
    Skipped,
    _is_utf8,
    app_status_row,
    event_identity,
    null_fields,
    utc_time,
)

TOOL_CALL_LOGGER = "tools.calls"
TOOL_CALL_MESSAGE = "Tool call"
_MIN, _MAX = -(2**63), 2**63


class ToolCallRow(NamedTuple):
    """The columns of `ToolCallEvent` (COPY and the ORM use these names)."""

    event_id: bytes
    time: datetime
    tool: str
    client: str
    outcome: str
    # Text fields, "" when absent.
    backend: str
    transport: str
    tenant: str
    user_agent: str
    request_id: str
    replica: str
    # Whole numbers, None when absent.
    pid: int | None
    upstream_calls: int | None
    bytes: int | None
    # Milliseconds, None when absent.
    upstream_ms: float | None
    total_ms: float | None
    raw: str
    unknown_fields: bool
    """Not a column: the line has fields this parser does not know."""


TOOL_CALL_COLUMNS: tuple[str, ...] = ToolCallRow._fields[:-1]
_REQUIRED = ("time", "tool", "client", "outcome")
_TEXT_KEYS = ToolCallRow._fields[ToolCallRow._fields.index("backend") : ToolCallRow._fields.index("pid")]
_WHOLE_KEYS = ("pid", "upstream_calls", "bytes")
_OPTIONAL_KEYS = (*_TEXT_KEYS, *_WHOLE_KEYS, "upstream_ms", "total_ms")
KNOWN_FIELDS = frozenset({"level", "logger", "message", "exception", *_REQUIRED, *_OPTIONAL_KEYS})
"""Every field of a `Tool call` line this parser knows (the formatter's own included)."""


def parse_log_line(line: bytes) -> EventRow | ToolCallRow | Skipped | Malformed:
    """What one log line is: see the module docstring and analytics/parsing.py."""
    stripped = line.strip()
    if not stripped:
        return SKIPPED
    try:
        data = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return Malformed("not JSON (a partial line?)" if _is_utf8(stripped) else "not UTF-8")
    if type(data) is not dict:
        return Malformed("not a JSON object")
    get = data.get
    if get("event") == "app_status":
        return app_status_row(data, stripped)
    if get("message") == TOOL_CALL_MESSAGE and get("logger") == TOOL_CALL_LOGGER:
        return tool_call_row(data, stripped)
    return SKIPPED


def tool_call_row(data: dict, stripped: bytes) -> ToolCallRow | Malformed:
    """The row of a decoded `Tool call` line (`stripped`: its bytes)."""
    get = data.get
    time, tool, client, outcome = get("time"), get("tool"), get("client"), get("outcome")
    if not (type(time) is str and type(tool) is str and type(client) is str and type(outcome) is str):
        missing = [name for name in _REQUIRED if type(get(name)) is not str]
        return Malformed(f"tool-call line without a text {missing[0]!r}")
    when = utc_time(time)
    if isinstance(when, Malformed):
        return when
    text = stripped.decode()
    optional = (
        _text(get("backend")),
        _text(get("transport")),
        _text(get("tenant")),
        _text(get("user_agent")),
        _text(get("request_id")),
        _text(get("replica")),
        _whole(get("pid")),
        _whole(get("upstream_calls")),
        _whole(get("bytes")),
        _milliseconds(get("upstream_ms")),
        _milliseconds(get("total_ms")),
    )
    known = KNOWN_FIELDS.issuperset(data)
    # The line is held whole by its columns when each of its fields but `level` (and `logger`
    # and `message`, which make it a tool-call line) is a column that kept its value, or is null
    # (as absent: the column is empty).
    held = len(optional) - optional.count("") - optional.count(None) + null_fields(data, _OPTIONAL_KEYS)
    nul = "\\u0000" in text
    complete = known and held + 6 + ("level" in data) == len(data) and not nul
    raw = "" if complete else text
    row = ToolCallRow(event_identity(stripped), when, tool, client, outcome, *optional, raw, not known)
    if nul:  # PostgreSQL text cannot hold NUL: replace it in every field but `raw`
        row = ToolCallRow._make(
            value.replace("\x00", "\ufffd") if type(value) is str and name != "raw" else value
            for name, value in zip(ToolCallRow._fields, row, strict=True)
        )
    return row


def _text(value: object) -> str:
    """A text field's value, "" when absent or not text."""
    return value if type(value) is str else ""


def _whole(value: object) -> int | None:
    """A whole-number field's value (not a bool, within a signed 64-bit range), else None."""
    return value if type(value) is int and _MIN < value < _MAX else None


def _milliseconds(value: object) -> float | None:
    """A finite, non-negative number of milliseconds (not a bool), else None."""
    if type(value) is float:
        return value if math.isfinite(value) and value >= 0 else None
    return float(value) if type(value) is int and 0 <= value < _MAX else None
