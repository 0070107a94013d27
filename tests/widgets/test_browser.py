"""The map widget in a real browser: headless Chromium, a minimal MCP Apps host, a real server.

The host page (tests/widgets/host.html) calls the tool on a server process (TomTom is the stub),
embeds the widget it read with resources/read, and relays the MCP Apps messages. MapLibre GL JS
comes from tests/widgets/js/node_modules (npm, pinned) on a local HTTP server: no network.
Requests to api.tomtom.com (map and traffic tiles) are answered by the test with a blank tile.

Needs `/usr/bin/chromium` (apt: chromium) and `make widget-deps` (npm ci in tests/widgets/js);
skipped, with the reason, without them.
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
        yield stub


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


def run_widget(browser, files: str, server: str, tool: str, args: dict, *, drop_meta: bool = False) -> dict:
    """Host the widget for one tool call; the widget's own state once it has reported."""
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
        return {**widget, "host": host, "hostLog": page.evaluate("window.hostLog"), "tiles": tiles, "console": console}
    finally:
        context.close()


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
