import pytest

from tests.conftest import CREDIT, data, recorded
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

ORBIS = r"/maps/orbis/routing/calculateRoute/.*/json"
GENESIS = r"/routing/1/calculateRoute/.*/json"


async def test_orbis_request(stub, dispatcher, context):
    stub.route("GET", ORBIS, json_body=data("route.json"))
    outcome = await dispatcher.call(
        "tomtom-routing",
        {
            "locations": [[4.9041, 52.3676], [5.1215, 52.0907], [13.405, 52.52]],
            "avoid": ["tollRoads", "ferries"],
            "departAt": "2026-12-01T08:00:00+01:00",
            "routeType": "efficient",
            "traffic": "historical",
        },
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.path == "/maps/orbis/routing/calculateRoute/52.3676,4.9041:52.0907,5.1215:52.52,13.405/json"
    assert sent.query["avoid"] == ["tollRoads", "ferries"]
    assert sent.param("apiVersion") == "2"
    assert (sent.param("routeType"), sent.param("traffic")) == ("efficient", "historical")
    assert sent.param("departAt") == "2026-12-01T08:00:00+01:00"


async def test_genesis_request_uses_its_own_vocabulary(stub, dispatcher, context):
    stub.route("GET", GENESIS, json_body=data("route.json"))
    context.backend = Backend.GENESIS
    await dispatcher.call(
        "tomtom-routing",
        {"locations": [[4.9, 52.3], [13.4, 52.5]], "routeType": "short", "traffic": "live", "travelMode": "truck"},
        context,
    )
    sent = stub.requests[-1]
    assert sent.path == "/routing/1/calculateRoute/52.3,4.9:52.5,13.4/json"
    assert (sent.param("routeType"), sent.param("traffic"), sent.param("travelMode")) == ("shortest", "true", "truck")


async def test_compact_route(stub, dispatcher, context):
    stub.route("GET", ORBIS, json_body=data("route.json"))
    outcome = await dispatcher.call("tomtom-routing", {"locations": [[4.9041, 52.3676], [13.405, 52.52]]}, context)
    (route,) = outcome.data["routes"]
    assert route["summary"] == {
        "lengthInMeters": 657000,
        "travelTimeInSeconds": 23400,
        "trafficDelayInSeconds": 420,
        "trafficLengthInMeters": 12000,
        "departureTime": "2026-11-29T09:00:00+01:00",
        "arrivalTime": "2026-11-29T15:30:00+01:00",
    }
    assert route["start"] == [4.9041, 52.3676]
    assert route["end"] == [13.405, 52.52]
    assert [leg["end"] for leg in route["legs"]] == [route["legs"][1]["start"], route["end"]]
    assert route["traffic"] == [
        {"simpleCategory": "JAM", "magnitudeOfDelay": 2, "delayInSeconds": 300, "effectiveSpeedInKmh": 23},
        {"simpleCategory": "ROADWORK", "magnitudeOfDelay": 1, "delayInSeconds": 120, "effectiveSpeedInKmh": 40},
    ]
    assert "points" not in outcome.text and "PointIndex" not in outcome.text


async def test_full_keeps_every_point(stub, dispatcher, context):
    stub.route("GET", ORBIS, json_body=data("route.json"))
    outcome = await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [13.4, 52.5]], "response_detail": "full"}, context
    )
    assert outcome.data == {**data("route.json"), "show_ui": False, **CREDIT[Backend.ORBIS]}


async def test_recorded_genesis_route_keeps_start_and_end(stub, dispatcher, context):
    stub.route("GET", GENESIS, json_body=recorded("genesis-route.json"))
    context.backend = Backend.GENESIS
    outcome = await dispatcher.call(
        "tomtom-routing", {"locations": [[4.90413, 52.36761], [13.40502, 52.52001]]}, context
    )
    route = outcome.data["routes"][0]
    assert route["start"] == [4.90413, 52.36761]
    assert route["summary"]["lengthInMeters"] == 682749


async def test_depart_and_arrive_together_name_both(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-routing",
        {"locations": [[4.9, 52.3], [13.4, 52.5]], "departAt": "now", "arriveAt": "2026-12-01T08:00:00"},
        context,
    )
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["arguments"] == ["departAt", "arriveAt"]
    assert "`departAt` and `arriveAt`" in outcome.data["error"]["message"]


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({"locations": [[4.9, 52.3]]}, "locations"),
        ({"locations": [[4.9, 52.3], [200, 52.5]]}, "locations[1][0]"),
        ({"locations": [[4.9, 52.3], [13.4, 52.5]], "departAt": "tomorrow"}, "departAt"),
        ({"locations": [[4.9, 52.3], [13.4, 52.5]], "avoid": ["potholes"]}, "avoid[0]"),
        ({"locations": [[4.9, 52.3], [13.4, 52.5]], "origin": [1, 2]}, "origin"),
    ],
)
async def test_invalid_arguments_name_the_path(stub, dispatcher, context, arguments, argument):
    outcome = await dispatcher.call("tomtom-routing", arguments, context)
    assert outcome.data["error"]["code"] == "invalid_arguments"
    assert outcome.data["error"]["argument"] == argument
    assert stub.requests == []


async def test_orbis_refuses_other_travel_modes(stub, dispatcher, context):
    outcome = await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [13.4, 52.5]], "travelMode": "bicycle"}, context
    )
    assert outcome.data["error"]["code"] == "unsupported"
    assert "tomtom-maps backend" in outcome.data["error"]["message"]


AREAS = [[5.0, 52.2, 5.1, 52.3], [4.7, 52.0, 4.8, 52.05]]


@pytest.mark.parametrize(("backend", "pattern"), [(Backend.ORBIS, ORBIS), (Backend.GENESIS, GENESIS)])
async def test_avoid_areas_travel_as_rectangles_in_a_post_body(stub, dispatcher, context, backend, pattern):
    stub.route("POST", pattern, json_body=data("route.json"))
    context.backend = backend
    outcome = await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9041, 52.3676], [5.1215, 52.0907]], "avoidAreas": AREAS}, context
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert sent.method == "POST"
    assert sent.json() == {
        "avoidAreas": {
            "rectangles": [
                {
                    "southWestCorner": {"latitude": 52.2, "longitude": 5.0},
                    "northEastCorner": {"latitude": 52.3, "longitude": 5.1},
                },
                {
                    "southWestCorner": {"latitude": 52.0, "longitude": 4.7},
                    "northEastCorner": {"latitude": 52.05, "longitude": 4.8},
                },
            ]
        }
    }
    assert outcome.data["routes"][0]["summary"]["lengthInMeters"] == 657000


async def test_without_avoid_areas_the_route_is_a_get(stub, dispatcher, context):
    stub.route("GET", ORBIS, json_body=data("route.json"))
    await dispatcher.call("tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]]}, context)
    assert stub.requests[-1].method == "GET" and stub.requests[-1].body == b""


@pytest.mark.parametrize(
    ("areas", "argument", "says"),
    [
        ([[5.0, 52.2, 5.1, 52.3]] * 11, "avoidAreas", "10"),
        ([[4.0, 52.0, 7.0, 52.5]], "avoidAreas[0]", "at most 160 km"),
        ([[179.0, 10.0, -179.0, 11.0]], "avoidAreas[0]", "antimeridian"),
        ([[5.0, 52.3, 5.1, 52.2]], "avoidAreas[0]", "minLat below maxLat"),
    ],
)
async def test_bad_avoid_areas_name_the_input_and_the_limit(stub, dispatcher, context, areas, argument, says):
    outcome = await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]], "avoidAreas": areas}, context
    )
    error = outcome.data["error"]
    assert error["code"] == "invalid_arguments"
    assert error["argument"] == argument
    assert says in error["message"]
    assert stub.requests == []


@pytest.mark.parametrize(("backend", "pattern"), [(Backend.ORBIS, ORBIS), (Backend.GENESIS, GENESIS)])
async def test_full_asks_for_every_section_type(stub, dispatcher, context, backend, pattern):
    stub.route("GET", pattern, json_body=data("route.json"))
    context.backend = backend
    await dispatcher.call("tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]]}, context)
    assert stub.requests[-1].query["sectionType"] == ["traffic"]
    await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]], "response_detail": "full"}, context
    )
    sections = stub.requests[-1].query["sectionType"]
    assert "traffic" in sections and "travelMode" in sections
    assert len(sections) > 2 if backend is Backend.GENESIS else sections == ["traffic", "travelMode"]


TRUCK = {
    "weightKg": 18000,
    "axleWeightKg": 9000,
    "lengthM": 12.5,
    "widthM": 2.55,
    "heightM": 4,
    "commercial": True,
    "loadType": ["otherHazmatGeneral", "USHazmatClass3"],
}


async def test_the_truck_reaches_calculate_route_on_tomtom_maps(stub, dispatcher, context):
    stub.route("GET", GENESIS, json_body=data("route.json"))
    context.backend = Backend.GENESIS
    arguments = {"locations": [[4.9, 52.3], [13.4, 52.5]], "travelMode": "truck", "vehicle": TRUCK}
    outcome = await dispatcher.call("tomtom-routing", arguments, context)
    assert not outcome.is_error, outcome.text
    query = stub.requests[-1].query
    assert {
        name: query.get(name)
        for name in (
            "travelMode",
            "vehicleWeight",
            "vehicleAxleWeight",
            "vehicleLength",
            "vehicleWidth",
            "vehicleHeight",
            "vehicleCommercial",
            "vehicleLoadType",
        )
    } == {
        "travelMode": ["truck"],
        "vehicleWeight": ["18000"],
        "vehicleAxleWeight": ["9000"],
        "vehicleLength": ["12.5"],
        "vehicleWidth": ["2.55"],
        "vehicleHeight": ["4"],
        "vehicleCommercial": ["true"],
        "vehicleLoadType": ["otherHazmatGeneral", "USHazmatClass3"],
    }


async def test_only_what_is_given_is_sent(stub, dispatcher, context):
    stub.route("GET", GENESIS, json_body=data("route.json"))
    context.backend = Backend.GENESIS
    arguments = {"locations": [[4.9, 52.3], [13.4, 52.5]], "travelMode": "truck", "vehicle": {"heightM": 3.9}}
    await dispatcher.call("tomtom-routing", arguments, context)
    assert sorted(k for k in stub.requests[-1].query if k.startswith("vehicle")) == ["vehicleHeight"]


async def test_a_vehicle_needs_travel_mode_truck(stub, dispatcher, context):
    context.backend = Backend.GENESIS
    arguments = {"locations": [[4.9, 52.3], [13.4, 52.5]], "vehicle": {"weightKg": 18000}}
    error = (await dispatcher.call("tomtom-routing", arguments, context)).data["error"]
    assert (error["code"], error["arguments"]) == ("invalid_arguments", ["vehicle", "travelMode"])
    assert stub.requests == []


@pytest.mark.parametrize(
    ("vehicle", "argument"),
    [
        ({"weightKg": 0}, "vehicle.weightKg"),
        ({"heightM": 11}, "vehicle.heightM"),
        ({"loadType": ["plutonium"]}, "vehicle.loadType[0]"),
        ({"colour": "red"}, "vehicle.colour"),
    ],
)
async def test_a_wrong_vehicle_names_the_path(stub, dispatcher, context, vehicle, argument):
    context.backend = Backend.GENESIS
    arguments = {"locations": [[4.9, 52.3], [13.4, 52.5]], "travelMode": "truck", "vehicle": vehicle}
    error = (await dispatcher.call("tomtom-routing", arguments, context)).data["error"]
    assert (error["code"], error["argument"]) == ("invalid_arguments", argument)


async def test_orbis_lists_no_vehicle_and_refuses_one(stub, dispatcher, context):
    routing = dispatcher.get("tomtom-routing")
    assert "vehicle" not in routing.listing(Backend.ORBIS, False).input_schema["properties"]
    assert "vehicle" in routing.listing(Backend.GENESIS, False).input_schema["properties"]
    outcome = await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [13.4, 52.5]], "vehicle": {"weightKg": 18000}}, context
    )
    error = outcome.data["error"]
    assert error["code"] == "unsupported" and error["argument"] == "vehicle"
    assert stub.requests == []
