"""Issue #42: an error result names its call as a success does, so the widget names the tool and
its report joins; and every line a call writes names the client session it came in on."""

from __future__ import annotations

import logging
import re

import orjson
import pytest

from protocol.appdata import error_meta
from protocol.http.context import IDENTITY, http_context_factory
from protocol.identity import Identity, SessionIds, identify, session_label
from tests.conftest import data, make_config
from tests.support import logs
from tools.context import CallContext
from tools.tomtom.client import ClientSettings


def app_status(caplog) -> list[dict]:
    return logs.app_status(caplog.records)


def call_lines(caplog) -> list[dict]:
    return [logs.line(record) for record in caplog.records if record.getMessage() == "Tool call"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"locations": [[4.9, 52.37]], "show_ui": True},  # invalid_arguments: one location
        {"locations": [[4.9, 52.37], [13.4, 52.52]], "show_ui": True, "nonsense": 1},  # an unknown input
    ],
)
async def test_an_error_result_of_a_widget_tool_names_its_tool_and_request(dispatcher, config, caplog, arguments):
    caplog.set_level(logging.INFO)
    context = CallContext(config=config, transport="http", client_name="Claude", session="s-1")
    outcome = await dispatcher.call("tomtom-routing", arguments, context)
    assert outcome.is_error and outcome.code == "invalid_arguments"
    assert outcome.meta == {"tool": "tomtom-routing", "request_id": context.request_id}
    assert outcome.meta == error_meta("tomtom-routing", context.request_id)
    assert outcome.text == orjson.dumps(outcome.data).decode(), "the error's text is as it always was"
    assert "_meta" not in outcome.text and "request_id" not in outcome.text
    (delivered,) = app_status(caplog)
    assert (delivered["message"], delivered["delivery"], delivered["tool"]) == ("App data", "error", "tomtom-routing")
    assert delivered["request_id"] == context.request_id and delivered["session"] == "s-1"
    assert "raw_bytes" not in delivered, "an error carries no app data"


async def test_a_widget_report_of_an_error_result_names_the_call_that_answered_it(dispatcher, config, caplog):
    """What the widget does with an error result (tools/widgets/map_app.html: `toolName`,
    `deliveryId`): the tool and the join key are the result's `_meta`'s."""
    caplog.set_level(logging.INFO)
    context = CallContext(config=config, transport="http", client_name="Claude", session="s-1")
    failed = await dispatcher.call("tomtom-geocode", {"show_ui": True}, context)
    report = {
        "tool": failed.meta["tool"],
        "outcome": "failed",
        "source": "none",
        "stage": "result",
        "error": "the tool answered with an error",
        "duration_ms": 3,
        "delivery_request_id": failed.meta["request_id"],
    }
    reporting = CallContext(config=config, transport="http", client_name="Claude", session="s-1")
    await dispatcher.call("tomtom-report-app-status", report, reporting)
    delivered, reported = app_status(caplog)
    assert (reported["tool"], reported["delivery_request_id"]) == ("tomtom-geocode", delivered["request_id"])
    assert reported["session"] == delivered["session"] == "s-1"


async def test_errors_of_other_tools_and_for_clients_without_widgets_carry_no_meta(dispatcher, config, caplog):
    caplog.set_level(logging.INFO)
    plain = CallContext(config=config, transport="http", client_name="curl", widgets=False)
    widgets = CallContext(config=config, transport="http", client_name="Claude")
    without_widgets = await dispatcher.call("tomtom-routing", {"locations": [[4.9, 52.37]]}, plain)
    unknown = await dispatcher.call("tomtom-nothing", {}, widgets)
    app_only = await dispatcher.call("tomtom-report-app-status", {"tool": "tomtom-routing"}, widgets)
    no_widget = await dispatcher.call("tomtom-map-image", {"center": "nowhere"}, widgets)
    for outcome in (without_widgets, unknown, app_only, no_widget):
        assert outcome.is_error and outcome.meta is None, outcome.text
    assert app_status(caplog) == []


async def test_a_success_result_is_unchanged(stub, dispatcher, config):
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    context = CallContext(config=config, transport="http", client_name="Claude", session="s-1")
    outcome = await dispatcher.call("tomtom-geocode", {"query": "Dam 1"}, context)
    assert outcome.meta == {"show_ui": False, "tool": "tomtom-geocode", "request_id": context.request_id}


async def test_every_line_of_a_call_names_its_session(stub, dispatcher, config, caplog):
    caplog.set_level(logging.INFO)
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    context = CallContext(config=config, transport="http", client_name="Claude", session="abcDEF123_-x")
    await dispatcher.call("tomtom-geocode", {"query": "Dam 1", "show_ui": True}, context)
    (delivered,) = app_status(caplog)
    (call,) = call_lines(caplog)
    assert delivered["session"] == call["session"] == "abcDEF123_-x"
    sessionless = CallContext(config=config, transport="http", client_name="ChatGPT")
    caplog.clear()
    await dispatcher.call("tomtom-geocode", {"query": "Dam 1", "show_ui": True}, sessionless)
    assert "session" not in app_status(caplog)[0] and call_lines(caplog)[0]["session"] is None


def test_the_http_session_key_is_the_signed_session_ids_label(config):
    """The key is the label of a valid `Mcp-Session-Id` only: a forged or foreign id gives none,
    and the label cannot be replayed as an id."""
    ids = SessionIds(["secret"])
    minted = ids.mint("Claude", apps=True)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    identity = identify({"mcp-session-id": minted}, message, ids)
    assert identity.session == session_label(minted) and re.fullmatch(r"[A-Za-z0-9_-]{12}", identity.session)
    assert ids.read(identity.session) is None
    forged = minted[:-2] + ("AA" if not minted.endswith("AA") else "BB")
    assert identify({"mcp-session-id": forged}, message, ids).session is None
    assert identify({}, message, ids).session is None

    class Request:
        headers: dict[str, str] = {}
        scope = {"state": {IDENTITY: Identity("Claude", None, session=identity.session)}}

    class Ctx:
        request = Request()
        protocol_version = "2025-11-25"

    assert http_context_factory(config)(Ctx()).session == identity.session  # type: ignore[arg-type]


async def test_a_result_refused_after_its_app_data_was_delivered_is_delivered_once(stub, dispatcher, caplog):
    """`MCP_MAX_FULL_CHARS` refuses a result after the app data was fitted into it: the error names
    the call, and its one `App data` line stays the delivery the widget's report joins."""
    caplog.set_level(logging.INFO)
    stub.route("GET", r"/maps/orbis/places/geocode", json_body={**data("geocode_v2.json"), "note": "x" * 5_000})
    client = ClientSettings(base_url=stub.base_url, total_timeout=5.0, max_retries=0, max_full_chars=2_000)
    context = CallContext(config=make_config(stub, client=client), transport="http", client_name="Claude")
    outcome = await dispatcher.call(
        "tomtom-geocode", {"query": "Dam", "response_detail": "full", "show_ui": True}, context
    )
    assert outcome.code == "invalid_arguments"
    assert outcome.meta == {"tool": "tomtom-geocode", "request_id": context.request_id}
    (delivered,) = app_status(caplog)
    assert delivered["delivery"] == "inline" and delivered["request_id"] == context.request_id
