"""The geometry-bearing tools end to end: a real MCP client over HTTP, a real server process,
TomTom as the loopback stub. Each answers `response_detail: "geometry"` with its join keys."""

import json

import pytest
from mcp_types import Implementation

from tests.conftest import CANARY_KEY, data, http_client, server_process
from tests.support.tomtom_stub import TomTomStub

AMSTERDAM, UTRECHT, BERLIN = [4.9041, 52.3676], [5.1215, 52.0907], [13.405, 52.52]
CALLS = {
    "tomtom-reachable-range": (
        {"origin": AMSTERDAM, "timeBudgetInSec": 1800},
        [{"budget_min": 30}],
    ),
    "tomtom-ev-routing": (
        {"locations": [AMSTERDAM, BERLIN], "maxChargeInkWh": 75, "currentChargeInkWh": 60},
        [{"route": 0}, {"route": 0, "leg": 0}, {"route": 0, "leg": 1}],
    ),
    "tomtom-area-search": (
        {"query": "pharmacy", "center": AMSTERDAM, "radius": 800},
        [{"boundary": "circle"}],
    ),
    "tomtom-search-along-route": (
        {"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol station"},
        [{"route": 0}],
    ),
}


@pytest.fixture(scope="module")
def module_stub():
    with TomTomStub() as stub:
        stub.route("GET", r"/maps/orbis/routing/calculateReachableRange/.*", json_body=data("reachable_range.json"))
        stub.route("POST", r"/maps/orbis/routing/calculateLongDistanceEVRoute/.*", json_body=data("ev_route.json"))
        stub.route("POST", r"/maps/orbis/places/geometrySearch/.*", json_body=data("poi_search.json"))
        stub.route("POST", r"/maps/orbis/routing/routes/calculate", json_body=data("route_v3_along.json"))
        stub.route("POST", r"/maps/orbis/places/searchAlongRoute/.*", json_body=data("along_route.json"))
        yield stub


@pytest.fixture(scope="module")
def server(module_stub):
    with server_process(env={"TOMTOM_API_BASE_URL": module_stub.base_url}) as base:
        yield base


async def test_geometry_tools_over_http(server, module_stub):
    async with http_client(server + "/mcp", client_info=Implementation(name="geometry-e2e", version="1")) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        results = {}
        for name, (arguments, _) in CALLS.items():
            module_stub.requests.clear()
            results[name] = await client.call_tool(name, {**arguments, "response_detail": "geometry"})
            assert module_stub.requests, f"{name} sent nothing to TomTom"
            assert all(r.api_key == CANARY_KEY for r in module_stub.requests)
    for name, (_, join_keys) in CALLS.items():
        tool = listed[name]
        assert tool.annotations.read_only_hint is True
        assert "geometry" in tool.input_schema["properties"]["response_detail"]["enum"]
        result = results[name]
        assert result.is_error is False, result.content[0].text
        answer = json.loads(result.content[0].text)
        features = answer["geometry"]["features"]
        assert [feature["properties"] for feature in features] == join_keys, name
        assert CANARY_KEY not in result.content[0].text


async def test_a_cross_field_error_reaches_the_client_as_a_tool_error(server, module_stub):
    module_stub.requests.clear()
    async with http_client(server + "/mcp", client_info=Implementation(name="geometry-e2e", version="1")) as client:
        result = await client.call_tool(
            "tomtom-reachable-range", {"origin": AMSTERDAM, "timeBudgetInSec": 600, "distanceBudgetInMeters": 9000}
        )
    assert result.is_error is True
    error = json.loads(result.content[0].text)["error"]
    assert error["arguments"] == ["timeBudgetInSec", "distanceBudgetInMeters"]
    assert module_stub.requests == []
