import pytest

from tests.conftest import CANARY_KEY, CREDIT, data, recorded
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATHS = {
    Backend.ORBIS: "/maps/orbis/places/reverseGeocode/52.37314,4.89273.json",
    Backend.GENESIS: "/search/2/reverseGeocode/52.37314,4.89273.json",
}


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, dispatcher, context, backend):
    stub.route("GET", PATHS[backend], json_body=data("reverse_geocode.json"))
    context.backend = backend
    outcome = await dispatcher.call(
        "tomtom-reverse-geocode",
        {"position": [4.89273, 52.37314], "radius": 50, "language": "nl-NL", "heading": 90, "returnSpeedLimit": True},
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == PATHS[backend]
    assert sent.query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "radius": ["50"],
        "language": ["nl-NL"],
        "heading": ["90"],
        "returnSpeedLimit": ["true"],
        "key": [CANARY_KEY],
    }


async def test_entity_type_asks_for_the_area(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode.json"))
    await dispatcher.call(
        "tomtom-reverse-geocode",
        {"position": [4.89273, 52.37314], "entityType": ["Municipality", "PostalCodeArea"]},
        context,
    )
    assert stub.requests[-1].param("entityType") == "Municipality,PostalCodeArea"


async def test_compact_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode.json"))
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
        **CREDIT[Backend.ORBIS],
    }


async def test_speed_limit_is_kept_only_when_asked(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode.json"))
    asked = await dispatcher.call(
        "tomtom-reverse-geocode", {"position": [4.89273, 52.37314], "returnSpeedLimit": True}, context
    )
    assert asked.data["results"][0]["address"]["speedLimit"] == "30.00KPH"
    not_asked = await dispatcher.call("tomtom-reverse-geocode", {"position": [4.89273, 52.37314]}, context)
    assert "speedLimit" not in not_asked.text


async def test_full_is_the_untrimmed_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode.json"))
    outcome = await dispatcher.call(
        "tomtom-reverse-geocode", {"position": [4.89273, 52.37314], "response_detail": "full"}, context
    )
    assert outcome.data == {**data("reverse_geocode.json"), "show_ui": False, **CREDIT[Backend.ORBIS]}


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
