"""tomtom-search-along-route: a route from origin to destination, then the places along it.

Two TomTom calls, both backends. First the route, built exactly as tomtom-routing builds it
(`routing.build_request`: Orbis GET `/maps/orbis/routing/calculateRoute/...`, TomTom Maps GET
`/routing/1/calculateRoute/...`). Then Along Route Search: Orbis POST
`/maps/orbis/places/searchAlongRoute/{query}.json?apiVersion=1`, TomTom Maps POST
`/search/2/searchAlongRoute/{query}.json`, with `maxDetourTime` (the corridor: the time a stop may
add to the trip, at most 3600 s) and the route line as the body `{"route": {"points": [{lat,
lon}, ...]}}`, simplified to at most `ROUTE_POINTS` points. An empty `query` searches by
category or brand alone (the path becomes `searchAlongRoute/.json`).

`full` is both answers untrimmed: `{"route": <route answer>, "search": <search answer>}`.
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions import routing
from tools.definitions.common import check_position, detail, position, response_detail
from tools.definitions.search_common import (
    BRAND_SET,
    LANGUAGE,
    POI_CATEGORIES,
    common_params,
    limit,
    poi_params,
    query_segment,
    search_path,
)
from tools.errors import conflicting
from tools.geometry.simplify import cap_geometry
from tools.shaping.along_route import compact_along_route, first_route
from tools.shaping.geometry import feature, route_line, with_geometry
from tools.tomtom.backends import Backend

ROUTE_POINTS = 1000
"""Route points sent to Along Route Search: longer lines are simplified (a few metres off)."""
ROUTE_INPUTS = ("routeType", "avoid")
"""The inputs that shape the route, passed to tomtom-routing's request building as they are."""
_ROUTING = routing.INPUT_SCHEMA["properties"]

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "origin": position("Start, [longitude, latitude]."),
        "destination": position("End, [longitude, latitude]."),
        "query": {
            "type": "string",
            "maxLength": 400,
            "description": "What to find, e.g. 'petrol station'. Empty: by poiCategories or brandSet alone.",
        },
        "response_detail": response_detail(geometry=True),
        "maxDetourTime": {
            "type": "integer",
            "minimum": 1,
            "maximum": 3600,
            "default": 600,
            "description": "Seconds a stop may add to the trip: the corridor's width (1-3600).",
        },
        "limit": limit(maximum=20),
        "language": LANGUAGE,
        "poiCategories": POI_CATEGORIES,
        "brandSet": BRAND_SET,
        "routeType": _ROUTING["routeType"],
        "avoid": _ROUTING["avoid"],
    },
    "required": ["origin", "destination", "query"],
    "additionalProperties": False,
}


def check_arguments(arguments: dict[str, Any]) -> None:
    check_position("origin", arguments["origin"])
    check_position("destination", arguments["destination"])
    if not arguments["query"].strip() and not ("poiCategories" in arguments or "brandSet" in arguments):
        raise conflicting("query", "poiCategories", "brandSet", message="an empty query needs categories or brands")


def route_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    """The route's path and parameters: tomtom-routing's, for origin then destination."""
    route = {"locations": [arguments["origin"], arguments["destination"]]}
    route.update({name: arguments[name] for name in ROUTE_INPUTS if name in arguments})
    return routing.build_request(route, backend)


def route_points(route_body: dict[str, Any]) -> list[dict[str, float]]:
    """The route line as Along Route Search takes it, at most `ROUTE_POINTS` points."""
    line, _ = cap_geometry(route_line(first_route(route_body)), ROUTE_POINTS)
    return [{"lat": lat, "lon": lon} for lon, lat in line["coordinates"]]


def search_request(
    arguments: dict[str, Any], backend: Backend, route_body: dict[str, Any]
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The search's path, parameters and JSON body, along the route TomTom answered."""
    path, params = search_path(backend, f"searchAlongRoute/{query_segment(arguments['query'].strip())}.json")
    params["maxDetourTime"] = arguments.get("maxDetourTime", 600)
    params.update(common_params(arguments), **poi_params(arguments))
    return path, params, {"route": {"points": route_points(route_body)}}


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_arguments(arguments)
    session = context.tomtom
    route_body = await session.get(*route_request(arguments, session.backend))
    path, params, body = search_request(arguments, session.backend, route_body)
    search_body = await session.post(path, body, params)
    match detail(arguments):
        case "full":
            return {"route": route_body, "search": search_body}
        case "geometry":
            line = feature(route_line(first_route(route_body)), {"route": 0})
            return with_geometry(compact_along_route(route_body, search_body), [line])
        case _:
            return compact_along_route(route_body, search_body)


TOOL = define_tool(
    name="tomtom-search-along-route",
    title="TomTom Search Along Route",
    description=(
        "Find places on the way from an origin to a destination (fuel, food, chargers...), each with the "
        "detour it adds, plus the route's distance and time. For places around one point use tomtom-nearby."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
