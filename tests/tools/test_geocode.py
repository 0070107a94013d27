import pytest

from tests.conftest import CANARY_KEY, CREDIT, data, recorded
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

BACKEND_PATHS = {
    Backend.ORBIS: r"/maps/orbis/places/geocode/.*\.json",
    Backend.GENESIS: r"/search/2/geocode/.*\.json",
}


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, dispatcher, context, backend):
    stub.route("GET", BACKEND_PATHS[backend], json_body=data("geocode.json"))
    context.backend = backend
    outcome = await dispatcher.call(
        "tomtom-geocode",
        {"query": "Dam 1/Amsterdam", "countries": ["nl"], "position": [4.9, 52.37], "radius": 5000.4},
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    expected_prefix = "/maps/orbis/places/geocode/" if backend is Backend.ORBIS else "/search/2/geocode/"
    assert sent.path == expected_prefix + "Dam 1/Amsterdam.json"  # `/` is encoded on the wire, decoded here
    assert sent.param("apiVersion") == ("1" if backend is Backend.ORBIS else None)
    assert sent.param("countrySet") == "NL"
    assert (sent.param("lat"), sent.param("lon"), sent.param("radius")) == ("52.37", "4.9", "5000")
    assert sent.param("key") == CANARY_KEY
    assert sent.headers["tomtom-user-agent"] == "TomTomMCPSDK/9.9.9 pytest"


async def test_compact_keeps_the_answer_and_drops_the_rest(stub, dispatcher, context):
    stub.route("GET", BACKEND_PATHS[Backend.ORBIS], json_body=data("geocode.json"))
    outcome = await dispatcher.call("tomtom-geocode", {"query": "dam 1 amsterdam"}, context)
    assert outcome.data == {
        "results": [
            {
                "type": "Point Address",
                "address": {
                    "freeformAddress": "Dam 1, 1012 JS Amsterdam",
                    "streetNumber": "1",
                    "streetName": "Dam",
                    "municipality": "Amsterdam",
                    "postalCode": "1012",
                    "countrySubdivision": "Noord-Holland",
                    "country": "Nederland",
                    "countryCode": "NL",
                },
                "position": [4.89273, 52.37314],
            },
            {
                "type": "Street",
                "address": {
                    "freeformAddress": "Dam, Edam",
                    "streetName": "Dam",
                    "municipality": "Edam",
                    "country": "Nederland",
                    "countryCode": "NL",
                },
                "position": [5.04802, 52.51381],
            },
        ],
        "total": 7,
        "returned": 2,
        "truncated": True,
        "show_ui": False,
        **CREDIT[Backend.ORBIS],
    }


async def test_full_is_the_untrimmed_answer(stub, dispatcher, context):
    stub.route("GET", BACKEND_PATHS[Backend.ORBIS], json_body=data("geocode.json"))
    outcome = await dispatcher.call("tomtom-geocode", {"query": "dam", "response_detail": "full"}, context)
    assert outcome.data == {**data("geocode.json"), "show_ui": False, **CREDIT[Backend.ORBIS]}


async def test_genesis_recorded_answer_compacts(stub, dispatcher, context):
    body = recorded("genesis-fuzzy-search.json")
    stub.route("GET", BACKEND_PATHS[Backend.GENESIS], json_body=body)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-geocode", {"query": "coffee"}, context)
    assert outcome.data["returned"] == len(body["results"])
    assert outcome.data["results"][0]["position"] == [4.90646, 52.36734]
    assert len(outcome.text) < len(str(body)) / 2


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": "x", "radius": 10}, "`radius` and `position`: `radius` needs `position`"),
        (
            {"query": "x", "position": [4, 52], "boundingBox": [4, 52, 5, 53]},
            "`position` and `boundingBox`: bias near a position or limit to a box, not both",
        ),
        ({"query": "x", "position": [52, 100]}, "position[1]: latitude 100 is outside -90..90"),
        ({"query": "x", "boundingBox": [5, 53, 4, 52]}, "boundingBox: must be [minLon, minLat, maxLon, maxLat]"),
        ({"query": "x", "entityTypeSet": ["Town"]}, "entityTypeSet[0]: 'Town' is not one of the allowed values"),
    ],
)
async def test_bad_arguments_are_named(stub, dispatcher, context, arguments, message):
    outcome = await dispatcher.call("tomtom-geocode", arguments, context)
    assert outcome.is_error
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []
