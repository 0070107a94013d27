"""tomtom-matrix-routing: the request TomTom Maps gets, the compact matrix, its limits, and the
matrix Orbis answers composed of one Calculate Route call per pair.

The answer (tests/data/matrix.json) is written from TomTom's documented Synchronous Matrix
response shape (`data[]` cells with `routeSummary` or `detailedError`, `statistics`); no
recorded answer exists yet (tests/data/PROVENANCE.md).
"""

import pytest

from tests.conftest import CREDIT, data
from tests.tools.test_routing import ORBIS_PATH, v3_answer
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

MATRIX = r"/routing/matrix/2"
AMSTERDAM, UTRECHT, ROTTERDAM = [4.9041, 52.3676], [5.1215, 52.0907], [4.4777, 51.9244]


@pytest.fixture
def genesis(context):
    context.backend = Backend.GENESIS
    return context


async def test_request_body(stub, dispatcher, genesis):
    stub.route("POST", MATRIX, json_body=data("matrix.json"))
    outcome = await dispatcher.call(
        "tomtom-matrix-routing",
        {
            "origins": [AMSTERDAM, UTRECHT],
            "destinations": [ROTTERDAM, AMSTERDAM],
            "departAt": "2026-12-01T08:00:00+01:00",
            "traffic": "historical",
            "travelMode": "truck",
            "avoid": ["tollRoads"],
        },
        genesis,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert (sent.method, sent.path) == ("POST", "/routing/matrix/2")
    assert sent.json() == {
        "origins": [
            {"point": {"latitude": 52.3676, "longitude": 4.9041}},
            {"point": {"latitude": 52.0907, "longitude": 5.1215}},
        ],
        "destinations": [
            {"point": {"latitude": 51.9244, "longitude": 4.4777}},
            {"point": {"latitude": 52.3676, "longitude": 4.9041}},
        ],
        "options": {
            "traffic": "historical",
            "travelMode": "truck",
            "departAt": "2026-12-01T08:00:00+01:00",
            "avoid": ["tollRoads"],
        },
    }


async def test_compact_matrix_and_nearest(stub, dispatcher, genesis):
    stub.route("POST", MATRIX, json_body=data("matrix.json"))
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM, UTRECHT], "destinations": [ROTTERDAM, UTRECHT]}, genesis
    )
    assert outcome.data["matrix"] == [
        [{"time_s": 2405, "distance_m": 42760, "delay_s": 120}, {"time_s": 1320, "distance_m": 20210, "delay_s": 0}],
        [{"time_s": 2100, "distance_m": 38450, "delay_s": 60}, {"error": "OUT_OF_REGION"}],
    ]
    assert outcome.data["nearest"] == [
        {"origin": 0, "destination": 1, "time_s": 1320, "distance_m": 20210},
        {"origin": 1, "destination": 0, "time_s": 2100, "distance_m": 38450},
    ]
    assert outcome.data["failed"] == 1


async def test_full_is_tomtoms_answer(stub, dispatcher, genesis):
    stub.route("POST", MATRIX, json_body=data("matrix.json"))
    outcome = await dispatcher.call(
        "tomtom-matrix-routing",
        {"origins": [AMSTERDAM, UTRECHT], "destinations": [ROTTERDAM, UTRECHT], "response_detail": "full"},
        genesis,
    )
    assert outcome.data == {**data("matrix.json"), **CREDIT[Backend.GENESIS]}


async def test_cell_outside_the_matrix_is_malformed(stub, dispatcher, genesis):
    stub.route("POST", MATRIX, json_body={"data": [{"originIndex": 5, "destinationIndex": 0, "routeSummary": {}}]})
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM], "destinations": [UTRECHT]}, genesis
    )
    assert outcome.data["error"]["code"] == "malformed"


async def test_more_cells_than_the_limit_names_both_inputs(stub, dispatcher, genesis):
    origins = [[4.0 + i / 100, 52.0] for i in range(15)]
    destinations = [[5.0 + i / 100, 52.0] for i in range(14)]
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": origins, "destinations": destinations}, genesis
    )
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error["arguments"] == ["origins", "destinations"]
    assert "210 cells; the limit is 200" in error["message"]
    assert stub.requests == []


async def test_more_origins_than_the_limit_names_origins(stub, dispatcher, genesis):
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM] * 101, "destinations": [UTRECHT]}, genesis
    )
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == "origins"
    assert "100" in outcome.data["error"]["message"]
    assert stub.requests == []


ORBIS_ROUTE = ORBIS_PATH
ROUTE_V3 = v3_answer(data("route.json"))


async def test_orbis_composes_the_matrix_from_one_route_per_pair(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, json_body=ROUTE_V3)
    outcome = await dispatcher.call(
        "tomtom-matrix-routing",
        {"origins": [AMSTERDAM, UTRECHT], "destinations": [ROTTERDAM], "departAt": "now", "avoid": ["tollRoads"]},
        context,
    )
    assert not outcome.is_error, outcome.text
    summary = data("route.json")["routes"][0]["summary"]
    cell = {
        "time_s": summary["travelTimeInSeconds"],
        "distance_m": summary["lengthInMeters"],
        "delay_s": summary["trafficDelayInSeconds"],
    }
    assert outcome.data["matrix"] == [[cell], [cell]]
    assert outcome.data["routing_requests"] == 2  # the cost, stated in the answer
    assert {(r.method, r.path) for r in stub.requests} == {("POST", ORBIS_PATH)}
    pairs = sorted(
        (
            r.json()["routePlanningLocations"]["origin"]["coordinates"],
            r.json()["routePlanningLocations"]["destination"]["coordinates"],
        )
        for r in stub.requests
    )
    assert pairs == sorted([(AMSTERDAM, ROTTERDAM), (UTRECHT, ROTTERDAM)])
    sent = stub.requests[-1]
    assert sent.headers["tomtom-api-version"] == "3"
    assert sent.headers["attributes"] == "routes(summary)"  # a cell needs the summary alone
    body = sent.json()
    assert body["avoids"] == ["tollRoads"] and "departureDateTime" not in body  # now: v3's default
    assert "travelMode" not in body  # Orbis plans for cars only


async def test_orbis_full_is_each_pairs_answer(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, json_body=ROUTE_V3)
    outcome = await dispatcher.call(
        "tomtom-matrix-routing",
        {"origins": [AMSTERDAM], "destinations": [ROTTERDAM, UTRECHT], "response_detail": "full"},
        context,
    )
    assert outcome.data["routing_requests"] == 2
    assert [(c["origin"], c["destination"]) for c in outcome.data["cells"]] == [(0, 0), (0, 1)]
    (route,) = outcome.data["cells"][1]["route"]["routes"]  # in the shape both backends share
    assert route["summary"] == data("route.json")["routes"][0]["summary"]


async def test_orbis_a_pair_without_a_route_is_a_cell_error(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, json_body=ROUTE_V3)
    stub.route("POST", ORBIS_ROUTE, status=400, json_body={"detailedError": {"code": "NO_ROUTE_FOUND"}}, times=1)
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM], "destinations": [ROTTERDAM, UTRECHT]}, context
    )
    refused = stub.requests[0].json()["routePlanningLocations"]["destination"]["coordinates"]  # the first asked
    j = [ROTTERDAM, UTRECHT].index(refused)
    assert outcome.data["matrix"][0][j] == {"error": "NO_ROUTE"}
    assert outcome.data["failed"] == 1 and outcome.data["nearest"][0]["destination"] == 1 - j


async def test_orbis_a_wrong_shaped_pair_answer_is_malformed(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, json_body={"routes": [{"summary": {"travelDurationInSeconds": "long"}}]})
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM], "destinations": [UTRECHT]}, context
    )
    error = outcome.data["error"]
    assert error["code"] == "malformed"
    assert "`routes[0].summary.travelDurationInSeconds` is a string" in error["message"]


async def test_orbis_a_request_tomtom_refuses_for_every_pair_is_the_calls_error(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, status=400, json_body={"detailedError": {"message": "Invalid departAt"}})
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM], "destinations": [ROTTERDAM, UTRECHT]}, context
    )
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert "Invalid departAt" in outcome.data["error"]["message"]


async def test_orbis_limits_the_pairs_it_pays_for(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM] * 2, "destinations": [UTRECHT] * 13}, context
    )
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments" and error["arguments"] == ["origins", "destinations"]
    assert "26 cells; the limit is 25 on tomtom-orbis-maps" in error["message"]
    assert stub.requests == []


async def test_orbis_refuses_trucks_naming_the_backend_that_takes_them(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM], "destinations": [UTRECHT], "travelMode": "truck"}, context
    )
    error = outcome.data["error"]
    assert error["code"] == "unsupported" and error["argument"] == "travelMode"
    assert "`tomtom-maps-backend: tomtom-maps`" in error["message"]
    assert stub.requests == []


async def test_orbis_a_failure_ends_the_call_and_cancels_the_calls_still_waiting(stub, dispatcher, context):
    stub.route("POST", ORBIS_ROUTE, status=401, json_body={"detailedError": {"message": "bad key"}})
    destinations = [[4.0 + i / 100, 52.0] for i in range(25)]
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM], "destinations": destinations}, context
    )
    assert outcome.data["error"]["code"] == "unauthorized"
    assert len(stub.requests) < 25  # five at a time: the first refusal stops the rest
