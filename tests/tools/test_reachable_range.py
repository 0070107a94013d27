import json
import math

import pytest

from tests.conftest import CANARY_KEY, CREDIT, data, recorded
from tests.tools.test_geometry_mode import assert_geojson_contract
from tools.geometry.simplify import VERTEX_CAP
from tools.tomtom.backends import Backend

PATHS = {
    Backend.ORBIS: "/maps/orbis/routing/calculateReachableRange/52.3676,4.9041/json",
    Backend.GENESIS: "/routing/1/calculateReachableRange/52.3676,4.9041/json",
}
AMSTERDAM = [4.9041, 52.3676]


def answer_on(stub, backend, body=None):
    stub.route("GET", PATHS[backend], json_body=body if body is not None else data("reachable_range.json"))


async def call(dispatcher, context, **arguments):
    return await dispatcher.call("tomtom-reachable-range", {"origin": AMSTERDAM, **arguments}, context)


async def test_orbis_request(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(
        dispatcher,
        context,
        timeBudgetInSec=1800,
        routeType="short",
        traffic="historical",
        avoid=["tollRoads", "ferries"],
        departAt="2026-12-01T08:00:00+01:00",
    )
    assert not outcome.is_error, outcome.text
    (sent,) = stub.requests
    assert (sent.method, sent.path) == ("GET", PATHS[Backend.ORBIS])
    assert sent.api_key == CANARY_KEY  # in the header on Orbis, the `key` parameter on TomTom Maps
    assert {name: value for name, value in sent.query.items() if name != "key"} == {
        "apiVersion": ["2"],
        "routeType": ["short"],
        "traffic": ["historical"],
        "timeBudgetInSec": ["1800"],
        "departAt": ["2026-12-01T08:00:00+01:00"],
        "avoid": ["tollRoads", "ferries"],
    }


async def test_genesis_request_uses_its_own_vocabulary(stub, dispatcher, context):
    answer_on(stub, Backend.GENESIS)
    context.backend = Backend.GENESIS
    outcome = await call(dispatcher, context, distanceBudgetInMeters=12500, routeType="efficient", travelMode="truck")
    assert not outcome.is_error, outcome.text
    (sent,) = stub.requests
    assert sent.path == PATHS[Backend.GENESIS]
    assert sent.api_key == CANARY_KEY  # in the header on Orbis, the `key` parameter on TomTom Maps
    assert {name: value for name, value in sent.query.items() if name != "key"} == {
        "routeType": ["eco"],
        "traffic": ["true"],
        "travelMode": ["truck"],
        "distanceBudgetInMeters": ["12500"],
    }


@pytest.mark.parametrize("backend", list(Backend))
async def test_compact_is_center_budget_and_area_without_the_polygon(stub, dispatcher, context, backend):
    answer_on(stub, backend)
    context.backend = backend
    outcome = await call(dispatcher, context, timeBudgetInSec=1800)
    assert outcome.data == {
        "center": [4.90413, 52.36761],
        "budget_min": 30,
        "boundingBox": [4.57413, 52.19614, 5.12064, 52.53908],
        "boundaryPoints": 12,
        "show_ui": False,
        **CREDIT[backend],
    }


async def test_a_distance_budget_is_keyed_in_kilometres(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context, distanceBudgetInMeters=12500, response_detail="geometry")
    assert outcome.data["budget_km"] == 12.5
    assert outcome.data["geometry"]["features"][0]["properties"] == {"budget_km": 12.5}


@pytest.mark.parametrize("backend", list(Backend))
async def test_geometry_is_one_polygon_joined_by_its_budget(stub, dispatcher, context, backend):
    answer_on(stub, backend)
    context.backend = backend
    compact = (await call(dispatcher, context, timeBudgetInSec=2700)).data
    answer = (await call(dispatcher, context, timeBudgetInSec=2700, response_detail="geometry")).data
    (polygon,) = assert_geojson_contract(answer)
    assert {k: v for k, v in answer.items() if k != "geometry"} == compact
    assert polygon["properties"] == {"budget_min": compact["budget_min"]} == {"budget_min": 45}
    assert polygon["geometry"]["type"] == "Polygon"
    (ring,) = polygon["geometry"]["coordinates"]
    boundary = data("reachable_range.json")["reachableRange"]["boundary"]
    assert ring[:-1] == [[p["longitude"], p["latitude"]] for p in boundary]
    assert ring[0] == ring[-1]


async def test_recorded_genesis_range(stub, dispatcher, context):
    body = recorded("geometry-genesis-reachable-range.json")
    answer_on(stub, Backend.GENESIS, body)
    context.backend = Backend.GENESIS
    answer = (await call(dispatcher, context, timeBudgetInSec=3600, response_detail="geometry")).data
    assert answer["center"] == [4.90413, 52.36761]
    assert answer["boundaryPoints"] == len(body["reachableRange"]["boundary"]) == 50
    (polygon,) = assert_geojson_contract(answer)
    assert len(polygon["geometry"]["coordinates"][0]) == 51
    assert polygon["properties"] == {"budget_min": 60}


async def test_a_long_boundary_is_capped_and_says_so(stub, dispatcher, context):
    points = 5000
    boundary = [
        {
            "latitude": 52.37 + (0.3 + 0.02 * math.sin(i / 7)) * math.cos(2 * math.pi * i / points) * 0.6,
            "longitude": 4.9 + (0.3 + 0.02 * math.sin(i / 7)) * math.sin(2 * math.pi * i / points),
        }
        for i in range(points)
    ]
    answer_on(
        stub, Backend.ORBIS, {"reachableRange": {"center": {"latitude": 52.37, "longitude": 4.9}, "boundary": boundary}}
    )
    answer = (await call(dispatcher, context, timeBudgetInSec=3600, response_detail="geometry")).data
    (polygon,) = assert_geojson_contract(answer)
    report = polygon["properties"]["simplification"]
    assert report["original_points"] == points + 1  # the ring, closed
    assert report["points"] == len(polygon["geometry"]["coordinates"][0]) <= VERTEX_CAP
    assert 0 < report["max_error_m"] < 500
    assert polygon["properties"]["budget_min"] == 60
    assert answer["boundaryPoints"] == points


async def test_full_is_tomtoms_answer(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context, timeBudgetInSec=600, response_detail="full")
    assert outcome.data == {**data("reachable_range.json"), "show_ui": False, **CREDIT[Backend.ORBIS]}


@pytest.mark.parametrize(
    "arguments", [{}, {"timeBudgetInSec": 600, "distanceBudgetInMeters": 5000}], ids=["no budget", "two budgets"]
)
async def test_exactly_one_budget_names_both(stub, dispatcher, context, arguments):
    outcome = await call(dispatcher, context, **arguments)
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error["arguments"] == ["timeBudgetInSec", "distanceBudgetInMeters"]
    assert "`timeBudgetInSec` and `distanceBudgetInMeters`" in error["message"]
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({"origin": [4.9, 95], "timeBudgetInSec": 600}, "origin[1]"),
        ({"timeBudgetInSec": 0}, "timeBudgetInSec"),
        ({"timeBudgetInSec": 86_401}, "timeBudgetInSec"),
        ({"distanceBudgetInMeters": 2_000_001}, "distanceBudgetInMeters"),
        ({"timeBudgetInSec": 600, "avoid": ["alreadyUsedRoads"]}, "avoid[0]"),
        ({"timeBudgetInSec": 600, "departAt": "soon"}, "departAt"),
        ({"timeBudgetInSec": 600, "energyBudgetInkWh": 20}, "energyBudgetInkWh"),
    ],
)
async def test_invalid_arguments_name_the_input(stub, dispatcher, context, arguments, argument):
    outcome = await dispatcher.call("tomtom-reachable-range", {"origin": AMSTERDAM, **arguments}, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert stub.requests == []


async def test_orbis_refuses_trucks(stub, dispatcher, context):
    outcome = await call(dispatcher, context, timeBudgetInSec=600, travelMode="truck")
    assert outcome.data["error"]["code"] == "unsupported"
    assert "tomtom-maps backend" in outcome.data["error"]["message"]
    assert stub.requests == []


async def test_a_range_without_a_boundary_is_malformed(stub, dispatcher, context):
    body = data("reachable_range.json")
    body["reachableRange"]["boundary"] = body["reachableRange"]["boundary"][:2]
    answer_on(stub, Backend.ORBIS, body)
    outcome = await call(dispatcher, context, timeBudgetInSec=600)
    assert outcome.data["error"]["code"] == "malformed"
    assert CANARY_KEY not in json.dumps(outcome.data)


@pytest.mark.parametrize("detail", ["compact", "geometry", "full"])
async def test_an_answer_echoing_the_request_never_shows_the_key(stub, dispatcher, context, detail):
    body = data("reachable_range.json")
    body["report"] = {
        "effectiveSettings": [{"key": "key", "value": CANARY_KEY}, {"key": "timeBudgetInSec", "value": "600"}]
    }
    answer_on(stub, Backend.GENESIS, body)
    context.backend = Backend.GENESIS
    outcome = await call(dispatcher, context, timeBudgetInSec=600, response_detail=detail)
    assert not outcome.is_error, outcome.text
    assert CANARY_KEY not in outcome.text
    if detail == "geometry":
        assert [f["properties"] for f in outcome.data["geometry"]["features"]] == [{"budget_min": 10}]


@pytest.mark.parametrize("tool", ["tomtom-reachable-range", "tomtom-ev-routing"])
async def test_orbis_lists_a_v2_only_routing_tool_as_a_preview(dispatcher, tool):
    """Orbis Routing v3 has Calculate Route only: these answer from the v2 public preview there."""
    listed = dispatcher.get(tool)
    assert "public preview" in listed.listing(Backend.ORBIS, False).description
    assert "preview" not in listed.listing(Backend.GENESIS, False).description
