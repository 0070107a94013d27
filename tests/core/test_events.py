"""Each log event is declared once: the line written follows the declaration, and the reference
in docs/log-events.md is printed from it."""

from __future__ import annotations

import io
import json
import logging

import pytest
from django.core.management import call_command

from core.app_status import AppData, Drawn, RetiredToolCalled, Simplification
from core.calls import ToolCall
from core.catalog import EVENTS, reference
from core.events import (
    CLIENT_NAME_LENGTH,
    ENVELOPE,
    TOOL_NAME_LENGTH,
    USER_AGENT_LENGTH,
    declaration_problems,
    describe,
    log,
)
from core.exchange import VERSION_LENGTH
from core.operations import SurfaceReadableAgain
from protocol.service import build_dispatcher
from tests.conftest import REPO
from tests.support import logs
from tools.context import CallContext

LOG_EVENTS = REPO / "docs" / "log-events.md"


def test_the_declarations_agree_with_each_other():
    assert declaration_problems(EVENTS) == []


def test_the_reference_is_printed_from_the_declarations():
    printed = io.StringIO()
    call_command("log_events", stdout=printed)

    assert printed.getvalue() == reference()
    assert LOG_EVENTS.read_text().endswith(reference()), "run `python manage.py log_events` into docs/log-events.md"
    for event in EVENTS:
        assert f"### `{event.MESSAGE}`" in reference()


def written(event, caplog) -> dict:
    with caplog.at_level(logging.DEBUG, logger=event.LOGGER):
        log(event)
    return logs.line(caplog.records[-1])


def test_a_line_is_the_envelope_then_the_marks_then_the_fields_in_their_declared_order(caplog):
    line = written(
        AppData(
            tool="tomtom-routing",
            client="claude-ai",
            delivery="inline",
            raw_bytes=9,
            simplification=Simplification(points=3, max_error_m=2.0),
        ),
        caplog,
    )

    assert list(line) == [*ENVELOPE, "event", "kind", "tool", "client", "delivery", "raw_bytes", "simplification"]
    assert (line["message"], line["level"], line["kind"]) == ("App data", "info", "app_data")
    assert line["simplification"] == {"points": 3, "max_error_m": 2.0}  # absent values are left out


def test_a_tool_call_line_has_every_field_absent_values_null(caplog):
    line = written(ToolCall(tool="tomtom-geocode", client="claude-ai", outcome="internal"), caplog)

    assert list(line) == [*ENVELOPE, *describe(ToolCall).names()]
    assert (line["level"], line["tenant"], line["bytes"]) == ("error", None, None)


def test_an_event_without_fields_is_the_envelope_alone(caplog):
    assert list(written(SurfaceReadableAgain(), caplog)) == list(ENVELOPE)


def test_a_lone_surrogate_is_written_escaped_not_refused(caplog):
    line = written(Drawn(tool="tomtom-routing", client="claude-\ud800", source="inline"), caplog)

    assert line["client"] == "claude-\ud800"


async def test_values_a_client_chose_are_cut_to_the_declared_lengths(config, caplog):
    """A tool name no tool has and a User-Agent are the caller's; the line keeps the declared bounds."""
    context = CallContext(
        config=config, transport="http", client_name="c" * 1000, user_agent="u" * 5000, protocol_version="v" * 500
    )
    with caplog.at_level(logging.INFO, logger="tools.calls"):
        await build_dispatcher().call("t" * 10_000, {}, context)

    (line,) = [logs.line(r) for r in caplog.records if r.getMessage() == ToolCall.MESSAGE]
    lengths = (len(line["tool"]), len(line["client"]), len(line["user_agent"]), len(line["protocol_version"]))
    assert lengths == (TOOL_NAME_LENGTH, CLIENT_NAME_LENGTH, USER_AGENT_LENGTH, VERSION_LENGTH)
    assert line["outcome"] == "unknown_tool"


@pytest.mark.parametrize("event", EVENTS, ids=lambda event: event.__name__)
def test_every_text_field_is_bounded_and_every_number_has_a_floor(event):
    for spec in describe(event).fields:
        for field in (spec, *spec.parts):
            if field.kind in ("text", "texts") and not field.values:
                assert field.max_length is not None, f"{event.__name__}.{field.name}: declare a maximum length"
            if field.kind in ("whole", "number"):
                assert field.minimum is not None and field.maximum is not None, f"{event.__name__}.{field.name}"


def test_a_list_of_names_keeps_its_order(caplog):
    line = written(RetiredToolCalled(tool="old", client="goose", replaced_by=["b", "a"]), caplog)

    assert json.loads(json.dumps(line))["replaced_by"] == ["b", "a"]
