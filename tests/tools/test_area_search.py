import math

import pytest

from tests.conftest import CANARY_KEY, CREDIT, data
from tests.tools.test_geometry_mode import assert_geojson_contract
from tools.geometry.simplify import VERTEX_CAP
from tools.geometry.sphere import EARTH_RADIUS_M
from tools.tomtom.backends import Backend

PATHS = {
    Backend.ORBIS: "/maps/orbis/places/geometrySearch/pharmacy.json",
    Backend.GENESIS: "/search/2/geometrySearch/pharmacy.json",
}
AMSTERDAM = [4.9041, 52.3676]
TRIANGLE = [[4.88, 52.36], [4.92, 52.36], [4.9, 52.38]]
BOX = [4.8, 52.33, 4.95, 52.4]


def answer_on(stub, backend):
    stub.route("POST", PATHS[backend], json_body=data("poi_search.json"))


async def call(dispatcher, context, **arguments):
    return await dispatcher.call("tomtom-area-search", {"query": "pharmacy", **arguments}, context)


def metres(a, b):
    """Great-circle distance between two [lon, lat] positions."""
    (lon1, lat1), (lon2, lat2) = (map(math.radians, p) for p in (a, b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(h))


@pytest.mark.parametrize("backend", list(Backend))
async def test_circle_request(stub, dispatcher, context, backend):
    answer_on(stub, backend)
    context.backend = backend
    outcome = await call(
        dispatcher,
        context,
        center=AMSTERDAM,
        radius=1500,
        limit=5,
        language="nl-NL",
        poiCategories=[7326],
        brandSet=["BENU"],
    )
    assert not outcome.is_error, outcome.text
    (sent,) = stub.requests
    assert (sent.method, sent.path) == ("POST", PATHS[backend])
    assert sent.query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "limit": ["5"],
        "language": ["nl-NL"],
        "categorySet": ["7326"],
        "brandSet": ["BENU"],
        **({} if backend is Backend.ORBIS else {"key": [CANARY_KEY]}),  # Orbis: the key in its header
    }
    assert sent.json() == {"geometryList": [{"type": "CIRCLE", "position": "52.3676,4.9041", "radius": 1500}]}


async def test_polygon_request_drops_a_repeated_closing_corner(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    await call(dispatcher, context, polygon=[*TRIANGLE, TRIANGLE[0]])
    assert stub.requests[0].json() == {
        "geometryList": [{"type": "POLYGON", "vertices": ["52.36,4.88", "52.36,4.92", "52.38,4.9"]}]
    }


async def test_bounding_box_travels_as_its_four_corners(stub, dispatcher, context):
    answer_on(stub, Backend.GENESIS)
    context.backend = Backend.GENESIS
    await call(dispatcher, context, boundingBox=BOX)
    assert stub.requests[0].json() == {
        "geometryList": [{"type": "POLYGON", "vertices": ["52.33,4.8", "52.33,4.95", "52.4,4.95", "52.4,4.8"]}]
    }


async def test_compact_is_the_search_compact_and_the_boundary(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context, polygon=TRIANGLE)
    answer = outcome.data
    assert (answer["boundary"], answer["total"], answer["returned"], answer["truncated"]) == ("polygon", 12, 2, True)
    first = answer["results"][0]
    assert first["poi"]["name"] == "Apotheek Centrum"
    assert first["position"] == [4.89532, 52.37258]
    for dropped in ("score", "viewport", "entryPoints", "classifications", "geometry"):
        assert dropped not in outcome.text


@pytest.mark.parametrize("backend", list(Backend))
async def test_geometry_draws_a_circle_as_a_64_gon(stub, dispatcher, context, backend):
    answer_on(stub, backend)
    context.backend = backend
    compact = (await call(dispatcher, context, center=AMSTERDAM, radius=1000)).data
    answer = (await call(dispatcher, context, center=AMSTERDAM, radius=1000, response_detail="geometry")).data
    (boundary,) = assert_geojson_contract(answer)
    assert {k: v for k, v in answer.items() if k != "geometry"} == compact
    assert boundary["properties"] == {"boundary": compact["boundary"]} == {"boundary": "circle"}
    assert boundary["geometry"]["type"] == "Polygon"
    (ring,) = boundary["geometry"]["coordinates"]
    assert len(ring) == 65 and ring[0] == ring[-1]
    assert all(abs(metres(AMSTERDAM, point) - 1000) < 2 for point in ring)


@pytest.mark.parametrize(
    ("area", "kind", "ring"),
    [
        ({"polygon": TRIANGLE}, "polygon", [*TRIANGLE, TRIANGLE[0]]),
        ({"boundingBox": BOX}, "boundingBox", [[4.8, 52.33], [4.95, 52.33], [4.95, 52.4], [4.8, 52.4], [4.8, 52.33]]),
    ],
)
async def test_geometry_of_a_polygon_or_box_is_that_area(stub, dispatcher, context, area, kind, ring):
    answer_on(stub, Backend.ORBIS)
    answer = (await call(dispatcher, context, response_detail="geometry", **area)).data
    (boundary,) = assert_geojson_contract(answer)
    assert boundary["properties"] == {"boundary": kind}
    assert boundary["geometry"]["coordinates"] == [ring]


async def test_a_polygon_over_the_vertex_cap_is_simplified_and_says_so(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    corners = [
        [4.9 + 0.05 * math.cos(2 * math.pi * i / 1000), 52.37 + 0.03 * math.sin(2 * math.pi * i / 1000)]
        for i in range(1000)
    ]
    answer = (await call(dispatcher, context, polygon=corners, response_detail="geometry")).data
    (boundary,) = assert_geojson_contract(answer)
    report = boundary["properties"]["simplification"]
    assert report["original_points"] == 1001
    assert report["points"] == len(boundary["geometry"]["coordinates"][0]) <= VERTEX_CAP
    assert boundary["properties"]["boundary"] == "polygon"


async def test_full_is_tomtoms_answer(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context, boundingBox=BOX, response_detail="full")
    assert outcome.data == {**data("poi_search.json"), "show_ui": False, **CREDIT[Backend.ORBIS]}


@pytest.mark.parametrize(
    ("area", "named"),
    [
        ({"radius": 500}, ["radius", "center"]),
        ({"center": AMSTERDAM}, ["center", "radius"]),
        ({"center": AMSTERDAM, "radius": 500, "polygon": TRIANGLE}, ["center", "polygon"]),
        ({"polygon": TRIANGLE, "boundingBox": BOX}, ["polygon", "boundingBox"]),
        ({}, ["center", "polygon", "boundingBox"]),
    ],
    ids=["radius alone", "center alone", "circle and polygon", "polygon and box", "no area"],
)
async def test_one_area_exactly_and_errors_name_the_inputs(stub, dispatcher, context, area, named):
    outcome = await call(dispatcher, context, **area)
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error["arguments"] == named
    assert stub.requests == []


@pytest.mark.parametrize(
    ("area", "argument"),
    [
        ({"polygon": [[4.88, 52.36], [4.92, 52.36]]}, "polygon"),
        ({"polygon": [[4.88, 52.36], [4.92, 52.36], [4.88, 52.36]]}, "polygon"),
        ({"polygon": [[4.88, 52.36], [4.92, 52.36], [190, 52.38]]}, "polygon[2][0]"),
        ({"center": AMSTERDAM, "radius": 0}, "radius"),
        ({"center": AMSTERDAM, "radius": 20_000_001}, "radius"),
        ({"center": AMSTERDAM, "radius": 500.5}, "radius"),
        ({"boundingBox": [4.95, 52.4, 4.8, 52.33]}, "boundingBox"),
        ({"center": AMSTERDAM, "radius": 500, "query": ""}, "query"),
    ],
)
async def test_invalid_areas_name_the_input(stub, dispatcher, context, area, argument):
    outcome = await call(dispatcher, context, **area)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert stub.requests == []
