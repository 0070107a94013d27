import pytest

from tests.conftest import CANARY_KEY, CREDIT, data, recorded
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATHS = {
    Backend.ORBIS: "/maps/orbis/places/search/coffe amsterdam.json",
    Backend.GENESIS: "/search/2/search/coffe amsterdam.json",
}


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, dispatcher, context, backend):
    stub.route("GET", PATHS[backend], json_body=data("poi_search.json"))
    context.backend = backend
    outcome = await dispatcher.call(
        "tomtom-fuzzy-search",
        {
            "query": "coffe amsterdam",
            "limit": 5,
            "language": "en-GB",
            "countries": ["nl", "be"],
            "position": [4.9041, 52.3676],
            "radius": 2000,
            "poiCategories": [9376, 9376002],
            "idxSet": ["POI", "PAD"],
        },
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == PATHS[backend]
    assert sent.query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "limit": ["5"],
        "language": ["en-GB"],
        "countrySet": ["NL,BE"],
        "lon": ["4.9041"],
        "lat": ["52.3676"],
        "radius": ["2000"],
        "categorySet": ["9376,9376002"],
        "idxSet": ["POI,PAD"],
        **({} if backend is Backend.ORBIS else {"key": [CANARY_KEY]}),  # Orbis: the key in its header
    }


async def test_bounding_box_becomes_corners(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_search.json"))
    await dispatcher.call(
        "tomtom-fuzzy-search", {"query": "coffe amsterdam", "boundingBox": [4.8, 52.3, 5.0, 52.4]}, context
    )
    sent = stub.requests[-1]
    assert (sent.param("topLeft"), sent.param("btmRight")) == ("52.4,4.8", "52.3,5.0")
    assert sent.param("limit") == "10"


async def test_compact_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_search.json"))
    outcome = await dispatcher.call("tomtom-fuzzy-search", {"query": "coffe amsterdam"}, context)
    assert outcome.data["results"][1] == {
        "id": "NL/POI/p0/101",
        "type": "POI",
        "address": {
            "freeformAddress": "Rozengracht 3, 1016 LR Amsterdam",
            "streetNumber": "3",
            "streetName": "Rozengracht",
            "municipality": "Amsterdam",
            "postalCode": "1016",
            "country": "Nederland",
            "countryCode": "NL",
        },
        "position": [4.8833, 52.37391],
        "poi": {"name": "Jordaan Apotheek", "categories": ["pharmacy"]},
        "distanceInMeters": 846,
    }
    assert (outcome.data["total"], outcome.data["returned"], outcome.data["truncated"]) == (12, 2, True)
    assert "openingHours" not in outcome.text and "timeZone" not in outcome.text


async def test_full_is_the_untrimmed_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_search.json"))
    outcome = await dispatcher.call(
        "tomtom-fuzzy-search", {"query": "coffe amsterdam", "response_detail": "full"}, context
    )
    cursor = outcome.data["nextCursor"]  # how to page on (tests/tools/test_search_paging.py)
    more = f'Results 1-2 of 12; next: call again with the same arguments and cursor="{cursor}".'
    assert outcome.data == {
        **data("poi_search.json"),
        "nextCursor": cursor,
        "more": more,
        "show_ui": False,
        **CREDIT[Backend.ORBIS],
    }


async def test_recorded_genesis_answer(stub, dispatcher, context):
    body = recorded("genesis-fuzzy-search.json")
    stub.route("GET", "/search/2/search/coffee.json", json_body=body)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-fuzzy-search", {"query": "coffee", "position": [4.9041, 52.3676]}, context)
    first = outcome.data["results"][0]
    assert first["poi"]["name"] == "Coffeeshop Hortus De Overkant"
    assert first["distanceInMeters"] == 162
    assert (outcome.data["total"], outcome.data["returned"], outcome.data["truncated"]) == (100, 2, True)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": "x", "radius": 10}, "`radius` and `position`: `radius` needs `position`"),
        (
            {"query": "x", "position": [4, 52], "boundingBox": [4, 52, 5, 53]},
            "`position` and `boundingBox`: bias near a position or limit to a box, not both",
        ),
        ({"query": "x", "poiCategories": list(range(7300, 7311))}, "poiCategories: "),
        ({"query": "x", "poiCategories": ["restaurant"]}, "poiCategories[0]: should be a valid integer"),
        ({"query": "x", "idxSet": ["Shops"]}, "idxSet[0]: 'Shops' is not one of the allowed values: Geo, PAD"),
        ({"query": ""}, "query: "),
    ],
)
async def test_bad_arguments_are_named(stub, dispatcher, context, arguments, message):
    outcome = await dispatcher.call("tomtom-fuzzy-search", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []
