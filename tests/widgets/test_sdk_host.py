"""The map widget in a host built on the official MCP Apps SDK: every widget tool in Chromium.

The host (tests/widgets/sdk_host.html, its script js/sdk_host.js bundled by esbuild from the npm
packages pinned in tests/widgets/js/package.json) connects the v2 MCP client to a real server
process (TomTom is the stub), calls the tool, and lets the SDK's `AppBridge` talk to the widget:
the handshake, the tool input and result, the widget's `tools/call` (proxied to the server),
`ping`, and a host-context change (dark theme, fullscreen, a larger container) checked in the
widget's DOM. The server's log shows the widget's report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conftest import data, server_process
from tests.support.tomtom_stub import TomTomStub
from tests.widgets.chromium import (
    AMSTERDAM,
    BERLIN,
    PLACE_TOOLS,
    app_status_lines,
    blank_tiles,
    reported_frame,
    require_sdk_host,
    serve,
)

pytestmark = [pytest.mark.browser, pytest.mark.live_server_process]

require_sdk_host()

STOPS = [[4.9041, 52.3676], [5.1215, 52.0907], [4.4777, 51.9244], [4.6462, 52.3874]]
TRAFFIC_BOX = [4.8, 52.33, 4.95, 52.4]
GEOJSON = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "geometry": {
                "type": "Polygon",
                "coordinates": [
                    [[4.8 + i / 50, 52.3], [4.82 + i / 50, 52.3], [4.81 + i / 50, 52.32], [4.8 + i / 50, 52.3]]
                ],
            },
            "properties": {"name": f"Zone {i}", "people": 100 * i},
        }
        for i in range(5)
    ],
}
DYNAMIC_MAP = {
    "title": "Trip",
    "markers": [{"position": [4.9, 52.37], "label": "Dam"}, {"position": [5.12, 52.09], "label": "Utrecht Centraal"}],
    "polygons": [{"coordinates": [[4.8, 52.3], [4.95, 52.3], [4.9, 52.4]], "label": "Delivery zone"}],
    "routePlans": [{"locations": [AMSTERDAM, BERLIN], "label": "To Berlin"}],
}
# Every widget tool: its arguments and the backend that lists it.
CALLS = {
    **{tool: (args, "tomtom-orbis-maps") for tool, args, *_ in PLACE_TOOLS},
    "tomtom-traffic": ({"bbox": TRAFFIC_BOX}, "tomtom-orbis-maps"),
    "tomtom-dynamic-map": (DYNAMIC_MAP, "tomtom-orbis-maps"),
    "tomtom-data-viz": (
        {"geojson": json.dumps(GEOJSON), "layers": [{"type": "choropleth", "color_property": "people"}]},
        "tomtom-orbis-maps",
    ),
    "tomtom-optimize-waypoints": ({"stops": STOPS}, "tomtom-maps"),
}
DARK = {"theme": "dark", "displayMode": "fullscreen", "containerDimensions": {"width": 1000, "height": 700}}


@pytest.fixture(scope="module")
def maps_backend() -> Iterator[TomTomStub]:
    """TomTom Maps (the backend that lists tomtom-optimize-waypoints), stubbed."""
    with TomTomStub() as stub:
        stub.route("POST", r"/routing/waypointoptimization/1", json_body=data("waypoint_optimization.json"))
        stub.route("GET", r"/routing/1/calculateRoute/.*/json", json_body=data("optimized_route.json"))
        yield stub


def host(browser, page_url: str, server: str, call: dict) -> dict:
    """Run the SDK host for one call; once the widget has reported: its state, `ping`'s answer,
    and its state after a host-context change (DARK) with the iframe resized to match."""

    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tiles = blank_tiles(context)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    try:
        page.goto(page_url)
        page.wait_for_function("typeof window.runSdkHost === 'function'")
        page.evaluate("(call) => window.runSdkHost(call)", {"server": f"{server}/mcp", **call})
        frame = reported_frame(page, console)
        state = "() => ({...window.tomtomWidget, reported: document.documentElement.dataset.reported,"
        state += " theme: document.documentElement.dataset.theme, mode: document.documentElement.dataset.displayMode,"
        state += " panel: document.getElementById('panel').hidden ? '' : document.getElementById('panel').innerText,"
        state += " labels: [...document.querySelectorAll('.label')].map((e) => e.textContent),"
        state += " legendBackground: getComputedStyle(document.getElementById('legend')).backgroundColor,"
        state += " canvas: (document.querySelector('canvas.maplibregl-canvas') || {}).clientWidth || 0})"
        before = frame.evaluate(state)
        ping = page.evaluate("window.pingApp()")
        page.evaluate("(changed) => window.changeContext(changed)", DARK)
        frame.wait_for_function(
            "() => document.documentElement.dataset.displayMode === 'fullscreen' && (!window.tomtomMap"
            " || window.tomtomWidget.view.width === 1000 && window.tomtomWidget.view.height === 700)",
            timeout=10_000,
        )
        after = frame.evaluate(state)
        after["inView"] = frame.evaluate(
            "() => { const m = window.tomtomMap, f = window.tomtomWidget.fit; if (!m || !f) return null;"
            " const c = m.getContainer(), a = m.project([f[0], f[1]]), b = m.project([f[2], f[3]]);"
            " const inside = (p) => p.x >= -1 && p.y >= -1 && p.x <= c.clientWidth + 1 && p.y <= c.clientHeight + 1;"
            " return inside(a) && inside(b); }"
        )
        return {
            "before": before,
            "after": after,
            "ping": ping,
            "sizes": page.evaluate("window.sizes"),
            "hostLog": page.evaluate("window.hostLog"),
            "tiles": tiles,
            "console": console,
        }
    finally:
        context.close()


def log_lines(log: str) -> list[dict]:
    return [json.loads(raw) for raw in log.splitlines() if raw.startswith("{")]


def reports(log: str, message: str) -> list[dict]:
    return [line for line in app_status_lines(log) if line["message"] == message]


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_every_widget_tool_in_the_sdk_host(browser, files, tomtom, maps_backend, sdk_host, tool):
    args, backend = CALLS[tool]
    stub = tomtom if backend == "tomtom-orbis-maps" else maps_backend
    env = {"TOMTOM_API_BASE_URL": stub.base_url, "WIDGET_MAPLIBRE_URL": f"{files}/maplibre/"}
    with server_process({**env, "TOMTOM_MAPS_BACKEND": backend}) as server:
        seen = host(browser, sdk_host, server, {"tool": tool, "args": {**args, "show_ui": True}})
    before, after = seen["before"], seen["after"]
    # The handshake, and the map drawn from the result's own data.
    assert seen["hostLog"][0] == "initialized", seen["hostLog"]
    assert (before["outcome"], before["source"], before["reported"]) == ("drawn", "inline", "drawn"), before
    assert before["features"] > 0 and before["canvas"] > 0 and before["panel"] == ""
    assert (before["theme"], before["mode"], before["protocol"]) == ("light", "inline", "2026-01-26")
    # ping is answered with an empty result.
    assert seen["ping"] == {"result": {}}
    # The context change: dark, fullscreen, the map filling the larger frame and fitting the data again.
    assert (after["theme"], after["mode"]) == ("dark", "fullscreen")
    assert after["canvas"] == 1000 and after["view"]["height"] == 700 and after["inView"], after["view"]
    assert after["legendBackground"] != before["legendBackground"]
    # Every size sent is a real size; the last one is the fullscreen frame's.
    assert seen["sizes"] and all(s["height"] > 0 and s["width"] > 0 for s in seen["sizes"]), seen["sizes"]
    assert seen["sizes"][0]["height"] == 440 and seen["sizes"][-1] == {"width": 1000, "height": 700}
    # The app-only calls, proxied by AppBridge to the server.
    assert "tools/call tomtom-get-map-key" in seen["hostLog"]
    assert "tools/call tomtom-report-app-status" in seen["hostLog"]
    assert any(t["method"] == "GET" for t in seen["tiles"]), "the map key reached the tiles"
    # The report names the call that delivered the data (its request id, the funnel's join key).
    log = server_process.last_log
    (delivered,), (drawn,) = reports(log, "App data"), reports(log, "App drawn")
    (call,) = [line for line in log_lines(log) if line.get("message") == "Tool call" and line["tool"] == tool]
    assert (drawn["tool"], drawn["client"], drawn["features"]) == (tool, "SDK Host", before["features"])
    assert drawn["delivery_request_id"] == delivered["request_id"] == call["request_id"]


def test_a_cancelled_call_is_reported_with_its_reason(browser, files, tomtom, maps_backend, sdk_host):
    call = {
        "tool": "tomtom-routing",
        "args": {"locations": [AMSTERDAM, BERLIN], "show_ui": True},
        "cancel": "user action",
    }
    with serve(tomtom, files) as server:
        seen = host(browser, sdk_host, server, call)
    before = seen["before"]
    assert (before["outcome"], before["tool"], before["reported"]) == ("cancelled", "tomtom-routing", "cancelled")
    assert before["panel"] == "The request was cancelled.\n\nReason: user action"
    (cancelled,) = reports(server_process.last_log, "App cancelled")
    assert (cancelled["tool"], cancelled["reason"], cancelled["client"]) == (
        "tomtom-routing",
        "user action",
        "SDK Host",
    )


def test_the_dynamic_map_shows_the_users_names(browser, files, tomtom, maps_backend, sdk_host):
    with serve(tomtom, files) as server:
        seen = host(browser, sdk_host, server, {"tool": "tomtom-dynamic-map", "args": DYNAMIC_MAP})
    before = seen["before"]
    assert before["labels"] == ["Dam", "Utrecht Centraal"]
    assert "Delivery zone" in before["legend"] and "To Berlin" in before["legend"]
    assert not any(entry.startswith("Area searched") for entry in before["legend"]), before["legend"]


def test_a_choropleth_has_a_legend(browser, files, tomtom, maps_backend, sdk_host):
    args, _ = CALLS["tomtom-data-viz"]
    with serve(tomtom, files) as server:
        seen = host(browser, sdk_host, server, {"tool": "tomtom-data-viz", "args": args})
    assert seen["before"]["legend"] == ["people: 0 \N{EN DASH} 400"]


def incidents(count: int) -> dict:
    """A traffic answer with `count` incidents in TRAFFIC_BOX: points and lines of every magnitude."""
    items = []
    for i in range(count):
        lon, lat = 4.81 + (i % 25) * 0.005, 52.335 + (i // 25) * 0.006
        point = i % 3 == 0
        geometry = (
            {"type": "Point", "coordinates": [lon, lat]}
            if point
            else {"type": "LineString", "coordinates": [[lon, lat], [lon + 0.003, lat + 0.002]]}
        )
        properties = {
            "id": f"i{i}",
            "iconCategory": 6,
            "magnitudeOfDelay": i % 5,
            "from": f"A{i}",
            "to": f"B{i}",
            "delay": 60 * (i % 5),
            "length": 300,
        }
        items.append({"type": "Feature", "geometry": geometry, "properties": properties})
    return {"incidents": items}


def test_traffic_draws_every_listed_incident_by_severity(browser, files, tomtom, maps_backend, sdk_host):
    tomtom.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=incidents(250), times=2)
    with serve(tomtom, files) as server:
        listed = host(
            browser,
            sdk_host,
            server,
            {"tool": "tomtom-traffic", "args": {"bbox": TRAFFIC_BOX, "maxResults": 250, "show_ui": True}},
        )
        capped = host(
            browser, sdk_host, server, {"tool": "tomtom-traffic", "args": {"bbox": TRAFFIC_BOX, "show_ui": True}}
        )
    assert (listed["before"]["incidents"], listed["before"]["features"]) == (250, 251)  # and the box
    assert capped["before"]["incidents"] == 100 and "the 100 most severe of 250" in capped["before"]["summary"]
    legend = capped["before"]["legend"]
    for entry in ["Major delay", "Closure or indefinite delay", "Area asked about"]:
        assert entry in legend, legend


def test_without_server_tools_the_map_draws_from_the_result_and_says_what_it_misses(
    browser, files, tomtom, maps_backend, sdk_host
):
    call = {"tool": "tomtom-routing", "args": {"locations": [AMSTERDAM, BERLIN], "show_ui": True}, "serverTools": False}
    with serve(tomtom, files) as server:
        seen = host(browser, sdk_host, server, call)
    before = seen["before"]
    assert (before["outcome"], before["source"], before["reported"]) == ("drawn", "inline", "unavailable")
    assert before["proxy"] is False and seen["tiles"] == []
    assert not any(entry.startswith("tools/call") for entry in seen["hostLog"])
    assert reports(server_process.last_log, "App drawn") == []


def test_an_error_result_names_its_tool_without_tool_info(browser, files, tomtom, maps_backend, sdk_host):
    call = {"tool": "tomtom-routing", "args": {"locations": [AMSTERDAM], "show_ui": True}}
    with serve(tomtom, files) as server:
        seen = host(browser, sdk_host, server, call)
    before = seen["before"]
    assert (before["outcome"], before["tool"], before["reported"]) == ("failed", "tomtom-routing", "failed")
    assert (
        before["panel"].startswith("Couldn't show the route: it needs at least two places.")
        and "_meta" not in before["panel"]
    )
    log = server_process.last_log
    (failed,) = reports(log, "App failed")
    assert (failed["tool"], failed["stage"]) == ("tomtom-routing", "result")
    # The error result named its call (`_meta`, issue #42): the report joins the error's delivery,
    # from the same client session.
    (delivered,) = reports(log, "App data")
    (call,) = [
        line for line in log_lines(log) if line.get("message") == "Tool call" and line["tool"] == "tomtom-routing"
    ]
    assert delivered["delivery"] == "error" and call["outcome"] == "invalid_arguments"
    assert failed["delivery_request_id"] == delivered["request_id"] == call["request_id"]
    assert failed["session"] == delivered["session"] == call["session"] and call["session"]
