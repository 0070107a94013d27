"""Tools with a widget: `show_ui`, the result's `_meta`, the dynamic map, the app-only tools and
the `ui://` resource, as a caller and a host see them."""

from __future__ import annotations

import logging

import orjson
import pytest
from mcp import Client
from mcp.server.apps import APP_MIME_TYPE
from mcp.shared.exceptions import MCPError

from protocol.appdata import APP_DATA_KEY, CALLABLE_KEY
from protocol.mcp_apps import tool_meta
from protocol.server import build_server
from protocol.service import build_dispatcher
from tests.conftest import CANARY_KEY, apps_extension, data, make_config
from tests.support import logs
from tools.context import CallContext
from tools.definition import ToolDefinitionError, define_tool
from tools.definitions.geocode import decode_orbis
from tools.inputs import ToolInput
from tools.shaping.appdata import decode
from tools.tomtom.credentials import KeySources
from tools.widgets import MAP_APP_URI, MAPLIBRE_CDN

ORBIS_ROUTE = r"/maps/orbis/routing/routes/calculate"  # Orbis Routing v3: a POST
ROUTE = {"locations": [[4.9041, 52.3676], [13.405, 52.52]]}
WIDGET_TOOLS = {"tomtom-geocode", "tomtom-routing", "tomtom-traffic", "tomtom-dynamic-map", "tomtom-data-viz"}
APP_ONLY_TOOLS = {"tomtom-get-app-data", "tomtom-get-map-key", "tomtom-report-app-status"}


def app_status(caplog) -> list[dict]:
    return logs.app_status(caplog.records)


# --- show_ui -----------------------------------------------------------------------------------


async def test_show_ui_adds_no_coordinates_to_the_text(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, json_body=data("route_v3.json"))
    plain = await dispatcher.call("tomtom-routing", ROUTE, context)
    shown = await dispatcher.call("tomtom-routing", {**ROUTE, "show_ui": True}, context)
    plain_text, shown_text = orjson.loads(plain.text), orjson.loads(shown.text)
    assert plain_text.pop("show_ui") is False
    assert shown_text.pop("show_ui") is True
    assert shown_text.pop("tool") == "tomtom-routing"
    assert shown_text == plain_text
    assert "_meta" not in shown.text and "points" not in shown.text
    assert plain.meta == {"show_ui": False, "tool": "tomtom-routing", "request_id": context.request_id}
    assert set(shown.meta) == {"show_ui", "tool", "request_id", "delivery", APP_DATA_KEY, CALLABLE_KEY}
    assert shown.meta["delivery"] == "inline"
    app = decode(
        shown.meta[APP_DATA_KEY]
    )  # TomTom's untrimmed route, in the shape the widget reads (Orbis v3: translated)
    assert [leg["points"] for leg in app["routes"][0]["legs"]] == [
        leg["points"] for leg in data("route.json")["routes"][0]["legs"]
    ]
    assert app["routes"][0]["summary"] == data("route.json")["routes"][0]["summary"]


async def test_app_data_is_logged_with_the_caller(stub, dispatcher, config, caplog):
    caplog.set_level(logging.INFO)
    stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
    context = CallContext(config=config, transport="http", client_name="Claude", user_agent="Claude-User/1.0")
    outcome = await dispatcher.call("tomtom-geocode", {"query": "Dam 1", "show_ui": True}, context)
    drawn = decode_orbis(orjson.dumps(data("geocode_v2.json")))  # Orbis v2's answer in the layout the map reads
    assert decode(outcome.meta[APP_DATA_KEY]) == drawn
    (line,) = app_status(caplog)
    assert line["message"] == "App data" and line["kind"] == "app_data"
    assert (line["tool"], line["client"], line["user_agent"]) == ("tomtom-geocode", "Claude", "Claude-User/1.0")
    assert line["delivery"] == "inline" and line["encoded_chars"] == len(outcome.meta[APP_DATA_KEY])
    assert line["raw_bytes"] == len(orjson.dumps(drawn))
    assert line["result_chars"] > line["encoded_chars"] and "simplification" not in line
    assert line["request_id"] == outcome.meta["request_id"] == context.request_id, "the join key of widget reports"


async def test_the_traffic_widget_gets_the_incidents_it_lists(stub, dispatcher, context, caplog):
    caplog.set_level(logging.INFO)
    stub.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=data("traffic.json"))
    args = {"bbox": [4.8, 52.33, 4.95, 52.4], "show_ui": True, "maxResults": 4}
    outcome = await dispatcher.call("tomtom-traffic", args, context)
    text = orjson.loads(outcome.text)
    assert (outcome.meta["delivery"], text["tool"]) == ("inline", "tomtom-traffic")
    assert (text["returned"], text["total"]) == (4, 6)
    drawn = decode(outcome.meta[APP_DATA_KEY])
    assert drawn["bbox"] == args["bbox"] and drawn["incidents"] == text["incidents"]
    features = drawn["geometry"]["features"]
    assert [f["properties"] for f in features] == [{"incident": i} for i in range(4)]
    assert {f["geometry"]["type"] for f in features} <= {"Point", "LineString"}
    ((line,),) = [[e for e in app_status(caplog) if e["message"] == "App data"]]
    assert line["tool"] == "tomtom-traffic" and line["delivery"] == "inline"
    assert line["request_id"] == outcome.meta["request_id"] == context.request_id


async def test_traffic_without_show_ui_has_no_app_data(stub, dispatcher, context, caplog):
    caplog.set_level(logging.INFO)
    stub.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=data("traffic.json"))
    outcome = await dispatcher.call("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4]}, context)
    assert outcome.meta == {"show_ui": False, "tool": "tomtom-traffic", "request_id": context.request_id}
    assert app_status(caplog) == []


def test_widget_tools_link_the_map_app_and_app_only_tools_are_hidden():
    tools = {tool.name: tool for tool in build_dispatcher().registry}
    for name in WIDGET_TOOLS:
        assert tool_meta(tools[name]) == {"ui": {"resourceUri": MAP_APP_URI}, "ui/resourceUri": MAP_APP_URI}
        assert "show_ui" in tools[name].input_schema["properties"]
    for name in APP_ONLY_TOOLS:
        assert tool_meta(tools[name]) == {"ui": {"visibility": ["app"]}}
        assert "show_ui" not in tools[name].input_schema["properties"]


def test_a_tool_cannot_take_show_ui_without_a_widget():
    class ShowUiInput(ToolInput):
        show_ui: bool = False

    async def run(input, context):
        return {}

    with pytest.raises(ToolDefinitionError, match="must name the widget that draws it"):
        define_tool(name="x", title="X", description="x", input=ShowUiInput, run=run)


# --- the resource ------------------------------------------------------------------------------


async def test_the_map_app_is_served_as_an_mcp_app(config):
    dispatcher = build_dispatcher()
    server = build_server(dispatcher, lambda ctx: CallContext(config=config, transport="stdio"))
    async with Client(server, extensions=[apps_extension()]) as client:
        resource, *references = (await client.list_resources()).resources  # the widget, then reference data
        assert str(resource.uri) == MAP_APP_URI and resource.mime_type == APP_MIME_TYPE
        assert all(str(r.uri).startswith("tomtom://") and r.mime_type == "application/json" for r in references)
        read = await client.read_resource(MAP_APP_URI)
        (content,) = read.contents
        with pytest.raises(MCPError, match="Unknown resource"):
            await client.read_resource("ui://tomtom-map/other.html")
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert content.mime_type == APP_MIME_TYPE and str(content.uri) == MAP_APP_URI
    assert content.text.startswith("<!doctype html>") and "ui/initialize" in content.text
    csp = content.meta["ui"]["csp"]
    assert "https://api.tomtom.com" in csp["connectDomains"] and "https://api.tomtom.com" in csp["resourceDomains"]
    assert "https://cdn.jsdelivr.net" in csp["resourceDomains"] and "https://cdn.jsdelivr.net" in csp["connectDomains"]
    assert MAPLIBRE_CDN in content.text
    # the map credits its tiles as each backend's results credit their data (tools.attribution)
    credits = '{"tomtom-orbis-maps": "\\u00a9 TomTom, \\u00a9 OpenStreetMap", "tomtom-maps": "\\u00a9 TomTom"}'
    assert f'"credits": {credits}' in content.text
    assert tools["tomtom-routing"].meta["ui"]["resourceUri"] == MAP_APP_URI
    assert tools["tomtom-get-map-key"].meta == {"ui": {"visibility": ["app"]}}


# --- tomtom-dynamic-map ------------------------------------------------------------------------


async def test_dynamic_map_plans_routes_and_summarises(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, json_body=data("route_v3.json"))
    arguments = {
        "title": "Trip",
        "markers": [{"position": [4.9, 52.37], "label": "Home"}, {"position": [5.12, 52.09]}],
        "polygons": [{"coordinates": [[4.8, 52.3], [4.9, 52.3], [4.85, 52.4]], "label": "Zone"}],
        "routePlans": [
            {"locations": ROUTE["locations"], "label": "To Berlin", "routeType": "short", "avoid": ["ferries"]}
        ],
    }
    outcome = await dispatcher.call("tomtom-dynamic-map", arguments, context)
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1].json()  # Orbis Routing v3: the plan travels in the body
    assert sent["routePlanningLocations"] == {
        "origin": {"type": "Point", "coordinates": [4.9041, 52.3676]},
        "destination": {"type": "Point", "coordinates": [13.405, 52.52]},
    }
    assert (sent["routeType"], sent["avoids"]) == ("short", ["ferries"])
    text = orjson.loads(outcome.text)
    assert text["title"] == "Trip" and text["show_ui"] is True and text["tool"] == "tomtom-dynamic-map"
    assert text["markers"] == {"count": 2, "labels": ["Home"]}
    assert text["polygons"] == 1
    assert text["routes"] == [
        {
            "label": "To Berlin",
            "lengthInMeters": 657000,
            "travelTimeInSeconds": 23400,
            "trafficDelayInSeconds": 420,
            "trafficLengthInMeters": 12000,
            "departureTime": "2026-11-29T09:00:00+01:00",
            "arrivalTime": "2026-11-29T15:30:00+01:00",
        }
    ]
    west, south, east, north = text["view"]["bbox"]
    assert west <= 4.8 and south <= 52.09 and east >= 13.405 and north >= 52.52
    state = decode(outcome.meta[APP_DATA_KEY])["map"]
    assert state["markers"] == arguments["markers"] and state["polygons"] == arguments["polygons"]
    drawn, planned = state["routes"][0]["route"], data("route.json")["routes"][0]  # v3's route, in the shared shape
    assert (drawn["summary"], drawn["legs"]) == (planned["summary"], planned["legs"])
    assert "points" not in outcome.text


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({}, "markers"),
        ({"markers": [{"position": [200, 52]}]}, "markers[0].position[0]"),
        ({"markers": [], "lines": []}, "markers"),
        ({"routePlans": [{"locations": [[4.9, 52.3], [4.9, 95]]}]}, "routePlans[0].locations[1][1]"),
        ({"routePlans": [ROUTE, {**ROUTE, "departAt": "soon"}]}, "routePlans[1].departAt"),
        ({"routePlans": [{**ROUTE, "travelMode": "truck"}]}, "routePlans[0].travelMode"),
        ({"routePlans": [{"locations": [[4.9, 52.3]] * 51}]}, "routePlans[0].locations"),
        ({"lines": [{"coordinates": [[4.9, 52.3], [4.9, 52.4]], "width": 30}]}, "lines[0].width"),
        ({"polygons": [{"coordinates": [[4.9, 52.3], [4.9, 52.4]]}]}, "polygons[0].coordinates"),
        ({"markers": [{"position": [4.9, 52.3], "label": "x" * 201}]}, "markers[0].label"),
    ],
)
async def test_dynamic_map_names_the_wrong_input(stub, dispatcher, context, arguments, argument):
    outcome = await dispatcher.call("tomtom-dynamic-map", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert outcome.data["error"]["message"].startswith((f"{argument}: ", "unknown argument(s)"))
    assert stub.requests == []


async def test_a_plan_tomtom_refuses_is_named_in_the_error(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, json_body={"errorText": "no route found"}, status=400)
    outcome = await dispatcher.call("tomtom-dynamic-map", {"routePlans": [ROUTE]}, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["message"].startswith("routePlans[0]: ")


# --- tomtom-report-app-status ------------------------------------------------------------------


async def test_reports_become_app_status_lines(dispatcher, config, caplog):
    caplog.set_level(logging.INFO)
    context = CallContext(config=config, transport="http", client_name="ChatGPT", user_agent="openai-mcp/1.0")
    drawn = {"tool": "tomtom-routing", "outcome": "drawn", "source": "inline", "duration_ms": 812.34, "features": 7}
    failed = {
        "tool": "tomtom-routing",
        "outcome": "failed",
        "source": "none",
        "stage": "result",
        "duration_ms": 3,
        "error": f"https://api.tomtom.com/t.png?style=x&key={CANARY_KEY}&v=1 failed, and key=abc123",
    }
    assert (
        orjson.loads((await dispatcher.call("tomtom-report-app-status", drawn, context)).text)["logged"] == "App drawn"
    )
    assert (
        orjson.loads((await dispatcher.call("tomtom-report-app-status", failed, context)).text)["logged"]
        == "App failed"
    )
    first, second = app_status(caplog)
    assert first["message"] == "App drawn" and first["kind"] == "drawn"
    assert (first["tool"], first["client"], first["user_agent"]) == ("tomtom-routing", "ChatGPT", "openai-mcp/1.0")
    assert (first["source"], first["duration_ms"], first["features"]) == ("inline", 812.3, 7)
    assert second["message"] == "App failed" and (second["stage"], second["source"]) == ("result", "none")
    assert CANARY_KEY not in second["error"] and "key=***&v=1" in second["error"] and "abc123" not in second["error"]
    assert CANARY_KEY not in caplog.text


async def test_a_report_names_the_delivering_call_and_a_cancellation_its_reason(dispatcher, config, caplog):
    caplog.set_level(logging.INFO)
    delivering = CallContext(config=config, transport="http", client_name="Host", user_agent="Host/2")
    delivered = await dispatcher.call("tomtom-dynamic-map", {"markers": [{"position": [4.9, 52.37]}]}, delivering)
    key = delivered.meta["request_id"]
    reporting = CallContext(config=config, transport="http", client_name="Host", user_agent="Host/2")
    base = {"tool": "tomtom-dynamic-map", "source": "inline", "duration_ms": 40, "delivery_request_id": key}
    reports = [
        {**base, "outcome": "drawn", "features": 1},
        {**base, "outcome": "failed", "stage": "render", "error": "WebGL lost"},
        {**base, "outcome": "cancelled", "source": "none", "reason": f"User stopped it key={CANARY_KEY} " + "x" * 80},
        {"tool": "tomtom-dynamic-map", "outcome": "cancelled", "source": "none", "duration_ms": 2},
    ]
    answers = [orjson.loads((await dispatcher.call("tomtom-report-app-status", r, reporting)).text) for r in reports]
    assert [a["logged"] for a in answers] == ["App drawn", "App failed", "App cancelled", "App cancelled"]
    app_data, drawn, failed, cancelled, unjoined = app_status(caplog)
    assert app_data["request_id"] == key != reporting.request_id
    assert [line["delivery_request_id"] for line in (drawn, failed, cancelled)] == [key] * 3
    assert {line["request_id"] for line in (drawn, failed, cancelled, unjoined)} == {reporting.request_id}
    assert cancelled["kind"] == "cancelled" and cancelled["source"] == "none" and cancelled["duration_ms"] == 40
    assert cancelled["reason"] == "User stopped it key=***" + " " + "x" * 40 and CANARY_KEY not in caplog.text
    assert "delivery_request_id" not in unjoined and "reason" not in unjoined, "an old-style report still logs"


@pytest.mark.parametrize(
    "report",
    [
        {"tool": "tomtom-routing", "outcome": "cancelled", "source": "none", "duration_ms": 5, "features": 0},
        {"tool": "tomtom-routing", "outcome": "cancelled", "source": "none", "duration_ms": 5, "stage": "init"},
        {"tool": "tomtom-routing", "outcome": "cancelled", "source": "none", "duration_ms": 5, "error": "x"},
        {"tool": "tomtom-routing", "outcome": "cancelled", "source": "none", "duration_ms": 5, "reason": "x" * 501},
        {
            "tool": "tomtom-routing",
            "outcome": "drawn",
            "source": "inline",
            "duration_ms": 5,
            "features": 1,
            "reason": "x",
        },
        {
            "tool": "tomtom-routing",
            "outcome": "failed",
            "source": "inline",
            "duration_ms": 5,
            "stage": "init",
            "error": "x",
            "reason": "x",
        },
        {
            "tool": "tomtom-routing",
            "outcome": "drawn",
            "source": "inline",
            "duration_ms": 5,
            "features": 1,
            "delivery_request_id": "a" * 65,
        },
        {
            "tool": "tomtom-routing",
            "outcome": "drawn",
            "source": "inline",
            "duration_ms": 5,
            "features": 1,
            "delivery_request_id": "a b",
        },
        {
            "tool": "tomtom-routing",
            "outcome": "drawn",
            "source": "inline",
            "duration_ms": 5,
            "features": 1,
            "delivery_request_id": "",
        },
        {"tool": "tomtom-routing", "outcome": "drawn", "source": "inline", "duration_ms": 5},
        {"tool": "tomtom-routing", "outcome": "failed", "source": "inline", "duration_ms": 5, "error": "x"},
        {"tool": "tomtom-routing", "outcome": "maybe", "source": "inline", "duration_ms": 5, "features": 1},
        {"tool": "tomtom-routing", "outcome": "drawn", "source": "cache", "duration_ms": 5, "features": 1},
        {"tool": "tomtom-routing", "outcome": "drawn", "source": "inline", "duration_ms": -1, "features": 1},
        {"tool": "tomtom-routing", "outcome": "drawn", "source": "inline", "duration_ms": 5, "features": 1, "x": 1},
        {"tool": "a b", "outcome": "drawn", "source": "inline", "duration_ms": 5, "features": 1},
        {
            "tool": "tomtom-routing",
            "outcome": "drawn",
            "source": "inline",
            "duration_ms": 5,
            "features": 1,
            "stage": "render",
        },
    ],
)
async def test_a_malformed_report_is_refused_and_not_logged(dispatcher, context, caplog, report):
    caplog.set_level(logging.INFO)
    outcome = await dispatcher.call("tomtom-report-app-status", report, context)
    assert outcome.is_error and outcome.data["error"]["code"] == "invalid_arguments"
    assert app_status(caplog) == []


# --- tomtom-get-map-key ------------------------------------------------------------------------


async def test_the_map_key_is_the_callers_own(stub, dispatcher):
    config = make_config(stub, server_key="server-key-1")
    header = CallContext(config=config, transport="http", keys=KeySources(header="caller-key-2"), client_name="Claude")
    answer = orjson.loads((await dispatcher.call("tomtom-get-map-key", {}, header)).text)
    assert answer == {
        "key": "caller-key-2",
        "key_source": "tomtom-api-key",
        "backend": "tomtom-orbis-maps",
        "user_agent": "TomTomMCPAPPHttp/9.9.9 Claude",
    }
    stdio = CallContext(config=config, transport="stdio", keys=KeySources(cli="cli-key-3"), client_name="Zed")
    answer = orjson.loads((await dispatcher.call("tomtom-get-map-key", {}, stdio)).text)
    assert (answer["key"], answer["user_agent"]) == ("cli-key-3", "TomTomMCPAPP/9.9.9 Zed")


async def test_hosted_mode_never_hands_out_the_servers_key(stub, dispatcher):
    hosted = CallContext(config=make_config(stub, server_key="server-key-1", hosted=True), transport="http")
    outcome = await dispatcher.call("tomtom-get-map-key", {}, hosted)
    assert outcome.data["error"]["code"] == "unauthorized"
    assert "server-key-1" not in outcome.text
    local = CallContext(config=make_config(stub, server_key="server-key-1"), transport="http")
    assert orjson.loads((await dispatcher.call("tomtom-get-map-key", {}, local)).text)["key_source"] == "server-key"
