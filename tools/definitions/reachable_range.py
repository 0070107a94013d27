"""tomtom-reachable-range: the area reachable from a point within one time or distance budget.

Orbis: GET `/maps/orbis/routing/calculateReachableRange/{lat},{lon}/json?apiVersion=2`; TomTom
Maps: GET `/routing/1/calculateReachableRange/{lat},{lon}/json`. Exactly one budget is sent:
`timeBudgetInSec` or `distanceBudgetInMeters` (none, or both, is an error naming both). Energy
and fuel budgets need a vehicle consumption model, which this tool does not take, so it does
not offer them. Route type, traffic, avoid and departure time mean what they mean in
tomtom-routing and travel the same way on each backend.

The budget is also the join key between compact and geometry: `budget_min` (the time budget in
minutes) or `budget_km` (the distance budget in kilometres).
"""

from __future__ import annotations

from typing import Any

from tools.context import CallContext
from tools.definition import define_tool
from tools.definitions import routing
from tools.definitions.common import check_position, detail, position, response_detail
from tools.errors import conflicting
from tools.shaping.geometry import with_geometry
from tools.shaping.points import lat_lon_text
from tools.shaping.reachable import Budget, compact_range, range_features
from tools.tomtom.backends import Backend

BUDGETS = ("timeBudgetInSec", "distanceBudgetInMeters")
AVOID = [value for value in routing.AVOID if value != "alreadyUsedRoads"]
TRAVEL_MODES = ["car", "truck"]
_ROUTING = routing.INPUT_SCHEMA["properties"]

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "origin": position("Start, [longitude, latitude]."),
        "response_detail": response_detail(geometry=True),
        "timeBudgetInSec": {
            "type": "integer",
            "minimum": 1,
            "description": "Reachable within this many seconds of travel. Give this or distanceBudgetInMeters.",
        },
        "distanceBudgetInMeters": {
            "type": "integer",
            "minimum": 1,
            "description": "Reachable within this many metres of travel.",
        },
        "routeType": _ROUTING["routeType"],
        "travelMode": {
            "type": "string",
            "enum": TRAVEL_MODES,
            "default": "car",
            "description": "Orbis: car only; truck needs the tomtom-maps backend.",
        },
        "traffic": _ROUTING["traffic"],
        "avoid": {"type": "array", "items": {"type": "string", "enum": AVOID}, "uniqueItems": True},
        "departAt": _ROUTING["departAt"],
    },
    "required": ["origin"],
    "additionalProperties": False,
}


def budget(arguments: dict[str, Any]) -> Budget:
    """The one budget given, as its join key: seconds become `budget_min`, metres `budget_km`."""
    given = [name for name in BUDGETS if name in arguments]
    if len(given) != 1:
        raise conflicting(*BUDGETS, message="give exactly one budget, time or distance")
    if given[0] == "timeBudgetInSec":
        return {"budget_min": _whole(arguments["timeBudgetInSec"] / 60)}
    return {"budget_km": _whole(arguments["distanceBudgetInMeters"] / 1000)}


def _whole(value: float) -> int | float:
    rounded = round(value, 3)
    return int(rounded) if rounded.is_integer() else rounded


def check_arguments(arguments: dict[str, Any]) -> None:
    check_position("origin", arguments["origin"])
    budget(arguments)
    if "departAt" in arguments:
        routing.check_time("departAt", arguments["departAt"])


def build_request(arguments: dict[str, Any], backend: Backend) -> tuple[str, dict[str, Any]]:
    origin = lat_lon_text(arguments["origin"])
    path, params = routing.routing_service("calculateReachableRange", origin, arguments, backend)
    for name in (*BUDGETS, "departAt"):
        if name in arguments:
            params[name] = arguments[name]
    if "avoid" in arguments:
        params["avoid"] = list(arguments["avoid"])
    return path, params


async def run(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    check_arguments(arguments)
    session = context.tomtom
    path, params = build_request(arguments, session.backend)
    body = await session.get(path, params)
    key = budget(arguments)
    match detail(arguments):
        case "full":
            return body
        case "geometry":
            return with_geometry(compact_range(body, key), range_features(body, key))
        case _:
            return compact_range(body, key)


TOOL = define_tool(
    name="tomtom-reachable-range",
    title="TomTom Reachable Range",
    description=(
        "The area reachable from a point within a travel time or a driving distance (an isochrone): "
        "its center, bounding box and, with response_detail geometry, the polygon. "
        "For a route between places use tomtom-routing."
    ),
    input_schema=INPUT_SCHEMA,
    run=run,
)
