"""tomtom-routing: a route through two or more ordered locations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tools.context import CallContext
from tools.definition import Answer, define_tool
from tools.definitions.common import answer, check_position, detail, exclusive, position, response_detail, show_ui
from tools.errors import ErrorCode, ToolError, invalid
from tools.shaping.geometry import route_features, with_geometry
from tools.shaping.points import lat_lon_text
from tools.shaping.routes import compact_routes
from tools.tomtom.backends import Backend
from tools.widgets import MAP_WIDGET

AVOID = [
    "tollRoads", "motorways", "ferries", "unpavedRoads", "carpools", "alreadyUsedRoads",
    "borderCrossings", "tunnels", "carTrains", "lowEmissionZones",
]  # fmt: skip
ROUTE_TYPES = ["fast", "short", "efficient", "thrilling"]
GENESIS_ROUTE_TYPES = {"fast": "fastest", "short": "shortest", "efficient": "eco", "thrilling": "thrilling"}
TRAVEL_MODES = ["car", "truck", "pedestrian", "bicycle"]
MAX_LOCATIONS = 150

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "locations": {
            "type": "array",
            "items": position(),
            "minItems": 2,
            "maxItems": MAX_LOCATIONS,
            "description": "Stops in order, origin first: [[longitude, latitude], ...].",
        },
        "response_detail": response_detail(geometry=True),
        "show_ui": show_ui(),
        "routeType": {"type": "string", "enum": ROUTE_TYPES, "default": "fast"},
        "travelMode": {
            "type": "string",
            "enum": TRAVEL_MODES,
            "default": "car",
            "description": "Orbis routes cars only; other modes need the tomtom-maps backend.",
        },
        "traffic": {
            "type": "string",
            "enum": ["live", "historical"],
            "default": "live",
            "description": "live: today's traffic; historical: typical traffic for the time.",
        },
        "avoid": {"type": "array", "items": {"type": "string", "enum": AVOID}, "uniqueItems": True},
        "departAt": {"type": "string", "description": "ISO 8601 date-time, or `now`."},
        "arriveAt": {"type": "string", "description": "ISO 8601 date-time to arrive by."},
        "maxAlternatives": {"type": "integer", "minimum": 0, "maximum": 5, "default": 0},
        "vehicleHeading": {"type": "integer", "minimum": 0, "maximum": 359, "description": "Degrees from north."},
    },
    "required": ["locations"],
    "additionalProperties": False,
}


def check_time(name: str, value: str) -> None:
    if name == "departAt" and value == "now":
        return
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise invalid(name, f"{value!r} is not an ISO 8601 date-time such as 2026-12-01T08:30:00+01:00") from None


def check_arguments(arguments: dict[str, Any]) -> None:
    for index, location in enumerate(arguments["locations"]):
        check_position(f"locations[{index}]", location)
    exclusive(arguments, "departAt", "arriveAt", message="a route can leave at a time or arrive by one, not both")
    for name in ("departAt", "arriveAt"):
        if name in arguments:
            check_time(name, arguments[name])
    if "arriveAt" in arguments and arguments.get("maxAlternatives"):
        raise invalid("maxAlternatives", "alternatives cannot be computed with `arriveAt`")


def routing_service(
    service: str, where: str, arguments: dict[str, Any], backend: Backend
) -> tuple[str, dict[str, Any]]:
    """The path of a Routing API `service` (`calculateRoute`, `calculateReachableRange`) at
    `where`, and the route type, traffic and travel mode in the backend's own vocabulary.
    Orbis plans for cars only: another `travelMode` there is `unsupported`."""
    route_type = arguments.get("routeType", "fast")
    traffic = arguments.get("traffic", "live")
    travel_mode = arguments.get("travelMode", "car")
    if backend is Backend.ORBIS:
        if travel_mode != "car":
            raise ToolError(
                ErrorCode.UNSUPPORTED,
                f"travelMode {travel_mode!r} is not available on tomtom-orbis-maps, which plans for cars only; "
                "use the tomtom-maps backend for other modes.",
                argument="travelMode",
            )
        return (
            f"/maps/orbis/routing/{service}/{where}/json",
            {"apiVersion": 2, "routeType": route_type, "traffic": traffic},
        )
    return (
        f"/routing/1/{service}/{where}/json",
        {"routeType": GENESIS_ROUTE_TYPES[route_type], "traffic": traffic == "live", "travelMode": travel_mode},
    )


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    locations = ":".join(lat_lon_text(point) for point in arguments["locations"])
    path, params = routing_service("calculateRoute", locations, arguments, backend)
    params["sectionType"] = ["traffic"]
    for name in ("departAt", "arriveAt", "maxAlternatives", "vehicleHeading"):
        if name in arguments:
            params[name] = arguments[name]
    if "avoid" in arguments:
        params["avoid"] = list(arguments["avoid"])
    return path, params


async def route(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    """TomTom's untrimmed Calculate Route answer for valid `arguments` (also used by the dynamic map)."""
    check_arguments(arguments)
    session = context.tomtom
    path, params = build_request(arguments, session.backend)
    return await session.get(path, params)


async def run(arguments: dict[str, Any], context: CallContext) -> Answer:
    body = await route(arguments, context)
    match detail(arguments):
        case "full":
            data = body
        case "geometry":
            data = with_geometry(compact_routes(body), route_features(body))
        case _:
            data = compact_routes(body)
    return answer(arguments, data, body)


TOOL = define_tool(
    name="tomtom-routing",
    title="TomTom Routing",
    description=(
        "Plan a route through 2 or more stops in order: distance, travel time and traffic delay, "
        "with live or typical traffic, departure or arrival times and things to avoid."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
    meta=MAP_WIDGET,
)
