"""JSON-lines logging: one object per line, a stable `message`, the event's fields beside it.

A line starts with the envelope, `time`, `level`, `logger`, `message`, `replica` and `pid`. With
traces on, a record logged inside a recording span goes on with that span's `trace_id` and
`span_id` (`TRACE_CONTEXT`; tools/tracing.py installs the hook that reads them, so with traces off
nothing is read and the lines are as they were). A line written with `core.events.log(event)`
goes on with the event's marks and fields in their declared order (core/events.py); any other
record (Django's, gunicorn's, a Python warning) has the envelope alone. A record logged with an
exception ends with `exception`, the traceback.

Everything goes to stderr, so stdout stays free for the stdio transport's JSON-RPC. The servers'
own lines use the same formatter (tomtom_mcp/server-logging.json), and Python warnings are
logged (`configure`), so every line the server writes is one JSON object.
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec

from core.events import Event

REPLICA = os.environ.get("HOSTNAME") or socket.gethostname()
TRACE_CONTEXT: tuple[str, str] = ("trace_id", "span_id")
"""The fields that follow the envelope on a line logged inside a recording span, traces on: the
names OpenTelemetry gives trace context in JSON logs, lowercase hex (docs/adr/0035-traces.md)."""

TraceContext = Callable[[], tuple[str, str] | None]
"""The current span's trace id (32 hex digits) and span id (16), or None outside a recording span."""
_trace_context: TraceContext | None = None


def set_trace_context(hook: TraceContext | None) -> None:
    """Have every line formatted from now on carry what `hook` returns (tools/tracing.py installs
    it when traces start); None, the default, and lines carry no trace context."""
    global _trace_context
    _trace_context = hook


_encode = msgspec.json.Encoder().encode
_marks: dict[type[Event], bytes] = {}
"""Each event class's marks as JSON object members, encoded once: `"event":"app_status","kind":"drawn"`."""


def _members(event: Event) -> bytes:
    """The event's marks and fields as JSON object members (`"a":1,"b":2`), without braces."""
    marks = _marks.get(type(event))
    if marks is None:
        marks = _marks[type(event)] = b",".join(_encode(name) + b":" + _encode(value) for name, value in event.marks())
    fields = _encode(event)[1:-1]
    return marks + b"," + fields if marks and fields else marks or fields


class JsonLinesFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        envelope: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "replica": REPLICA,
            "pid": record.process,
        }
        if _trace_context is not None and (ids := _trace_context()) is not None:
            envelope["trace_id"], envelope["span_id"] = ids
        event = getattr(record, "event", None)
        exception = self.formatException(record.exc_info) if record.exc_info else None
        try:
            line = _encode(envelope)
            if isinstance(event, Event) and (members := _members(event)):
                line = line[:-1] + b"," + members + b"}"
            if exception is not None:
                line = line[:-1] + b',"exception":' + _encode(exception) + b"}"
            return line.decode()
        except UnicodeEncodeError:  # a lone surrogate: JSON can escape it, UTF-8 cannot carry it
            return _escaped(envelope, event, exception)


def _escaped(envelope: dict[str, object], event: object, exception: str | None) -> str:
    """The line with every non-ASCII character escaped (the slow path, for lone surrogates)."""
    data = dict(envelope)
    if isinstance(event, Event):
        data.update(event.marks())
        data.update(msgspec.to_builtins(event))
    if exception is not None:
        data["exception"] = exception
    return json.dumps(data, default=str, separators=(",", ":"))


def configure(config: dict[str, Any]) -> None:
    """Django's LOGGING_CONFIG: the dict config, and Python warnings through it (as JSON)."""
    logging.config.dictConfig(config)
    logging.captureWarnings(True)
