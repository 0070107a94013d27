import pytest

from tests.conftest import CANARY_KEY, CREDIT, data, recorded
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

BOX = [4.8, 52.3, 5.0, 52.4]
PREFIX = {Backend.ORBIS: "/maps/orbis/places/poiSearch/", Backend.GENESIS: "/search/2/poiSearch/"}


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_on_each_backend(stub, dispatcher, context, backend):
    stub.route("GET", PREFIX[backend] + ".*", json_body=data("poi_search.json"))
    context.backend = backend
    outcome = await dispatcher.call(
        "tomtom-poi-search",
        {
            "query": "fuel/diesel",
            "boundingBox": [4.8, 52.3, 5.0, 52.4],
            "brandSet": ["Shell", "Tango, Tinq"],
            "fuelSet": ["Diesel", "AdBlue"],
            "connectorSet": ["IEC62196Type2CCS"],
            "minPowerKW": 50,
            "maxPowerKW": 350.5,
            "openingHours": "nextSevenDays",
            "timeZone": "iana",
        },
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == PREFIX[backend] + "fuel/diesel.json"  # the `/` travels encoded, one path segment
    assert sent.query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "limit": ["10"],
        "topLeft": ["52.4,4.8"],
        "btmRight": ["52.3,5.0"],
        "brandSet": ['Shell,"Tango, Tinq"'],
        "connectorSet": ["IEC62196Type2CCS"],
        "fuelSet": ["Diesel,AdBlue"],
        "minPowerKW": ["50"],
        "maxPowerKW": ["350.5"],
        "openingHours": ["nextSevenDays"],
        "timeZone": ["iana"],
        **({} if backend is Backend.ORBIS else {"key": [CANARY_KEY]}),  # Orbis: the key in its header
    }


async def test_empty_query_searches_by_category(stub, dispatcher, context):
    stub.route("GET", "/maps/orbis/places/.*", json_body=data("poi_search.json"))
    await dispatcher.call("tomtom-poi-search", {"query": "", "poiCategories": [7326], "boundingBox": BOX}, context)
    sent = stub.requests[-1]
    assert sent.path == "/maps/orbis/places/poiSearch/.json"
    assert (sent.param("categorySet"), sent.param("topLeft")) == ("7326", "52.4,4.8")
    # Around a position, an empty query is Nearby Search: the nearest first (tests/tools/test_poi_search_nearest.py).
    await dispatcher.call("tomtom-poi-search", {"poiCategories": [7326], "position": [4.9, 52.37]}, context)
    sent = stub.requests[-1]
    assert sent.path == "/maps/orbis/places/nearbySearch/.json"
    assert (sent.param("categorySet"), sent.param("lat"), sent.param("lon")) == ("7326", "52.37", "4.9")


async def test_compact_keeps_requested_hours_and_time_zone(stub, dispatcher, context):
    stub.route("GET", PREFIX[Backend.ORBIS] + ".*", json_body=data("poi_search.json"))
    outcome = await dispatcher.call(
        "tomtom-poi-search", {"query": "apotheek", "openingHours": "nextSevenDays", "timeZone": "iana"}, context
    )
    assert outcome.data["results"][0] == {
        "id": "NL/POI/p0/100",
        "type": "POI",
        "address": {
            "freeformAddress": "Damstraat 12, 1012 JM Amsterdam",
            "streetNumber": "12",
            "streetName": "Damstraat",
            "municipality": "Amsterdam",
            "postalCode": "1012",
            "countrySubdivision": "Noord-Holland",
            "country": "Nederland",
            "countryCode": "NL",
        },
        "position": [4.89532, 52.37258],
        "poi": {
            "name": "Apotheek Centrum",
            "phone": "+31 20 000 0001",
            "url": "www.example-apotheek.nl",
            "categories": ["pharmacy"],
            "brands": ["BENU"],
            "openingHours": ["2026-11-30 08:30-18:00", "2026-12-01 22:00 to 2026-12-02 06:00"],
            "timeZone": "Europe/Amsterdam",
        },
        "distanceInMeters": 310,
    }


async def test_compact_drops_hours_not_asked_for(stub, dispatcher, context):
    stub.route("GET", PREFIX[Backend.ORBIS] + ".*", json_body=data("poi_search.json"))
    outcome = await dispatcher.call("tomtom-poi-search", {"query": "apotheek"}, context)
    assert outcome.data["results"][0]["poi"] == {
        "name": "Apotheek Centrum",
        "phone": "+31 20 000 0001",
        "url": "www.example-apotheek.nl",
        "categories": ["pharmacy"],
        "brands": ["BENU"],
    }


async def test_full_is_the_untrimmed_answer(stub, dispatcher, context):
    stub.route("GET", PREFIX[Backend.ORBIS] + ".*", json_body=data("poi_search.json"))
    outcome = await dispatcher.call("tomtom-poi-search", {"query": "apotheek", "response_detail": "full"}, context)
    cursor = outcome.data["nextCursor"]  # how to page on (tests/tools/test_search_paging.py)
    more = f'Results 1-2 of 12; next: call again with the same arguments and cursor="{cursor}".'
    assert outcome.data == {
        **data("poi_search.json"),
        "nextCursor": cursor,
        "more": more,
        "show_ui": False,
        **CREDIT[Backend.ORBIS],
    }


async def test_recorded_genesis_answer_with_hours(stub, dispatcher, context):
    stub.route("GET", PREFIX[Backend.GENESIS] + ".*", json_body=recorded("genesis-poi-search-requested.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call(
        "tomtom-poi-search",
        {"query": "restaurant", "position": [4.9041, 52.3676], "openingHours": "nextSevenDays", "timeZone": "iana"},
        context,
    )
    poi = outcome.data["results"][0]["poi"]
    assert poi["openingHours"][0] == "2026-09-24 10:00-17:00"
    assert len(poi["openingHours"]) == 7
    assert poi["timeZone"] == "Europe/Amsterdam"


@pytest.mark.parametrize(
    ("arguments", "names"),
    [
        ({"query": ""}, ["query", "poiCategories", "brandSet"]),
        ({"query": "   "}, ["query", "poiCategories", "brandSet"]),
        ({"query": "x", "radius": 100}, ["radius", "position"]),
        ({"query": "x", "position": [4.9, 52.3], "boundingBox": [4, 52, 5, 53]}, ["position", "boundingBox"]),
        ({"query": "x", "minPowerKW": 150, "maxPowerKW": 50}, ["minPowerKW", "maxPowerKW"]),
    ],
)
async def test_cross_field_rules_name_the_inputs(stub, dispatcher, context, arguments, names):
    outcome = await dispatcher.call("tomtom-poi-search", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["arguments"] == names
    assert all(f"`{name}`" in outcome.data["error"]["message"] for name in names)
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": "x", "connectorSet": ["Type2"]}, "connectorSet[0]: 'Type2' is not one of the allowed values: "),
        ({"query": "x", "fuelSet": ["Kerosene"]}, "fuelSet[0]: 'Kerosene' is not one of the allowed values: Petrol"),
        ({"query": "x", "openingHours": "today"}, "openingHours: 'today' is not one of the allowed values"),
    ],
)
async def test_enumerated_values_list_the_allowed_ones(stub, dispatcher, context, arguments, message):
    outcome = await dispatcher.call("tomtom-poi-search", arguments, context)
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "argument", "message"),
    [
        ({"query": "x" * 401}, "query", "query: should have at most 400 characters"),
        ({"query": "x", "limit": 101}, "limit", "limit: should be less than or equal to 100"),
        ({"query": "x", "limit": "5"}, "limit", "limit: should be a valid integer"),
        (
            {"query": "x", "brandSet": ["b" * 101]},
            "brandSet[0]",
            "brandSet[0]: should have at most 100 characters",
        ),
        ({"query": "x", "minPowerKW": 10_001}, "minPowerKW", "minPowerKW: should be less than or equal to 10000"),
        ({"query": "x", "radius": 100, "position": [4.9, 95]}, "position[1]", "position[1]: latitude 95 is outside"),
    ],
)
async def test_out_of_range_values_name_the_input(stub, dispatcher, context, arguments, argument, message):
    outcome = await dispatcher.call("tomtom-poi-search", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []


async def test_empty_query_with_a_brand_searches_by_brand(stub, dispatcher, context):
    stub.route("GET", PREFIX[Backend.ORBIS] + ".*", json_body=data("poi_search.json"))
    outcome = await dispatcher.call("tomtom-poi-search", {"query": " ", "brandSet": ["Shell"]}, context)
    assert not outcome.is_error, outcome.text
    assert stub.requests[-1].path == "/maps/orbis/places/poiSearch/.json"
    assert stub.requests[-1].param("brandSet") == "Shell"


async def test_connector_error_lists_every_connector(stub, dispatcher, context):
    outcome = await dispatcher.call("tomtom-poi-search", {"query": "x", "connectorSet": ["Type2"]}, context)
    assert "IEC62196Type2CableAttached" in outcome.data["error"]["message"]
    assert "Tesla" in outcome.data["error"]["message"]
