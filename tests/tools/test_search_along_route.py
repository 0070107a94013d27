import math

import pytest

from tests.conftest import CANARY_KEY, CREDIT, data
from tests.tools.test_geometry_mode import assert_geojson_contract
from tests.tools.test_routing import ORBIS_PATH, v3_answer
from tools.geometry.simplify import VERTEX_CAP
from tools.tomtom.backends import Backend

AMSTERDAM, UTRECHT = [4.9041, 52.3676], [5.1215, 52.0907]
ROUTES = {
    Backend.ORBIS: ORBIS_PATH,  # Routing v3: the stops travel in the body
    Backend.GENESIS: "/routing/1/calculateRoute/52.3676,4.9041:52.0907,5.1215/json",
}
ROUTE_METHODS = {Backend.ORBIS: "POST", Backend.GENESIS: "GET"}
SEARCHES = {
    Backend.ORBIS: "/maps/orbis/places/searchAlongRoute/petrol station.json",
    Backend.GENESIS: "/search/2/searchAlongRoute/petrol station.json",
}


def answer_on(stub, backend, route=None):
    """The route, then the places: `along_route.json` holds both answers (the route in v2's
    words; Orbis answers it in v3's)."""
    route = route if route is not None else data("along_route.json")
    if backend is Backend.ORBIS:
        route = v3_answer(route)
    stub.route(ROUTE_METHODS[backend], ROUTES[backend], json_body=route)
    stub.route("POST", r".*/searchAlongRoute/.*", json_body=data("along_route.json"))


async def call(dispatcher, context, **arguments):
    base = {"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol station"}
    return await dispatcher.call("tomtom-search-along-route", {**base, **arguments}, context)


@pytest.mark.parametrize("backend", list(Backend))
async def test_route_then_search_along_it(stub, dispatcher, context, backend):
    answer_on(stub, backend)
    context.backend = backend
    outcome = await call(
        dispatcher, context, maxDetourTime=300, limit=5, poiCategories=[7311], brandSet=["Shell"], routeType="short"
    )
    assert not outcome.is_error, outcome.text
    route, search = stub.requests
    assert (route.method, route.path) == (ROUTE_METHODS[backend], ROUTES[backend])
    if backend is Backend.ORBIS:
        assert route.json()["routePlanningLocations"] == {
            "origin": {"type": "Point", "coordinates": AMSTERDAM},
            "destination": {"type": "Point", "coordinates": UTRECHT},
        }
        assert route.json()["routeType"] == "short" and route.headers["tomtom-api-version"] == "3"
    else:
        assert route.param("routeType") == "shortest"
    assert route.api_key == CANARY_KEY
    assert (search.method, search.path) == ("POST", SEARCHES[backend])
    assert search.api_key == CANARY_KEY  # where the key travels is the client's business
    assert {name: value for name, value in search.query.items() if name != "key"} == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "maxDetourTime": ["300"],
        "limit": ["5"],
        "categorySet": ["7311"],
        "brandSet": ["Shell"],
    }
    line = data("along_route.json")["routes"][0]["legs"][0]["points"]
    assert search.json() == {"route": {"points": [{"lat": p["latitude"], "lon": p["longitude"]} for p in line]}}


async def test_a_long_route_is_sent_as_at_most_1000_points(stub, dispatcher, context):
    route = data("along_route.json")
    points = 5000
    route["routes"][0]["legs"][0]["points"] = [
        {"latitude": 52.3676 - i * 5.5e-5, "longitude": 4.9041 + 0.01 * math.sin(i / 30) + i * 4e-5}
        for i in range(points)
    ]
    answer_on(stub, Backend.ORBIS, route)
    outcome = await call(dispatcher, context, response_detail="geometry")
    sent = stub.requests[1].json()["route"]["points"]
    assert 2 <= len(sent) <= 1000
    assert sent[0] == {"lat": 52.3676, "lon": 4.9041}
    (line,) = assert_geojson_contract(outcome.data)
    report = line["properties"]["simplification"]
    assert report["original_points"] == points
    assert report["points"] == len(line["geometry"]["coordinates"]) <= VERTEX_CAP


async def test_compact_is_the_route_summary_and_the_places_with_their_detours(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context)
    answer = outcome.data
    assert answer["route"] == {
        "summary": {
            "lengthInMeters": 45515,
            "travelTimeInSeconds": 2495,
            "trafficDelayInSeconds": 0,
            "trafficLengthInMeters": 0,
            "departureTime": "2026-11-29T09:00:00+01:00",
            "arrivalTime": "2026-11-29T09:41:35+01:00",
        },
        "start": AMSTERDAM,
        "end": UTRECHT,
    }
    assert (answer["total"], answer["returned"], answer["truncated"]) == (7, 2, True)
    shell, total = answer["results"]
    assert shell["poi"] == {"name": "Shell Holendrecht", "categories": ["petrol station"], "brands": ["Shell"]}
    assert shell["position"] == [4.95527, 52.29611]
    assert (shell["detourTimeInSeconds"], shell["detourDistanceInMeters"], shell["detourOffsetInMeters"]) == (
        35,
        210,
        9120,
    )
    assert (total["detourTimeInSeconds"], total["detourDistanceInMeters"]) == (-12, -480)
    for dropped in ("points", "score", "viewport", "entryPoints", "PointIndex"):
        assert dropped not in outcome.text


@pytest.mark.parametrize("backend", list(Backend))
async def test_geometry_is_the_route_line(stub, dispatcher, context, backend):
    answer_on(stub, backend)
    context.backend = backend
    compact = (await call(dispatcher, context)).data
    answer = (await call(dispatcher, context, response_detail="geometry")).data
    (line,) = assert_geojson_contract(answer)
    assert {k: v for k, v in answer.items() if k != "geometry"} == compact
    assert line["properties"] == {"route": 0}
    assert line["geometry"]["type"] == "LineString"
    assert line["geometry"]["coordinates"][0] == compact["route"]["start"]
    assert line["geometry"]["coordinates"][-1] == compact["route"]["end"]


async def test_full_is_both_answers(stub, dispatcher, context):
    answer_on(stub, Backend.GENESIS)
    context.backend = Backend.GENESIS
    outcome = await call(dispatcher, context, response_detail="full")
    assert outcome.data == {
        "route": data("along_route.json"),
        "search": data("along_route.json"),
        "show_ui": False,
        **CREDIT[Backend.GENESIS],
    }


async def test_an_empty_query_searches_by_category(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context, query="", poiCategories=[7309])
    assert not outcome.is_error, outcome.text
    search = stub.requests[1]
    assert search.path == "/maps/orbis/places/searchAlongRoute/.json"
    assert search.param("categorySet") == "7309"


async def test_an_empty_query_needs_a_category_or_brand(stub, dispatcher, context):
    outcome = await call(dispatcher, context, query=" ")
    assert outcome.data["error"]["arguments"] == ["query", "poiCategories", "brandSet"]
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({"destination": [5.12, 91]}, "destination[1]"),
        ({"origin": [-181, 52]}, "origin[0]"),
        ({"maxDetourTime": 4000}, "maxDetourTime"),
        ({"query": "x" * 401}, "query"),
        ({"limit": 50}, "limit"),
        ({"avoid": ["potholes"]}, "avoid[0]"),
        ({"corridorWidth": 5000}, "corridorWidth"),
    ],
)
async def test_invalid_arguments_name_the_input(stub, dispatcher, context, arguments, argument):
    outcome = await call(dispatcher, context, **arguments)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert stub.requests == []


async def test_a_route_without_points_is_malformed_and_nothing_is_searched(stub, dispatcher, context):
    route = data("along_route.json")
    route["routes"][0]["legs"][0]["points"] = []
    answer_on(stub, Backend.ORBIS, route)
    outcome = await call(dispatcher, context)
    assert outcome.data["error"]["code"] == "malformed"
    assert [r.path for r in stub.requests] == [ORBIS_PATH]


async def test_orbis_full_is_tomtoms_v3_route_and_the_search(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context, response_detail="full")
    assert outcome.data["route"] == v3_answer(data("along_route.json"))
    assert outcome.data["search"] == data("along_route.json")


async def test_orbis_avoid_areas_reach_the_route(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    area = [5.0, 52.2, 5.1, 52.3]
    outcome = await call(dispatcher, context, avoidAreas=[area], avoid=["tollRoads"])
    assert not outcome.is_error, outcome.text
    body = stub.requests[0].json()
    assert body["avoidAreas"] == {"rectangles": [{"type": "Feature", "bbox": area, "geometry": None}]}
    assert body["avoids"] == ["tollRoads"]
