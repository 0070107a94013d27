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

import base64
import json
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CANARY_KEY, data, server_process
from tests.support.tomtom_stub import TomTomStub

pytestmark = [pytest.mark.browser, pytest.mark.live_server_process]

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
MAPLIBRE = HERE / "js" / "node_modules" / "maplibre-gl" / "dist"
BLANK_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

if not CHROMIUM.is_file():
    pytest.skip("needs /usr/bin/chromium: apt-get install -y chromium", allow_module_level=True)
if not (MAPLIBRE / "maplibre-gl.mjs").is_file():
    pytest.skip("needs MapLibre GL JS: make widget-deps (npm ci in tests/widgets/js)", allow_module_level=True)


class _Files(SimpleHTTPRequestHandler):
    """The host page at /host.html and MapLibre at /maplibre/, readable from any origin."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript", ".js": "text/javascript"}

    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0]
        if path.startswith("/maplibre/"):
            return str(MAPLIBRE / path.removeprefix("/maplibre/"))
        return str(HERE / path.lstrip("/"))

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def files() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Files, directory=str(HERE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def tomtom() -> Iterator[TomTomStub]:
    with TomTomStub() as stub:
        stub.route("GET", r"/maps/orbis/routing/calculateRoute/.*", json_body=data("route.json"))
        stub.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=data("traffic.json"))
        stub.route("GET", r"/maps/orbis/places/geocode/.*", json_body=data("geocode.json"))
        stub.route("GET", r"/maps/orbis/places/reverseGeocode/.*", json_body=data("reverse_geocode.json"))
        stub.route("GET", r"/maps/orbis/places/search/.*", json_body=data("poi_search.json"))
        stub.route("GET", r"/maps/orbis/places/search/many.*", json_body=many_places(60))
        stub.route("GET", r"/maps/orbis/places/poiSearch/.*", json_body=data("poi_search.json"))
        stub.route("GET", r"/maps/orbis/places/nearbySearch/.*", json_body=data("ev_search.json"))
        stub.route("POST", r"/maps/orbis/places/geometrySearch/.*", json_body=data("poi_search.json"))
        stub.route("POST", r"/maps/orbis/places/searchAlongRoute/.*", json_body=data("along_route.json"))
        stub.route("GET", r"/maps/orbis/routing/calculateReachableRange/.*", json_body=data("reachable_range.json"))
        stub.route("POST", r"/maps/orbis/routing/calculateLongDistanceEVRoute/.*", json_body=data("ev_route.json"))
        yield stub


def many_places(count: int) -> dict:
    """A search answer with `count` places around Amsterdam (a long list: the map clusters it)."""
    results = [
        {
            "type": "POI",
            "id": f"many-{i}",
            "poi": {"name": f"Cafe {i}"},
            "address": {"freeformAddress": f"Straat {i}, Amsterdam"},
            "position": {"lat": 52.33 + (i % 10) * 0.008, "lon": 4.84 + (i // 10) * 0.02},
        }
        for i in range(count)
    ]
    return {"summary": {"numResults": count, "totalResults": count}, "results": results}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


def run_widget(
    browser, files: str, server: str, tool: str, args: dict, *, drop_meta: bool = False, probe: list | None = None
) -> dict:
    """Host the widget for one tool call; the widget's own state once it has reported. With
    `probe` ([lon, lat] of a marker), also what hovering over it and clicking it show, and a
    screenshot in tests/widgets/artifacts/<tool>.png."""
    from playwright.sync_api import Error as PlaywrightError

    context = browser.new_context()
    tiles: list[dict] = []

    def tile(route) -> None:
        request = route.request
        tiles.append({"url": request.url, "headers": request.headers, "method": request.method})
        cors = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "*"}
        if request.method == "OPTIONS":
            route.fulfill(status=204, headers=cors)
        else:
            route.fulfill(status=200, body=BLANK_PNG, headers={**cors, "Content-Type": "image/png"})

    context.route("https://api.tomtom.com/**", tile)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    try:
        page.goto(f"{files}/host.html?server={server}/mcp")
        host = page.evaluate("(call) => window.runHost(call)", {"tool": tool, "args": args, "dropMeta": drop_meta})
        deadline = time.monotonic() + 90
        while True:
            frames = [f for f in page.frames if f != page.main_frame]
            try:
                reported = frames[0].evaluate("document.documentElement.dataset.reported || ''") if frames else ""
            except PlaywrightError:  # the frame is still navigating to its srcdoc
                reported = ""
            if reported:
                break
            assert time.monotonic() < deadline, f"the widget never reported; console: {console}"
            time.sleep(0.2)
        widget = frames[0].evaluate(
            "({...window.tomtomWidget, reported: document.documentElement.dataset.reported,"
            " panel: document.getElementById('panel').hidden ? '' : document.getElementById('panel').innerText,"
            " canvas: !!document.querySelector('canvas.maplibregl-canvas')})"
        )
        if probe is not None:
            widget.update(interact(page, frames[0], tool, probe))
        return {**widget, "host": host, "hostLog": page.evaluate("window.hostLog"), "tiles": tiles, "console": console}
    finally:
        context.close()


def interact(page, frame, tool: str, position: list) -> dict:
    """Hover over the marker at `position`, then click it: the tooltip's and the card's text."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#app").screenshot(path=str(ARTIFACTS / f"{tool}.png"))
    box = page.locator("#app").bounding_box()
    x, y = frame.evaluate("(p) => { const at = window.tomtomMap.project(p); return [at.x, at.y]; }", position)
    inside = 0 <= x <= box["width"] and 0 <= y <= box["height"]
    page.mouse.move(box["x"] + x, box["y"] + y)
    frame.wait_for_selector(".tooltip", timeout=5000)
    tooltip = frame.inner_text(".tooltip")
    page.mouse.click(box["x"] + x, box["y"] + y)
    frame.wait_for_selector(".card", timeout=5000)
    return {"inView": inside, "tooltip": tooltip, "card": frame.inner_text(".card")}


def app_status_lines(log: str) -> list[dict]:
    lines = []
    for raw in log.splitlines():
        if '"app_status"' in raw:
            event = json.loads(raw)
            if event.get("event") == "app_status":
                lines.append(event)
    return lines


def serve(tomtom: TomTomStub, files: str):
    return server_process({"TOMTOM_API_BASE_URL": tomtom.base_url, "WIDGET_MAPLIBRE_URL": f"{files}/maplibre/"})


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
    (drawn,) = [line for line in app_status_lines(server_process.last_log) if line["message"] == "App drawn"]
    assert (drawn["tool"], drawn["features"], drawn["source"]) == ("tomtom-dynamic-map", 10, "inline")
    assert drawn["client"] == "Browser Host" and "Chrome" in drawn["user_agent"]
    tile = next(t for t in widget["tiles"] if t["method"] == "GET")
    assert "/maps/orbis/map-display/tile/" in tile["url"] and f"key={CANARY_KEY}" in tile["url"]
    assert tile["headers"]["tomtom-user-agent"] == "TomTomMCPAPPHttp/0.1.0 Browser%20Host"


def test_a_dropped_meta_shows_an_error_and_reports_it(browser, files, tomtom):
    args = {"locations": [[4.9041, 52.3676], [13.405, 52.52]], "show_ui": True}
    with serve(tomtom, files) as server:
        widget = run_widget(browser, files, server, "tomtom-routing", args, drop_meta=True)
    assert "com.tomtom/app-data" in widget["host"]["metaKeys"], "the server did send the data"
    assert (widget["outcome"], widget["stage"], widget["reported"]) == ("failed", "result", "failed")
    assert "The map could not be drawn." in widget["panel"] and "dropped" in widget["panel"]
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


def test_traffic_draws_live_traffic_for_the_bbox(browser, files, tomtom):
    with serve(tomtom, files) as server:
        widget = run_widget(
            browser, files, server, "tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4], "show_ui": True}
        )
    assert (widget["outcome"], widget["features"], widget["source"]) == ("drawn", 1, "tool_input"), widget
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


AMSTERDAM, BERLIN = [4.9041, 52.3676], [13.405, 52.52]
PLACE_TOOLS = [
    # tool, arguments, the marker to hover and click, its name, what its card says, the legend
    ("tomtom-geocode", {"query": "Dam 1"}, [4.89273, 52.37314], "Dam 1, 1012 JS Amsterdam", [], ["Place"]),
    (
        "tomtom-reverse-geocode",
        {"position": [4.8927, 52.3731]},
        [4.892734, 52.373141],
        "Dam 1, 1012 JS Amsterdam",
        [],
        ["Place", "Point looked up"],
    ),
    (
        "tomtom-fuzzy-search",
        {"query": "pharmacy"},
        [4.895322, 52.372581],
        "Apotheek Centrum",
        ["Distance", "310 m"],
        ["Place"],
    ),
    (
        "tomtom-poi-search",
        {"query": "pharmacy", "position": AMSTERDAM},
        [4.895322, 52.372581],
        "Apotheek Centrum",
        ["Address"],
        ["Place"],
    ),
    (
        "tomtom-poi-search",  # no query: the nearest around `position`
        {"position": AMSTERDAM, "poiCategories": [7309]},
        [4.904333, 52.366486],
        "Nieuwe Herengracht Charging",
        ["Distance", "125 m"],
        ["Charging stop"],
    ),
    (
        "tomtom-ev-search",
        {"position": AMSTERDAM},
        [4.904333, 52.366486],
        "Nieuwe Herengracht Charging",
        ["Connectors", "50 kW"],
        ["Charging stop"],
    ),
    (
        "tomtom-area-search",
        {"query": "pharmacy", "center": AMSTERDAM, "radius": 2000},
        [4.895322, 52.372581],
        "Apotheek Centrum",
        ["Address"],
        ["Place", "Area searched"],
    ),
    (
        "tomtom-search-along-route",
        {"origin": AMSTERDAM, "destination": BERLIN, "query": "petrol station"},
        [4.95527, 52.29611],
        "Shell Holendrecht",
        ["Detour", "+1 min"],
        ["Route", "Place", "Start", "Destination"],
    ),
    (
        "tomtom-reachable-range",
        {"origin": AMSTERDAM, "timeBudgetInSec": 1800},
        AMSTERDAM,
        "Origin",
        [],
        ["Reachable area", "Start"],
    ),
    (
        "tomtom-ev-routing",
        {"locations": [AMSTERDAM, BERLIN], "maxChargeInkWh": 80, "currentChargeInkWh": 60},
        [6.430489, 52.252729],
        "bp pulse Holten",
        ["Power", "150 kW", "Charge to", "72.3 kWh"],
        ["Route", "Charging stop", "Start", "Destination"],
    ),
    (
        "tomtom-routing",
        {"locations": [AMSTERDAM, BERLIN]},
        BERLIN,
        "Route: destination",
        [],
        ["Route", "Traffic delay"],
    ),
]


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
    (drawn,) = [line for line in app_status_lines(server_process.last_log) if line["message"] == "App drawn"]
    assert (drawn["tool"], drawn["features"]) == (tool, widget["features"])


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
