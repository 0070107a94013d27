import pytest

from tests.conftest import CANARY_KEY, CREDIT, data, recorded
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATHS = {
    Backend.ORBIS: "/maps/orbis/places/reverseGeocode",
    Backend.GENESIS: "/search/2/reverseGeocode/52.37314,4.89273.json",
}
ANSWERS = {Backend.ORBIS: "reverse_geocode_v2.json", Backend.GENESIS: "reverse_geocode.json"}


async def test_orbis_sends_reverse_geocoding_v2_longitude_first(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode_v2.json"))
    outcome = await dispatcher.call(
        "tomtom-reverse-geocode",
        {"position": [4.89273, 52.37314], "radius": 50, "language": "nl-NL", "heading": 90},
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == PATHS[Backend.ORBIS]
    assert sent.query == {"position": ["4.89273,52.37314"], "radiusInMeters": ["50"], "vehicleHeadingInDegrees": ["90"]}
    assert "key=" not in sent.raw_path
    assert sent.headers["tomtom-api-key"] == CANARY_KEY
    assert (sent.headers["tomtom-api-version"], sent.headers["attributes"]) == ("2", "results(*)")
    assert sent.headers["accept-language"] == "nl-NL"


async def test_genesis_request_keeps_its_parameters_and_the_key_parameter(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("reverse_geocode.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call(
        "tomtom-reverse-geocode",
        {"position": [4.89273, 52.37314], "radius": 50, "language": "nl-NL", "heading": 90, "returnSpeedLimit": True},
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == PATHS[Backend.GENESIS]
    assert sent.query == {
        "radius": ["50"],
        "language": ["nl-NL"],
        "heading": ["90"],
        "returnSpeedLimit": ["true"],
        "key": [CANARY_KEY],
    }
    assert "tomtom-api-key" not in sent.headers


async def test_entity_type_asks_for_the_area(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode_v2.json"))
    await dispatcher.call(
        "tomtom-reverse-geocode",
        {"position": [4.89273, 52.37314], "entityType": ["Municipality", "PostalCodeArea"]},
        context,
    )
    assert stub.requests[-1].param("areaTypes") == "municipality,postalCode"


async def test_entity_type_on_genesis(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("reverse_geocode.json"))
    context.backend = Backend.GENESIS
    await dispatcher.call(
        "tomtom-reverse-geocode",
        {"position": [4.89273, 52.37314], "entityType": ["Municipality", "PostalCodeArea"]},
        context,
    )
    assert stub.requests[-1].param("entityType") == "Municipality,PostalCodeArea"


@pytest.mark.parametrize(
    "body",
    [
        {"addresses": []},
        {"results": [{"address": {"streetName": "Dam"}}]},
        {"results": [{"position": {"type": "Point", "coordinates": [4.9, 95]}}]},
        {"results": [{"position": "52.3,4.9"}]},
    ],
)
async def test_orbis_answers_of_the_wrong_shape_are_malformed(stub, dispatcher, context, body):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=body)
    outcome = await dispatcher.call("tomtom-reverse-geocode", {"position": [4.9, 52.3]}, context)
    if body == {"addresses": []}:  # no `results`: nothing found, as v2 says it
        assert outcome.data["results"] == []
        return
    assert outcome.data["error"]["code"] == "malformed"


@pytest.mark.parametrize("backend", list(Backend))
async def test_compact_answer(stub, dispatcher, context, backend):
    """Orbis v2 and TomTom Maps, answering for the same place, compact to the same answer."""
    stub.route("GET", PATHS[backend], json_body=data(ANSWERS[backend]))
    context.backend = backend
    outcome = await dispatcher.call("tomtom-reverse-geocode", {"position": [4.89273, 52.37314]}, context)
    assert outcome.data == {
        "results": [
            {
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
            }
        ],
        "total": 1,
        "returned": 1,
        "truncated": False,
        "show_ui": False,
        **CREDIT[backend],
    }


async def test_orbis_refuses_the_speed_limit_it_cannot_return(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-reverse-geocode", {"position": [4.89273, 52.37314], "returnSpeedLimit": True}, context
    )
    error = outcome.data["error"]
    assert (error["code"], error["argument"]) == ("unsupported", "returnSpeedLimit")
    assert "not available on tomtom-orbis-maps (Orbis Reverse Geocoding v2 returns no speed limit)" in error["message"]
    assert stub.requests == []


async def test_speed_limit_is_kept_only_when_asked(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("reverse_geocode.json"))
    context.backend = Backend.GENESIS
    asked = await dispatcher.call(
        "tomtom-reverse-geocode", {"position": [4.89273, 52.37314], "returnSpeedLimit": True}, context
    )
    assert asked.data["results"][0]["address"]["speedLimit"] == "30.00KPH"
    not_asked = await dispatcher.call("tomtom-reverse-geocode", {"position": [4.89273, 52.37314]}, context)
    assert "speedLimit" not in not_asked.text


async def test_full_is_the_untrimmed_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("reverse_geocode.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call(
        "tomtom-reverse-geocode", {"position": [4.89273, 52.37314], "response_detail": "full"}, context
    )
    assert outcome.data == {**data("reverse_geocode.json"), "show_ui": False, **CREDIT[Backend.GENESIS]}


async def test_orbis_full_is_every_member_in_the_reverse_layout(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode_v2.json"))
    outcome = await dispatcher.call(
        "tomtom-reverse-geocode", {"position": [4.89273, 52.37314], "response_detail": "full"}, context
    )
    (entry,) = outcome.data["addresses"]
    assert entry["position"] == "52.373141,4.892734"
    assert (entry["id"], entry["type"], entry["title"]) == ("rev-1", "Point Address", "Dam 1, 1012 JS Amsterdam")
    assert entry["address"]["streetName"] == "Dam" and entry["address"]["streetNumber"] == "1"
    assert entry["address"]["countrySubdivisionCodeIso"] == "NH"  # members we do not rename pass through


async def test_recorded_genesis_answer(stub, dispatcher, context):
    body = recorded("genesis-reverse-geocode.json")
    stub.route("GET", r"/search/2/reverseGeocode/.*", json_body=body)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-reverse-geocode", {"position": [4.893373, 52.373417]}, context)
    (result,) = outcome.data["results"]
    assert result["address"]["freeformAddress"] == "Damrak 97, 1012 LP Amsterdam"
    assert result["position"] == [4.89337, 52.37342]


async def test_heading_and_entity_type_exclude_each_other(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-reverse-geocode", {"position": [4.9, 52.3], "heading": 90, "entityType": ["Municipality"]}, context
    )
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error["arguments"] == ["entityType", "heading"]
    assert error["message"].startswith("`entityType` and `heading`: an area lookup takes no heading")
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "argument", "message"),
    [
        ({"position": [52.3, 104.9]}, "position[1]", "position[1]: latitude 104.9 is outside -90..90"),
        (
            {"position": [4.9, 52.3], "entityType": ["Town"]},
            "entityType[0]",
            "entityType[0]: 'Town' is not one of the allowed values",
        ),
        ({"position": [4.9, 52.3], "heading": 400}, "heading", "heading: should be less than or equal to 360"),
        ({"position": [4.9, 52.3], "heading": "90"}, "heading", "heading: should be a valid number"),
        ({"position": [4.9, 52.3], "radius": 0}, "radius", "radius: should be greater than or equal to 1"),
        ({"position": [4.9, 52.3], "radius": 20_000_001}, "radius", "radius: should be less than or equal to 20000000"),
        ({"position": [4.9, 52.3], "language": "x" * 36}, "language", "language: should have at most 35"),
        ({"position": [4.9, 52.3], "entityType": []}, "entityType", "entityType: should have at least 1 item"),
    ],
)
async def test_bad_arguments_are_named(stub, dispatcher, context, arguments, argument, message):
    outcome = await dispatcher.call("tomtom-reverse-geocode", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []
