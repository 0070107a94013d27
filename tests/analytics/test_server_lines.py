"""The compiled decoding of the server's own lines says exactly what the general parser says.

Each case is a line the server writes, or one that differs from it in one way, and which of the
two paths it takes: "compiled" (`server_line` builds the row) or "general" (it declines and the
general parser decides). Either way `parse_log_line` must equal the general parser's answer, field
for field, `raw` included.
"""

from __future__ import annotations

import json
from typing import get_args, get_type_hints

import pytest

from analytics.parsing import APP_STATUS_LOGGER
from analytics.server_lines import _AppStatusLine, _ToolCallLine, parse_log_line, server_line
from analytics.tool_call_parsing import TOOL_CALL_LOGGER, TOOL_CALL_MESSAGE
from analytics.tool_call_parsing import parse_log_line as parse_generally
from core.app_status import AppStatus
from tests.analytics.conftest import call_line, line

AT = "2026-11-02T10:00:01"
APP_STATUS_LINES = {
    "app data": line(AppStatus.APP_DATA, AT, delivery="inline", raw_bytes=93_000, encoded_chars=41_000,
                     result_chars=44_000, simplification={"original_points": 20_571, "points": 14_065,
                                                          "max_error_m": 2.0}),
    "too large": line(AppStatus.TOO_LARGE, AT, delivery="none", raw_bytes=2_000_000, encoded_chars=900_000),
    "fetched": line(AppStatus.FETCHED, AT, source="resource"),
    "host dropped": line(AppStatus.HOST_DROPPED, AT, source="inline", reason="host_dropped"),
    "decode failed": line(AppStatus.DECODE_FAILED, AT, source="resource", error="bad base64"),
    "fetch failed": line(AppStatus.FETCH_FAILED, AT, error="timeout", error_code="unavailable", duration_ms=5000),
    "drawn": line(AppStatus.DRAWN, AT, source="inline", duration_ms=412.5, features=3),
    "failed": line(AppStatus.FAILED, AT, source="none", stage="result", duration_ms=20.0, error="no app data"),
    "retired tool": line(AppStatus.RETIRED_TOOL, AT, tool="tomtom-fuzzy-search",
                         replaced_by=["tomtom-geocode", "tomtom-poi-search"]),
    "outdated call": line(AppStatus.OUTDATED_CALL, AT, input="avoid", change="renamed to avoid_areas"),
}  # fmt: skip
TOOL_CALL = call_line(AT, tenant="acme", upstream_ms=98.25, total_ms=120.5)
NO_TENANT = call_line(AT)  # `"tenant": null`, as `log_calls` writes it for a caller with an API key


def test_every_line_the_server_writes_takes_the_compiled_path():
    unavailable = call_line(AT, outcome="unavailable", upstream_calls=0)
    for text in [*APP_STATUS_LINES.values(), TOOL_CALL, NO_TENANT, unavailable]:
        stripped = text.encode()

        assert server_line(stripped) == parse_generally(stripped) != None  # noqa: E711 - a row, the same one
        assert server_line(stripped).raw == ""  # type: ignore[union-attr]


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
CASES = {
    # Tool-call lines.
    "whole milliseconds": ("compiled", changed(TOOL_CALL, upstream_ms=80, total_ms=0)),
    "no optional fields": ("compiled", changed(TOOL_CALL, backend=..., transport=..., tenant=..., user_agent=...,
                                               request_id=..., replica=..., pid=..., upstream_calls=..., bytes=...,
                                               upstream_ms=..., total_ms=...)),
    "an empty tool name": ("compiled", changed(TOOL_CALL, tool="")),
    "any level": ("compiled", changed(TOOL_CALL, level={"name": None})),
    "no level": ("compiled", changed(TOOL_CALL, level=...)),
    "Z for UTC": ("compiled", changed(TOOL_CALL, time=f"{AT}.000Z")),
    "another UTC offset": ("compiled", changed(TOOL_CALL, time=f"{AT}.000+02:00")),
    "surrounding whitespace": ("compiled", f" \t{TOOL_CALL}\r"),
    "a field twice": ("compiled", TOOL_CALL[:-1] + ',"tool":"tomtom-geocode"}'),
    "escapes": ("compiled", changed(TOOL_CALL, client="caf\u00e9 \"quoted\" \\ \u2603")),
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
    # App-status lines.
    "whole duration": ("compiled", changed(DRAWN, duration_ms=400)),
    "no logger, level or kind": ("compiled", changed(DRAWN, logger=..., level=..., kind=...)),
    "part of a simplification": ("compiled", changed(APP_DATA, simplification={"points": 3})),
    "a whole error bound": ("compiled", changed(APP_DATA, simplification={"max_error_m": 2})),
    "negative duration": ("compiled", changed(DRAWN, duration_ms=-1.5)),
    "app-status Z": ("compiled", changed(DRAWN, time=f"{AT}.000Z")),
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
    # `emit` writes `"user_agent": null` for a client that sent none: as absent.
    "no user agent": ("compiled", line(AppStatus.DRAWN, AT, user_agent=None)),
}  # fmt: skip


@pytest.mark.parametrize(("path", "text"), CASES.values(), ids=CASES.keys())
def test_a_line_is_what_the_general_parser_says_on_either_path(path, text):
    raw = text if isinstance(text, bytes) else text.encode()

    assert parse_log_line(raw) == parse_generally(raw)
    assert ("compiled" if server_line(raw.strip()) is not None else "general") == path


def test_a_blank_line_is_skipped():
    assert parse_log_line(b" \r") == parse_generally(b" \r")


def test_the_shapes_name_the_loggers_and_message_of_the_general_parser():
    app_status, tool_call = get_type_hints(_AppStatusLine), get_type_hints(_ToolCallLine)

    assert get_args(app_status["logger"]) == (APP_STATUS_LOGGER,)
    assert get_args(tool_call["logger"]) == (TOOL_CALL_LOGGER,)
    assert get_args(tool_call["message"]) == (TOOL_CALL_MESSAGE,)
