"""What the browser tests share: Chromium's flags, the file server for host pages and MapLibre,
blank map tiles, and reading the server's app-status lines (fixtures: tests/widgets/conftest.py)."""

from __future__ import annotations

import base64
import json
import time
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import pytest

from tests.conftest import server_process
from tests.support.chromium import CHROMIUM
from tests.support.tomtom_stub import TomTomStub

HERE = Path(__file__).resolve().parent
JS = HERE / "js"
ARTIFACTS = HERE / "artifacts"
MAPLIBRE = JS / "node_modules" / "maplibre-gl" / "dist"
BLANK_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

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


def require_browser() -> None:
    """Skip the calling test module, with the reason, without Chromium or the npm packages."""
    if not CHROMIUM.is_file():
        pytest.skip("needs /usr/bin/chromium: apt-get install -y chromium", allow_module_level=True)
    if not (MAPLIBRE / "maplibre-gl.mjs").is_file():
        pytest.skip("needs MapLibre GL JS: make widget-deps (npm ci in tests/widgets/js)", allow_module_level=True)


ESBUILD = JS / "node_modules" / ".bin" / "esbuild"


def require_sdk_host() -> None:
    """Skip the calling test module, with the reason, without what the official-SDK host needs:
    Chromium and MapLibre (`require_browser`), the SDK's package and esbuild to bundle the host."""
    require_browser()
    if not (JS / "node_modules" / "@modelcontextprotocol" / "ext-apps").is_dir() or not ESBUILD.is_file():
        pytest.skip("needs @modelcontextprotocol/ext-apps and esbuild: make widget-deps", allow_module_level=True)


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


def blank_tiles(context) -> list[dict]:
    """Answer every api.tomtom.com request of a browser context with a blank tile; the requests."""
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
    return tiles


def reported_frame(page, console: list[str], seconds: float = 90):
    """The widget's frame once it has reported (`data-reported` set); fails naming what the
    widget and the console said when it has not within `seconds`."""
    from playwright.sync_api import Error as PlaywrightError

    deadline = time.monotonic() + seconds
    while True:
        frames = [f for f in page.frames if f != page.main_frame]
        try:
            reported = frames[0].evaluate("document.documentElement.dataset.reported || ''") if frames else ""
        except PlaywrightError:  # the frame is still navigating to its srcdoc
            reported = ""
        if reported:
            return frames[0]
        if time.monotonic() > deadline:
            widget = frames[0].evaluate("JSON.stringify({...window.tomtomWidget, input: null})") if frames else ""
            raise AssertionError(f"the widget never reported: {widget[:2000]}; console: {console}")
        time.sleep(0.2)


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
