"""The map widget in a real browser: headless Chromium, a minimal MCP Apps host, a real server.

The host page (tests/widgets/host.html) calls the tool on a server process (TomTom is the stub),
embeds the widget it read with resources/read, and relays the MCP Apps messages. MapLibre GL JS
comes from tests/widgets/js/node_modules (npm, pinned) on a local HTTP server: no network.
Requests to api.tomtom.com (map and traffic tiles) are answered by the test with a blank tile.

Needs `/usr/bin/chromium` (apt: chromium) and `make widget-deps` (npm ci in tests/widgets/js);
skipped, with the reason, without them. Every tool with a place leaves a screenshot of its map in
tests/widgets/artifacts/<tool>.png (git-ignored) for a person to look at.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import CANARY_KEY, server_process
from tests.widgets.chromium import (
    AMSTERDAM,
    ARTIFACTS,
    BERLIN,
    PLACE_TOOLS,
    app_status_lines,
    blank_tiles,
    reported_frame,
    require_browser,
    serve,
)

pytestmark = [pytest.mark.browser, pytest.mark.live_server_process]

require_browser()
DELIVERED_DRAWN = ("App data", "App drawn")


def run_widget(
    browser, files: str, server: str, tool: str, args: dict, *, drop_meta: bool = False, probe: list | None = None
) -> dict:
    """Host the widget for one tool call; the widget's own state once it has reported. With
    `probe` ([lon, lat] of a marker), also what hovering over it and clicking it show, and a
    screenshot in tests/widgets/artifacts/<tool>.png."""

    context = browser.new_context()
    tiles = blank_tiles(context)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    try:
        page.goto(f"{files}/host.html?server={server}/mcp")
        host = page.evaluate("(call) => window.runHost(call)", {"tool": tool, "args": args, "dropMeta": drop_meta})
        frame = reported_frame(page, console)
        widget = frame.evaluate(
            "({...window.tomtomWidget, reported: document.documentElement.dataset.reported,"
            " panel: document.getElementById('panel').hidden ? '' : document.getElementById('panel').innerText,"
            " canvas: !!document.querySelector('canvas.maplibregl-canvas'),"
            " attribution: (document.querySelector('.maplibregl-ctrl-attrib-inner') || {}).textContent || '',"
            " detail: (document.querySelector('#panel code') || {}).textContent || ''})"
        )
        if probe is not None:
            widget.update(interact(page, frame, tool, probe))
        widget["ping"] = page.evaluate("window.hostRequest('ping', {})")
        page.evaluate("window.hostNotify('ui/notifications/host-context-changed', {theme: 'dark', displayMode: 'pip'})")
        frame.wait_for_function("document.documentElement.dataset.displayMode === 'pip'", timeout=5000)
        widget["dark"] = frame.evaluate("document.documentElement.dataset.theme") == "dark"
        return {**widget, "host": host, "hostLog": page.evaluate("window.hostLog"), "tiles": tiles, "console": console}
    finally:
        context.close()


def interact(page, frame, tool: str, position: list) -> dict:
    """Hover over the marker at `position`, then click it: the tooltip's and the card's text."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#app").screenshot(path=str(ARTIFACTS / f"{tool}.png"))
    box = page.locator("#app").bounding_box()
    # As a user would: point at the marker once the map has settled and drawn it there.
    frame.wait_for_function(
        "(p) => { const map = window.tomtomMap; const at = map.project(p);"
        " return map.loaded() && !map.isMoving() && map.queryRenderedFeatures([at.x, at.y]).length > 0; }",
        arg=position,
        timeout=5000,
    )
    x, y = frame.evaluate("(p) => { const at = window.tomtomMap.project(p); return [at.x, at.y]; }", position)
    inside = 0 <= x <= box["width"] and 0 <= y <= box["height"]
    page.mouse.move(box["x"] + x, box["y"] + y)
    frame.wait_for_selector(".tooltip", timeout=5000)
    tooltip = frame.inner_text(".tooltip")
    page.mouse.click(box["x"] + x, box["y"] + y)
    frame.wait_for_selector(".card", timeout=5000)
    return {"inView": inside, "tooltip": tooltip, "card": frame.inner_text(".card")}


def test_the_dynamic_map_draws_and_reports(browser, files, tomtom):
    args = {
        "title": "Trip",
        "markers": [{"position": [4.9, 52.37], "label": "Dam"}, {"position": [5.12, 52.09]}, {"position": [6.1, 52.5]}],
        "lines": [{"coordinates": [[4.9, 52.37], [5.12, 52.09]], "color": "#ff0000"}],
        "polygons": [{"coordinates": [[4.8, 52.3], [4.95, 52.3], [4.9, 52.4]], "label": "Zone"}],
        "routePlans": [{"locations": [[4.9041, 52.3676], [13.405, 52.52]], "label": "To Berlin"}],
    }
    with serve(tomtom, files) as server:
        widget = run_widget(browser, files, server, "tomtom-dynamic-map", args)
    # 3 markers + 1 line + 1 area + the route: its line, 2 traffic sections, start and end.
    assert widget["outcome"] == "drawn", widget
    assert (widget["features"], widget["source"], widget["reported"]) == (10, "inline", "drawn")
    assert widget["canvas"] and widget["panel"] == ""
    assert "tools/call tomtom-get-app-data" not in widget["hostLog"]
    assert widget["ping"] == {"result": {}} and widget["dark"], "ping answered, the host's context applied"
    log = server_process.last_log
    ((delivered,), (drawn,)) = [
        [line for line in app_status_lines(log) if line["message"] == m] for m in DELIVERED_DRAWN
    ]
    assert (drawn["tool"], drawn["features"], drawn["source"]) == ("tomtom-dynamic-map", 10, "inline")
    assert drawn["delivery_request_id"] == delivered["request_id"]
    assert drawn["client"] == "Browser Host" and "Chrome" in drawn["user_agent"]
    tile = next(t for t in widget["tiles"] if t["method"] == "GET")
    assert "/maps/orbis/map-display/tile/" in tile["url"] and f"key={CANARY_KEY}" in tile["url"]
    assert tile["headers"]["tomtom-user-agent"] == "TomTomMCPAPPHttp/0.1.0 Browser%20Host"
    assert widget["attribution"] == "© TomTom, © OpenStreetMap"  # the Orbis tiles' credit, as results say it


def test_a_dropped_meta_shows_an_error_and_reports_it(browser, files, tomtom):
    args = {"locations": [[4.9041, 52.3676], [13.405, 52.52]], "show_ui": True}
    with serve(tomtom, files) as server:
        widget = run_widget(browser, files, server, "tomtom-routing", args, drop_meta=True)
    assert "com.tomtom/app-data" in widget["host"]["metaKeys"], "the server did send the data"
    assert (widget["outcome"], widget["stage"], widget["reported"]) == ("failed", "result", "failed")
    assert "The map could not be drawn." in widget["panel"] and "did not arrive with the answer" in widget["panel"]
    assert "_meta" not in widget["panel"], "no protocol words for the person looking at the map"
    assert widget["detail"].startswith("result: ") and "dropped the result's _meta" in widget["detail"]
    assert "tools/call tomtom-routing" not in widget["hostLog"], "a TomTom tool never runs again for its widget"
    (failed,) = [line for line in app_status_lines(server_process.last_log) if line["message"] == "App failed"]
    assert (failed["tool"], failed["stage"], failed["source"]) == ("tomtom-routing", "result", "none")
    assert "dropped" in failed["error"]


def test_data_viz_fetches_its_data_again_when_the_host_drops_it(browser, files, tomtom):
    geojson = json.dumps(
        {
            "type": "FeatureCollection",
            "features": [
                {
                    "type": "Feature",
                    "geometry": {"type": "Point", "coordinates": [4.9 + i / 100, 52.3]},
                    "properties": {"v": i},
                }
                for i in range(25)
            ],
        }
    )
    args = {"geojson": geojson, "layers": [{"type": "heatmap"}, {"type": "markers", "color_property": "v"}]}
    with serve(tomtom, files) as server:
        widget = run_widget(browser, files, server, "tomtom-data-viz", args, drop_meta=True)
    assert (widget["outcome"], widget["features"], widget["source"]) == ("drawn", 25, "tool_input"), widget
    assert "tools/call tomtom-get-app-data" in widget["hostLog"]
    messages = [line["message"] for line in app_status_lines(server_process.last_log)]
    assert messages == ["App data", "App data fetched: host dropped it", "App drawn"]


def test_traffic_draws_its_incidents_over_live_traffic_for_the_bbox(browser, files, tomtom):
    with serve(tomtom, files) as server:
        widget = run_widget(
            browser, files, server, "tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4], "show_ui": True}
        )
    # The 6 incidents of the answer and the box asked about.
    assert (widget["outcome"], widget["features"], widget["source"]) == ("drawn", 7, "inline"), widget
    assert widget["incidents"] == 6
    log = server_process.last_log
    ((delivered,), (drawn,)) = [
        [line for line in app_status_lines(log) if line["message"] == m] for m in DELIVERED_DRAWN
    ]
    assert drawn["delivery_request_id"] == delivered["request_id"]
    urls = [t["url"] for t in widget["tiles"] if t["method"] == "GET"]
    assert any("/maps/orbis/traffic/tile/flow/" in url for url in urls)
    assert any("/maps/orbis/traffic/tile/incidents/" in url for url in urls)


def test_without_a_key_the_map_draws_with_no_tiles(browser, files, tomtom):
    """Hosted, and the caller sent no key: tomtom-get-map-key refuses, the data still draws."""
    args = {"geojson": json.dumps({"type": "Point", "coordinates": [4.9, 52.37]}), "layers": [{"type": "markers"}]}
    env = {"TOMTOM_API_BASE_URL": tomtom.base_url, "WIDGET_MAPLIBRE_URL": f"{files}/maplibre/", "MCP_HOSTED": "true"}
    with server_process(env) as server:
        widget = run_widget(browser, files, server, "tomtom-data-viz", args)
    assert (widget["outcome"], widget["features"], widget["source"]) == ("drawn", 1, "inline"), widget
    assert "tools/call tomtom-get-map-key" in widget["hostLog"]
    assert widget["tiles"] == []
    log = server_process.last_log
    ((delivered,), (drawn,)) = [
        [line for line in app_status_lines(log) if line["message"] == m] for m in DELIVERED_DRAWN
    ]
    assert drawn["delivery_request_id"] == delivered["request_id"]


@pytest.mark.parametrize(
    ("tool", "args", "marker", "name", "card", "legend"), PLACE_TOOLS, ids=[row[0] for row in PLACE_TOOLS]
)
def test_every_tool_with_a_place_draws_its_map(browser, files, tomtom, tool, args, marker, name, card, legend):
    with serve(tomtom, files) as server:
        widget = run_widget(browser, files, server, tool, {**args, "show_ui": True}, probe=marker)
    assert (widget["outcome"], widget["source"], widget["reported"]) == ("drawn", "inline", "drawn"), widget
    assert widget["features"] > 0 and widget["canvas"] and widget["panel"] == ""
    assert widget["inView"], "the view fits the data"
    assert widget["tooltip"] == name
    assert widget["card"].startswith(name)
    for text in card:
        assert text in widget["card"], widget["card"]
    for entry in legend:
        assert any(shown.startswith(entry) for shown in widget["legend"]), widget["legend"]
    assert widget["ping"] == {"result": {}} and widget["dark"], "ping answered, the host's context applied"
    log = server_process.last_log
    ((delivered,), (drawn,)) = [
        [line for line in app_status_lines(log) if line["message"] == m] for m in DELIVERED_DRAWN
    ]
    assert (drawn["tool"], drawn["features"]) == (tool, widget["features"])
    assert drawn["delivery_request_id"] == delivered["request_id"], "the report names the call that delivered the data"


@pytest.mark.parametrize(
    ("tool", "args", "summary"),
    [
        ("tomtom-routing", {"locations": [AMSTERDAM, BERLIN]}, "Route: 657.0 km · 6 h 30 min · 7 min traffic delay"),
        (
            "tomtom-ev-routing",
            {"locations": [AMSTERDAM, BERLIN], "maxChargeInkWh": 80, "currentChargeInkWh": 60},
            "Route: 657.1 km · 7 h 01 min · 5 min traffic delay · 40 min charging",
        ),
        (
            "tomtom-search-along-route",
            {"origin": AMSTERDAM, "destination": BERLIN, "query": "petrol station"},
            "Route: 657.0 km",
        ),
    ],
)
def test_a_route_shows_its_distance_time_and_delay(browser, files, tomtom, tool, args, summary):
    with serve(tomtom, files) as server:
        widget = run_widget(browser, files, server, tool, {**args, "show_ui": True})
    assert widget["outcome"] == "drawn", widget
    assert widget["summary"].startswith(summary), widget["summary"]


def test_a_long_list_is_clustered(browser, files, tomtom):
    with serve(tomtom, files) as server:
        widget = run_widget(
            browser, files, server, "tomtom-fuzzy-search", {"query": "many", "limit": 60, "show_ui": True}
        )
    assert (widget["outcome"], widget["places"], widget["clustered"]) == ("drawn", 60, True), widget
    assert any(entry.startswith("Several places") for entry in widget["legend"])


def test_a_search_widget_without_its_data_fails_and_reports(browser, files, tomtom):
    with serve(tomtom, files) as server:
        widget = run_widget(
            browser, files, server, "tomtom-poi-search", {"query": "pharmacy", "show_ui": True}, drop_meta=True
        )
    assert (widget["outcome"], widget["stage"], widget["reported"]) == ("failed", "result", "failed")
    assert "The map could not be drawn." in widget["panel"]
    (failed,) = [line for line in app_status_lines(server_process.last_log) if line["message"] == "App failed"]
    assert (failed["tool"], failed["stage"]) == ("tomtom-poi-search", "result")
