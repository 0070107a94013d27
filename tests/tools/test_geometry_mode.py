"""`response_detail: "geometry"`: compact + a FeatureCollection with join keys, on both backends."""

import json
import math
import re

import pytest

from tests.conftest import data, recorded
from tools.geometry.simplify import VERTEX_CAP
from tools.tomtom.backends import Backend

ROUTE_PATHS = {
    Backend.ORBIS: r"/maps/orbis/routing/routes/calculate",  # Routing v3: a POST
    Backend.GENESIS: r"/routing/1/calculateRoute/.*",
}
ROUTE_METHODS = {Backend.ORBIS: "POST", Backend.GENESIS: "GET"}
ROUTE_ANSWERS = {Backend.ORBIS: "route_v3.json", Backend.GENESIS: "route.json"}
TRAFFIC_PATHS = {
    Backend.ORBIS: r"/maps/orbis/traffic/incidentDetails",
    Backend.GENESIS: r"/traffic/services/5/incidentDetails",
}
BOX = [4.8, 52.33, 4.95, 52.4]
LOCATIONS = [[4.9041, 52.3676], [13.405, 52.52]]


def assert_geojson_contract(answer: dict) -> list[dict]:
    """What every geometry answer promises, whatever the tool."""
    text = json.dumps(answer)
    assert not re.search(r'"(startPointIndex|endPointIndex|pointIndex)"', text)
    collection = answer["geometry"]
    assert collection["type"] == "FeatureCollection"
    for feature in collection["features"]:
        assert feature["type"] == "Feature"
        for lon, lat in coordinates(feature["geometry"]):
            assert -180 <= lon <= 180 and -90 <= lat <= 90
            assert round(lon, 5) == lon and round(lat, 5) == lat
    return collection["features"]


def coordinates(geometry: dict) -> list:
    def flatten(value):
        if isinstance(value[0], (int, float)):
            yield value
        else:
            for item in value:
                yield from flatten(item)

    return list(flatten(geometry["coordinates"]))


def long_route(points: int) -> dict:
    answer = data("route.json")
    line = [{"latitude": 52.0 + 0.5 * math.sin(i / 50) + i * 1e-4, "longitude": 4.0 + i * 1e-3} for i in range(points)]
    answer["routes"][0]["legs"] = [{"summary": {}, "points": line}]
    answer["routes"][0]["sections"][0]["endPointIndex"] = points - 1
    return answer


@pytest.mark.parametrize("backend", list(Backend))
async def test_routing_geometry(stub, dispatcher, context, backend):
    stub.route(ROUTE_METHODS[backend], ROUTE_PATHS[backend], json_body=data(ROUTE_ANSWERS[backend]))
    context.backend = backend
    compact = (await dispatcher.call("tomtom-routing", {"locations": LOCATIONS}, context)).data
    answer = (
        await dispatcher.call("tomtom-routing", {"locations": LOCATIONS, "response_detail": "geometry"}, context)
    ).data
    features = assert_geojson_contract(answer)
    assert {k: v for k, v in answer.items() if k != "geometry"} == compact
    assert [f["properties"] for f in features] == [{"route": 0}]
    line = features[0]["geometry"]
    assert line["type"] == "LineString"
    assert len(line["coordinates"]) == 400  # legs of 200 and 201 points that share one
    assert line["coordinates"][0] == compact["routes"][0]["start"]
    assert line["coordinates"][-1] == compact["routes"][0]["end"]


async def test_a_long_route_is_capped_and_says_so(stub, dispatcher, context):
    stub.route("GET", ROUTE_PATHS[Backend.GENESIS], json_body=long_route(8000))
    context.backend = Backend.GENESIS
    answer = (
        await dispatcher.call("tomtom-routing", {"locations": LOCATIONS, "response_detail": "geometry"}, context)
    ).data
    (feature,) = assert_geojson_contract(answer)
    report = feature["properties"]["simplification"]
    assert report["original_points"] == 8000
    assert report["points"] == len(feature["geometry"]["coordinates"]) <= VERTEX_CAP
    assert 0 < report["max_error_m"] < 200
    assert feature["properties"]["route"] == 0


async def test_recorded_routes_on_both_backends_have_one_shape(stub, dispatcher, context):
    shapes = []
    for backend, name in (
        (Backend.GENESIS, "geometry-genesis-route.json"),
        (Backend.GENESIS, "geometry-genesis-waypoint-route.json"),
    ):
        stub.route("GET", ROUTE_PATHS[backend], json_body=recorded(name))
        context.backend = backend
        answer = (
            await dispatcher.call("tomtom-routing", {"locations": LOCATIONS, "response_detail": "geometry"}, context)
        ).data
        features = assert_geojson_contract(answer)
        assert [f["properties"]["route"] for f in features] == list(range(len(answer["routes"])))
        shapes.append(sorted(features[0]))
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize("backend", list(Backend))
async def test_traffic_geometry_joins_the_capped_list(stub, dispatcher, context, backend):
    stub.route("GET", TRAFFIC_PATHS[backend], json_body=data("traffic.json"))
    context.backend = backend
    arguments = {"bbox": BOX, "maxResults": 4, "response_detail": "geometry"}
    answer = (await dispatcher.call("tomtom-traffic", arguments, context)).data
    features = assert_geojson_contract(answer)
    assert [f["properties"] for f in features] == [{"incident": i} for i in range(len(answer["incidents"]))]
    assert len(features) == answer["returned"] == 4
    # most severe first in both lists: the road closure (a line) is incident 0
    assert answer["incidents"][0]["category"] == "road-closed"
    assert features[0]["geometry"]["coordinates"][0] == [4.86, 52.37]


@pytest.mark.parametrize(
    ("name", "backend"),
    [("geometry-orbis-traffic.json", Backend.ORBIS), ("geometry-genesis-traffic.json", Backend.GENESIS)],
)
async def test_recorded_traffic(stub, dispatcher, context, name, backend):
    body = recorded(name)
    stub.route("GET", TRAFFIC_PATHS[backend], json_body=body)
    context.backend = backend
    answer = (await dispatcher.call("tomtom-traffic", {"bbox": BOX, "response_detail": "geometry"}, context)).data
    features = assert_geojson_contract(answer)
    assert len(features) == len(body["incidents"])
    assert all(set(f["properties"]) == {"incident"} for f in features)  # TomTom's properties are never copied


async def test_point_only_tools_refuse_geometry_and_name_the_tools_that_have_it(stub, dispatcher, context):
    outcome = await dispatcher.call("tomtom-geocode", {"query": "Dam", "response_detail": "geometry"}, context)
    error = outcome.data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", "response_detail")
    assert "tomtom-routing" in error["message"] and "tomtom-traffic" in error["message"]
    assert stub.requests == []


async def test_unreadable_upstream_geometry_is_malformed(stub, dispatcher, context):
    body = data("traffic.json")
    body["incidents"][0]["geometry"]["coordinates"][0] = [float("nan"), 52.3]
    stub.route("GET", TRAFFIC_PATHS[Backend.ORBIS], body=json.dumps(body).encode())
    outcome = await dispatcher.call("tomtom-traffic", {"bbox": BOX, "response_detail": "geometry"}, context)
    assert outcome.data["error"]["code"] == "malformed"
