"""The search family end to end: a real MCP client over Streamable HTTP, a real server process,
TomTom as the loopback stub."""

import json

import pytest

from tests.conftest import CANARY_KEY, data, http_client, server_process
from tests.support.tomtom_stub import TomTomStub

ORBIS = "/maps/orbis/places/"
FAMILY = {
    "tomtom-reverse-geocode": ("reverseGeocode", "reverse_geocode_v2.json", {"position": [4.9, 52.37]}),
    "tomtom-fuzzy-search": ("search/.*", "poi_search.json", {"query": "apotheek"}),
    "tomtom-poi-search": ("poiSearch/.*", "poi_search.json", {"query": "", "poiCategories": [7326]}),
    "tomtom-poi-categories": (r"poiCategories\.json", "poi_categories.json", {"filters": ["pharmacy"]}),
    "tomtom-ev-search": ("nearbySearch/.*", "ev_search.json", {"position": [4.9, 52.37]}),
}
"""Tool -> (Orbis path pattern after /maps/orbis/places/, our TomTom answer, arguments)."""


@pytest.fixture(scope="module")
def module_stub():
    with TomTomStub() as stub:
        yield stub


@pytest.fixture(scope="module")
def server(module_stub):
    with server_process({"TOMTOM_API_BASE_URL": module_stub.base_url}) as base:
        yield base


async def test_every_search_tool_over_http(server, module_stub):
    async with http_client(server + "/mcp") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, (path, answer, arguments) in FAMILY.items():
            assert listed[name].annotations.read_only_hint is True
            module_stub.clear()
            module_stub.route("GET", ORBIS + path, json_body=data(answer))
            result = await client.call_tool(name, arguments)
            assert result.is_error is False, result.content[0].text
            body = json.loads(result.content[0].text)
            listing = body.get("results", body.get("categories"))
            assert (body["returned"], body["truncated"]) == (len(listing), body["total"] > len(listing))
            assert module_stub.requests[0].api_key == CANARY_KEY
    assert json.loads(result.content[0].text)["availabilityNote"].startswith("Live availability is only offered")


async def test_ev_search_with_live_availability_on_tomtom_maps(server, module_stub):
    module_stub.clear()
    module_stub.route("GET", r"/search/2/nearbySearch/\.json", json_body=data("ev_search.json"))
    module_stub.route("GET", r"/search/2/chargingAvailability\.json", json_body=data("charging_availability.json"))
    async with http_client(server + "/mcp", headers={"tomtom-maps-backend": "tomtom-maps"}) as client:
        result = await client.call_tool("tomtom-ev-search", {"position": [4.9041, 52.3676], "limit": 2})
    body = json.loads(result.content[0].text)
    assert body["results"][0]["availability"] == {"available": 1, "occupied": 1, "outOfService": 1}
    assert [r.path for r in module_stub.requests] == [
        "/search/2/nearbySearch/.json",
        "/search/2/chargingAvailability.json",
    ]
    assert "availabilityNote" not in body


async def test_the_retired_nearby_name_reaches_poi_search_nearest_first(server, module_stub):
    module_stub.clear()
    module_stub.route("GET", ORBIS + "nearbySearch/.*", json_body=data("poi_search.json"))
    async with http_client(server + "/mcp") as client:
        assert "tomtom-nearby" not in [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("tomtom-nearby", {"position": [4.9, 52.37], "brandSet": ["BENU"]})
    body = json.loads(result.content[0].text)
    assert result.is_error is False and body["notice"].startswith("tomtom-nearby is deprecated, retired on 2027-06-01")
    assert [r.path for r in module_stub.requests] == [ORBIS + "nearbySearch/.json"]
