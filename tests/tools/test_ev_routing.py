import math

import pytest

from tests.conftest import CANARY_KEY, CREDIT, data
from tests.tools.test_geometry_mode import assert_geojson_contract
from tools.geometry.simplify import VERTEX_CAP
from tools.tomtom.backends import Backend

AMSTERDAM, BERLIN = [4.9041, 52.3676], [13.405, 52.52]
LOCATIONS = "52.3676,4.9041:52.52,13.405"
PATHS = {
    Backend.ORBIS: f"/maps/orbis/routing/calculateLongDistanceEVRoute/{LOCATIONS}/json",
    Backend.GENESIS: f"/routing/1/calculateLongDistanceEVRoute/{LOCATIONS}/json",
}
CAR = {"locations": [AMSTERDAM, BERLIN], "maxChargeInkWh": 75, "currentChargeInkWh": 60}


def answer_on(stub, backend, body=None):
    pattern = PATHS[backend].replace(LOCATIONS, "[^/]+")
    stub.route("POST", pattern, json_body=body if body is not None else data("ev_route.json"))


async def call(dispatcher, context, **arguments):
    return await dispatcher.call("tomtom-ev-routing", {**CAR, **arguments}, context)


@pytest.mark.parametrize("backend", list(Backend))
async def test_request_with_the_default_vehicle_model(stub, dispatcher, context, backend):
    answer_on(stub, backend)
    context.backend = backend
    outcome = await call(dispatcher, context)
    assert not outcome.is_error, outcome.text
    (sent,) = stub.requests
    assert (sent.method, sent.path) == ("POST", PATHS[backend])
    assert sent.api_key == CANARY_KEY  # in the header on Orbis, the `key` parameter on TomTom Maps
    assert {name: value for name, value in sent.query.items() if name != "key"} == {
        **({"apiVersion": ["2"], "traffic": ["live"]} if backend is Backend.ORBIS else {"traffic": ["true"]}),
        "vehicleEngineType": ["electric"],
        "constantSpeedConsumptionInkWhPerHundredkm": ["50,15:90,18:120,23"],
        "currentChargeInkWh": ["60"],
        "maxChargeInkWh": ["75"],
        "minChargeAtDestinationInkWh": ["15"],
        "minChargeAtChargingStopsInkWh": ["7.5"],
    }
    assert sent.json() == {
        "chargingParameters": {
            "batteryCurve": [
                {"stateOfChargeInkWh": 0, "maxPowerInkW": 150},
                {"stateOfChargeInkWh": 37.5, "maxPowerInkW": 150},
                {"stateOfChargeInkWh": 60.0, "maxPowerInkW": 75.0},
                {"stateOfChargeInkWh": 75, "maxPowerInkW": 30.0},
            ],
            "chargingConnectors": [
                {"currentType": "AC3", "plugTypes": ["IEC_62196_Type_2_Outlet"], "maxPowerInkW": 11},
                {"currentType": "DC", "plugTypes": ["Combo_to_IEC_62196_Type_2_Base"], "maxPowerInkW": 150},
            ],
        }
    }
    assert outcome.data["assumed"] == [
        "minChargeAtDestinationInkWh",
        "minChargeAtChargingStopsInkWh",
        "consumption",
        "batteryCurve",
        "chargingConnectors",
    ]


async def test_the_callers_vehicle_model_reaches_query_and_body(stub, dispatcher, context):
    answer_on(stub, Backend.GENESIS)
    context.backend = Backend.GENESIS
    connectors = [
        {"currentType": "DC", "plugTypes": ["CHAdeMO", "Combo_to_IEC_62196_Type_1_Base"], "maxPowerInkW": 100}
    ]
    outcome = await call(
        dispatcher,
        context,
        locations=[AMSTERDAM, [5.1215, 52.0907], BERLIN],
        minChargeAtDestinationInkWh=10,
        minChargeAtChargingStopsInkWh=8,
        consumption=[[30, 12.5], [80, 16], [130, 24]],
        batteryCurve=[[10, 100], [50, 60], [70, 20]],
        chargingConnectors=connectors,
        traffic="historical",
        avoid=["ferries"],
        departAt="2026-12-01T08:00:00+01:00",
    )
    assert not outcome.is_error, outcome.text
    (sent,) = stub.requests
    assert sent.path == "/routing/1/calculateLongDistanceEVRoute/52.3676,4.9041:52.0907,5.1215:52.52,13.405/json"
    assert sent.param("constantSpeedConsumptionInkWhPerHundredkm") == "30,12.5:80,16:130,24"
    assert (sent.param("minChargeAtDestinationInkWh"), sent.param("minChargeAtChargingStopsInkWh")) == ("10", "8")
    assert (sent.param("traffic"), sent.param("avoid"), sent.param("departAt")) == (
        "false",
        "ferries",
        "2026-12-01T08:00:00+01:00",
    )
    assert sent.json() == {
        "chargingParameters": {
            "batteryCurve": [
                {"stateOfChargeInkWh": 10, "maxPowerInkW": 100},
                {"stateOfChargeInkWh": 50, "maxPowerInkW": 60},
                {"stateOfChargeInkWh": 70, "maxPowerInkW": 20},
            ],
            "chargingConnectors": connectors,
        }
    }
    assert "assumed" not in outcome.data


async def test_compact_names_each_charging_stop(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context)
    (route,) = outcome.data["routes"]
    assert route["summary"] == {
        "lengthInMeters": 657139,
        "travelTimeInSeconds": 25255,
        "trafficDelayInSeconds": 295,
        "trafficLengthInMeters": 25700,
        "departureTime": "2026-11-29T09:00:00+01:00",
        "arrivalTime": "2026-11-29T16:00:55+01:00",
        "batteryConsumptionInkWh": 118.51,
        "totalChargingTimeInSeconds": 2404,
        "remainingChargeAtArrivalInkWh": 15.09,
    }
    assert (route["start"], route["end"], route["chargingStops"]) == (AMSTERDAM, BERLIN, 2)
    first, second, last = route["legs"]
    assert first["chargingStop"] == {
        "name": "bp pulse Holten",
        "operator": "bp pulse",
        "position": [6.43049, 52.25273],
        "address": {
            "street": "Rijksweg A1",
            "houseNumber": "5",
            "postalCode": "7451 NX",
            "city": "Holten",
            "countryCode": "NL",
        },
        "chargingTimeInSeconds": 1084,
        "targetChargeInkWh": 72.3,
        "connector": "Combo_to_IEC_62196_Type_2_Base",
        "powerInkW": 150,
        "currentType": "Direct_Current",
    }
    assert first["summary"]["remainingChargeAtArrivalInkWh"] == 35.09
    # TomTom gave no park location: the stop is where the leg ends, its power the park's
    assert second["chargingStop"]["position"] == second["end"] == last["start"]
    assert second["chargingStop"]["powerInkW"] == 350
    assert "chargingStop" not in last
    text = outcome.text
    for dropped in ("points", "chargingParkUuid", "nearbyServices", "OpeningHours", "PointIndex"):
        assert dropped not in text


@pytest.mark.parametrize("backend", list(Backend))
async def test_geometry_is_the_route_line_then_one_point_per_stop(stub, dispatcher, context, backend):
    answer_on(stub, backend)
    context.backend = backend
    compact = (await call(dispatcher, context)).data
    answer = (await call(dispatcher, context, response_detail="geometry")).data
    features = assert_geojson_contract(answer)
    assert {k: v for k, v in answer.items() if k != "geometry"} == compact
    assert [f["properties"] for f in features] == [{"route": 0}, {"route": 0, "leg": 0}, {"route": 0, "leg": 1}]
    line, *stops = features
    assert line["geometry"]["type"] == "LineString"
    assert len(line["geometry"]["coordinates"]) == 40 + 60 + 80 - 2  # legs share their end points
    legs = compact["routes"][0]["legs"]
    for stop in stops:
        assert stop["geometry"] == {
            "type": "Point",
            "coordinates": legs[stop["properties"]["leg"]]["chargingStop"]["position"],
        }


async def test_a_long_route_is_capped_and_says_so(stub, dispatcher, context):
    body = data("ev_route.json")
    points = 6000
    body["routes"][0]["legs"][2]["points"] = [
        {"latitude": 52.35 + 0.2 * math.sin(i / 40), "longitude": 9.7358 + i * 6e-4} for i in range(points)
    ]
    answer_on(stub, Backend.ORBIS, body)
    answer = (await call(dispatcher, context, response_detail="geometry")).data
    line, *stops = assert_geojson_contract(answer)
    report = line["properties"]["simplification"]
    assert report["original_points"] == 40 + 60 + points - 1
    assert report["points"] == len(line["geometry"]["coordinates"]) <= VERTEX_CAP
    assert line["properties"]["route"] == 0
    assert all("simplification" not in stop["properties"] for stop in stops)


async def test_full_is_tomtoms_answer(stub, dispatcher, context):
    answer_on(stub, Backend.ORBIS)
    outcome = await call(dispatcher, context, response_detail="full")
    assert outcome.data == {**data("ev_route.json"), "show_ui": False, **CREDIT[Backend.ORBIS]}


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"currentChargeInkWh": 80}, ["currentChargeInkWh", "maxChargeInkWh"]),
        ({"minChargeAtDestinationInkWh": 76}, ["minChargeAtDestinationInkWh", "maxChargeInkWh"]),
        ({"batteryCurve": [[10, 100], [90, 50]]}, ["batteryCurve", "maxChargeInkWh"]),
    ],
)
async def test_charges_above_the_capacity_name_both_inputs(stub, dispatcher, context, arguments, named):
    outcome = await call(dispatcher, context, **arguments)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["arguments"] == named
    assert stub.requests == []


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({"consumption": [[90, 18], [50, 15]]}, "consumption[1][0]"),
        ({"batteryCurve": [[40, 100], [40, 50]]}, "batteryCurve[1][0]"),
        (
            {"chargingConnectors": [{"currentType": "DC", "plugTypes": ["CCS"], "maxPowerInkW": 50}]},
            "chargingConnectors[0].plugTypes[0]",
        ),
        (
            {"chargingConnectors": [{"currentType": "AC2", "plugTypes": ["CHAdeMO"], "maxPowerInkW": 50}]},
            "chargingConnectors[0].currentType",
        ),
        ({"locations": [AMSTERDAM]}, "locations"),
        ({"departAt": "tonight"}, "departAt"),
        ({"routeType": "short"}, "routeType"),
        ({"maxChargeInkWh": 5000, "currentChargeInkWh": 60}, "maxChargeInkWh"),
        ({"consumption": [[50, 15, 3]]}, "consumption[0]"),
        (
            {"chargingConnectors": [{"currentType": "DC", "plugTypes": ["CHAdeMO"], "maxPowerInkW": 0}]},
            "chargingConnectors[0].maxPowerInkW",
        ),
    ],
)
async def test_invalid_arguments_name_the_input(stub, dispatcher, context, arguments, argument):
    outcome = await call(dispatcher, context, **arguments)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert outcome.data["error"]["message"].startswith((f"{argument}: ", "unknown argument(s)"))
    assert stub.requests == []


async def test_an_unknown_plug_type_lists_the_allowed_ones(stub, dispatcher, context):
    connectors = [{"currentType": "DC", "plugTypes": ["CCS2"], "maxPowerInkW": 50}]
    outcome = await call(dispatcher, context, chargingConnectors=connectors)
    assert "Combo_to_IEC_62196_Type_2_Base" in outcome.data["error"]["message"]
