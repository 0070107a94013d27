"""Widgets draw on any replica: a result from one server process, the widget's fetch answered by
another, and nothing kept between requests to miss.

The data-viz `data_url` is a local HTTPS server with its own certificate authority; both server
processes trust it through SSL_CERT_FILE and may reach loopback through DATA_VIZ_ALLOWED_NETWORKS
(production allows public addresses only). The download path is otherwise the production one:
system resolver, pinned address, certificate checked.
"""

from __future__ import annotations

import json
import re

import pytest

from protocol.appdata import APP_DATA_KEY, CALLABLE_KEY
from tests.conftest import apps_extension, http_client, server_process
from tests.support.https_server import LocalHttps
from tests.support.tomtom_stub import TomTomStub
from tools.shaping.appdata import decode

pytestmark = pytest.mark.live_server_process

LAYERS = [{"type": "clusters"}]


def geojson(features: int) -> str:
    rows = [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [4 + i * 1e-4, 52 + (i % 97) * 1e-3]},
            "properties": {"id": f"feature-{i:06d}", "value": (i * 7919) % 1000},
        }
        for i in range(features)
    ]
    return json.dumps({"type": "FeatureCollection", "features": rows})


def app_status(log: str) -> list[dict]:
    events = [json.loads(line) for line in log.splitlines() if '"app_status"' in line]
    return [event for event in events if event.get("event") == "app_status"]


@pytest.fixture(scope="module")
def data_host():
    with LocalHttps(["localhost"]) as https:
        https.files["/small.geojson"] = (200, geojson(50).encode(), {}, 0.0)
        https.files["/large.geojson"] = (200, geojson(20_000).encode(), {}, 0.0)
        yield https


def replica_env(stub: TomTomStub, https: LocalHttps) -> dict[str, str]:
    return {
        "TOMTOM_API_BASE_URL": stub.base_url,
        "SSL_CERT_FILE": str(https.ca_file),
        "DATA_VIZ_ALLOWED_NETWORKS": "127.0.0.0/8",
    }


async def call(url: str, name: str, arguments: dict):
    async with http_client(url + "/mcp", mode="legacy", extensions=[apps_extension()]) as client:
        return await client.call_tool(name, arguments)


async def test_a_fetch_answered_by_another_replica(data_host):
    large = {"data_url": f"https://127.0.0.1:{data_host.port}/large.geojson", "layers": LAYERS}
    small = {"data_url": f"https://127.0.0.1:{data_host.port}/small.geojson", "layers": LAYERS}
    with TomTomStub() as stub:
        env = replica_env(stub, data_host)
        with server_process(env) as first:
            with server_process(env) as second:
                inline = await call(first, "tomtom-data-viz", small)
                too_large = await call(first, "tomtom-data-viz", large)
                fetched = await call(
                    second,
                    "tomtom-get-app-data",
                    {"tool": "tomtom-data-viz", "arguments": large, "reason": "too_large"},
                )
                dropped = await call(
                    second,
                    "tomtom-get-app-data",
                    {"tool": "tomtom-data-viz", "arguments": small, "reason": "host_dropped"},
                )
            second_log = server_process.last_log
        first_log = server_process.last_log
    assert not inline.is_error and not too_large.is_error and not fetched.is_error and not dropped.is_error
    assert decode(inline.meta[APP_DATA_KEY])["data_viz"]["geojson"] == geojson(50)
    assert re.fullmatch(r"[0-9a-f]{16}", too_large.meta.pop("request_id"))
    assert too_large.meta.pop(CALLABLE_KEY) == ["tomtom-routing", "tomtom-poi-search", "tomtom-reachable-range"]
    assert too_large.meta == {"show_ui": True, "tool": "tomtom-data-viz", "delivery": "too_large"}
    assert json.loads(too_large.content[0].text)["features"] == 20_000
    assert decode(json.loads(fetched.content[0].text)["app_data"])["data_viz"]["geojson"] == geojson(20_000)
    assert decode(json.loads(dropped.content[0].text)["app_data"]) == decode(inline.meta[APP_DATA_KEY])
    deliveries = [(e["message"], e.get("delivery")) for e in app_status(first_log)]
    assert deliveries == [("App data", "inline"), ("App data", "too_large")], "data-viz too large is no warning"
    messages = [(e["message"], e.get("source")) for e in app_status(second_log)]
    assert messages == [("App data fetched", "data_url"), ("App data fetched: host dropped it", "data_url")]
    assert len(data_host.seen) == 4, "each replica downloaded what it was asked for, nothing was cached"


async def test_a_routing_widget_needs_no_second_request(data_host):
    from tests.conftest import data

    with TomTomStub() as stub:
        stub.route("POST", r"/maps/orbis/routing/routes/calculate", json_body=data("route_v3.json"))
        with server_process(replica_env(stub, data_host)) as first:
            result = await call(first, "tomtom-routing", {"locations": [[4.9, 52.3], [13.4, 52.5]], "show_ui": True})
    (route,) = decode(result.meta[APP_DATA_KEY])["routes"]  # Orbis v3's route, in the shape the widget reads
    assert (route["summary"], route["legs"]) == (
        data("route.json")["routes"][0]["summary"],
        data("route.json")["routes"][0]["legs"],
    )
    assert len(stub.requests) == 1
