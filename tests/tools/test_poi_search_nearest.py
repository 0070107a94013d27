"""tomtom-poi-search without a query around `position`: TomTom's Nearby Search, nearest first
(what the retired name tomtom-nearby did; it is now an alias of tomtom-poi-search)."""

import pytest

from tests.conftest import CANARY_KEY, CREDIT, data
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATHS = {Backend.ORBIS: "/maps/orbis/places/nearbySearch/.json", Backend.GENESIS: "/search/2/nearbySearch/.json"}
FILTERS = ["poiCategories", "brandSet", "connectorSet", "fuelSet", "minPowerKW", "maxPowerKW"]


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, dispatcher, context, backend):
    stub.route("GET", PATHS[backend], json_body=data("poi_search.json"))
    context.backend = backend
    outcome = await dispatcher.call(
        "tomtom-poi-search",
        {
            "position": [4.9041, 52.3676],
            "radius": 1500,
            "limit": 20,
            "poiCategories": [7326],
            "language": "nl-NL",
            "countries": ["nl"],
            "openingHours": "nextSevenDays",
        },
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == PATHS[backend]
    assert sent.query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "lon": ["4.9041"],
        "lat": ["52.3676"],
        "radius": ["1500"],
        "limit": ["20"],
        "language": ["nl-NL"],
        "countrySet": ["NL"],
        "categorySet": ["7326"],
        "openingHours": ["nextSevenDays"],
        **({} if backend is Backend.ORBIS else {"key": [CANARY_KEY]}),  # Orbis: the key in its header
    }


@pytest.mark.parametrize(
    ("name", "value", "param", "sent"),
    [
        ("brandSet", ["Shell"], "brandSet", "Shell"),
        ("connectorSet", ["Chademo"], "connectorSet", "Chademo"),
        ("fuelSet", ["LPG"], "fuelSet", "LPG"),
        ("minPowerKW", 100, "minPowerKW", "100"),
        ("maxPowerKW", 22, "maxPowerKW", "22"),
    ],
)
async def test_any_filter_is_enough(stub, dispatcher, context, name, value, param, sent):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_search.json"))
    outcome = await dispatcher.call("tomtom-poi-search", {"position": [4.9, 52.37], name: value}, context)
    assert not outcome.is_error, outcome.text
    assert stub.requests[-1].param(param) == sent


async def test_without_category_or_filter_names_them_all(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-poi-search", {"position": [4.9, 52.37], "openingHours": "nextSevenDays"}, context
    )
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error["arguments"] == FILTERS
    assert error["message"].endswith("an empty query needs at least one of these")
    assert stub.requests == []


async def test_power_range_upside_down_names_both(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-poi-search", {"position": [4.9, 52.37], "minPowerKW": 150, "maxPowerKW": 50}, context
    )
    assert outcome.data["error"]["arguments"] == ["minPowerKW", "maxPowerKW"]
    assert stub.requests == []


async def test_compact_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_search.json"))
    outcome = await dispatcher.call("tomtom-poi-search", {"position": [4.9, 52.37], "poiCategories": [7326]}, context)
    assert [r["poi"]["name"] for r in outcome.data["results"]] == ["Apotheek Centrum", "Jordaan Apotheek"]
    assert [r["distanceInMeters"] for r in outcome.data["results"]] == [310, 846]
    assert (outcome.data["total"], outcome.data["returned"], outcome.data["truncated"]) == (12, 2, True)


async def test_full_is_the_untrimmed_answer(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_search.json"))
    outcome = await dispatcher.call(
        "tomtom-poi-search", {"position": [4.9, 52.37], "poiCategories": [7326], "response_detail": "full"}, context
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


@pytest.mark.parametrize(
    ("arguments", "argument", "message"),
    [
        (
            {"position": [200, 52.37], "poiCategories": [7326]},
            "position[0]",
            "position[0]: longitude 200 is outside -180..180",
        ),
        (
            {"position": [4.9, 52.37], "poiCategories": [7326], "radius": 20_000_001},
            "radius",
            "radius: should be less than or equal to 20000000",
        ),
        (
            {"position": [4.9, 52.37], "poiCategories": [7326], "limit": 0},
            "limit",
            "limit: should be greater than or equal to 1",
        ),
    ],
)
async def test_bad_arguments_are_named(stub, dispatcher, context, arguments, argument, message):
    outcome = await dispatcher.call("tomtom-poi-search", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []


async def test_nearest_needs_a_filter_only_with_a_position(stub, dispatcher, context):
    error = (await dispatcher.call("tomtom-poi-search", {"fuelSet": ["LPG"]}, context)).data["error"]
    assert error["code"] == "invalid_arguments" and error["arguments"] == ["query", "poiCategories", "brandSet"]
    assert stub.requests == []


async def test_the_old_name_reaches_poi_search_with_a_notice(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("poi_search.json"))
    arguments = {"position": [4.9, 52.37], "radius": 1500, "poiCategories": [7326], "limit": 2}
    outcome = await dispatcher.call("tomtom-nearby", arguments, context)
    assert not outcome.is_error, outcome.text
    assert outcome.data["notice"].startswith("tomtom-nearby is deprecated, retired on 2027-06-01")
    assert "call tomtom-poi-search instead, which answered this call" in outcome.data["notice"]
    assert [r["poi"]["name"] for r in outcome.data["results"]] == ["Apotheek Centrum", "Jordaan Apotheek"]
    assert stub.requests[-1].path == PATHS[Backend.ORBIS]
