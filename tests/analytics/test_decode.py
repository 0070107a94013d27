"""The compiled decoding of the server's own lines says exactly what the general parser says.

Each case is a line the server writes, or one that differs from it in one way, and which of the
two paths it takes: "compiled" (`decode_compiled` builds the row) or "general" (it declines and
the general parser decides). Either way `decode` must equal the general parser's answer, field
for field, `raw` included.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from analytics.ingest.decode import FAMILIES, decode, decode_compiled, decode_generally
from analytics.models import AppStatusEvent, ToolCallEvent
from core import logging as json_logging
from core.app_status import (
    AppData,
    DecodeFailed,
    Drawn,
    Failed,
    Fetched,
    FetchFailed,
    HostDropped,
    OutdatedCall,
    RetiredToolCalled,
    TooLarge,
)
from core.events import Event, FieldSpec, describe
from core.exchange import ListedTool, RequestRefused, SessionStarted, ToolsListed
from core.logging import TRACE_CONTEXT
from tests.analytics.conftest import call_line, ingest, line, written

AT = "2026-11-02T10:00:01"
APP_STATUS_LINES = {
    "app data": line(
        AppData,
        AT,
        delivery="inline",
        raw_bytes=93_000,
        encoded_chars=41_000,
        result_chars=44_000,
        simplification={"original_points": 20_571, "points": 14_065, "max_error_m": 2.0},
    ),
    "too large": line(TooLarge, AT, raw_bytes=2_000_000, result_chars=900_000),
    "fetched": line(Fetched, AT, source="data_url", reason="too_large", raw_bytes=40_000),
    "host dropped": line(HostDropped, AT, source="inline", reason="host_dropped"),
    "decode failed": line(DecodeFailed, AT, source="data_url", reason="decode_failed", error="bad base64"),
    "fetch failed": line(FetchFailed, AT, error="timeout", error_code="unavailable"),
    "drawn": line(Drawn, AT, source="inline", duration_ms=412.5, features=3),
    "failed": line(Failed, AT, source="none", stage="result", duration_ms=20.0, error="no app data"),
    "retired tool": line(
        RetiredToolCalled, AT, tool="tomtom-fuzzy-search", replaced_by=["tomtom-geocode", "tomtom-poi-search"]
    ),
    "outdated call": line(OutdatedCall, AT, input="avoid", change="renamed"),
}
TOOL_CALL = call_line(AT, tenant="acme", upstream_ms=98.25, total_ms=120.5)
NO_TENANT = call_line(AT)  # `"tenant": null`, as `log_calls` writes it for a caller with an API key
TRACE_ID, SPAN_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
EXCHANGE_LINES = {
    "session started": written(
        SessionStarted(
            client="claude-ai",
            client_version="0.12.4",
            protocol_version="2025-06-18",
            requested_version="2025-11-25",
            transport="http",
            apps="apps",
            request_id="init-1",
            session="s1",
        ),
        AT,
    ),
    "tools listed": written(
        ToolsListed(
            client="claude-ai",
            protocol_version="2025-06-18",
            transport="http",
            backend="tomtom-orbis-maps",
            bytes=1_456,
            tools=[ListedTool(name="tomtom-geocode", bytes=812), ListedTool(name="tomtom-routing", bytes=640)],
            request_id="list-1",
            session="s1",
        ),
        AT,
    ),
    "request refused": written(
        RequestRefused(method="resources/subscribe", code=-32601, client="claude-ai", error="Method not found"), AT
    ),
}
CALL_EVIDENCE = call_line(
    AT,
    outcome="invalid_arguments",
    session="s1",
    protocol_version="2025-06-18",
    suggested=["tomtom-geocode"],
    argument_paths=["locations[1].lat", "avoid"],
)


@contextlib.contextmanager
def traced() -> Iterator[None]:
    """Lines written as with traces on, inside a span (the hook tools/tracing.py installs)."""
    json_logging.set_trace_context(lambda: (TRACE_ID, SPAN_ID))
    try:
        yield
    finally:
        json_logging.set_trace_context(None)


with traced():
    TRACED_CALL = call_line(AT, tenant="acme", upstream_ms=98.25, total_ms=120.5)
    TRACED_DRAWN = line(Drawn, AT, source="inline", duration_ms=412.5, features=3)


def test_every_line_the_server_writes_takes_the_compiled_path():
    unavailable = call_line(AT, outcome="unavailable", upstream_calls=0)
    every = [*APP_STATUS_LINES.values(), TOOL_CALL, NO_TENANT, unavailable, TRACED_CALL, TRACED_DRAWN]
    for text in [*every, *EXCHANGE_LINES.values(), CALL_EVIDENCE]:
        stripped = text.encode()

        assert decode_compiled(stripped) == decode_generally(stripped) != None  # noqa: E711 - a row, the same one
        assert decode_compiled(stripped)[1].raw == ""  # type: ignore[index]


def changed(text: str, **fields: object) -> str:
    """The line with `fields` set (a field set to `...` is removed), written as the formatter writes."""
    data = json.loads(text)
    for name, value in fields.items():
        if value is ...:
            del data[name]
        else:
            data[name] = value
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


DRAWN, APP_DATA, RETIRED = APP_STATUS_LINES["drawn"], APP_STATUS_LINES["app data"], APP_STATUS_LINES["retired tool"]
STARTED, LISTED, REFUSED = (EXCHANGE_LINES[name] for name in ("session started", "tools listed", "request refused"))
CASES = {
    # Tool-call lines.
    "whole milliseconds": ("compiled", changed(TOOL_CALL, upstream_ms=80, total_ms=0)),
    "no optional fields": (
        "compiled",
        changed(
            TOOL_CALL,
            backend=...,
            transport=...,
            tenant=...,
            user_agent=...,
            request_id=...,
            replica=...,
            pid=...,
            upstream_calls=...,
            bytes=...,
            upstream_ms=...,
            total_ms=...,
        ),
    ),
    "an empty tool name": ("compiled", changed(TOOL_CALL, tool="")),
    "any level": ("compiled", changed(TOOL_CALL, level={"name": None})),
    "no level": ("compiled", changed(TOOL_CALL, level=...)),
    "Z for UTC": ("compiled", changed(TOOL_CALL, time=f"{AT}.000Z")),
    "another UTC offset": ("compiled", changed(TOOL_CALL, time=f"{AT}.000+02:00")),
    "surrounding whitespace": ("compiled", f" \t{TOOL_CALL}\r"),
    "a field twice": ("compiled", TOOL_CALL[:-1] + ',"tool":"tomtom-geocode"}'),
    "escapes": ("compiled", changed(TOOL_CALL, client='caf\u00e9 "quoted" \\ \u2603')),
    "unknown field": ("general", changed(TOOL_CALL, cache="hit")),
    "an exception": ("general", changed(TOOL_CALL, exception="Traceback ...")),
    "an event field": ("general", changed(TOOL_CALL, event="other")),
    "a null number": ("compiled", changed(TOOL_CALL, pid=None, upstream_ms=None)),
    "a null text": ("compiled", changed(TOOL_CALL, tenant=None, user_agent=None)),
    "a bool for a number": ("general", changed(TOOL_CALL, upstream_calls=True)),
    "a fraction for a whole number": ("general", changed(TOOL_CALL, bytes=1.5)),
    "a text for a number": ("general", changed(TOOL_CALL, bytes="big")),
    "a number for a text": ("general", changed(TOOL_CALL, backend=3)),
    "too large": ("general", changed(TOOL_CALL, pid=2**63)),
    "too small": ("general", changed(TOOL_CALL, pid=-(2**63))),
    "too large for milliseconds": ("general", changed(TOOL_CALL, total_ms=2**70)),
    "negative milliseconds": ("general", changed(TOOL_CALL, total_ms=-1)),
    "an empty text": ("general", changed(TOOL_CALL, backend="")),
    "NUL": ("general", changed(TOOL_CALL, tenant="a\u0000b")),
    "no UTC offset": ("general", changed(TOOL_CALL, time=AT)),
    "not a time": ("general", changed(TOOL_CALL, time="yesterday")),
    "no outcome": ("general", changed(TOOL_CALL, outcome=...)),
    "a number for the tool": ("general", changed(TOOL_CALL, tool=7)),
    "another logger": ("general", changed(TOOL_CALL, logger="tools.other")),
    "another message": ("general", changed(TOOL_CALL, message="Tool called")),
    "a lone surrogate": ("general", TOOL_CALL.replace('"claude-ai"', '"\\ud800"')),
    "not UTF-8": ("general", TOOL_CALL.encode().replace(b"claude-ai", b"claude-\xff")),
    "cut off": ("general", TOOL_CALL[:-10]),
    "not an object": ("general", "[1, 2]"),
    "a Django warning": ("general", '{"level":"warning","message":"Not Found: /favicon.ico"}'),
    "trace context": ("compiled", TRACED_CALL),
    "a trace id alone": ("compiled", changed(TRACED_CALL, span_id=...)),
    "trace context at the end": ("compiled", changed(TOOL_CALL, trace_id=TRACE_ID, span_id=SPAN_ID)),
    "a null trace context": ("compiled", changed(TRACED_CALL, trace_id=None, span_id=None)),
    "trace context and an unknown field": ("general", changed(TRACED_CALL, cache="hit")),
    "a traced Django warning": ("general", changed('{"level":"warning","message":"Not Found"}', trace_id=TRACE_ID)),
    # App-status lines.
    "whole duration": ("compiled", changed(DRAWN, duration_ms=400)),
    "no level or kind": ("compiled", changed(DRAWN, level=..., kind=...)),
    "no app logger": ("general", changed(DRAWN, logger=...)),
    "part of a simplification": ("compiled", changed(APP_DATA, simplification={"points": 3})),
    "a whole error bound": ("compiled", changed(APP_DATA, simplification={"max_error_m": 2})),
    "negative duration": ("general", changed(DRAWN, duration_ms=-1.5)),
    "a logger not where the formatter writes it": (
        "general",
        json.dumps({"padding": "x" * 200, **json.loads(DRAWN)}, separators=(",", ":")),
    ),
    "app-status Z": ("compiled", changed(DRAWN, time=f"{AT}.000Z")),
    "app-status trace context": ("compiled", TRACED_DRAWN),
    "one replacement": ("compiled", changed(RETIRED, replaced_by=["tomtom-geocode"])),
    "unknown message": ("general", changed(DRAWN, message="App drawn twice")),
    "another kind": ("general", changed(DRAWN, kind="failed")),
    "a null kind": ("general", changed(DRAWN, kind=None)),
    "another app logger": ("general", changed(DRAWN, logger="tools.other")),
    "an app exception": ("general", changed(DRAWN, exception="Traceback ...")),
    "unknown app field": ("general", changed(DRAWN, cache="hit")),
    "a top-level points": ("general", changed(DRAWN, points=3)),
    "an empty simplification": ("general", changed(APP_DATA, simplification={})),
    "a null simplification": ("compiled", changed(APP_DATA, simplification=None)),
    "unknown simplification field": ("general", changed(APP_DATA, simplification={"points": 3, "x": 1})),
    "simplification type": ("general", changed(APP_DATA, simplification={"points": "3"})),
    "a null in a simplification": ("general", changed(APP_DATA, simplification={"points": None})),
    "no replacements": ("general", changed(RETIRED, replaced_by=[])),
    "a comma in a name": ("general", changed(RETIRED, replaced_by=["a, b"])),
    "a number for a name": ("general", changed(RETIRED, replaced_by=["a", 1])),
    "null replacements": ("compiled", changed(RETIRED, replaced_by=None)),
    "a text duration": ("general", changed(DRAWN, duration_ms="slow")),
    "a null duration": ("compiled", changed(DRAWN, duration_ms=None)),
    "an app number out of range": ("general", changed(DRAWN, features=2**70)),
    "an empty app text": ("general", changed(DRAWN, source="")),
    "app NUL": ("general", changed(DRAWN, error="a\u0000b")),
    "no client": ("general", changed(DRAWN, client=...)),
    "no event field": ("general", changed(DRAWN, event=..., note="app_status")),
    "app-status without an offset": ("general", changed(DRAWN, time=AT)),
    # Servers before the event declarations wrote `"user_agent": null` for a client that sent none: as absent.
    "a null user agent": ("compiled", changed(DRAWN, user_agent=None)),
    # Exchange lines (core/exchange.py), and the tool call's evidence fields.
    "a call's evidence": ("compiled", CALL_EVIDENCE),
    "a comma in an argument path": ("general", changed(CALL_EVIDENCE, argument_paths=["a, b"])),
    "session started": ("compiled", EXCHANGE_LINES["session started"]),
    "no listed tools": ("compiled", changed(LISTED, tools=[])),
    "a null listing": ("compiled", changed(LISTED, tools=None)),
    "a listed tool without bytes": ("general", changed(LISTED, tools=[{"name": "tomtom-geocode"}])),
    "a listed tool with a field more": (
        "general",
        changed(LISTED, tools=[{"name": "tomtom-geocode", "bytes": 3, "title": "Geocode"}]),
    ),
    "a listed tool of text bytes": ("general", changed(LISTED, tools=[{"name": "tomtom-geocode", "bytes": "3"}])),
    "a listed tool that is a name": ("general", changed(LISTED, tools=["tomtom-geocode"])),
    "a listing that is not a list": ("general", changed(LISTED, tools={"name": "x", "bytes": 1})),
    "listed tools in another order": ("compiled", changed(LISTED, tools=[{"bytes": 3, "name": "tomtom-geocode"}])),
    "a listed name with escapes": ("compiled", changed(LISTED, tools=[{"name": 'caf\u00e9 "q" \u2603', "bytes": 1}])),
    "a listed name with NUL": ("general", changed(LISTED, tools=[{"name": "a\u0000b", "bytes": 1}])),
    "refused without a code": ("compiled", changed(REFUSED, code=...)),
    "a code out of range": ("general", changed(REFUSED, code=2**40)),
    "an unknown exchange message": ("general", changed(REFUSED, message="MCP request dropped")),
    "exchange without a client": ("general", changed(REFUSED, client=...)),
    "exchange with an unknown field": ("general", changed(LISTED, cursor="abc")),
    "an empty client version (its default)": ("compiled", changed(STARTED, client_version="")),
    "a null client version": ("compiled", changed(STARTED, client_version=None)),
    "an empty request id (no default of its own)": ("general", changed(REFUSED, request_id="")),
    "an empty exchange text that is the declared default": ("compiled", changed(LISTED, backend="", transport="")),
}


@pytest.mark.parametrize(("path", "text"), CASES.values(), ids=CASES.keys())
def test_a_line_is_what_the_general_parser_says_on_either_path(path, text):
    raw = text if isinstance(text, bytes) else text.encode()

    assert decode(raw) == decode_generally(raw)
    assert ("compiled" if decode_compiled(raw.strip()) is not None else "general") == path


def test_a_blank_line_is_skipped():
    assert decode(b" \r") == decode_generally(b" \r")


def sample(spec: FieldSpec) -> Any:
    """A value of the declared type within the declared bounds, for every field of a record."""
    if spec.kind == "text":
        return (spec.values or ("x" * min(spec.max_length or 8, 8),))[0]
    if spec.kind == "texts":
        return ["tomtom-geocode", "tomtom-poi-search"]
    if spec.kind in ("record", "records"):
        assert spec.record is not None
        record = spec.record(**{part.name: sample(part) for part in spec.parts})
        return [record, record] if spec.kind == "records" else record
    value = spec.maximum if spec.maximum is not None else 7
    return int(value) if spec.kind == "whole" else float(value)


@pytest.mark.parametrize("event", [event for family in FAMILIES for event in family.events], ids=lambda e: e.__name__)
def test_every_field_every_event_declares_takes_the_compiled_path_at_its_bounds(event: type[Event]):
    """The compiled shapes are made from the declarations: a new field, a new kind, a new bound is
    decoded there at once, and gives the general parser's row."""
    full = event(**{spec.name: sample(spec) for spec in describe(event).fields})
    text = written(full, f"{AT}.000").encode()

    assert decode_compiled(text) == decode_generally(text) != None  # noqa: E711 - a row, the same one
    assert decode_generally(text)[1].raw == ""  # type: ignore[index]


def without_trace_context(text: str) -> str:
    return changed(text, **dict.fromkeys(TRACE_CONTEXT, ...))


@pytest.mark.parametrize("text", [TRACED_CALL, TRACED_DRAWN], ids=["tool call", "app status"])
def test_a_traced_line_is_the_row_of_the_same_line_untraced(text):
    """The ids follow the envelope (core/logging.py); the row is the untraced line's but for its
    identity, nothing in `raw`, no unknown fields."""
    assert list(json.loads(text))[6:8] == list(TRACE_CONTEXT)
    _, row, unknown_fields = decode(text.encode())  # type: ignore[misc]
    _, untraced, _ = decode(without_trace_context(text).encode())  # type: ignore[misc]

    assert (row.raw, unknown_fields) == ("", False)
    assert row.event_id != untraced.event_id
    assert row._replace(event_id=untraced.event_id) == untraced


@pytest.mark.django_db
def test_ingesting_traced_lines_stores_them_as_untraced_ones():
    report = ingest(TRACED_CALL, TRACED_DRAWN, without_trace_context(TRACED_CALL))

    assert (report.malformed, report.skipped, report.unknown_fields) == (0, 0, 0)
    assert (report.tool_calls_new, report.new) == (2, 1)  # traced and untraced: two lines, two events
    assert [(call.raw, call.tenant, call.total_ms) for call in ToolCallEvent.objects.all()] == [("", "acme", 120.5)] * 2
    assert AppStatusEvent.objects.get().raw == ""
