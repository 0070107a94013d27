"""Fixtures of the browser tests: the file server, the TomTom stub, headless Chromium and the
official-SDK host page."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from http.server import ThreadingHTTPServer
from typing import Any

import pytest

from tests.conftest import data
from tests.support.chromium import launched
from tests.support.tomtom_stub import TomTomStub
from tests.widgets.chromium import ARTIFACTS, ESBUILD, HERE, JS, _Files, many_places


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
        stub.route("POST", r"/maps/orbis/routing/routes/calculate", json_body=data("route_v3.json"))  # Routing v3
        stub.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=data("traffic.json"))
        stub.route("GET", r"/maps/orbis/places/geocode", json_body=data("geocode_v2.json"))
        stub.route("GET", r"/maps/orbis/places/reverseGeocode", json_body=data("reverse_geocode_v2.json"))
        stub.route("GET", r"/maps/orbis/places/search/.*", json_body=data("poi_search.json"))
        stub.route("GET", r"/maps/orbis/places/search/many.*", json_body=many_places(60))
        stub.route("GET", r"/maps/orbis/places/poiSearch/.*", json_body=data("poi_search.json"))
        stub.route("GET", r"/maps/orbis/places/nearbySearch/.*", json_body=data("ev_search.json"))
        stub.route("POST", r"/maps/orbis/places/geometrySearch/.*", json_body=data("poi_search.json"))
        stub.route("POST", r"/maps/orbis/places/searchAlongRoute/.*", json_body=data("along_route.json"))
        stub.route("GET", r"/maps/orbis/routing/calculateReachableRange/.*", json_body=data("reachable_range.json"))
        stub.route("POST", r"/maps/orbis/routing/calculateLongDistanceEVRoute/.*", json_body=data("ev_route.json"))
        yield stub


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per widget test module (tests/support/chromium.py)."""
    with launched() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def sdk_host(files: str) -> str:
    """The official-SDK host page (sdk_host.html), its script bundled from node_modules (pinned)
    for this run; modules using it call `require_sdk_host()` first."""
    ARTIFACTS.mkdir(exist_ok=True)
    bundle = ARTIFACTS / "sdk_host.bundle.js"
    command = [str(ESBUILD), "sdk_host.js", "--bundle", "--format=esm", "--platform=browser", f"--outfile={bundle}"]
    subprocess.run(command, cwd=JS, check=True, capture_output=True, timeout=120)
    return f"{files}/sdk_host.html"
