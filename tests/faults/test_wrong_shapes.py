# ruff: noqa: E501 (the table of cases reads best one case a line)
"""Wrong-shaped 200 answers from TomTom, per tool family: always `malformed`, naming the place
in the answer that was wrong; never `internal`."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import data
from tools.tomtom.backends import Backend

ANY_GET, ANY_POST = ("GET", r".*"), ("POST", r".*")
ROUTE_V3 = ("POST", r"/maps/orbis/routing/routes/calculate")  # Orbis Calculate Route, Routing v3
AMSTERDAM, UTRECHT, BERLIN = [4.9041, 52.3676], [5.1215, 52.0907], [13.405, 52.52]
STOPS = [AMSTERDAM, UTRECHT, [4.4777, 51.9244], [4.6462, 52.3874]]
ORDER = {"optimizedOrder": [0, 3, 2, 1]}
LEGS_OF_THREE = data("given_order_route.json")
AVAILABILITY = ("GET", r"/search/2/chargingAvailability\.json")

CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "geocode": ("tomtom-geocode", {"query": "Dam"}),
    "reverse": ("tomtom-reverse-geocode", {"position": [4.89273, 52.37314]}),
    "fuzzy": ("tomtom-fuzzy-search", {"query": "coffee"}),
    "categories": ("tomtom-poi-categories", {"filters": ["coffee"]}),
    "routing": ("tomtom-routing", {"locations": [AMSTERDAM, BERLIN]}),
    "routing-geometry": ("tomtom-routing", {"locations": [AMSTERDAM, BERLIN], "response_detail": "geometry"}),
    "traffic": ("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4]}),
    "traffic-geometry": ("tomtom-traffic", {"bbox": [4.8, 52.33, 4.95, 52.4], "response_detail": "geometry"}),
    "reachable": ("tomtom-reachable-range", {"origin": AMSTERDAM, "timeBudgetInSec": 1800}),
    "reachable-geometry": (
        "tomtom-reachable-range",
        {"origin": AMSTERDAM, "timeBudgetInSec": 1800, "response_detail": "geometry"},
    ),
    "ev-routing": (
        "tomtom-ev-routing",
        {"locations": [AMSTERDAM, BERLIN], "maxChargeInkWh": 75, "currentChargeInkWh": 60},
    ),
    "ev-search": ("tomtom-ev-search", {"position": AMSTERDAM, "radius": 3000}),  # live availability: tomtom-maps
    "along-route": ("tomtom-search-along-route", {"origin": AMSTERDAM, "destination": UTRECHT, "query": "petrol"}),
    "dynamic-map": ("tomtom-dynamic-map", {"routePlans": [{"locations": [AMSTERDAM, UTRECHT]}]}),
    "poi-search": ("tomtom-poi-search", {"query": "pharmacy"}),
    "nearby": ("tomtom-poi-search", {"position": AMSTERDAM, "brandSet": ["BENU"]}),
    "area-search": ("tomtom-area-search", {"query": "pharmacy", "center": AMSTERDAM, "radius": 1500}),
    "area-search-polygon": (
        "tomtom-area-search",
        {"query": "pharmacy", "polygon": [AMSTERDAM, UTRECHT, BERLIN], "response_detail": "geometry"},
    ),
    "matrix": ("tomtom-matrix-routing", {"origins": [AMSTERDAM, UTRECHT], "destinations": [UTRECHT, BERLIN]}),
    "optimize": ("tomtom-optimize-waypoints", {"stops": STOPS}),
    "optimize-geometry": ("tomtom-optimize-waypoints", {"stops": STOPS, "response_detail": "geometry"}),
}
TOMTOM_MAPS_ONLY = {"ev-search", "matrix", "optimize", "optimize-geometry"}
"""Calls made on the tomtom-maps backend (ev-search for its live availability; the others exist only there)."""


def changed(name: str, path: tuple[Any, ...], value: Any) -> Any:
    """Our test answer `name` with the value at `path` replaced."""
    body = copy.deepcopy(data(name))
    target = body
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return body


# (id, call, {(method, pattern): body}, text the message must contain)
# A table, one case a line so the cases read down one column: the formatter leaves it as written.
# fmt: off
CASES = [
    ("results not a list", "geocode", {ANY_GET: {"results": "x"}}, "`results` is a string, not a list"),
    ("null result", "geocode", {ANY_GET: changed("geocode.json", ("results", 0), None)}, "`results[0]` is null"),
    ("text total", "fuzzy", {ANY_GET: changed("poi_search.json", ("summary", "totalResults"), "many")}, "`summary.totalResults`"),
    ("text distance", "fuzzy", {ANY_GET: changed("poi_search.json", ("results", 0, "dist"), "far")}, "`results[0].dist` is a string, not a finite number"),
    ("address a string", "geocode", {ANY_GET: changed("geocode.json", ("results", 0, "address"), "Dam 1")}, "`results[0].address`"),
    ("null address entry", "reverse", {ANY_GET: {"results": [None]}}, "`results[0]` is null"),
    ("address entry a list", "reverse", {ANY_GET: {"results": [{"address": [1]}]}}, "`results[0].address` is a list"),
    ("no point", "reverse", {ANY_GET: {"results": [{"address": {}}]}}, "`results[0].position`"),
    ("lat,lon text point", "geocode", {ANY_GET: {"results": [{"position": "52.3,4.9"}]}}, "`results[0].position` is a string"),
    ("point off the world", "reverse", {ANY_GET: {"results": [{"position": {"coordinates": [4.9, 95]}}]}}, "`results[0].position` is not a point"),
    ("category id a list", "categories", {ANY_GET: changed("poi_categories.json", ("poiCategories", 0, "id"), [1])}, "`poiCategories[0].id`"),
    ("categories an object", "categories", {ANY_GET: {"poiCategories": {"a": 1}}}, "`poiCategories` is an object, not a list"),
    ("routes a string", "routing", {ROUTE_V3: {"routes": "x"}}, "`routes` is a string"),
    ("null route", "routing", {ROUTE_V3: {"routes": [None]}}, "`routes[0]` is null"),
    ("null route, geometry", "routing-geometry", {ROUTE_V3: {"routes": [None]}}, "`routes[0]` is null"),
    ("text longitude", "routing-geometry", {ROUTE_V3: changed("route_v3.json", ("routes", 0, "legs", 0, "path", "coordinates", 1), ["x", 52.3])}, "`routes[0].legs[0].path.coordinates[1][0]` is a string"),
    ("latitude out of range", "routing-geometry", {ROUTE_V3: changed("route_v3.json", ("routes", 0, "legs", 0, "path", "coordinates", 1), [4.9, 91])}, "`routes[0].legs[0].path.coordinates[1][1]`"),
    ("text length", "routing", {ROUTE_V3: changed("route_v3.json", ("routes", 0, "summary", "lengthInMeters"), "far")}, "`routes[0].summary.lengthInMeters`"),
    ("section a number", "routing", {ROUTE_V3: changed("route_v3.json", ("routes", 0, "sections", "traffic"), [3])}, "`routes[0].sections.traffic[0]` is a number"),
    ("sections a list", "routing", {ROUTE_V3: changed("route_v3.json", ("routes", 0, "sections"), [])}, "`routes[0].sections` is a list, not an object"),
    ("incidents a string", "traffic", {ANY_GET: {"incidents": "x"}}, "`incidents` is a string"),
    ("category a list", "traffic", {ANY_GET: changed("traffic.json", ("incidents", 0, "properties", "iconCategory"), [1])}, "`incidents[0].properties.iconCategory` is a list"),
    ("text length, traffic", "traffic", {ANY_GET: changed("traffic.json", ("incidents", 0, "properties", "length"), "long")}, "`incidents[0].properties.length`"),
    ("text delay, geometry", "traffic-geometry", {ANY_GET: changed("traffic.json", ("incidents", 0, "properties", "delay"), "long")}, "`incidents[0].properties.delay`"),
    ("events of strings", "traffic", {ANY_GET: changed("traffic.json", ("incidents", 0, "properties", "events"), ["x"])}, "`incidents[0].properties.events[0]` is a string"),
    ("magnitude a string", "traffic", {ANY_GET: changed("traffic.json", ("incidents", 0, "properties", "magnitudeOfDelay"), "big")}, "magnitudeOfDelay"),
    ("range a list", "reachable", {ANY_GET: {"reachableRange": []}}, "`reachableRange` is a list, not an object"),
    ("boundary a string", "reachable-geometry", {ANY_GET: changed("reachable_range.json", ("reachableRange", "boundary"), "x")}, "`reachableRange.boundary` is a string"),
    ("charging info a string", "ev-routing", {ANY_POST: changed("ev_route.json", ("routes", 0, "legs", 0, "summary", "chargingInformationAtEndOfLeg"), "x")}, "chargingInformationAtEndOfLeg` is a string"),
    ("park location a number", "ev-routing", {ANY_POST: changed("ev_route.json", ("routes", 0, "legs", 0, "summary", "chargingInformationAtEndOfLeg", "chargingParkLocation"), 3)}, "chargingParkLocation` is a number"),
    ("connector type a list", "ev-search", {ANY_GET: changed("ev_search.json", ("results", 0, "chargingPark", "connectors", 0, "connectorType"), ["a"]), AVAILABILITY: data("charging_availability.json")}, "connectorType` is a list"),
    ("availability a string", "ev-search", {ANY_GET: data("ev_search.json"), AVAILABILITY: changed("charging_availability.json", ("connectors", 0, "availability"), "x")}, "availability` is a string"),
    ("text detour", "along-route", {ROUTE_V3: data("route_v3.json"), ANY_POST: changed("along_route.json", ("results", 0, "detourTime"), "long")}, "`search.results[0].detourTime` is a string"),
    ("null route, along route", "along-route", {ROUTE_V3: {"routes": [None]}, ANY_POST: data("along_route.json")}, "`routes[0]` is null"),
    ("null latitude, dynamic map", "dynamic-map", {ROUTE_V3: changed("route_v3.json", ("routes", 0, "legs", 0, "path", "coordinates", 0), [4.9, None])}, "`routes[0].legs[0].path.coordinates[0][1]` is null"),
    ("summary a string, dynamic map", "dynamic-map", {ROUTE_V3: changed("route_v3.json", ("routes", 0, "summary"), "x")}, "`routes[0].summary` is a string"),
    ("results a string, POI search", "poi-search", {ANY_GET: {"results": "x"}}, "`results` is a string, not a list"),
    ("brand name a number, POI search", "poi-search", {ANY_GET: changed("poi_search.json", ("results", 0, "poi", "brands"), [{"name": 7}])}, "`results[0].poi.brands[0].name` is a number"),
    ("text distance, nearby", "nearby", {ANY_GET: changed("poi_search.json", ("results", 0, "dist"), "far")}, "`results[0].dist` is a string, not a finite number"),
    ("null result, area search", "area-search", {ANY_GET: changed("poi_search.json", ("results", 0), None), ANY_POST: changed("poi_search.json", ("results", 0), None)}, "`results[0]` is null"),
    ("total a fraction, area search", "area-search-polygon", {ANY_GET: data("poi_search.json"), ANY_POST: changed("poi_search.json", ("summary", "totalResults"), 1.5)}, "`summary.totalResults` is a number, not a whole number"),
    ("cells a string, matrix", "matrix", {ANY_POST: {"data": "x"}}, "`data` is a string, not a list"),
    ("no cells, matrix", "matrix", {ANY_POST: {"summary": {}}}, "`data` is missing"),
    ("null cell, matrix", "matrix", {ANY_POST: {"data": [None]}}, "`data[0]` is null"),
    ("index a fraction, matrix", "matrix", {ANY_POST: changed("matrix.json", ("data", 0, "originIndex"), 0.5)}, "`data[0].originIndex` is a number, not a whole number"),
    ("index a boolean, matrix", "matrix", {ANY_POST: changed("matrix.json", ("data", 1, "destinationIndex"), True)}, "`data[1].destinationIndex` is a boolean"),
    ("text time, matrix", "matrix", {ANY_POST: changed("matrix.json", ("data", 2, "routeSummary", "travelTimeInSeconds"), "long")}, "`data[2].routeSummary.travelTimeInSeconds` is a string"),
    ("summary a list, matrix", "matrix", {ANY_POST: changed("matrix.json", ("data", 3, "routeSummary"), [1])}, "`data[3].routeSummary` is a list, not an object"),
    ("order of fractions", "optimize", {ANY_POST: {"optimizedOrder": [0.0, 3.0, 2.0, 1.0]}, ANY_GET: LEGS_OF_THREE}, "`optimizedOrder[0]` is a number, not a whole number"),
    ("order of text", "optimize", {ANY_POST: {"optimizedOrder": ["0", 3, 2, 1]}, ANY_GET: LEGS_OF_THREE}, "`optimizedOrder[0]` is a string, not a whole number"),
    ("order of booleans", "optimize", {ANY_POST: {"optimizedOrder": [False, True, 2, 3]}, ANY_GET: LEGS_OF_THREE}, "`optimizedOrder[0]` is a boolean"),
    ("order a string", "optimize", {ANY_POST: {"optimizedOrder": "0321"}, ANY_GET: LEGS_OF_THREE}, "`optimizedOrder` is a string, not a list"),
    ("no order", "optimize", {ANY_POST: {"summary": {}}, ANY_GET: LEGS_OF_THREE}, "`optimizedOrder` is missing"),
    ("leg summary a string", "optimize", {ANY_POST: ORDER, ANY_GET: changed("given_order_route.json", ("routes", 0, "legs", 1, "summary"), "x")}, "`route.routes[0].legs[1].summary` is a string"),
    ("null route, optimize", "optimize", {ANY_POST: ORDER, ANY_GET: {"routes": [None]}}, "`route.routes[0]` is null"),
    ("text time, optimize", "optimize", {ANY_POST: ORDER, ANY_GET: changed("given_order_route.json", ("routes", 0, "summary", "travelTimeInSeconds"), "long")}, "`route.routes[0].summary.travelTimeInSeconds` is a string"),
    ("text latitude, optimize geometry", "optimize-geometry", {ANY_POST: ORDER, ANY_GET: changed("given_order_route.json", ("routes", 0, "legs", 0, "points", 1), {"latitude": "x", "longitude": 4.9})}, "`route.legs[0].points[1].latitude` is a string"),
]
# fmt: on


@pytest.mark.parametrize(("call", "answers", "text"), [pytest.param(*case[1:], id=case[0]) for case in CASES])
async def test_wrong_shapes_are_malformed_and_named(stub, dispatcher, context, call, answers, text):
    # Later routes win in the stub: the catch-all patterns go first.
    for (method, pattern), body in sorted(answers.items(), key=lambda item: item[0][1] != r".*"):
        stub.route(method, pattern, json_body=body)
    name, arguments = CALLS[call]
    if call in TOMTOM_MAPS_ONLY:
        context.backend = Backend.GENESIS
    outcome = await dispatcher.call(name, arguments, context)
    error = outcome.data.get("error")
    assert error is not None, outcome.data
    assert error["code"] == "malformed", error
    assert text in error["message"]
    assert (
        error["message"].startswith("TomTom answered with data we cannot read") or "routePlans[0]" in error["message"]
    )
