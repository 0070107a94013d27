"""Turn one log line into an app-status event row, or say why it is not one.

A line is one of three things:

- an **event**: a JSON object with `"event": "app_status"`, a `message`, a `time` with a UTC
  offset, a `tool` and a `client`. Its kind comes from the exact `message`
  (`AppStatus.by_message`); a message the contract does not know gives kind `unknown`, and the
  event is kept.
- **skipped**: a blank line, or a JSON object that is not an app-status event (a tool-call line,
  a Django warning).
- **malformed**: not UTF-8, not JSON, not an object, or an app-status event without a required
  field. A partial last line of a log still being written is malformed this way.

The identity of an event is the line itself: 128 bits of the SHA-256 of its bytes, stripped of
surrounding whitespace. The formatter writes `time` to the millisecond with the replica and pid,
so two lines that are byte for byte the same are the same event logged once, and a line read
again (from the same file, a rotated copy, or the live path) gets the same identity.
Optional fields that are null (as if absent) or of an unexpected type are stored empty.

The line itself (`raw`) is stored only when the columns do not hold all of it: a field they
have no place for, a value they could not keep (of another type, out of range, holding NUL), a
message the contract does not know. A null optional field is held: its empty column says the same
(ADR 18). A line the server wrote is held whole by its columns and stored with `raw` empty,
which halves what an event costs to store (ADR 17). `level` and `logger` are not kept: the
table and the message imply them.
"""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson

from analytics.models import UNKNOWN_KIND
from core.app_status import AppStatus


class EventRow(NamedTuple):
    """The columns of `AppStatusEvent` (COPY and the ORM use these names)."""

    event_id: bytes
    time: datetime
    kind: str
    tool: str
    client: str
    # Text fields, "" when absent.
    user_agent: str
    request_id: str
    replica: str
    delivery: str
    source: str
    reason: str
    stage: str
    error: str
    error_code: str
    input: str
    change: str
    # Whole numbers, None when absent.
    pid: int | None
    raw_bytes: int | None
    encoded_chars: int | None
    result_chars: int | None
    features: int | None
    original_points: int | None
    points: int | None
    # Other numbers, None when absent.
    max_error_m: float | None
    duration_ms: float | None
    # `replaced_by` joined with ", " (tool names hold no commas), and the line itself.
    replaced_by: str
    raw: str


_TEXT_KEYS = EventRow._fields[EventRow._fields.index("user_agent") : EventRow._fields.index("pid")]
_WHOLE_KEYS = EventRow._fields[EventRow._fields.index("pid") : EventRow._fields.index("original_points")]
_NUL_ESCAPE = "\\u0000"
_NULLABLE_KEYS = (*_TEXT_KEYS, *_WHOLE_KEYS, "duration_ms", "simplification", "replaced_by")
"""Optional fields a null leaves empty, as if absent (`emit` writes `"user_agent": null`)."""
APP_STATUS_LOGGER = "tools.app_status"
_NO_SIMPLIFICATION = (None, None, None)

_MIN, _MAX = -(2**63), 2**63
COLUMNS: tuple[str, ...] = EventRow._fields


class Skipped(NamedTuple):
    """Not an app-status event."""


class Malformed(NamedTuple):
    reason: str


SKIPPED = Skipped()
_KIND_OF_MESSAGE = {status.message: status.kind for status in AppStatus}


def event_identity(stripped: bytes) -> bytes:
    """The identity of the event a line records: the first 16 bytes of the SHA-256 of the line
    stripped of surrounding whitespace (128 bits: a collision is as likely as between two random
    UUIDs). `stripped` is already stripped."""
    return hashlib.sha256(stripped).digest()[:16]


def parse_line(line: bytes) -> EventRow | Skipped | Malformed:
    stripped = line.strip()
    if not stripped:
        return SKIPPED
    try:
        data = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return Malformed("not JSON (a partial line?)" if _is_utf8(stripped) else "not UTF-8")
    if type(data) is not dict:
        return Malformed("not a JSON object")
    if data.get("event") != "app_status":
        return SKIPPED
    return app_status_row(data, stripped)


def app_status_row(data: dict, stripped: bytes) -> EventRow | Malformed:
    """The event row of a decoded line marked `"event": "app_status"` (`stripped`: its bytes)."""
    get = data.get
    message, time, tool, client = get("message"), get("time"), get("tool"), get("client")
    if not (type(message) is str and type(time) is str and type(tool) is str and type(client) is str):
        missing = [name for name in ("message", "time", "tool", "client") if type(get(name)) is not str]
        return Malformed(f"app-status event without a text {missing[0]!r}")
    when = utc_time(time)
    if isinstance(when, Malformed):
        return when
    kind = _KIND_OF_MESSAGE.get(message, UNKNOWN_KIND)
    texts = [value if type(value) is str else "" for value in map(get, _TEXT_KEYS)]
    wholes = [value if type(value) is int and _MIN < value < _MAX else None for value in map(get, _WHOLE_KEYS)]
    simplification = get("simplification")
    if type(simplification) is dict:
        simplified = (
            _whole(simplification.get("original_points")),
            _whole(simplification.get("points")),
            _number(simplification.get("max_error_m")),
        )
    else:
        simplification, simplified = {}, _NO_SIMPLIFICATION
    duration_ms = None if (duration := get("duration_ms")) is None else _number(duration)
    replaced_by, names, names_held = get("replaced_by"), "", False
    if type(replaced_by) is list:
        names = ", ".join(name for name in replaced_by if type(name) is str)
        names_held = bool(names) and len(names.split(", ")) == len(replaced_by)
    text = stripped.decode()
    # How many of the line's fields the columns hold, besides message, time, tool and client: each
    # known field counts once when its value was kept, so any other field, or a value that was
    # not, leaves `held + 4` short of the line's fields. `level`, `logger`, `event` and `kind` are
    # implied by the table and the message.
    held = (
        len(texts) - texts.count("") + len(wholes) - wholes.count(None) + (duration_ms is not None)
        + ("event" in data) + ("level" in data) + (get("logger") == APP_STATUS_LOGGER) + (get("kind") == kind)
        + (len(simplified) - simplified.count(None) == len(simplification) > 0)
        + names_held
        + null_fields(data, _NULLABLE_KEYS)
    )  # fmt: skip
    nul = _NUL_ESCAPE in text
    complete = held + 4 == len(data) and kind != UNKNOWN_KIND and not nul
    row = EventRow._make(
        (
            event_identity(stripped),
            when,
            kind,
            tool,
            client,
            *texts,
            *wholes,
            *simplified[:2],
            simplified[2],
            duration_ms,
            names,
            "" if complete else text,
        )
    )
    return _without_nul(row) if nul else row


def null_fields(data: dict, names: tuple[str, ...]) -> int:
    """How many of the optional fields `names` are null in `data`: logged as absent, so their
    empty columns hold them."""
    return sum(1 for name in names if name in data and data[name] is None)


def utc_time(text: str) -> datetime | Malformed:
    """The moment an ISO 8601 time with a UTC offset names, in UTC."""
    try:
        when = datetime.fromisoformat(text)
        if when.tzinfo is UTC:  # the formatter's `+00:00`
            return when
        if when.utcoffset() is None:
            return Malformed("'time' has no UTC offset")
        return when.astimezone(UTC)
    except (ValueError, OverflowError):
        return Malformed(f"'time' is not an ISO 8601 time: {text[:40]!r}")


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _without_nul(row: EventRow) -> EventRow:
    """PostgreSQL text cannot hold NUL, which JSON can (as \\u0000): replace it in every field but `raw`."""
    replaced: dict[str, Any] = {  # str fields only: each keeps its type
        name: value.replace("\x00", "\ufffd")
        for name, value in zip(EventRow._fields[:-1], row[:-1], strict=True)
        if type(value) is str
    }
    return row._replace(**replaced)


def _whole(value: object) -> int | None:
    """A whole number (not a bool) that fits a 64-bit column, else None."""
    return value if type(value) is int and _MIN < value < _MAX else None


def _number(value: object) -> float | None:
    """A finite number (not a bool), else None."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    return float(value) if type(value) is int and _MIN < value < _MAX else None
