import pytest

from tests.conftest import CANARY_KEY, CREDIT, data
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

PATHS = {Backend.ORBIS: "/maps/orbis/places/nearbySearch/.json", Backend.GENESIS: "/search/2/nearbySearch/.json"}
AVAILABILITY = "/search/2/chargingAvailability.json"


@pytest.mark.parametrize("backend", list(Backend))
async def test_station_search_on_each_backend(stub, dispatcher, context, backend):
    stub.route("GET", PATHS[backend], json_body=data("ev_search.json"))
    stub.route("GET", AVAILABILITY, json_body=data("charging_availability.json"))
    context.backend = backend
    outcome = await dispatcher.call(
        "tomtom-ev-search",
        {
            "position": [4.9041, 52.3676],
            "radius": 3000,
            "limit": 5,
            "connectorSet": ["IEC62196Type2CCS", "Chademo"],
            "minPowerKW": 50,
            "brandSet": ["Fastned"],
            "language": "en-GB",
        },
        context,
    )
    assert not outcome.is_error, outcome.text
    search = stub.requests[0]
    assert search.path == PATHS[backend]
    assert search.query == {
        **({"apiVersion": ["1"]} if backend is Backend.ORBIS else {}),
        "lon": ["4.9041"],
        "lat": ["52.3676"],
        "radius": ["3000"],
        "limit": ["5"],
        "language": ["en-GB"],
        "categorySet": ["7309"],
        "brandSet": ["Fastned"],
        "connectorSet": ["IEC62196Type2CCS,Chademo"],
        "minPowerKW": ["50"],
        **({} if backend is Backend.ORBIS else {"key": [CANARY_KEY]}),  # Orbis: the key in its header
    }


async def test_genesis_asks_availability_for_linked_stations_only(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("ev_search.json"))
    stub.route("GET", AVAILABILITY, json_body=data("charging_availability.json"))
    context.backend = Backend.GENESIS
    await dispatcher.call(
        "tomtom-ev-search",
        {"position": [4.9041, 52.3676], "connectorSet": ["IEC62196Type2Outlet"], "maxPowerKW": 22},
        context,
    )
    (availability,) = stub.requests[1:]  # the second station has no live data source
    assert availability.path == AVAILABILITY
    assert availability.query == {
        "chargingAvailability": ["avail-1"],
        "connectorSet": ["IEC62196Type2Outlet"],
        "maxPowerKW": ["22"],
        "key": [CANARY_KEY],
    }


async def test_fractional_power_travels_as_given(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("ev_search.json"))
    await dispatcher.call("tomtom-ev-search", {"position": [4.9041, 52.3676], "minPowerKW": 7.4}, context)
    assert stub.requests[0].param("minPowerKW") == "7.4"


async def test_genesis_compact_has_connectors_and_availability(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("ev_search.json"))
    stub.route("GET", AVAILABILITY, json_body=data("charging_availability.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-ev-search", {"position": [4.9041, 52.3676]}, context)
    cursor = outcome.data["nextCursor"]  # how to page on (tests/tools/test_search_paging.py)
    assert outcome.data == {
        "results": [
            {
                "id": "ev-1",
                "type": "POI",
                "address": {
                    "freeformAddress": "Nieuwe Herengracht 55A, 1011 RN Amsterdam",
                    "streetNumber": "55A",
                    "streetName": "Nieuwe Herengracht",
                    "municipality": "Amsterdam",
                    "postalCode": "1011",
                    "country": "Nederland",
                    "countryCode": "NL",
                },
                "position": [4.90433, 52.36649],
                "poi": {
                    "name": "Nieuwe Herengracht Charging",
                    "categories": ["electric vehicle station"],
                    "brands": ["Vattenfall InCharge"],
                },
                "distanceInMeters": 125,
                "chargingPark": {
                    "connectors": [
                        {"type": "IEC62196Type2Outlet", "ratedPowerKW": 11, "currentType": "AC3", "count": 2},
                        {"type": "IEC62196Type2CCS", "ratedPowerKW": 50, "currentType": "DC", "count": 1},
                    ]
                },
                "availability": {"available": 1, "occupied": 1, "outOfService": 1},
            },
            {
                "id": "ev-2",
                "type": "POI",
                "address": {
                    "freeformAddress": "Plantage Middenlaan, 1018 Amsterdam",
                    "streetName": "Plantage Middenlaan",
                    "municipality": "Amsterdam",
                    "country": "Nederland",
                    "countryCode": "NL",
                },
                "position": [4.91112, 52.36585],
                "poi": {"name": "Plantage Charging", "categories": ["electric vehicle station"]},
                "distanceInMeters": 402,
                "chargingPark": {
                    "connectors": [
                        {"type": "IEC62196Type2CableAttached", "ratedPowerKW": 22, "currentType": "AC3", "count": 1}
                    ]
                },
            },
        ],
        "total": 41,
        "returned": 2,
        "truncated": True,
        "nextCursor": cursor,
        "more": f'Results 1-2 of 41; next: call again with the same arguments and cursor="{cursor}".',
        "show_ui": False,
        **CREDIT[Backend.GENESIS],
    }


async def test_genesis_full_carries_tomtom_availability_untrimmed(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("ev_search.json"))
    stub.route("GET", AVAILABILITY, json_body=data("charging_availability.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-ev-search", {"position": [4.9, 52.37], "response_detail": "full"}, context)
    expected = data("ev_search.json")
    expected["results"][0]["chargingAvailability"] = data("charging_availability.json")
    cursor = outcome.data["nextCursor"]  # how to page on (tests/tools/test_search_paging.py)
    more = f'Results 1-2 of 41; next: call again with the same arguments and cursor="{cursor}".'
    assert outcome.data == {**expected, "nextCursor": cursor, "more": more, "show_ui": False, **CREDIT[Backend.GENESIS]}


async def test_orbis_says_availability_is_not_offered(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.ORBIS], json_body=data("ev_search.json"))
    outcome = await dispatcher.call("tomtom-ev-search", {"position": [4.9041, 52.3676]}, context)
    assert len(stub.requests) == 1
    assert outcome.data["availabilityNote"] == "Live availability is only offered on the tomtom-maps backend."
    assert all("availability" not in result for result in outcome.data["results"])
    assert outcome.data["results"][0]["chargingPark"]["connectors"][0]["count"] == 2


async def test_failed_availability_keeps_the_station_and_says_so(stub, dispatcher, context):
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("ev_search.json"))
    stub.route("GET", AVAILABILITY, json_body={"errorText": "no access"}, status=403)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-ev-search", {"position": [4.9041, 52.3676]}, context)
    assert not outcome.is_error
    assert outcome.data["returned"] == 2
    assert outcome.data["availabilityNote"] == "Live availability could not be read for 1 station(s)."
    assert "availability" not in outcome.data["results"][0]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"position": [4.9, 52.3], "limit": 21}, "limit: should be less than or equal to 20"),
        ({"position": [4.9, 52.3], "minPowerKW": 150, "maxPowerKW": 50}, "`minPowerKW` and `maxPowerKW`: "),
        ({"position": [4.9, 52.3], "maxPowerKW": 10_001}, "maxPowerKW: should be less than or equal to 10000"),
        ({"position": [4.9, 52.3], "connectorSet": ["CCS"]}, "connectorSet[0]: 'CCS' is not one of the allowed values"),
        ({"position": [4.9, 52.3], "poiCategories": [7309]}, "unknown argument(s) poiCategories"),
    ],
)
async def test_bad_arguments_are_named(stub, dispatcher, context, arguments, message):
    outcome = await dispatcher.call("tomtom-ev-search", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["message"].startswith(message)
    assert stub.requests == []


async def test_key_echoed_by_availability_never_reaches_the_answer(stub, dispatcher, context):
    echo = {**data("charging_availability.json"), "echo": f"/search/2/chargingAvailability.json?key={CANARY_KEY}"}
    stub.route("GET", PATHS[Backend.GENESIS], json_body=data("ev_search.json"))
    stub.route("GET", AVAILABILITY, json_body=echo)
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call("tomtom-ev-search", {"position": [4.9, 52.37], "response_detail": "full"}, context)
    assert outcome.data["results"][0]["chargingAvailability"]["echo"].endswith("key=***")
    assert CANARY_KEY not in outcome.text
