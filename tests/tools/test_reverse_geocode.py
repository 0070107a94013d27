import pytest

from tests.conftest import CANARY_KEY, data, recorded
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATHS = {
    Backend.ORBIS: "/maps/orbis/places/reverseGeocode/52.37314,4.89273.json",
    Backend.GENESIS: "/search/2/reverseGeocode/52.37314,4.89273.json",
}


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, catalog, context, backend):
    stub.route("GET", PATHS[backend], json_body=data("reverse_geocode.json"))
    context.backend = backend
    outcome = await catalog.call(
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


async def test_entity_type_asks_for_the_area(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode.json"))
    await catalog.call(
        "tomtom-reverse-geocode",
        {"position": [4.89273, 52.37314], "entityType": ["Municipality", "PostalCodeArea"]},
        context,
    )
    assert stub.requests[-1].param("entityType") == "Municipality,PostalCodeArea"


async def test_compact_answer(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode.json"))
    outcome = await catalog.call("tomtom-reverse-geocode", {"position": [4.89273, 52.37314]}, context)
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
    }


async def test_speed_limit_is_kept_only_when_asked(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode.json"))
    asked = await catalog.call(
        "tomtom-reverse-geocode", {"position": [4.89273, 52.37314], "returnSpeedLimit": True}, context
    )
    assert asked.data["results"][0]["address"]["speedLimit"] == "30.00KPH"
    not_asked = await catalog.call("tomtom-reverse-geocode", {"position": [4.89273, 52.37314]}, context)
    assert "speedLimit" not in not_asked.text


async def test_full_is_the_untrimmed_answer(stub, catalog, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("reverse_geocode.json"))
    outcome = await catalog.call(
        "tomtom-reverse-geocode", {"position": [4.89273, 52.37314], "response_detail": "full"}, context
    )
    assert outcome.data == data("reverse_geocode.json")


async def test_recorded_genesis_answer(stub, catalog, context):
    body = recorded("genesis-reverse-geocode.json")
    stub.route("GET", r"/search/2/reverseGeocode/.*", json_body=body)
    context.backend = Backend.GENESIS
    outcome = await catalog.call("tomtom-reverse-geocode", {"position": [4.893373, 52.373417]}, context)
    (result,) = outcome.data["results"]
    assert result["address"]["freeformAddress"] == "Damrak 97, 1012 LP Amsterdam"
    assert result["position"] == [4.89337, 52.37342]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"position": [4.9, 52.3], "heading": 90, "entityType": ["Municipality"]},
            "`entityType` and `heading`: an area lookup takes no heading",
        ),
        ({"position": [52.3, 104.9]}, "position[1]: latitude 104.9 is outside -90..90"),
        ({"position": [4.9, 52.3], "entityType": ["Town"]}, "entityType[0]: 'Town' is not one of the allowed values"),
        ({"position": [4.9, 52.3], "heading": 400}, "heading: 400 is greater than the maximum of 360"),
    ],
)
async def test_bad_arguments_are_named(stub, catalog, context, arguments, message):
    outcome = await catalog.call("tomtom-reverse-geocode", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []
