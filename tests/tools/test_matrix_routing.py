"""tomtom-matrix-routing: the request TomTom Maps gets, the compact matrix, and its limits.

The answer (tests/data/matrix.json) is written from TomTom's documented Synchronous Matrix
response shape (`data[]` cells with `routeSummary` or `detailedError`, `statistics`); no
recorded answer exists yet (tests/data/PROVENANCE.md).
"""

import pytest

from tests.conftest import data
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
    assert outcome.data == data("matrix.json")


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


async def test_orbis_is_unsupported_before_any_request(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-matrix-routing", {"origins": [AMSTERDAM], "destinations": [UTRECHT]}, context
    )
    assert outcome.data["error"]["code"] == "unsupported"
    assert "tomtom-orbis-maps" in outcome.data["error"]["message"]
    assert "tomtom-routing" in outcome.data["error"]["message"]
    assert stub.requests == []
