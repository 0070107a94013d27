import pytest

from tests.conftest import CANARY_KEY, CREDIT, data, recorded
from tools.context import CallContext
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

BACKEND_PATHS = {
    Backend.ORBIS: r"/maps/orbis/places/geocode",
    Backend.GENESIS: r"/search/2/geocode/.*\.json",
}
ANSWERS = {Backend.ORBIS: "geocode_v2.json", Backend.GENESIS: "geocode.json"}


async def test_orbis_sends_geocoding_v2_with_the_key_in_its_header(stub, dispatcher, context):
    stub.route("GET", BACKEND_PATHS[Backend.ORBIS], json_body=data("geocode_v2.json"))
    outcome = await dispatcher.call(
        "tomtom-geocode",
        {
            "query": "Dam 1/Amsterdam",
            "countries": ["nl", "be"],
            "position": [4.9, 52.37],
            "radius": 5000.4,
            "language": "nl-NL",
            "entityTypeSet": ["Municipality", "PostalCodeArea"],
            "limit": 3,
        },
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == "/maps/orbis/places/geocode"
    assert sent.query == {
        "query": ["Dam 1/Amsterdam"],
        "maxResults": ["3"],
        "countryCodesIso2": ["NL,BE"],
        "position": ["4.9,52.37"],
        "radiusInMeters": ["5000"],
        "types": ["area"],
        "areaTypes": ["municipality,postalCode"],
    }
    assert "key=" not in sent.raw_path and sent.param("key") is None
    assert sent.headers["tomtom-api-key"] == CANARY_KEY
    assert sent.headers["tomtom-api-version"] == "2"
    assert sent.headers["attributes"] == "results(*)"
    assert sent.headers["accept-language"] == "nl-NL"
    assert sent.headers["tomtom-user-agent"] == "TomTomMCPSDK/9.9.9 pytest"


async def test_orbis_bounding_box_is_longitude_first(stub, dispatcher, context):
    stub.route("GET", BACKEND_PATHS[Backend.ORBIS], json_body=data("geocode_v2.json"))
    await dispatcher.call("tomtom-geocode", {"query": "Dam", "boundingBox": [4.8, 52.3, 5.0, 52.4]}, context)
    assert stub.requests[-1].param("bbox") == "4.8,52.3,5,52.4"
    assert "accept-language" not in stub.requests[-1].headers


async def test_genesis_keeps_the_key_parameter(stub, dispatcher, context):
    stub.route("GET", BACKEND_PATHS[Backend.GENESIS], json_body=data("geocode.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call(
        "tomtom-geocode",
        {"query": "Dam 1/Amsterdam", "countries": ["nl"], "position": [4.9, 52.37], "radius": 5000.4},
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == "/search/2/geocode/Dam 1/Amsterdam.json"  # `/` is encoded on the wire, decoded here
    assert sent.param("apiVersion") is None
    assert sent.param("countrySet") == "NL"
    assert (sent.param("lat"), sent.param("lon"), sent.param("radius")) == ("52.37", "4.9", "5000")
    assert sent.param("key") == CANARY_KEY and "tomtom-api-key" not in sent.headers
    assert sent.headers["tomtom-user-agent"] == "TomTomMCPSDK/9.9.9 pytest"


async def test_both_versions_compact_alike(stub, dispatcher, config):
    """The same places, answered by Orbis v2 and by TomTom Maps, compact to the same results."""
    answers = {}
    for backend in Backend:
        stub.route("GET", BACKEND_PATHS[backend], json_body=data(ANSWERS[backend]))
        context = CallContext(config=config, transport="exec", backend=backend)
        outcome = await dispatcher.call("tomtom-geocode", {"query": "dam 1 amsterdam"}, context)
        assert not outcome.is_error, outcome.text
        assert stub.requests[-1].path.startswith(BACKEND_PATHS[backend][:12])
        answers[backend] = outcome.data["results"]
    assert answers[Backend.ORBIS] == answers[Backend.GENESIS]
    assert len(answers[Backend.ORBIS]) == 2


async def test_an_orbis_area_keeps_its_geography_type(stub, dispatcher, context):
    area = {
        "id": "NL/GEO/p0/9",
        "type": "area",
        "areaType": "neighborhood",
        "title": "Jordaan, Amsterdam",
        "address": {"neighborhood": "Jordaan", "municipality": "Amsterdam", "countryCodeIso2": "NL"},
        "position": {"type": "Point", "coordinates": [4.8807, 52.3759]},
    }
    stub.route("GET", BACKEND_PATHS[Backend.ORBIS], json_body={"results": [area]})
    outcome = await dispatcher.call("tomtom-geocode", {"query": "Jordaan", "entityTypeSet": ["Neighbourhood"]}, context)
    assert stub.requests[-1].param("areaTypes") == "neighborhood"
    assert outcome.data["results"] == [
        {
            "type": "Geography",
            "entityType": "Neighbourhood",
            "address": {
                "freeformAddress": "Jordaan, Amsterdam",
                "municipality": "Amsterdam",
                "neighbourhood": "Jordaan",
                "countryCode": "NL",
            },
            "position": [4.8807, 52.3759],
        }
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"results": {"type": "Street"}},
        {"results": [{"type": "Street", "address": {}}]},
        {"results": [{"position": {"lat": 52.3, "lon": 4.9}}]},
        {"results": [{"position": {"type": "Point", "coordinates": [4.9]}}]},
        {"results": [{"position": {"type": "Point", "coordinates": [200, 52.3]}}]},
        {"results": [{"position": {"type": "Point", "coordinates": [4.9, 52.3]}, "address": "Dam"}]},
        ["not", "an", "object"],
    ],
)
async def test_orbis_answers_of_the_wrong_shape_are_malformed(stub, dispatcher, context, body):
    stub.route("GET", BACKEND_PATHS[Backend.ORBIS], json_body=body)
    outcome = await dispatcher.call("tomtom-geocode", {"query": "dam"}, context)
    assert outcome.is_error
    assert outcome.data["error"]["code"] == "malformed"
    assert CANARY_KEY not in outcome.text


async def test_compact_keeps_the_answer_and_drops_the_rest(stub, dispatcher, context):
    stub.route("GET", BACKEND_PATHS[Backend.GENESIS], json_body=data("geocode.json"))
    context.backend = Backend.GENESIS
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
        **CREDIT[Backend.GENESIS],
    }


async def test_full_is_the_untrimmed_answer(stub, dispatcher, context):
    stub.route("GET", BACKEND_PATHS[Backend.GENESIS], json_body=data("geocode.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-geocode", {"query": "dam", "response_detail": "full"}, context)
    assert outcome.data == {**data("geocode.json"), "show_ui": False, **CREDIT[Backend.GENESIS]}


async def test_orbis_full_keeps_every_member_with_points_as_lat_lon(stub, dispatcher, context):
    stub.route("GET", BACKEND_PATHS[Backend.ORBIS], json_body=data("geocode_v2.json"))
    outcome = await dispatcher.call("tomtom-geocode", {"query": "dam", "response_detail": "full"}, context)
    first = outcome.data["results"][0]
    assert first["position"] == {"lat": 52.3731409, "lon": 4.8927346}
    assert (first["id"], first["type"], first["title"]) == ("NL/PAD/p0/1", "Point Address", "Dam 1, 1012 JS Amsterdam")
    assert first["address"]["streetNumber"] == "1" and "houseNumber" not in first["address"]
    assert first["accessPoints"] == data("geocode_v2.json")["results"][0]["accessPoints"]  # kept as sent
    assert outcome.data["summary"] == {"numResults": 2, "totalResults": 2}


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
