"""The trace context on JSON lines (core/logging.py, docs/adr/0035-traces.md): with traces off a
line is exactly what it was, byte for byte; with the hook tools/tracing.py installs, `trace_id`
and `span_id` follow the envelope."""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
from collections.abc import Iterator

from core import logging as json_logging
from core.app_status import Drawn
from core.calls import ToolCall
from core.catalog import EVENTS
from core.events import ENVELOPE, describe
from core.logging import REPLICA, TRACE_CONTEXT, JsonLinesFormatter
from tests.conftest import REPO

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_ID = "00f067aa0ba902b7"
FORMATTER = JsonLinesFormatter()


@contextlib.contextmanager
def trace_context(hook: json_logging.TraceContext | None) -> Iterator[None]:
    json_logging.set_trace_context(hook)
    try:
        yield
    finally:
        json_logging.set_trace_context(None)


def record(event: object = None, message: str = "Tool call") -> logging.LogRecord:
    """A record as `core.events.log` makes it, logged at a fixed moment by a fixed process."""
    extra = {"event": event} if event is not None else {}
    made = logging.makeLogRecord({"name": "tools.calls", "levelno": logging.INFO, "levelname": "INFO", "msg": message})
    made.__dict__.update(created=1_793_613_601.25, process=4242, **extra)
    return made


ENVELOPE_TEXT = (
    '"time":"2026-11-02T10:00:01.250+00:00","level":"info","logger":"tools.calls","message":"Tool call",'
    f'"replica":{json.dumps(REPLICA)},"pid":4242'
)
CALL = ToolCall(tool="tomtom-geocode", client="claude-ai", outcome="ok", total_ms=12.5)
CALL_FIELDS = (
    '"tool":"tomtom-geocode","client":"claude-ai","user_agent":null,"transport":"","tenant":null,'
    '"backend":"","outcome":"ok","upstream_calls":null,"upstream_rate_limited":null,"upstream_ms":null,'
    '"total_ms":12.5,"bytes":null,"request_id":null,"session":null,"error":null,"protocol_version":null,'
    '"suggested":null,"argument_paths":null'
)


def test_off_a_line_is_the_envelope_then_the_fields_as_before():
    """The default: no hook, and the line is byte for byte what the formatter always wrote."""
    assert FORMATTER.format(record(CALL)) == "{" + ENVELOPE_TEXT + "," + CALL_FIELDS + "}"
    assert (
        FORMATTER.format(record(message="Not Found: /favicon.ico"))
        == "{" + ENVELOPE_TEXT.replace("Tool call", "Not Found: /favicon.ico") + "}"
    )


def test_outside_a_recording_span_a_line_is_as_with_traces_off():
    off = FORMATTER.format(record(CALL))
    with trace_context(lambda: None):
        assert FORMATTER.format(record(CALL)) == off


def test_inside_a_span_the_ids_follow_the_envelope_before_the_fields():
    with trace_context(lambda: (TRACE_ID, SPAN_ID)):
        text = FORMATTER.format(record(CALL))
        bare = json.loads(FORMATTER.format(record(message="Not Found: /favicon.ico")))

    ids = f'"trace_id":"{TRACE_ID}","span_id":"{SPAN_ID}"'
    assert text == "{" + ENVELOPE_TEXT + "," + ids + "," + CALL_FIELDS + "}"
    assert list(json.loads(text)) == [*ENVELOPE, *TRACE_CONTEXT, *describe(ToolCall).names()]
    assert list(bare) == [*ENVELOPE, *TRACE_CONTEXT]  # any record: Django's, gunicorn's, a warning


def test_the_escaped_line_of_a_lone_surrogate_keeps_them_in_the_same_place():
    drawn = Drawn(tool="tomtom-routing", client="claude-\ud800", source="inline")
    with trace_context(lambda: (TRACE_ID, SPAN_ID)):
        line = json.loads(FORMATTER.format(record(drawn, Drawn.MESSAGE)))

    assert list(line)[: len(ENVELOPE) + 2] == [*ENVELOPE, *TRACE_CONTEXT]
    assert (line["trace_id"], line["span_id"], line["client"]) == (TRACE_ID, SPAN_ID, "claude-\ud800")


def test_no_event_declares_a_trace_context_field():
    """The formatter writes them: an event field of the same name would be written twice."""
    clashes = [
        f"{event.__name__}.{name}" for event in EVENTS for name in describe(event).names() if name in TRACE_CONTEXT
    ]
    assert clashes == []


def test_off_formatting_never_imports_opentelemetry():
    program = (
        "import logging, sys\n"
        "from tools import tracing\n"
        "from core.logging import JsonLinesFormatter\n"
        "JsonLinesFormatter().format(logging.makeLogRecord({'msg': 'hello'}))\n"
        "tracing.shutdown()\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
