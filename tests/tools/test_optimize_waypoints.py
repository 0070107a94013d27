"""tomtom-optimize-waypoints: the optimization request, the two routes, the answer and its limits.

TomTom's answers (tests/data/waypoint_optimization.json, optimized_route.json,
given_order_route.json) are written from TomTom's documented shapes (Waypoint Optimization's
`optimizedOrder`; Calculate Route's `routes[].legs[].summary`); no recorded Waypoint
Optimization answer exists yet (tests/data/PROVENANCE.md).
"""

import pytest

from protocol.appdata import APP_DATA_KEY
from tests.conftest import data
from tools.shaping.appdata import decode
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

OPTIMIZE = r"/routing/waypointoptimization/1"
ROUTE = r"/routing/1/calculateRoute/.*/json"
STOPS = [[4.9041, 52.3676], [5.1215, 52.0907], [4.4777, 51.9244], [4.6462, 52.3874]]
OPTIMIZED_PATH = "/routing/1/calculateRoute/52.3676,4.9041:52.3874,4.6462:51.9244,4.4777:52.0907,5.1215/json"
GIVEN_PATH = "/routing/1/calculateRoute/52.3676,4.9041:52.0907,5.1215:51.9244,4.4777:52.3874,4.6462/json"


@pytest.fixture
def genesis(stub, context):
    context.backend = Backend.GENESIS
    stub.route("POST", OPTIMIZE, json_body=data("waypoint_optimization.json"))
    stub.route("GET", ROUTE, json_body=data("given_order_route.json"))
    stub.route("GET", OPTIMIZED_PATH.replace(".", r"\."), json_body=data("optimized_route.json"))
    return context


async def test_optimization_request(stub, dispatcher, genesis):
    outcome = await dispatcher.call(
        "tomtom-optimize-waypoints",
        {
            "stops": STOPS,
            "first": STOPS[0],
            "last": STOPS[1],
            "departAt": "2026-12-01T08:00:00+01:00",
            "traffic": "historical",
            "serviceTimes": [0, 600, 600, 300],
            "timeWindows": [{"stop": 2, "opens": "09:00", "closes": "12:00"}],
        },
        genesis,
    )
    assert not outcome.is_error, outcome.text
    (optimization,) = [r for r in stub.requests if r.method == "POST"]
    assert optimization.path == "/routing/waypointoptimization/1"
    body = optimization.json()
    assert body["options"] == {
        "travelMode": "car",
        "traffic": "historical",
        "departAt": "2026-12-01T08:00:00+01:00",
        "waypointConstraints": {"originIndex": 0, "destinationIndex": 1},
    }
    assert body["waypoints"][2] == {
        "point": {"latitude": 51.9244, "longitude": 4.4777},
        "serviceTimeInSeconds": 600,
        "timeWindows": [{"openingHour": "09:00", "closingHour": "12:00"}],
    }
    assert sorted(r.path for r in stub.requests if r.method == "GET") == sorted([OPTIMIZED_PATH, GIVEN_PATH])


async def test_order_legs_and_saving(stub, dispatcher, genesis):
    outcome = await dispatcher.call("tomtom-optimize-waypoints", {"stops": STOPS}, genesis)
    answer = outcome.data
    assert answer["order"] == [0, 3, 2, 1]
    assert answer["legs"] == [
        {"from": 0, "to": 3, "time_s": 1500, "distance_m": 24100, "delay_s": 60},
        {"from": 3, "to": 2, "time_s": 2700, "distance_m": 60300, "delay_s": 300},
        {"from": 2, "to": 1, "time_s": 2520, "distance_m": 57800, "delay_s": 120},
    ]
    assert answer["total"] == {"time_s": 6720, "distance_m": 142200, "delay_s": 480}
    assert answer["given_order"] == {"time_s": 8700, "distance_m": 184600, "delay_s": 740}
    assert answer["saved"] == {"time_s": 1980, "distance_m": 42400}
    assert '"points"' not in outcome.text


async def test_geometry_joins_line_and_stops(stub, dispatcher, genesis):
    outcome = await dispatcher.call(
        "tomtom-optimize-waypoints", {"stops": STOPS, "response_detail": "geometry"}, genesis
    )
    features = outcome.data["geometry"]["features"]
    assert features[0]["properties"] == {"route": 0}
    assert features[0]["geometry"]["type"] == "LineString"
    assert [f["properties"] for f in features[1:]] == [
        {"stop": 0, "visit": 0},
        {"stop": 3, "visit": 1},
        {"stop": 2, "visit": 2},
        {"stop": 1, "visit": 3},
    ]
    assert features[2]["geometry"]["coordinates"] == STOPS[3]


async def test_show_ui_hands_the_widget_the_optimized_route(stub, dispatcher, genesis):
    outcome = await dispatcher.call("tomtom-optimize-waypoints", {"stops": STOPS, "show_ui": True}, genesis)
    assert decode(outcome.meta[APP_DATA_KEY]) == data("optimized_route.json")
    assert outcome.data["show_ui"] is True
    assert '"points"' not in outcome.text


async def test_order_that_skips_a_stop_is_malformed(stub, dispatcher, genesis):
    stub.route("POST", OPTIMIZE, json_body={"optimizedOrder": [0, 1, 1, 3]})
    outcome = await dispatcher.call("tomtom-optimize-waypoints", {"stops": STOPS}, genesis)
    assert outcome.data["error"]["code"] == "malformed"


@pytest.mark.parametrize(
    ("arguments", "argument", "says"),
    [
        ({"stops": STOPS * 4}, "stops", "12"),
        ({"stops": STOPS, "first": [1.0, 1.0]}, "first", "not one of stops"),
        ({"stops": STOPS, "last": [1.0, 1.0]}, "last", "not one of stops"),
        (
            {"stops": STOPS, "departAt": "now", "timeWindows": [{"stop": 1, "opens": "12:00", "closes": "09:00"}]},
            "timeWindows[0]",
            "ends (09:00) before it starts (12:00)",
        ),
        (
            {"stops": STOPS, "departAt": "now", "timeWindows": [{"stop": 7, "opens": "09:00", "closes": "12:00"}]},
            "timeWindows[0].stop",
            "only 4 stops",
        ),
        ({"stops": STOPS, "serviceTimes": [60, 60]}, "serviceTimes", "one value per stop (4)"),
    ],
)
async def test_bad_input_is_refused_before_any_request(stub, dispatcher, genesis, arguments, argument, says):
    outcome = await dispatcher.call("tomtom-optimize-waypoints", arguments, genesis)
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error["argument"] == argument
    assert says in error["message"]
    assert stub.requests == []


async def test_time_windows_need_a_departure(stub, dispatcher, genesis):
    outcome = await dispatcher.call(
        "tomtom-optimize-waypoints",
        {"stops": STOPS, "timeWindows": [{"stop": 1, "opens": "09:00", "closes": "12:00"}]},
        genesis,
    )
    assert outcome.data["error"]["arguments"] == ["timeWindows", "departAt"]
    assert stub.requests == []


async def test_orbis_is_unsupported_before_any_request(stub, dispatcher, context):
    outcome = await dispatcher.call("tomtom-optimize-waypoints", {"stops": STOPS}, context)
    assert outcome.data["error"]["code"] == "unsupported"
    assert "tomtom-orbis-maps" in outcome.data["error"]["message"]
    assert stub.requests == []
