import copy
import json

import pytest

from tests.conftest import CREDIT, DATA, data, recorded
from tests.support.long_routes import route_answer
from tools.shaping.routes import compact_routes, decode_compact_routes_v3, decode_shared_routes
from tools.tomtom.backends import Backend

pytestmark = pytest.mark.asyncio

ORBIS_PATH = "/maps/orbis/routing/routes/calculate"
ORBIS = ORBIS_PATH
GENESIS = r"/routing/1/calculateRoute/.*/json"
COMPACT_PARTS = "routes(summary,legs(summary,path),sections)"


def point(lon, lat):
    return {"type": "Point", "coordinates": [lon, lat]}


V3_NAMES = {
    "travelTimeInSeconds": "travelDurationInSeconds",
    "trafficDelayInSeconds": "trafficDelayDurationInSeconds",
    "departureTime": "departureDateTime",
    "arrivalTime": "arrivalDateTime",
}
V3_MAGNITUDES = ["unknown", "minor", "moderate", "major", "undefined"]


def v3_answer(v2):
    """A v2 Calculate Route answer (our test data) as Routing v3 words the same route (its
    documented shape: tests/data/PROVENANCE.md); how route_v3.json was made from route.json."""

    def summary(s):
        return {V3_NAMES.get(k, k): v for k, v in s.items()}

    def traffic(s):
        item = {
            "startPathIndex": s["startPointIndex"],
            "endPathIndex": s["endPointIndex"],
            "effectiveSpeedInKilometersPerHour": s.get("effectiveSpeedInKmh"),
            "delayDurationInSeconds": s.get("delayInSeconds"),
            "delayMagnitude": V3_MAGNITUDES[s.get("magnitudeOfDelay", 0)],
            "iconCategory": {"JAM": "jam", "ROADWORK": "roadWorks"}.get(s.get("simpleCategory"), "dangerousConditions"),
        }
        return {k: v for k, v in item.items() if v is not None}

    routes = []
    for route in v2["routes"]:
        legs = [
            {
                "summary": summary(leg["summary"]),
                "path": {"type": "LineString", "coordinates": [[p["longitude"], p["latitude"]] for p in leg["points"]]},
            }
            for leg in route["legs"]
        ]
        sections = {"traffic": [traffic(s) for s in route.get("sections", []) if s["sectionType"] == "TRAFFIC"]}
        routes.append({"summary": summary(route["summary"]), "legs": legs, "sections": sections})
    return {"routes": routes}


async def test_route_v3_json_is_route_json_in_v3_words():
    v3 = data("route_v3.json")
    for route in v3["routes"]:  # route_v3.json also keeps the travel-mode section, which we never read
        route["sections"].pop("travelMode")
        for section in route["sections"]["traffic"]:
            section.pop("tec", None)
            section.pop("eventId")
    assert v3 == v3_answer(data("route.json"))


async def test_orbis_request_is_a_routing_v3_post(stub, dispatcher, context):
    stub.route("POST", ORBIS, json_body=data("route_v3.json"))
    outcome = await dispatcher.call(
        "tomtom-routing",
        {
            "locations": [[4.9041, 52.3676], [5.1215, 52.0907], [4.4777, 51.9244], [13.405, 52.52]],
            "avoid": ["tollRoads", "ferries"],
            "departAt": "2026-12-01T08:00:00+01:00",
            "routeType": "efficient",
            "traffic": "historical",
            "maxAlternatives": 2,
            "vehicleHeading": 90,
        },
        context,
    )
    assert not outcome.is_error, outcome.text
    sent = stub.requests[-1]
    assert (sent.method, sent.path) == ("POST", ORBIS_PATH)
    assert sent.headers["tomtom-api-version"] == "3"
    assert sent.headers["attributes"] == COMPACT_PARTS
    assert sent.headers["content-type"] == "application/json"
    assert "apiVersion" not in sent.query and "routeType" not in sent.query
    assert sent.json() == {
        "routePlanningLocations": {  # GeoJSON: longitude first, the stops between as one MultiPoint
            "origin": point(4.9041, 52.3676),
            "destination": point(13.405, 52.52),
            "waypoints": {"type": "MultiPoint", "coordinates": [[5.1215, 52.0907], [4.4777, 51.9244]]},
        },
        "routeType": "efficient",
        "traffic": "historical",
        "avoids": ["tollRoads", "ferries"],
        "departureDateTime": "2026-12-01T08:00:00+01:00",
        "maxPathAlternativeRoutes": 2,
        "vehicleHeadingInDegrees": 90,
    }


async def test_orbis_two_stops_leave_now_by_default(stub, dispatcher, context):
    stub.route("POST", ORBIS, json_body=data("route_v3.json"))
    await dispatcher.call("tomtom-routing", {"locations": [[4.9, 52.3], [13.4, 52.5]], "departAt": "now"}, context)
    assert stub.requests[-1].json() == {
        "routePlanningLocations": {"origin": point(4.9, 52.3), "destination": point(13.4, 52.5)},
        "routeType": "fast",
        "traffic": "live",
    }


async def test_orbis_arrive_by_is_arrival_date_time(stub, dispatcher, context):
    stub.route("POST", ORBIS, json_body=data("route_v3.json"))
    arguments = {"locations": [[4.9, 52.3], [13.4, 52.5]], "arriveAt": "2026-12-01T18:00:00+01:00"}
    await dispatcher.call("tomtom-routing", arguments, context)
    body = stub.requests[-1].json()
    assert body["arrivalDateTime"] == "2026-12-01T18:00:00+01:00" and "departureDateTime" not in body


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
    stub.route("GET", GENESIS, json_body=data("route.json"))
    context.backend = Backend.GENESIS
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


def v2_spelling(compact):
    """A compact answer with TomTom's documented v2 words for road works (`ROAD_WORK`): our v2
    test answer, route.json, spells it `ROADWORK`; v3's `roadWorks` becomes the documented one."""
    compact = copy.deepcopy(compact)
    for route in compact["routes"]:
        for item in route.get("traffic", []):
            if item.get("simpleCategory") == "ROADWORK":
                item["simpleCategory"] = "ROAD_WORK"
    return compact


@pytest.mark.parametrize("detail", ["compact", "geometry"])
@pytest.mark.parametrize("show_ui", [False, True])
async def test_orbis_v3_answers_as_todays_route(stub, dispatcher, context, detail, show_ui):
    """The same route answered by Routing v3 (Orbis) and by Calculate Route v1 (TomTom Maps)
    gives the caller the same answer, with or without the widget (whose shaping reads the
    translated answer rather than the bytes)."""
    stub.route("POST", ORBIS, json_body=data("route_v3.json"))
    stub.route("GET", GENESIS, json_body=data("route.json"))
    arguments = {"locations": [[4.9041, 52.3676], [5.1215, 52.0907], [13.405, 52.52]], "response_detail": detail}
    orbis = await dispatcher.call("tomtom-routing", {**arguments, "show_ui": show_ui}, context)
    context.backend = Backend.GENESIS
    genesis = await dispatcher.call("tomtom-routing", {**arguments, "show_ui": show_ui}, context)
    assert not orbis.is_error, orbis.text
    for credit in (*CREDIT[Backend.ORBIS], *CREDIT[Backend.GENESIS]):
        orbis.data.pop(credit, None)
        genesis.data.pop(credit, None)
    assert orbis.data == v2_spelling(genesis.data)
    assert orbis.data["routes"][0]["traffic"][1]["simpleCategory"] == "ROAD_WORK"


async def test_orbis_v3_translates_into_the_shared_shape():
    """What the widget, the route line and search along route read: v3's route as v2's."""
    (route,) = decode_shared_routes((DATA / "route_v3.json").read_bytes())["routes"]
    v2 = data("route.json")["routes"][0]
    assert [leg["points"] for leg in route["legs"]] == [leg["points"] for leg in v2["legs"]]
    assert route["summary"] == v2["summary"]
    assert [leg["summary"] for leg in route["legs"]] == [leg["summary"] for leg in v2["legs"]]
    traffic = [s for s in v2["sections"] if s["sectionType"] == "TRAFFIC"]
    kept = ("sectionType", "startPointIndex", "endPointIndex", "magnitudeOfDelay", "delayInSeconds")
    assert [{k: s[k] for k in kept} for s in route["sections"]] == [{k: s[k] for k in kept} for s in traffic]


async def test_full_keeps_every_point(stub, dispatcher, context):
    stub.route("POST", ORBIS, json_body=data("route_v3.json"))
    outcome = await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [13.4, 52.5]], "response_detail": "full"}, context
    )
    assert outcome.data == {**data("route_v3.json"), "show_ui": False, **CREDIT[Backend.ORBIS]}


def v3_with(path, value):
    body = copy.deepcopy(data("route_v3.json"))
    target = body
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return body


@pytest.mark.parametrize("detail", ["compact", "geometry", "ui"])
@pytest.mark.parametrize(
    ("body", "says"),
    [
        pytest.param(data("route.json"), "`routes[0].sections` is a list, not an object", id="a v2 answer"),
        pytest.param({"routes": "x"}, "`routes` is a string, not a list", id="routes a string"),
        pytest.param(
            v3_with(("routes", 0, "legs", 0, "path"), [[4.9, 52.3]]),
            "`routes[0].legs[0].path` is a list",
            id="path a list",
        ),
        pytest.param(
            v3_with(("routes", 0, "summary", "travelDurationInSeconds"), "long"),
            "`routes[0].summary.travelDurationInSeconds` is a string",
            id="text duration",
        ),
        pytest.param(
            v3_with(("routes", 0, "sections"), [{"sectionType": "TRAFFIC"}]),
            "`routes[0].sections` is a list, not an object",
            id="v2 sections",
        ),
        pytest.param(
            v3_with(("routes", 0, "legs", 1, "path", "coordinates", 0), [13.4, 95.0]),
            "`routes[0].legs[1].path.coordinates[0][1]`",
            id="latitude out of range",
        ),
        pytest.param(
            v3_with(("routes", 0, "sections", "traffic", 0, "delayMagnitude"), 2),
            "`routes[0].sections.traffic[0].delayMagnitude` is a number",
            id="magnitude a number",
        ),
    ],
)
async def test_orbis_a_wrong_shaped_v3_answer_is_malformed(stub, dispatcher, context, detail, body, says):
    stub.route("POST", ORBIS, json_body=body)
    arguments = {"locations": [[4.9, 52.3], [13.4, 52.5]]}
    if detail == "ui":
        arguments["show_ui"] = True
    else:
        arguments["response_detail"] = detail
    outcome = await dispatcher.call("tomtom-routing", arguments, context)
    error = outcome.data["error"]
    assert error["code"] == "malformed", error
    assert says in error["message"]


async def test_orbis_an_answer_that_is_not_json_is_malformed(stub, dispatcher, context):
    stub.route("POST", ORBIS, body=b"<html>gateway</html>")
    outcome = await dispatcher.call("tomtom-routing", {"locations": [[4.9, 52.3], [13.4, 52.5]]}, context)
    assert outcome.data["error"]["code"] == "malformed"
    assert "not JSON" in outcome.data["error"]["message"]


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


async def test_orbis_avoid_areas_are_features_with_a_bbox(stub, dispatcher, context):
    stub.route("POST", ORBIS, json_body=data("route_v3.json"))
    outcome = await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9041, 52.3676], [5.1215, 52.0907]], "avoidAreas": AREAS}, context
    )
    assert not outcome.is_error, outcome.text
    assert stub.requests[-1].json()["avoidAreas"] == {
        "rectangles": [{"type": "Feature", "bbox": area, "geometry": None} for area in AREAS]
    }


async def test_avoid_areas_travel_as_rectangles_in_a_post_body(stub, dispatcher, context):
    stub.route("POST", GENESIS, json_body=data("route.json"))
    context.backend = Backend.GENESIS
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
    stub.route("GET", GENESIS, json_body=data("route.json"))
    context.backend = Backend.GENESIS
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


async def test_full_asks_for_every_section_type(stub, dispatcher, context):
    stub.route("GET", GENESIS, json_body=data("route.json"))
    context.backend = Backend.GENESIS
    await dispatcher.call("tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]]}, context)
    assert stub.requests[-1].query["sectionType"] == ["traffic"]
    await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]], "response_detail": "full"}, context
    )
    sections = stub.requests[-1].query["sectionType"]
    assert "traffic" in sections and "travelMode" in sections and len(sections) > 2


async def test_orbis_full_names_more_parts_of_the_answer(stub, dispatcher, context):
    stub.route("POST", ORBIS, json_body=data("route_v3.json"))
    await dispatcher.call("tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]]}, context)
    assert stub.requests[-1].headers["attributes"] == COMPACT_PARTS
    await dispatcher.call(
        "tomtom-routing", {"locations": [[4.9, 52.3], [5.1, 52.1]], "response_detail": "full"}, context
    )
    full = stub.requests[-1].headers["attributes"]
    assert full.startswith(COMPACT_PARTS[:-1] + ",") and "sectionType" not in stub.requests[-1].query


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


@pytest.mark.parametrize(
    "v2",
    [
        pytest.param(data("route.json"), id="two legs, traffic"),
        pytest.param(data("along_route.json"), id="one leg"),
        pytest.param({"routes": data("route.json")["routes"] * 3}, id="alternatives"),
        pytest.param(recorded("genesis-route.json"), id="recorded"),
    ],
)
async def test_orbis_compact_reads_only_the_ends_and_answers_as_the_translation(v2):
    """The compact decoder (each leg's ends only) answers what shaping the whole translated
    answer gives, which is what TomTom Maps' shaping gives for the same route."""
    body = json.dumps(v3_answer(v2)).encode()
    compact = decode_compact_routes_v3(body)
    assert compact == compact_routes(decode_shared_routes(body))
    assert compact == v2_spelling(compact_routes(v2))


async def test_orbis_a_long_route_is_capped_as_on_tomtom_maps(stub, dispatcher, context):
    long = route_answer(20_571)
    stub.route("POST", ORBIS, json_body=v3_answer(long))
    stub.route("GET", GENESIS, json_body=long)
    arguments = {"locations": [[4.9041, 52.3676], [13.405, 52.52]], "response_detail": "geometry"}
    orbis = (await dispatcher.call("tomtom-routing", arguments, context)).data
    context.backend = Backend.GENESIS
    genesis = (await dispatcher.call("tomtom-routing", arguments, context)).data
    (line,) = orbis["geometry"]["features"]
    assert line["properties"]["simplification"]["original_points"] == 20_571
    assert orbis["geometry"] == genesis["geometry"]
