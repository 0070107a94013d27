import pytest

from tests.conftest import CREDIT, data, recorded
from tools.shaping.traffic import FIELDS, FULL_FIELDS
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

ORBIS = r"/maps/orbis/traffic/incidentDetails"
GENESIS = r"/traffic/services/5/incidentDetails"
BOX = [4.8, 52.33, 4.95, 52.4]


@pytest.mark.parametrize(("backend", "path"), [(Backend.ORBIS, ORBIS), (Backend.GENESIS, GENESIS)])
async def test_request(stub, dispatcher, context, backend, path):
    stub.route("GET", path, json_body=data("traffic.json"))
    context.backend = backend
    await dispatcher.call(
        "tomtom-traffic", {"bbox": BOX, "categoryFilter": ["jam", "road-closed"], "language": "nl-NL"}, context
    )
    sent = stub.requests[-1]
    assert sent.path == path
    assert sent.param("bbox") == "4.8,52.33,4.95,52.4"
    assert sent.param("categoryFilter") == "6,8"
    assert sent.param("language") == "nl-NL"
    assert sent.param("timeValidityFilter") == "present"
    assert sent.param("fields").startswith("{incidents{")


async def test_compact_is_capped_most_severe_first(stub, dispatcher, context):
    stub.route("GET", ORBIS, json_body=data("traffic.json"))
    outcome = await dispatcher.call("tomtom-traffic", {"bbox": BOX, "maxResults": 3}, context)
    assert outcome.data["incidents"] == [
        {
            "category": "road-closed",
            "magnitudeOfDelay": "indefinite",
            "from": "Street 1",
            "to": "Street 2",
            "lengthInMeters": 122,
            "delayInSeconds": 60,
            "startTime": "2026-11-29T07:00:00Z",
            "events": ["Stationary traffic"],
        },
        {
            "category": "accident",
            "magnitudeOfDelay": "major",
            "from": "Street 3",
            "to": "Street 4",
            "lengthInMeters": 124,
            "delayInSeconds": 180,
            "startTime": "2026-11-29T07:00:00Z",
            "events": ["Stationary traffic"],
        },
        {
            "category": "jam",
            "magnitudeOfDelay": "moderate",
            "from": "Street 4",
            "to": "Street 5",
            "lengthInMeters": 124,
            "startTime": "2026-11-29T07:00:00Z",
            "events": ["Stationary traffic"],
        },
    ]
    assert (outcome.data["total"], outcome.data["returned"], outcome.data["truncated"]) == (6, 3, True)
    assert outcome.data["incidentsByCategory"] == {
        "jam": 2,
        "road-closed": 1,
        "roadworks": 1,
        "accident": 1,
        "broken-down-vehicle": 1,
    }


async def test_full_is_uncapped(stub, dispatcher, context):
    stub.route("GET", ORBIS, json_body=data("traffic.json"))
    outcome = await dispatcher.call(
        "tomtom-traffic", {"bbox": BOX, "maxResults": 1, "response_detail": "full"}, context
    )
    assert outcome.data == {**data("traffic.json"), "show_ui": False, **CREDIT[Backend.ORBIS]}


async def test_recorded_answers_compact_the_same_on_both_backends(stub, dispatcher, context):
    for name, path, backend in (
        ("geometry-orbis-traffic.json", ORBIS, Backend.ORBIS),
        ("geometry-genesis-traffic.json", GENESIS, Backend.GENESIS),
    ):
        stub.route("GET", path, json_body=recorded(name))
        context.backend = backend
        outcome = await dispatcher.call("tomtom-traffic", {"bbox": BOX}, context)
        assert outcome.data["returned"] == 3
        assert {i["category"] for i in outcome.data["incidents"]} <= {"road-closed", "roadworks", "danger"}
        assert set(outcome.data["incidents"][0]) <= {
            "category",
            "magnitudeOfDelay",
            "from",
            "to",
            "lengthInMeters",
            "delayInSeconds",
            "roadNumbers",
            "startTime",
            "endTime",
            "events",
        }


async def test_a_box_too_large_is_refused_before_calling_tomtom(stub, dispatcher, context):
    outcome = await dispatcher.call("tomtom-traffic", {"bbox": [0, 40, 5, 45]}, context)
    assert outcome.data["error"]["argument"] == "bbox"
    assert "limit is 10,000 km²" in outcome.data["error"]["message"]
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({"categoryFilter": ["jam", "traffic"]}, "categoryFilter[1]"),
        ({"timeValidityFilter": []}, "timeValidityFilter"),
        ({"maxResults": 1001}, "maxResults"),
        ({"language": "x" * 36}, "language"),
        ({"bbox": [4.95, 52.33, 4.95, 52.4]}, "bbox"),
    ],
)
async def test_invalid_arguments_name_the_input(stub, dispatcher, context, arguments, argument):
    outcome = await dispatcher.call("tomtom-traffic", {"bbox": BOX, **arguments}, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert stub.requests == []


async def test_full_asks_for_every_incident_field(stub, dispatcher, context):
    stub.route("GET", r"/maps/orbis/traffic/incidentDetails", json_body=data("traffic.json"))
    await dispatcher.call("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4]}, context)
    assert stub.requests[-1].param("fields") == FIELDS
    await dispatcher.call("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4], "response_detail": "full"}, context)
    assert stub.requests[-1].param("fields") == FULL_FIELDS
    assert "probabilityOfOccurrence" in FULL_FIELDS and "tmc{" in FULL_FIELDS
